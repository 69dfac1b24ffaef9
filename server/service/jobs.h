/* SPDX-License-Identifier: Apache-2.0 */
/* jobs.h - the service's side of the launcher (internal to server/service/).
 *
 * The launcher knows nothing of the store: these are its hooks, which record
 * in the store what it reports (a job started, a job ended: the agreement is
 * Complete and the rest of its reservations goes back) and reach a site's
 * batch system through the site's adapter; and the hand-over, after a
 * restart, of the runs the store shows open.
 */
#ifndef ACC_SERVICE_JOBS_H
#define ACC_SERVICE_JOBS_H

#include "../../adapters/adapter.h"
#include "../../db/store.h"
#include "../../lib/common/error.h"
#include "../launch/launcher.h"

/* What the hooks need of the service; it must outlive the launcher. */
struct acc_jobs {
    struct acc_store *store;
    /* The adapter of a configured site; NULL for an unknown one. */
    struct acc_adapter *(*site_adapter)(void *ctx, const char *site);
    /* Gives back what is left of a committed agreement's reservations. */
    acc_err (*release)(void *ctx, const char *id, struct acc_error *err);
    void *ctx;
    /* Several instances on one database: an instance not seen for this many
     * seconds is dead, and a job starts only where its run is taken (the
     * store's run.instance).  0: one accordd, every run is its own. */
    int64_t dead_after;
};

/* The launcher's hooks, with j as their context. */
void acc_jobs_hooks(struct acc_jobs *j, struct acc_launcher_hooks *out);

/* After a restart: hands every run the store shows open (waiting or
 * running), with its agreement, to the launcher.  A run that cannot be read
 * is logged and skipped; an error only when the open runs cannot be listed. */
acc_err acc_jobs_resume(struct acc_jobs *j, struct acc_launcher *l, struct acc_error *err);

/* Hands the open run of one agreement to the launcher (several instances:
 * a run this instance holds, or has just taken). */
acc_err acc_jobs_resume_one(struct acc_jobs *j, struct acc_launcher *l, const char *id,
                            struct acc_error *err);

/* Records the run of id as lost with reason (a job no instance can watch
 * any more), and its agreement Complete. */
void acc_jobs_lost(struct acc_jobs *j, const char *id, const char *reason);

#endif
