/* SPDX-License-Identifier: Apache-2.0 */
/* site_daemon.h - what the parts of test_site share: one accord-site
 * in-process (site alpha, sim-batch, 16 nodes; peers accord-main, an admin,
 * and alice)
 * whose state the tests build on one after another, and reservations asked
 * of it over mutual TLS.  Its helpers carry the prefix sd_, so that no two test
 * support headers export one name with two meanings. */
#ifndef ACC_SITE_DAEMON_H
#define ACC_SITE_DAEMON_H

#include <stdint.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/timefmt.h"
#include "../../site/site.h"

extern char certs[512], conf[512], db[512];
extern struct acc_site *site;
extern acc_time T; /* a start well ahead, on a whole hour */

/* The daemon's configuration file at conf. */
void sd_write_conf(void);
void sd_start(void);
void sd_stop(void);

long sd_request(const char *method, const char *path, const struct acc_buf *body,
                struct acc_buf *out);
long sd_reserve_as(const char *who, const char *key, int64_t nodes, acc_time start,
                   int64_t duration, struct acc_buf *out);
long sd_reserve(const char *key, int64_t nodes, acc_time start, int64_t duration,
                struct acc_buf *out);
/* The start sim-batch booked (it books later than asked when the start is
 * taken), or -1 when the reserve was not answered 200. */
acc_time sd_booked_start(const char *key, int64_t nodes, acc_time start);
long sd_call(const char *who, const char *method, const char *key, struct acc_buf *out);

/* test_site_ops.c: the tests on the daemon's jobs, connections and reload,
 * in test_site's one suite. */
void test_jobs(void);
void test_connection_limit(void);
void test_hostile_connections(void);
void test_reload(void);

#endif
