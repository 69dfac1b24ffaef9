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
};

/* The launcher's hooks, with j as their context. */
void acc_jobs_hooks(struct acc_jobs *j, struct acc_launcher_hooks *out);

/* After a restart: hands every run the store shows open (waiting or
 * running), with its agreement, to the launcher.  A run that cannot be read
 * is logged and skipped; an error only when the open runs cannot be listed. */
acc_err acc_jobs_resume(struct acc_jobs *j, struct acc_launcher *l, struct acc_error *err);

#endif
