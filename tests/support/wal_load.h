/* SPDX-License-Identifier: Apache-2.0 */
/* wal_load.h - sustained load on the real accordd while its -wal file is
 * watched: the one driver of test_wal (the bound holds) and wal_bench (the
 * figure).  Clients post offers while others read agreements back (readers
 * are what keep a passive checkpoint from ever resetting the log); a sampler
 * stats the -wal file every 2 ms throughout. */
#ifndef ACC_WAL_LOAD_H
#define ACC_WAL_LOAD_H

#include <time.h>

/* The testbed both use, with a "%s" for extra [database] lines. */
extern const char wal_load_config[];

struct wal_load {
    /* in */
    const char *base; /* accordd's URL */
    const char *wal;  /* the -wal file's path */
    int posters, readers;
    int offers;      /* in all */
    time_t deadline; /* 0: none; else no post starts after it */
    /* out */
    int created, failed;
    long long wal_max; /* bytes */
    double seconds;    /* until the last post ended */
};

/* Runs the load to its end. */
void wal_load_run(struct wal_load *w);

#endif
