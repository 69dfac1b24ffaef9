/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_queue.c - the event heap (time, then insertion order: a run is
 * deterministic whatever the ties) and the FIFO queues of job indexes. */
#include "wsim_internal.h"

#include <stdlib.h>
#include <string.h>

static bool before(const struct wsim_event *a, const struct wsim_event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

bool wsim_heap_push(struct wsim_heap *h, double t, int type, uint32_t job, uint32_t ver)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 256;
        struct wsim_event *v = realloc(h->v, cap * sizeof *v);
        if (!v)
            return false;
        h->v = v;
        h->cap = cap;
    }
    struct wsim_event e = {t, h->seq++, job, ver, type};
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(&e, &h->v[parent]))
            break;
        h->v[i] = h->v[parent];
        i = parent;
    }
    h->v[i] = e;
    return true;
}

bool wsim_heap_pop(struct wsim_heap *h, struct wsim_event *out)
{
    if (!h->n)
        return false;
    *out = h->v[0];
    struct wsim_event last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && before(&h->v[c + 1], &h->v[c]))
            c++;
        if (!before(&h->v[c], &last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return true;
}

void wsim_heap_free(struct wsim_heap *h)
{
    free(h->v);
    memset(h, 0, sizeof *h);
}

bool wsim_queue_push(struct wsim_queue *q, uint32_t job)
{
    if (q->head + q->n == q->cap) {
        if (q->head > q->cap / 2) {
            memmove(q->v, q->v + q->head, q->n * sizeof *q->v);
            q->head = 0;
        } else {
            size_t cap = q->cap ? q->cap * 2 : 64;
            uint32_t *v = realloc(q->v, cap * sizeof *v);
            if (!v)
                return false;
            q->v = v;
            q->cap = cap;
        }
    }
    q->v[q->head + q->n++] = job;
    return true;
}

uint32_t wsim_queue_at(const struct wsim_queue *q, size_t i)
{
    return q->v[q->head + i];
}

void wsim_queue_pop(struct wsim_queue *q)
{
    q->head++;
    q->n--;
    if (!q->n)
        q->head = 0;
}

void wsim_queue_filter(struct wsim_queue *q, const bool *keep)
{
    size_t w = 0;
    for (size_t i = 0; i < q->n; i++) {
        if (keep[i])
            q->v[q->head + w++] = q->v[q->head + i];
    }
    q->n = w;
    if (!q->n)
        q->head = 0;
}

void wsim_queue_free(struct wsim_queue *q)
{
    free(q->v);
    memset(q, 0, sizeof *q);
}
