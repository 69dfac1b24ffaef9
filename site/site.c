/* SPDX-License-Identifier: Apache-2.0 */
/* site.c - the daemon's life: its store (migrations, then recovery of the
 * intent rows a crash left), its adapters, its peers and its jobs table,
 * its listener; reload (SIGHUP: certificates and peers) and stop. */
#include "site_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/common/account.h"
#include "../lib/identity/mapfile.h"
#include "../lib/jwt/jwt.h"
#include "../lib/common/kv.h"
#include "../lib/common/log.h"
#include "../lib/common/strutil.h"
#include "site_jobs.h"

/* The jobs' directories: beside the database ("alpha.db" -> "alpha.jobs"). */
static char *jobs_directory(const char *db)
{
    size_t n = strlen(db);
    const char *dot = strrchr(db, '.');
    const char *slash = strrchr(db, '/');
    if (dot && (!slash || dot > slash))
        n = (size_t)(dot - db);
    char *d = malloc(n + 6);
    if (d) {
        memcpy(d, db, n);
        memcpy(d + n, ".jobs", 6);
    }
    return d;
}

static acc_err open_jobs(struct acc_site *s, struct acc_error *err)
{
    struct acc_site_cidr *nets = NULL;
    size_t n_nets = 0;
    char *dir = NULL;
    acc_err rc = ACC_OK;
    if (strcmp(s->cfg.db_path, ":memory:") == 0)
        return ACC_OK; /* no place for job directories: no jobs */
    if (s->cfg.control_networks &&
        (rc = acc_site_cidrs_parse(s->cfg.control_networks, &nets, &n_nets, err)) != ACC_OK)
        goto out;
    if (!(dir = jobs_directory(s->cfg.db_path))) {
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    /* A site whose batch adapter gives process commands (slurm: srun
     * --reservation, sge: qsub -sync y -ar; the first such resource's)
     * starts its proxies through it: the batch system's daemons start
     * them, outside this daemon's sandbox. */
    struct acc_adapter *batch = NULL;
    for (size_t i = 0; i < s->n_res && !batch; i++) {
        if (acc_adapter_has(s->res[i].ad, ACC_CAP_PROCESS))
            batch = s->res[i].ad;
    }
    struct acc_site_jobs_cfg jc = {
        .directory = dir,
        .proxy_path = s->cfg.hydra_pmi_proxy,
        .job_user = s->cfg.job_user,
        .nets = nets,
        .n_nets = n_nets,
        .batch = batch,
    };
    rc = acc_site_jobs_open(&jc, &s->jobs, err);
    if (rc) {
        /* A site without a usable proxy serves reservations all the same. */
        acc_log_warn("site %s: jobs are not served: %s", s->cfg.name, err->msg);
        s->jobs = NULL;
        rc = ACC_OK;
    }
out:
    free(nets);
    free(dir);
    return rc;
}

acc_err acc_site_start(struct acc_site_config *cfg, struct acc_site **out, struct acc_error *err)
{
    *out = NULL;
    struct acc_site *s = calloc(1, sizeof *s);
    if (!s) {
        acc_site_config_release(cfg);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    s->cfg = *cfg;
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < SITE_KEY_LOCKS; i++)
        pthread_mutex_init(&s->key_locks[i], NULL);
    pthread_rwlock_init(&s->map_lock, NULL);
    /* before any thread: it initialises libcurl */
    if (!(s->jwt = acc_jwt_cache_new())) {
        acc_site_stop(s);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    acc_err rc = site_store_open(s->cfg.db_path, s->cfg.durable, &s->store, err);
    struct acc_mapfile *m = NULL;
    if (!rc && !(rc = site_identity_read(&s->cfg, &m, err)))
        site_identity_set(s, m, &s->cfg);
    if (!rc)
        rc = site_peers_new(s->cfg.peers, s->cfg.n_peers, &s->peers, err);
    if (!rc)
        rc = site_open_resources(s, err);
    if (!rc)
        rc = site_recover(s, err);
    if (!rc)
        rc = open_jobs(s, err);
    if (!rc)
        rc = site_http_start(s, &s->http, err);
    if (rc) {
        acc_site_stop(s);
        return rc;
    }
    acc_log_info("site %s: serving %zu resource(s) on https://%s:%u (%zu peer(s))", s->cfg.name,
                 s->n_res, s->cfg.listen_host, site_http_port(s->http), s->cfg.n_peers);
    char who[512];
    acc_account_describe_self(who, sizeof who);
    acc_log_info("site %s: running as %s", s->cfg.name, who);
    *out = s;
    return ACC_OK;
}

unsigned acc_site_port(const struct acc_site *s)
{
    return site_http_port(s->http);
}

acc_err acc_site_reload(struct acc_site *s, struct acc_site_config *fresh, struct acc_error *err)
{
    /* the mapfile is read whole before anything changes, and replaces the
     * running one when everything else did */
    struct acc_mapfile *m = NULL;
    acc_err rc = site_identity_read(fresh, &m, err);
    if (!rc)
        rc = site_http_reload(s->http, fresh->certificate, fresh->key, fresh->client_ca, err);
    if (!rc)
        rc = site_peers_replace(s->peers, fresh->peers, fresh->n_peers, err);
    if (rc)
        acc_mapfile_free(m);
    else
        site_identity_set(s, m, fresh);
    if (!rc)
        acc_log_info("site %s: reloaded the certificates, %zu peer(s) and the mapfile (%s)",
                     s->cfg.name, fresh->n_peers, fresh->mapfile ? fresh->mapfile : "none");
    acc_site_config_release(fresh);
    return rc;
}

void acc_site_stop(struct acc_site *s)
{
    if (!s)
        return;
    site_http_stop(s->http);
    acc_site_jobs_close(s->jobs);
    site_close_resources(s);
    site_peers_free(s->peers);
    site_store_close(s->store);
    acc_mapfile_free(s->mapfile);
    site_issuers_free(s->issuers, s->n_issuers);
    acc_jwt_cache_free(s->jwt);
    pthread_rwlock_destroy(&s->map_lock);
    for (size_t i = 0; i < SITE_KEY_LOCKS; i++)
        pthread_mutex_destroy(&s->key_locks[i]);
    acc_site_config_release(&s->cfg);
    free(s);
}
