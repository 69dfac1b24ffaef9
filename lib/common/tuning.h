/* SPDX-License-Identifier: Apache-2.0 */
/* tuning.h - process-wide settings accordd makes once at start-up. */
#ifndef ACC_TUNING_H
#define ACC_TUNING_H

#include <sys/resource.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

/* Adapter calls run on worker threads, and what one thread allocates another
 * often frees.  glibc gives each thread its own arena and hands freed memory
 * back to the kernel eagerly, so every negotiation would fault fresh pages
 * in again (measured: about a fifth of a negotiation's time).  Keep it. */
static inline void acc_tune_process(void)
{
    /* Every connection is a descriptor ([server] connection_limit, default
     * 4096): take what the hard limit allows rather than the usual 1024. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
#ifdef __GLIBC__
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
#endif
}

#endif
