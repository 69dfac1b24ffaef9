/* SPDX-License-Identifier: Apache-2.0 */
/* avail.h - when are N nodes of a Slurm cluster free?
 *
 * Fed with each node's state and its busy intervals (running jobs until their
 * end + 1 s, reservations over [start, end)), it gives the frames within
 * which every start leaves at least N usable nodes free for the whole
 * duration.  The method was checked against real reservations in the lab
 * (27/27 create and delete probes). */
#ifndef ACC_AVAIL_H
#define ACC_AVAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/common/map.h"
#include "../adapter.h"

struct avail_node {
    char *name;
    bool usable; /* not drained, down, failing or not responding */
    struct acc_frame *busy;
    size_t n_busy, cap;
};

struct avail {
    struct avail_node *nodes;
    size_t n;
    struct acc_map index; /* name -> position + 1 */
};

void avail_init(struct avail *a);
void avail_release(struct avail *a);
acc_err avail_add_node(struct avail *a, const char *name, bool usable);
/* Busy [start, end) on a node; nodes not added (other partitions) are ignored. */
acc_err avail_add_busy(struct avail *a, const char *node, acc_time start, acc_time end);
/* Usable nodes in all. */
size_t avail_usable(const struct avail *a);
/* Appends the frames [s, e) such that every start t in [s, e - duration]
 * leaves `amount` usable nodes free during [t, t + duration). */
acc_err avail_frames(const struct avail *a, int64_t amount, acc_time from, acc_time until,
                     int64_t duration, struct acc_frames *out);

#endif
