/* tuning.h - process-wide settings accordd makes once at start-up. */
#ifndef ACC_TUNING_H
#define ACC_TUNING_H

#ifdef __GLIBC__
#include <malloc.h>
#endif

/* Adapter calls run on worker threads, and what one thread allocates another
 * often frees.  glibc gives each thread its own arena and hands freed memory
 * back to the kernel eagerly, so every negotiation would fault fresh pages
 * in again (measured: about a fifth of a negotiation's time).  Keep it. */
static inline void acc_tune_process(void)
{
#ifdef __GLIBC__
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
#endif
}

#endif
