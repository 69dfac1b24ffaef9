/* SPDX-License-Identifier: Apache-2.0 */
/* loopback.h - raw TCP connections to a server on 127.0.0.1 from a
 * loopback address of the test's choosing (all of 127.0.0.0/8 is this
 * host), for the tests of connection bounds per client address. */
#ifndef ACC_TEST_LOOPBACK_H
#define ACC_TEST_LOOPBACK_H

#include <stdbool.h>

/* A connection to 127.0.0.1:port from the address from, or -1. */
int acc_test_connect_from(const char *from, unsigned port);

/* Whether the server has closed fd (end of stream or reset), waiting at
 * most ms (0: only what has arrived); what it sent before is skipped.  A
 * negative fd counts as closed. */
bool acc_test_closed_within(int fd, int ms);

#endif
