/* SPDX-License-Identifier: Apache-2.0 */
/* http_suite.h - what the parts of test_http share: one accordd of the
 * embedded testbed in-process for a suite (fx), requests to it, and the
 * offers they send.  Its helpers carry the prefix hs_, so that no two test
 * support headers export one name with two meanings. */
#ifndef ACC_HTTP_SUITE_H
#define ACC_HTTP_SUITE_H

#include <stddef.h>
#include <stdint.h>

#include "fixture.h"
#include "http_client.h"

extern struct fixture fx;
extern char db_path[256];

extern const char *const XML_HDR[];
extern const char *const JSON_ACCEPT[];

/* fx's address of path (a static buffer: one at a time). */
char *hs_url(const char *path);
long hs_get(const char *path, struct http_reply *r);
long hs_post(const char *path, const char *body, struct http_reply *r);

/* An offer with one component per site given ("site:nodes"), links between
 * consecutive components, and the schedule fragment given (a static buffer). */
char *hs_offer(const char *name, const char *schedule, const char *const *comps, size_t n,
               int bandwidth);
/* The id at the end of a reply's Location; free() it. */
char *hs_id_of(const struct http_reply *r);
int hs_count_agreements(void);
/* The simulator's hs_bookings (one line each: key resource start end amount owner). */
char *hs_bookings(const char *adapter);
int64_t hs_peak(const char *adapter, const char *resource, const char *from, const char *until,
                int64_t *capacity);

/* A suite's set-up and tear-down: fx on the embedded testbed, its database
 * http.db in the program's temporary directory. */
int http_suite_setup(void);
int http_suite_teardown(void);

#endif
