/* SPDX-License-Identifier: Apache-2.0 */
#include "avail.h"

#include <stdlib.h>
#include <string.h>

void avail_init(struct avail *a)
{
    memset(a, 0, sizeof *a);
    acc_map_init(&a->index);
}

void avail_release(struct avail *a)
{
    for (size_t i = 0; i < a->n; i++) {
        free(a->nodes[i].name);
        free(a->nodes[i].busy);
    }
    free(a->nodes);
    acc_map_release(&a->index);
    memset(a, 0, sizeof *a);
}

acc_err avail_add_node(struct avail *a, const char *name, bool usable)
{
    if (acc_map_get(&a->index, name))
        return ACC_OK; /* listed twice (several partitions): once is enough */
    void *v = realloc(a->nodes, (a->n + 1) * sizeof *a->nodes);
    if (!v)
        return ACC_ERR_NOMEM;
    a->nodes = v;
    struct avail_node *n = &a->nodes[a->n];
    memset(n, 0, sizeof *n);
    n->name = strdup(name);
    n->usable = usable;
    if (!n->name || acc_map_put(&a->index, name, (void *)(uintptr_t)(a->n + 1))) {
        free(n->name);
        return ACC_ERR_NOMEM;
    }
    a->n++;
    return ACC_OK;
}

acc_err avail_add_busy(struct avail *a, const char *node, acc_time start, acc_time end)
{
    uintptr_t pos = (uintptr_t)acc_map_get(&a->index, node);
    if (!pos || end <= start)
        return ACC_OK;
    struct avail_node *n = &a->nodes[pos - 1];
    if (n->n_busy == n->cap) {
        size_t cap = n->cap ? n->cap * 2 : 4;
        void *v = realloc(n->busy, cap * sizeof *n->busy);
        if (!v)
            return ACC_ERR_NOMEM;
        n->busy = v;
        n->cap = cap;
    }
    n->busy[n->n_busy++] = (struct acc_frame){start, end};
    return ACC_OK;
}

size_t avail_usable(const struct avail *a)
{
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++)
        k += a->nodes[i].usable;
    return k;
}

/* Whether the node is free during [t, t + d): every busy interval ends by t
 * or starts at t + d or later. */
static bool node_free(const struct avail_node *n, acc_time t, int64_t d)
{
    for (size_t i = 0; i < n->n_busy; i++) {
        if (n->busy[i].end > t && n->busy[i].start < t + d)
            return false;
    }
    return true;
}

static int cmp_time(const void *x, const void *y)
{
    acc_time a = *(const acc_time *)x, b = *(const acc_time *)y;
    return (a > b) - (a < b);
}

acc_err avail_frames(const struct avail *a, int64_t amount, acc_time from, acc_time until,
                     int64_t duration, struct acc_frames *out)
{
    acc_time last = until - duration; /* the latest start */
    if (last < from || amount <= 0 || (size_t)amount > avail_usable(a))
        return ACC_OK;
    /* How many nodes are free for a start t changes only where t passes a
     * busy end e (free from e on) or a busy start b (busy from b - d + 1 on). */
    size_t cap = 1;
    for (size_t i = 0; i < a->n; i++)
        cap += a->nodes[i].usable ? 2 * a->nodes[i].n_busy : 0;
    acc_time *bp = malloc(cap * sizeof *bp);
    if (!bp)
        return ACC_ERR_NOMEM;
    size_t n = 0;
    bp[n++] = from;
    for (size_t i = 0; i < a->n; i++) {
        const struct avail_node *nd = &a->nodes[i];
        for (size_t k = 0; nd->usable && k < nd->n_busy; k++) {
            acc_time e = nd->busy[k].end, b = nd->busy[k].start - duration + 1;
            if (e > from && e <= last)
                bp[n++] = e;
            if (b > from && b <= last)
                bp[n++] = b;
        }
    }
    qsort(bp, n, sizeof *bp, cmp_time);
    acc_err rc = ACC_OK;
    acc_time run = -1; /* first start of the current run of feasible starts */
    for (size_t i = 0; i < n && !rc; i++) {
        if (i > 0 && bp[i] == bp[i - 1])
            continue;
        int64_t free_nodes = 0;
        for (size_t k = 0; k < a->n && free_nodes < amount; k++)
            free_nodes += a->nodes[k].usable && node_free(&a->nodes[k], bp[i], duration);
        bool ok = free_nodes >= amount;
        if (ok && run < 0)
            run = bp[i];
        if (!ok && run >= 0) {
            /* Starts [run, bp[i]) work: the frame runs to the last one's end. */
            rc = acc_frames_push(out, run, bp[i] - 1 + duration);
            run = -1;
        }
    }
    if (!rc && run >= 0)
        rc = acc_frames_push(out, run, until);
    free(bp);
    return rc;
}
