/* SPDX-License-Identifier: Apache-2.0 */
/* replay_cmd.c - accordd --replay WORKLOAD (replay.h): the workload read
 * with accord-sim's parsers and generators, the configured sites' adapters
 * opened as accordd opens them, previews as the live frames, and the
 * placements printed.  Never reserves, never cancels, never opens
 * accordd's database. */
#include "replay.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../adapters/adapter.h"
#include "../../resources/resources.h"
#include "../config/config.h"
#include "../../simulator/wsim.h"

/* The live frames: a preview of the site's adapter (duration 1 s). */
struct live_ctx {
    const struct acc_config *cfg;
    struct acc_adapter **ad;
};

static acc_err live_preview(void *ctx, size_t site, int64_t amount, acc_time from, acc_time until,
                            struct acc_frames *out, struct acc_error *err)
{
    struct live_ctx *l = ctx;
    struct acc_resource res = {
        .kind = ACC_RES_NODES, .name = l->cfg->res.sites[site].name, .amount = amount};
    return acc_adapter_preview(l->ad[site], &res, from, until, 1, out, err);
}

/* An SWF trace starts with ';' comments or numeric fields; a parameter
 * file with "key = value" lines or '#' comments. */
static int is_swf(const char *path, char *msg, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(msg, len, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    int c, swf = 0;
    while ((c = fgetc(f)) != EOF) {
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
            continue;
        swf = c == ';' || c == '-' || (c >= '0' && c <= '9');
        break;
    }
    fclose(f);
    return swf;
}

/* The simulator's parameters of a trace file: its jobs as they are, the
 * first ACC_REPLAY_MAX_JOBS of a longer one. */
static bool trace_params(const char *path, struct wsim_params *p, char *msg, size_t len)
{
    wsim_params_init(p);
    if (strlen(path) >= sizeof p->trace) {
        snprintf(msg, len, "%s: trace: too long", path);
        wsim_params_release(p);
        return false;
    }
    p->wl = WSIM_W_SWF;
    snprintf(p->trace, sizeof p->trace, "%s", path);
    p->load = 0;
    p->jobs = ACC_REPLAY_MAX_JOBS;
    return true;
}

/* The simulator's parameters of an experiment file (its base point). */
static bool experiment_params(const char *path, struct wsim_params *p, char *msg, size_t len)
{
    char m[WSIM_ERR_LEN];
    struct wsim_experiment e;
    if (!wsim_experiment_load(&e, path, m, sizeof m)) {
        snprintf(msg, len, "%s", m);
        return false;
    }
    bool ok = wsim_experiment_params(&e, 0, 0, p, m, sizeof m);
    wsim_experiment_free(&e);
    if (!ok)
        snprintf(msg, len, "%s: %s", path, m);
    return ok;
}

/* The simulator's parameters for the workload, on the configured sites. */
static bool workload_params(const struct acc_config *cfg, const struct acc_replay_cmd *cmd,
                            struct wsim_params *p, char *msg, size_t len)
{
    char m[WSIM_ERR_LEN];
    int swf = is_swf(cmd->workload, msg, len);
    if (swf < 0)
        return false;
    if (!(swf ? trace_params : experiment_params)(cmd->workload, p, msg, len))
        return false;
    /* The workload is drawn for the configured sites: load is relative to
     * them, and a trace's jobs larger than all of them are dropped. */
    int64_t sizes[ACC_REPLAY_MAX_SITES];
    for (size_t i = 0; i < cfg->res.n_sites && i < ACC_REPLAY_MAX_SITES; i++)
        sizes[i] = cfg->res.sites[i].nodes;
    if (cmd->jobs > 0)
        p->jobs = cmd->jobs;
    p->warmup = 0;
    /* The file's discipline is not the replay's: the replay is Accord's
     * advance-reservation mode (AR) with accordd's policy. */
    if (!wsim_params_set_clusters(p, sizes, (int)cfg->res.n_sites, m, sizeof m) ||
        !wsim_params_set_policy(p, "AR", m, sizeof m) || !wsim_params_check(p, m, sizeof m)) {
        snprintf(msg, len, "%s on the configured sites: %s", cmd->workload, m);
        wsim_params_release(p);
        return false;
    }
    if (p->jobs > ACC_REPLAY_MAX_JOBS) {
        snprintf(msg, len, "%s: %ld jobs, a replay takes at most %d (--jobs N)", cmd->workload,
                 p->jobs, ACC_REPLAY_MAX_JOBS);
        wsim_params_release(p);
        return false;
    }
    return true;
}

/* The simulator's jobs as the replay's, at from + their submit offsets. */
static bool convert(const struct wsim_params *p, const struct wsim_workload_set *w, acc_time from,
                    struct acc_replay_job *jobs, char *msg, size_t len)
{
    for (size_t i = 0; i < w->n; i++) {
        const struct wsim_job *s = &w->v[i];
        struct acc_replay_job *j = &jobs[i];
        if (!(s->submit >= 0 && s->submit < 1e11 && s->t1 >= 0 && s->t1 < 1e11)) {
            snprintf(msg, len, "job %zu: submit %g s or run time %g s out of range", i + 1,
                     s->submit, s->t1);
            return false;
        }
        j->submit = from + (acc_time)llround(s->submit);
        j->duration = (int64_t)ceil(s->t1);
        if (j->duration < 1)
            j->duration = 1;
        j->total = s->total;
        j->n_comp = (size_t)s->ncomp;
        for (int k = 0; k < s->ncomp; k++)
            j->comp[k] = s->comp[k];
        j->flexible = p->split == WSIM_SPLIT_FLEX && s->ncomp == 1;
    }
    return true;
}

/* The replay's setup from the options and the configuration (everything
 * but its sites and provider); false with the message printed. */
static bool setup_of(const struct acc_config *cfg, const struct acc_replay_cmd *cmd,
                     struct acc_replay_setup *s, FILE *err_out)
{
    struct acc_error err = {0};
    if (cfg->res.n_sites > ACC_REPLAY_MAX_SITES) {
        fprintf(err_out,
                "accordd: --replay places on at most %d sites; the configuration has %zu\n",
                ACC_REPLAY_MAX_SITES, cfg->res.n_sites);
        return false;
    }
    if (cmd->jobs < 0 || cmd->jobs > ACC_REPLAY_MAX_JOBS) {
        fprintf(err_out, "accordd: --jobs is 1 to %d\n", ACC_REPLAY_MAX_JOBS);
        return false;
    }
    if (acc_config_policy(cfg, cmd->policy, &s->policy, &err)) {
        fprintf(err_out, "accordd: --policy: %s\n", err.msg);
        return false;
    }
    s->candidates = cfg->policy_candidates;
    s->from = acc_now();
    if (cmd->from && acc_time_parse(cmd->from, &s->from, &err)) {
        fprintf(err_out, "accordd: --from: %s\n", err.msg);
        return false;
    }
    s->until = s->from + cfg->horizon;
    return true;
}

/* The workload's jobs as the replay's, submitted from `from`, and room for
 * their placements: 0, or the exit status of a failure (its message
 * printed). */
static int make_jobs(const struct wsim_params *p, struct wsim_workload_set *w, acc_time from,
                     struct acc_replay_job **jobs, struct acc_replay_placement **pl, FILE *err_out)
{
    char msg[512];
    if (!wsim_workload_make(p, 0, w, msg, sizeof msg)) {
        fprintf(err_out, "accordd: --replay: %s\n", msg);
        return 2;
    }
    *jobs = calloc(w->n ? w->n : 1, sizeof **jobs);
    *pl = calloc(w->n ? w->n : 1, sizeof **pl);
    if (!*jobs || !*pl) {
        fprintf(err_out, "accordd: --replay: out of memory for %zu jobs\n", w->n);
        return 1;
    }
    if (!convert(p, w, from, *jobs, msg, sizeof msg)) {
        fprintf(err_out, "accordd: --replay: %s\n", msg);
        return 2;
    }
    return 0;
}

/* Places the jobs on previews of the configured sites' adapters (opened
 * here) and prints the placements: the exit status. */
static int place(const struct acc_config *cfg, const struct acc_replay_cmd *cmd,
                 struct acc_replay_setup *s, const struct acc_replay_job *jobs, size_t n,
                 struct acc_replay_placement *pl, FILE *out, FILE *err_out)
{
    struct acc_error err = {0};
    struct acc_adapter *ad[ACC_REPLAY_MAX_SITES] = {0};
    int status = 1;
    for (size_t i = 0; i < cfg->res.n_sites; i++) {
        /* Copies of the calendar files: a serving accordd holds them. */
        struct acc_resources_env env = {
            .db_path = cfg->db_path, .durable = cfg->durable, .snapshot = true};
        if (acc_resources_open_site(&cfg->res, i, &env, &ad[i], &err)) {
            fprintf(err_out, "accordd: %s\n", err.msg);
            goto out;
        }
    }
    struct live_ctx lc = {cfg, ad};
    s->live = live_preview;
    s->ctx = &lc;
    struct acc_replay_stats st;
    struct acc_replay_summary sum;
    acc_err rc = acc_replay_run(s, jobs, n, pl, &st, &err);
    if (!rc)
        rc = acc_replay_summarise(s, jobs, n, pl, &sum, &err);
    if (rc) {
        fprintf(err_out, "accordd: %s\n", err.msg);
        status = rc == ACC_ERR_INVALID || rc == ACC_ERR_CAPACITY ? 2 : 1;
        goto out;
    }
    acc_replay_print(out, cmd->csv, s, jobs, n, pl, &sum, &st);
    fflush(out);
    status = ferror(out) ? 1 : 0;
out:
    for (size_t i = 0; i < ACC_REPLAY_MAX_SITES; i++) {
        if (ad[i])
            acc_adapter_close(ad[i]);
    }
    return status;
}

int acc_replay_command(const struct acc_config *cfg, const struct acc_replay_cmd *cmd, FILE *out,
                       FILE *err_out)
{
    char msg[512];
    struct wsim_params p;
    struct wsim_workload_set w = {0};
    struct acc_replay_job *jobs = NULL;
    struct acc_replay_placement *pl = NULL;
    struct acc_replay_site sites[ACC_REPLAY_MAX_SITES];
    struct acc_replay_setup s = {
        .sites = sites, .n_sites = cfg->res.n_sites, .seed = cfg->policy_seed};

    if (!setup_of(cfg, cmd, &s, err_out))
        return 2;
    if (!workload_params(cfg, cmd, &p, msg, sizeof msg)) {
        fprintf(err_out, "accordd: --replay: %s\n", msg);
        return 2;
    }
    for (size_t i = 0; i < cfg->res.n_sites; i++)
        sites[i] = (struct acc_replay_site){cfg->res.sites[i].name, cfg->res.sites[i].nodes};
    int status = make_jobs(&p, &w, s.from, &jobs, &pl, err_out);
    if (!status)
        status = place(cfg, cmd, &s, jobs, w.n, pl, out, err_out);
    free(jobs);
    free(pl);
    wsim_workload_free(&w);
    wsim_params_release(&p);
    return status;
}
