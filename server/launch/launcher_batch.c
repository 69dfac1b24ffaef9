/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_batch.c - the components of a job that go into their
 * reservations through their site's batch system (launch = sbatch): one
 * batch job each, asked about every few seconds, cancelled when the job is
 * stopped. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/log.h"
#include "../../lib/common/strutil.h"
#include "launcher_int.h"

bool acc_launcher_batch_text(struct acc_launcher_entry *e)
{
    struct acc_buf b = ACC_BUF_INIT;
    for (size_t i = 0; i < e->n_parts; i++)
        acc_buf_printf(&b, "%s %s %s\n", e->parts[i].comp, e->parts[i].site, e->parts[i].job_id);
    free(e->run.batch);
    e->run.batch = e->n_parts ? acc_buf_detach(&b, NULL) : NULL;
    acc_buf_release(&b);
    return !e->n_parts || e->run.batch;
}

bool acc_launcher_batch_parse(struct acc_launcher_entry *e, const char *text)
{
    for (const char *p = text; p && *p;) {
        struct acc_launcher_part x = {0};
        if (sscanf(p, "%63s %63s %63s", x.comp, x.site, x.job_id) == 3) {
            struct acc_launcher_part *v = realloc(e->parts, (e->n_parts + 1) * sizeof *v);
            if (!v)
                return false;
            e->parts = v;
            e->parts[e->n_parts++] = x;
        }
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : NULL;
    }
    return true;
}

void acc_launcher_cancel_parts(struct acc_launcher *l, struct acc_launcher_entry *e)
{
    for (size_t i = 0; i < e->n_parts; i++) {
        struct acc_error err;
        if (!e->parts[i].done &&
            l->hooks.job_cancel(l->hooks.ctx, e->parts[i].site, e->parts[i].job_id, &err))
            acc_log_warn("agreement %s: %s", e->id, err.msg);
    }
}

/* Submits the components of sites with launch = sbatch into their
 * reservations, each with the environment its mpiexec segment would get. */
acc_err acc_launcher_submit_parts(struct acc_launcher *l, struct acc_launcher_entry *e,
                                  const char *description, const char *user, struct acc_error *err)
{
    const struct acc_agreement *a = &e->ag;
    const struct acc_run *r = &e->run;
    for (size_t i = 0; i < a->n_comps; i++) {
        const struct acc_alloc_component *c = &a->comps[i];
        const struct acc_site_cfg *site = acc_config_site(l->cfg, c->site);
        if (!site || !site->sbatch)
            continue;
        char v[5][PATH_MAX + 64], output[PATH_MAX];
        snprintf(v[0], sizeof v[0], "ACCORD_AGREEMENT=%s", a->id);
        snprintf(v[1], sizeof v[1], "ACCORD_COMPONENT=%s", c->name);
        snprintf(v[2], sizeof v[2], "ACCORD_LAUNCH_DESCRIPTION=%s", description);
        if (r->style == ACC_LAUNCH_MPICH_G2) {
            snprintf(v[3], sizeof v[3], "GLOBUS_DUROC_SUBJOB_INDEX=%zu", i);
            v[4][0] = '\0';
        } else {
            snprintf(v[3], sizeof v[3], "METAMPICH_CONFIG=%s", description);
            snprintf(v[4], sizeof v[4], "METAMPICH_METAHOST=%s", c->name);
        }
        const char *env[] = {l->path, v[0], v[1], v[2], v[3], v[4][0] ? v[4] : NULL, NULL};
        snprintf(output, sizeof output, "%s/%s.out", r->directory, c->name);
        struct acc_job job = {.key = c->reservation,
                              .local_id = c->local_id,
                              .nodes = c->nodes,
                              .ppn = c->ppn,
                              .executable = c->executable,
                              .args = (const char *const *)c->args,
                              .n_args = c->n_args,
                              .directory = r->directory,
                              .output = output,
                              .end = a->end,
                              .env = env,
                              .user = user,
                              /* whom it is for: a site daemon runs it as that
                               * user's account there */
                              .identity =
                                  a->identity.user || a->identity.subject ? &a->identity : NULL};
        struct acc_launcher_part x = {0};
        acc_strlcpy(x.comp, c->name, sizeof x.comp);
        acc_strlcpy(x.site, c->site, sizeof x.site);
        acc_err rc = l->hooks.submit(l->hooks.ctx, c->site, &job, x.job_id, sizeof x.job_id, err);
        struct acc_launcher_part *pv = rc ? NULL : realloc(e->parts, (e->n_parts + 1) * sizeof *pv);
        if (!rc && !pv)
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        if (rc) {
            acc_error_prefix(err, "component %s", c->name);
            acc_launcher_cancel_parts(l, e);
            return rc;
        }
        e->parts = pv;
        e->parts[e->n_parts++] = x;
        acc_log_info("agreement %s: component %s is batch job %s on site %s", a->id, c->name,
                     x.job_id, c->site);
    }
    return ACC_OK;
}

bool acc_launcher_parts_done(struct acc_launcher *l, struct acc_launcher_entry *e, bool poll)
{
    bool all = true;
    for (size_t i = 0; i < e->n_parts; i++) {
        struct acc_launcher_part *x = &e->parts[i];
        if (!x->done && poll) {
            struct acc_error err;
            struct acc_job_status st;
            if (l->hooks.job_status(l->hooks.ctx, x->site, x->job_id, &st, &err))
                acc_log_warn("agreement %s: %s", e->id, err.msg); /* asked again later */
            else if (st.done) {
                x->done = true;
                x->status = st;
            }
        }
        all &= x->done;
    }
    return all;
}

const struct acc_launcher_part *acc_launcher_part_failed(const struct acc_launcher_entry *e)
{
    for (size_t i = 0; i < e->n_parts; i++) {
        if (e->parts[i].done && e->parts[i].status.exit_status != 0)
            return &e->parts[i];
    }
    return NULL;
}
