/* SPDX-License-Identifier: Apache-2.0 */
/* remote.c - the `remote` adapter: one site daemon (accord-site), reached
 * over the adapter protocol (lib/proto, docs/protocol.md) on HTTPS with
 * mutual TLS.  Every operation is one exchange (remote_http.c); the site
 * keeps its own calendars and journal, so this adapter keeps no state but
 * its connections.  Here: the settings, the adapter's life, its health and
 * counters, and the table; the operations are in remote_reservations.c,
 * remote_jobs.c and remote_flows.c. */
#include "remote_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../../lib/common/strutil.h"
#include "../../lib/proto/proto.h"

/* ---------------------------------------------------------------- settings */

static acc_err file_setting(struct remote *r, const struct acc_adapter_env *env, const char *k,
                            const char *v, char **dst, struct acc_error *err)
{
    if (!v[0] || access(v, R_OK) != 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: %s: cannot read '%s'", env->section, k, v);
    free(*dst);
    *dst = acc_strdup(v);
    (void)r;
    return *dst ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
}

static acc_err int_setting(const struct acc_adapter_env *env, const char *k, const char *v,
                           int64_t min, int64_t max, int64_t *out, struct acc_error *err)
{
    struct acc_error e;
    if (acc_parse_i64(v, min, max, out, &e))
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: %s: %s", env->section, k, e.msg);
    return ACC_OK;
}

static acc_err url_setting(struct remote *r, const struct acc_adapter_env *env, const char *v,
                           struct acc_error *err)
{
    size_t n = strlen(v);
    while (n > 0 && v[n - 1] == '/')
        n--;
    if (n == 0 || n >= sizeof r->url || strchr(v, '?') || strchr(v, '#') || strchr(v, ' '))
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s: url: '%s' is not a site daemon's address such as "
                             "https://10.79.1.11:8443",
                             env->section, v);
    memcpy(r->url, v, n);
    r->url[n] = '\0';
    return ACC_OK;
}

/* forward_token = no, or the site's audience: the token goes to the site
 * only when its "aud" names it, so that a token meant for other services
 * is never shown to this one.  "yes" names no audience: refused. */
static acc_err forward_setting(struct remote *r, const struct acc_adapter_env *env, const char *v,
                               struct acc_error *err)
{
    bool on;
    struct acc_error e;
    if (acc_parse_bool(v, &on, &e) == ACC_OK) {
        if (on)
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "%s: forward_token: name the site's audience (its [issuer] "
                                 "audience, as in the users' tokens' \"aud\"), not %s: a token "
                                 "is forwarded only to a site its audience names",
                                 env->section, v);
        r->forward_aud[0] = '\0';
        return ACC_OK;
    }
    if (!*v || strpbrk(v, " \t") || strlen(v) >= sizeof r->forward_aud)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s: forward_token: '%.80s' is not an audience (one word, at most "
                             "%zu bytes) nor no",
                             env->section, v, sizeof r->forward_aud - 1);
    acc_strlcpy(r->forward_aud, v, sizeof r->forward_aud);
    return ACC_OK;
}

/* The settings into r, as open and check read them: nothing is asked of
 * the site daemon, the files named are only looked at.  *key: the setting
 * at fault. */
static acc_err read_settings(struct remote *r, const struct acc_adapter_env *env, const char **key,
                             struct acc_error *err)
{
    acc_err rc = ACC_OK;
    r->timeout_s = 5;
    r->connect_timeout_s = 2;
    r->retries = 2;
    int64_t conns = 8;
    for (size_t i = 0; i < env->n_settings && !rc; i++) {
        const char *k = env->settings[i].key, *v = env->settings[i].value;
        *key = k;
        if (strcmp(k, "url") == 0)
            rc = url_setting(r, env, v, err);
        else if (strcmp(k, "ca") == 0)
            rc = file_setting(r, env, k, v, &r->ca, err);
        else if (strcmp(k, "certificate") == 0)
            rc = file_setting(r, env, k, v, &r->cert, err);
        else if (strcmp(k, "key") == 0)
            rc = file_setting(r, env, k, v, &r->key, err);
        else if (strcmp(k, "remote_name") == 0) {
            if (!acc_name_valid(v, sizeof r->remote_name))
                rc = acc_error_set(err, ACC_ERR_CONFIG, "%s: remote_name: '%s' is not a name",
                                   env->section, v);
            else
                acc_strlcpy(r->remote_name, v, sizeof r->remote_name);
        } else if (strcmp(k, "timeout") == 0)
            rc = int_setting(env, k, v, 1, 3600, &r->timeout_s, err);
        else if (strcmp(k, "connect_timeout") == 0)
            rc = int_setting(env, k, v, 1, 600, &r->connect_timeout_s, err);
        else if (strcmp(k, "retries") == 0)
            rc = int_setting(env, k, v, 0, REMOTE_MAX_RETRIES, &r->retries, err);
        else if (strcmp(k, "connections") == 0)
            rc = int_setting(env, k, v, 1, REMOTE_MAX_CONNECTIONS, &conns, err);
        else if (strcmp(k, "insecure_http") == 0) {
            struct acc_error e;
            if (acc_parse_bool(v, &r->insecure_http, &e))
                rc = acc_error_set(err, ACC_ERR_CONFIG, "%s: insecure_http: %s", env->section,
                                   e.msg);
        } else if (strcmp(k, "forward_token") == 0) {
            rc = forward_setting(r, env, v, err);
        } else
            rc = acc_error_set(err, ACC_ERR_CONFIG,
                               "%s: unknown setting '%s' (remote takes url, ca, certificate, key, "
                               "remote_name, timeout, connect_timeout, retries, connections, "
                               "insecure_http, forward_token)",
                               env->section, k);
    }
    if (rc)
        return rc;
    *key = "url";
    if (!r->url[0])
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s: adapter remote needs url = the site daemon's address "
                             "(https://HOST:PORT)",
                             env->section);
    bool https = strncasecmp(r->url, "https://", 8) == 0;
    bool http = strncasecmp(r->url, "http://", 7) == 0;
    if (!https && !(http && r->insecure_http))
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s: url: '%s' must be https:// (http:// only with insecure_http = "
                             "yes, for tests of the protocol)",
                             env->section, r->url);
    if (!https && r->forward_aud[0]) {
        *key = "forward_token";
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s: forward_token: the user's token is never sent over http:// "
                             "(the url must be https://)",
                             env->section);
    }
    *key = "ca";
    if (!r->ca && https)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s: adapter remote needs ca = the site's CA certificate (PEM file)",
                             env->section);
    *key = r->cert ? "certificate" : "key";
    if (!r->cert != !r->key)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s: certificate and key (accordd's client certificate) go together",
                             env->section);
    *key = NULL;
    r->n_slots = (size_t)conns;
    return ACC_OK;
}

/* ---------------------------------------------------------------- lifetime */

static acc_err remote_open(void *state, const struct acc_adapter_env *env, struct acc_error *err)
{
    struct remote *r = state;
    if (!acc_name_valid(env->name, sizeof r->name))
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: bad name", env->section);
    acc_strlcpy(r->name, env->name, sizeof r->name);
    acc_strlcpy(r->remote_name, env->name, sizeof r->remote_name);
    r->network = env->links != NULL;
    const char *key;
    acc_err rc = read_settings(r, env, &key, err);
    if (rc)
        return rc;
    snprintf(r->what, sizeof r->what, "%s %s (%s)", r->network ? "network" : "site", r->name,
             r->url);
    return remote_http_open(r, err);
}

static void remote_close(void *state)
{
    struct remote *r = state;
    remote_http_close(r);
    free(r->ca);
    free(r->cert);
    free(r->key);
}

/* The settings as open reads them; the site daemon is not asked. */
static acc_err remote_check(const struct acc_adapter_env *env, const char **key,
                            struct acc_error *err)
{
    struct remote *r = calloc(1, sizeof *r);
    if (!r)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    *key = NULL;
    acc_err rc = ACC_OK;
    if (!acc_name_valid(env->name, sizeof r->name))
        rc = acc_error_set(err, ACC_ERR_CONFIG, "%s: bad name", env->section);
    if (!rc)
        rc = read_settings(r, env, key, err);
    free(r->ca);
    free(r->cert);
    free(r->key);
    free(r);
    return rc;
}

static unsigned remote_instance_caps(void *state)
{
    struct remote *r = state;
    if (r->network)
        return ACC_CAP_BANDWIDTH | ACC_CAP_PROVISION | ACC_CAP_REPLACE | ACC_CAP_THREADSAFE;
    return ACC_CAP_NODES | ACC_CAP_SUBMIT | ACC_CAP_NODE_NAMES | ACC_CAP_REPLACE |
           ACC_CAP_THREADSAFE;
}

static void remote_interrupt(void *state)
{
    remote_http_interrupt(state);
}

/* ------------------------------------------------------- health, counters */

/* Up when the site daemon answers and says it is up; the round trip is the
 * exchange's (on a kept-alive connection: one request and its answer). */
static acc_err remote_health(void *state, struct acc_health *out)
{
    struct remote *r = state;
    struct remote_reply rep = {0};
    struct acc_error err = {0};
    struct acc_proto_health h;
    memset(&h, 0, sizeof h);
    acc_strlcpy(out->endpoint, r->url, sizeof out->endpoint);
    acc_err rc = remote_call(r, "GET", "/v1/health", NULL, 0, true, &rep, &err);
    if (!rc) {
        struct acc_error why = {0};
        if (acc_proto_read_health(acc_buf_str(&rep.body), rep.body.len, &h, &why))
            rc = remote_protocol_error(r, "health", &why, &err);
    }
    if (rc) {
        out->up = false;
        acc_strlcpy(out->detail, err.msg, sizeof out->detail);
    } else {
        out->up = h.up;
        out->rtt_us = rep.rtt_us > 0 ? rep.rtt_us : 1;
        if (h.version != ACC_PROTO_VERSION)
            snprintf(out->detail, sizeof out->detail, "site %s speaks protocol version %u, not %u",
                     h.site, h.version, (unsigned)ACC_PROTO_VERSION);
        else
            snprintf(out->detail, sizeof out->detail, "site %.63s: %.180s", h.site, h.detail);
    }
    remote_reply_release(&rep);
    return rc;
}

/* "stats": the counters since open, one "name value" a line (tests and
 * the benchmark read them). */
static acc_err remote_control(void *state, const char *op, const struct acc_kv *args, size_t n_args,
                              struct acc_buf *reply, struct acc_error *err)
{
    struct remote *r = state;
    (void)args;
    if (strcmp(op, "stats") != 0 || n_args)
        return acc_error_set(err, ACC_ERR_UNSUPPORTED,
                             "%s: the remote adapter takes the control 'stats' (no arguments)",
                             r->what);
    acc_buf_printf(reply, "calls %llu\nattempts %llu\nretries %llu\nconnects %llu\n",
                   (unsigned long long)atomic_load(&r->calls),
                   (unsigned long long)atomic_load(&r->attempts),
                   (unsigned long long)atomic_load(&r->retries_done),
                   (unsigned long long)atomic_load(&r->connects));
    return acc_buf_ok(reply) ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
}

/* Every capability a site daemon may serve; open narrows it to what the
 * section is for (instance_caps). */
const struct acc_adapter_ops acc_remote_ops = {
    .version = ACC_ADAPTER_OPS_VERSION,
    .kind = "remote",
    .caps = ACC_CAP_NODES | ACC_CAP_BANDWIDTH | ACC_CAP_SUBMIT | ACC_CAP_NODE_NAMES |
            ACC_CAP_THREADSAFE | ACC_CAP_PROVISION | ACC_CAP_REPLACE,
    .state_size = sizeof(struct remote),
    .open = remote_open,
    .close = remote_close,
    .check = remote_check,
    .settings = (const struct acc_adapter_setting[]){{"url", "ftp://127.0.0.1"},
                                                     {"ca", "/nonexistent/ca.pem"},
                                                     {"certificate", "/nonexistent/client.pem"},
                                                     {"key", "/nonexistent/client.key"},
                                                     {"remote_name", "not a name"},
                                                     {"timeout", "0"},
                                                     {"connect_timeout", "0"},
                                                     {"retries", "-1"},
                                                     {"connections", "0"},
                                                     {"insecure_http", "maybe"},
                                                     {"forward_token", "yes"},
                                                     {NULL, NULL}},
    .preview = remote_preview,
    .reserve = remote_reserve,
    .query = remote_query,
    .cancel = remote_cancel,
    .submit = remote_submit,
    .job_status = remote_job_status,
    .job_cancel = remote_job_cancel,
    .health = remote_health,
    .control = remote_control,
    .interrupt = remote_interrupt,
    .provision = remote_provision,
    .provision_status = remote_provision_status,
    .preview_replacing = remote_preview_replacing,
    .reserve_replacing = remote_reserve_replacing,
    .instance_caps = remote_instance_caps,
};
