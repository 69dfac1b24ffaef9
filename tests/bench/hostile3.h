/* SPDX-License-Identifier: Apache-2.0 */
/* hostile3.h - what the parts of accord_hostile3_bench share: the client
 * that measures what a well-behaved caller sees (hostile3_bench.c) and the
 * accord-site case (hostile3_site.c). */
#ifndef ACC_HOSTILE3_H
#define ACC_HOSTILE3_H

#include <curl/curl.h>
#include <stdint.h>

#include "../../lib/common/buf.h"

/* --scale: the hostile side's counts are multiplied by it (the CI smoke). */
extern double h3_scale;
/* The certificates of tests/support/mkcerts.sh. */
extern char h3_certs[600];

/* n * h3_scale, at least 1. */
unsigned h3_scaled(unsigned n);

/* One GET on a new connection from 127.0.0.1 (who: the client certificate
 * of that name in h3_certs, over HTTPS; NULL: plain HTTP), at most 10 s:
 * the status (0: none), *us its time, *rc libcurl's result; the answer's
 * body appended to body if given. */
long h3_get(const char *url, const char *who, struct acc_buf *body, int64_t *us, CURLcode *rc);

/* n such GETs, gap_ms apart: prints how many were answered 200, their
 * median and maximum, and why the first failed one failed. */
void h3_tries(const char *label, const char *url, const char *who, unsigned n, unsigned gap_ms);

/* Case B, on an accord-site of its own in dir; seconds: when the second
 * batch of the other peer's requests starts, from the start of the
 * pressure. */
void h3_bench_site(const char *dir, unsigned seconds);

#endif
