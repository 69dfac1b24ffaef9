/* SPDX-License-Identifier: Apache-2.0 */
/* daemon.h - the real accordd binary as a child process, for integration
 * tests that kill and restart it (test_crash, test_launch_real). */
#ifndef ACC_DAEMON_H
#define ACC_DAEMON_H

#include <stddef.h>
#include <sys/types.h>

/* Starts accordd with --config ini --db db on a free port and waits (at most
 * 20 s) for its "listening on URL" line; URL goes into base.  Returns the
 * pid, or -1 when it did not come up.  It is killed when the thread that
 * started it ends (the test program exits or is killed). */
pid_t daemon_start(const char *accordd, const char *ini, const char *db, char *base,
                   size_t base_size);

/* daemon_start at log level info, with what accordd wrote on standard
 * output and standard error until its "listening on" line into out. */
pid_t daemon_start_logged(const char *accordd, const char *ini, const char *db, char *base,
                          size_t base_size, char *out, size_t out_size);

/* One request to base + path with an XML body (or none); the reply's body
 * (free it) and *status (-1 when there was no answer). */
char *daemon_call(const char *base, const char *method, const char *path, const char *body,
                  long *status);

/* An offer for a testbed of sites alpha and beta joined by a link: 4 nodes
 * at each and 100 Mbit/s between them for PT1H (test_crash, wal_load). */
extern const char daemon_offer[];

#endif
