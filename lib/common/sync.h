/* SPDX-License-Identifier: Apache-2.0 */
/* sync.h - waiting with a time limit: condition variables on the monotonic
 * clock (a change of the wall clock neither shortens nor stretches a wait)
 * and deadlines for them. */
#ifndef ACC_SYNC_H
#define ACC_SYNC_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* pthread_cond_init for a condition whose timed waits use CLOCK_MONOTONIC. */
void acc_cond_init_monotonic(pthread_cond_t *c);

/* The CLOCK_MONOTONIC time us microseconds from now (us >= 0), for
 * pthread_cond_timedwait on such a condition. */
struct timespec acc_mono_deadline(int64_t us);

#endif
