/* SPDX-License-Identifier: Apache-2.0 */
/* pool.h - worker threads for the adapter calls of a negotiation round.
 *
 * A batch is a set of tasks that run concurrently and are waited for together,
 * with a time limit.  Workers are started on demand (up to a maximum) and end
 * after a while idle, so a task that hangs in an adapter never starves the
 * others: the next batch simply gets a new worker.
 *
 * When the caller gives up on a batch (acc_batch_free before every task is
 * done) the unfinished tasks are abandoned: each still runs to its end (or is
 * skipped if it had not started) and then its abandoned() callback is called
 * in the worker; that callback owns the task's argument from then on.
 */
#ifndef ACC_POOL_H
#define ACC_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct acc_pool;
struct acc_batch;

typedef void (*acc_task_fn)(void *arg);
/* ran: whether the task's function ran before it was abandoned. */
typedef void (*acc_abandon_fn)(void *arg, bool ran);

acc_err acc_pool_new(unsigned max_threads, struct acc_pool **out, struct acc_error *err);
/* Waits for every queued and running task, abandoned ones included, and
 * frees the pool.  After acc_pool_interrupt it waits half a second at most:
 * false when tasks still run then (the pool stays, for them, until the
 * process ends). */
bool acc_pool_free(struct acc_pool *pool);

/* Makes every wait of this pool's batches, current and later, return at
 * once (shutdown): the callers treat their unfinished tasks as timed out.
 * Tasks still run (the adapters are interrupted separately). */
void acc_pool_interrupt(struct acc_pool *pool);
bool acc_pool_interrupted(struct acc_pool *pool);

/* A batch for up to n tasks; NULL when out of memory. */
struct acc_batch *acc_batch_new(struct acc_pool *pool, size_t n);
acc_err acc_batch_submit(struct acc_batch *b, acc_task_fn run, acc_abandon_fn abandoned, void *arg);
/* Waits until every task is done or timeout_us passed (negative: no limit).
 * True when all are done. */
bool acc_batch_wait(struct acc_batch *b, int64_t timeout_us);
/* Releases the batch; unfinished tasks are abandoned (see above).  When
 * abandoned is not NULL, abandoned[i] tells for each task (in submit order)
 * whether it was: the caller may use the results of the others only.  The
 * decision is taken atomically, so a task finishing meanwhile is either
 * reported done here or handed to its abandoned() callback, never neither. */
void acc_batch_free(struct acc_batch *b, bool *abandoned);

#endif
