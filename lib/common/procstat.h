/* SPDX-License-Identifier: Apache-2.0 */
/* procstat.h - the process figures every Prometheus exporter gives, read
 * from /proc/self for accordd's and accord-site's /metrics:
 *
 *   process_cpu_seconds_total       user and system CPU time (stat)
 *   process_resident_memory_bytes   resident set size (statm)
 *   process_virtual_memory_bytes    virtual memory size (statm)
 *   process_open_fds                entries of /proc/self/fd
 *   process_max_fds                 RLIMIT_NOFILE's soft limit
 *   process_start_time_seconds      Unix time of the start (stat's start
 *                                   in clock ticks after /proc/stat's btime)
 *
 * Read at each scrape, never on a request's path: a few small files. */
#ifndef ACC_PROCSTAT_H
#define ACC_PROCSTAT_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"

struct acc_procstat {
    double cpu_seconds;                           /* user + system */
    uint64_t resident;                            /* bytes */
    uint64_t virtual_size;                        /* bytes */
    uint64_t open_fds;                            /* descriptors open now */
    uint64_t max_fds;                             /* 0: unlimited or unknown */
    double start_time;                            /* Unix time, seconds */
    bool has_cpu, has_memory, has_fds, has_start; /* each read (false: /proc lacks it) */
};

/* The figures of this process now; what cannot be read is left out (its
 * has_ false), never guessed. */
void acc_procstat_read(struct acc_procstat *out);

/* The figures in Prometheus' text format, each with its HELP and TYPE,
 * appended to out (a figure not read is left out). */
void acc_procstat_metrics(struct acc_buf *out);

#endif
