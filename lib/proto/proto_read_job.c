/* SPDX-License-Identifier: Apache-2.0 */
/* proto_read_job.c - the readers of Flow, ProvisionStatus, Job, JobRef,
 * JobStatus and Fault. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strutil.h"
#include "proto_internal.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Longest directory, output file or executable path; longest environment
 * entry (PATH=... can be long). */
#define PATH_TEXT_MAX 4096
#define ENV_TEXT_MAX  4096

/* ------------------------------------------------------------------ Flow */

void acc_proto_flow_release(struct acc_proto_flow *f)
{
    if (!f)
        return;
    for (size_t i = 0; f->addrs_a && i < f->flow.n_a; i++)
        free(f->addrs_a[i]);
    for (size_t i = 0; f->addrs_b && i < f->flow.n_b; i++)
        free(f->addrs_b[i]);
    free(f->addrs_a);
    free(f->addrs_b);
    free(f->site_a);
    free(f->site_b);
    memset(f, 0, sizeof *f);
}

static acc_err read_side(const xmlNode *n, char **site, char ***addrs, size_t *count,
                         struct acc_error *err)
{
    static const char *const attrs[] = {"site", NULL};
    char name[128];
    const char *s;
    const xmlNode *c = NULL;
    acc_err rc = acc_proto_attrs(n, attrs, err);

    if (!rc)
        rc = acc_proto_attr_req(n, "site", &s, err);
    if (!rc)
        rc = acc_proto_name(n, "site", s, name, sizeof name, err);
    if (!rc && !(*site = acc_strdup(name)))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (!rc && !(*addrs = calloc(ACC_PROTO_MAX_ADDRS, sizeof **addrs)))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    while (!rc && !(rc = acc_proto_next(n, &c, err)) && c) {
        char text[INET_ADDRSTRLEN];
        struct in_addr a;
        if (!acc_proto_is(c, "Address"))
            return acc_proto_unknown(c, err);
        if (*count == ACC_PROTO_MAX_ADDRS)
            return acc_proto_fail(c, ACC_ERR_INVALID, err, "%s: more than %d addresses",
                                  (const char *)n->name, ACC_PROTO_MAX_ADDRS);
        rc = acc_proto_attrs(c, NULL, err);
        if (!rc)
            rc = acc_proto_text_buf(c, text, sizeof text, err);
        if (!rc && inet_pton(AF_INET, text, &a) != 1)
            rc = acc_proto_fail(c, ACC_ERR_INVALID, err,
                                "Address: '%s' is not an IPv4 address in dotted quads", text);
        if (!rc && !((*addrs)[*count] = acc_strdup(text)))
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        if (!rc)
            (*count)++;
    }
    return rc;
}

acc_err acc_proto_read_flow(const char *body, size_t len, struct acc_proto_flow *out,
                            struct acc_error *err)
{
    static const char *const names[] = {"SideA", "SideB"};
    const xmlNode *f[N(names)];
    struct acc_proto_flow p = {.site_a = NULL};
    xmlDocPtr doc = NULL;

    memset(out, 0, sizeof *out);
    xmlNode *root = NULL;
    acc_err rc = acc_proto_open(body, len, "Flow", NULL, &doc, &root, err);
    if (rc)
        return rc;
    rc = acc_proto_children(root, names, f, N(names), err);
    if (!rc)
        rc = read_side(f[0], &p.site_a, &p.addrs_a, &p.flow.n_a, err);
    if (!rc)
        rc = read_side(f[1], &p.site_b, &p.addrs_b, &p.flow.n_b, err);
    p.flow.site_a = p.site_a;
    p.flow.site_b = p.site_b;
    p.flow.addrs_a = (const char *const *)p.addrs_a;
    p.flow.addrs_b = (const char *const *)p.addrs_b;
    if (rc)
        acc_proto_flow_release(&p);
    else
        *out = p;
    xmlFreeDoc(doc);
    return rc;
}

/* ------------------------------------------------------- ProvisionStatus */

static acc_err el_u64(const xmlNode *n, uint64_t *out, struct acc_error *err)
{
    char text[32];
    acc_err rc = acc_proto_attrs(n, NULL, err);
    if (!rc)
        rc = acc_proto_text_buf(n, text, sizeof text, err);
    if (!rc)
        rc = acc_proto_u64(n, NULL, text, out, err);
    return rc;
}

acc_err acc_proto_read_provision_status(const char *body, size_t len,
                                        struct acc_provision_status *out, struct acc_error *err)
{
    static const char *const attrs[] = {"provisioned", "active", "state", NULL};
    static const char *const names[] = {"Start", "End",   "?Activated", "?ViolatedAt",
                                        "?Why",  "Bytes", "Packets",    "Drops"};
    const xmlNode *f[N(names)];
    struct acc_provision_status s = {.provisioned = false};
    const char *prov, *act, *st;
    xmlDocPtr doc = NULL;
    xmlNode *root = NULL;
    acc_err rc = acc_proto_open(body, len, "ProvisionStatus", attrs, &doc, &root, err);
    if (rc)
        return rc;
    rc = acc_proto_attr_req(root, "provisioned", &prov, err);
    if (!rc)
        rc = acc_proto_attr_req(root, "active", &act, err);
    if (!rc)
        rc = acc_proto_attr_req(root, "state", &st, err);
    if (!rc)
        rc = acc_proto_bool(root, "provisioned", prov, &s.provisioned, err);
    if (!rc)
        rc = acc_proto_bool(root, "active", act, &s.active, err);
    if (!rc) {
        if (strcmp(st, "NotDetermined") == 0)
            s.state = ACC_GUARANTEE_NOT_DETERMINED;
        else if (strcmp(st, "Fulfilled") == 0)
            s.state = ACC_GUARANTEE_FULFILLED;
        else if (strcmp(st, "Violated") == 0)
            s.state = ACC_GUARANTEE_VIOLATED;
        else
            rc = acc_proto_fail(root, ACC_ERR_INVALID, err,
                                "ProvisionStatus: state '%.40s' is not NotDetermined, Fulfilled "
                                "or Violated",
                                st);
    }
    if (!rc)
        rc = acc_proto_children(root, names, f, N(names), err);
    if (!rc)
        rc = acc_proto_el_time(f[0], &s.start, err);
    if (!rc)
        rc = acc_proto_el_time(f[1], &s.end, err);
    if (!rc && s.end <= s.start)
        rc = acc_proto_fail(f[1], ACC_ERR_INVALID, err, "ProvisionStatus: End must be after Start");
    if (!rc && f[2])
        rc = acc_proto_el_time(f[2], &s.activated, err);
    if (!rc && f[3])
        rc = acc_proto_el_time(f[3], &s.violated_at, err);
    if (!rc && f[4]) {
        rc = acc_proto_attrs(f[4], NULL, err);
        if (!rc)
            rc = acc_proto_text_buf(f[4], s.why, sizeof s.why, err);
    }
    if (!rc)
        rc = el_u64(f[5], &s.bytes, err);
    if (!rc)
        rc = el_u64(f[6], &s.packets, err);
    if (!rc)
        rc = el_u64(f[7], &s.drops, err);
    if (!rc)
        *out = s;
    xmlFreeDoc(doc);
    return rc;
}

/* ------------------------------------------------------------------- Job */

void acc_proto_job_release(struct acc_proto_job *j)
{
    if (!j)
        return;
    for (size_t i = 0; j->args && i < j->job.n_args; i++)
        free(j->args[i]);
    for (size_t i = 0; j->env && i < j->n_env; i++)
        free(j->env[i]);
    free(j->args);
    free(j->env);
    free(j->key);
    free(j->local_id);
    free(j->executable);
    free(j->directory);
    free(j->output);
    free(j->host);
    acc_identity_release(&j->identity);
    memset(j, 0, sizeof *j);
}

/* NAME=value with NAME a shell variable name. */
static bool env_ok(const char *s)
{
    size_t i = 0;
    if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
        return false;
    while ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
           (s[i] >= '0' && s[i] <= '9') || s[i] == '_')
        i++;
    return s[i] == '=';
}

/* An element's text into *dst (once), at most max bytes, not empty. */
static acc_err text_once(const xmlNode *n, size_t max, char **dst, struct acc_error *err)
{
    if (*dst)
        return acc_proto_twice(n, err);
    acc_err rc = acc_proto_attrs(n, NULL, err);
    if (!rc)
        rc = acc_proto_text(n, max, dst, err);
    if (!rc && !(*dst)[0])
        rc =
            acc_proto_fail(n, ACC_ERR_INVALID, err, "%s: must not be empty", (const char *)n->name);
    return rc;
}

static acc_err job_attrs(const xmlNode *root, struct acc_proto_job *j, struct acc_error *err)
{
    static const char *const attrs[] = {"key", "localId", "host", "nodes", "ppn", NULL};
    char key[ACC_KEY_MAX], host[256];
    const char *k, *id = acc_proto_attr(root, "localId"), *h = acc_proto_attr(root, "host");
    const char *nodes, *ppn;
    acc_err rc = acc_proto_attrs(root, attrs, err);

    if (!rc)
        rc = acc_proto_attr_req(root, "key", &k, err);
    if (!rc)
        rc = acc_proto_attr_req(root, "nodes", &nodes, err);
    if (!rc)
        rc = acc_proto_attr_req(root, "ppn", &ppn, err);
    if (!rc)
        rc = acc_proto_key(root, "key", k, key, err);
    if (!rc && id && id[0] && !acc_proto_token_ok(id, ACC_LOCAL_ID_MAX - 1))
        rc = acc_proto_fail(root, ACC_ERR_INVALID, err,
                            "Job: localId '%.140s' is not 0 to %d printable characters without "
                            "blanks",
                            id, ACC_LOCAL_ID_MAX - 1);
    if (!rc && h)
        rc = acc_proto_name(root, "host", h, host, sizeof host, err);
    if (!rc)
        rc = acc_proto_i64(root, "nodes", nodes, 0, 1000000, &j->job.nodes, err);
    if (!rc)
        rc = acc_proto_i64(root, "ppn", ppn, 0, 1000000, &j->job.ppn, err);
    if (!rc && (!(j->key = acc_strdup(key)) || (id && !(j->local_id = acc_strdup(id))) ||
                (h && !(j->host = acc_strdup(host)))))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return rc;
}

acc_err acc_proto_read_job(const char *body, size_t len, struct acc_proto_job *out,
                           struct acc_error *err)
{
    struct acc_proto_job j = {.key = NULL};
    const xmlNode *c = NULL, *end = NULL, *who = NULL;
    xmlDocPtr doc = NULL;

    memset(out, 0, sizeof *out);
    acc_err rc = acc_proto_parse(body, len, "Job", &doc, err);
    if (rc)
        return rc;
    xmlNode *root = xmlDocGetRootElement(doc);
    j.args = calloc(ACC_PROTO_MAX_ARGS, sizeof *j.args);
    j.env = calloc(ACC_PROTO_MAX_ENV + 1, sizeof *j.env);
    rc = !j.args || !j.env ? acc_error_set(err, ACC_ERR_NOMEM, "out of memory")
                           : job_attrs(root, &j, err);
    while (!rc && !(rc = acc_proto_next(root, &c, err)) && c) {
        if (acc_proto_is(c, "Executable")) {
            rc = text_once(c, PATH_TEXT_MAX, &j.executable, err);
        } else if (acc_proto_is(c, "Directory")) {
            rc = text_once(c, PATH_TEXT_MAX, &j.directory, err);
        } else if (acc_proto_is(c, "Output")) {
            rc = text_once(c, PATH_TEXT_MAX, &j.output, err);
        } else if (acc_proto_is(c, "Argument")) {
            if (j.job.n_args == ACC_PROTO_MAX_ARGS)
                rc = acc_proto_fail(c, ACC_ERR_INVALID, err, "Job: more than %d arguments",
                                    ACC_PROTO_MAX_ARGS);
            if (!rc)
                rc = acc_proto_attrs(c, NULL, err);
            if (!rc)
                rc = acc_proto_text(c, ACC_PROTO_MAX_ARG_LEN, &j.args[j.job.n_args], err);
            if (!rc)
                j.job.n_args++;
        } else if (acc_proto_is(c, "Environment")) {
            if (j.n_env == ACC_PROTO_MAX_ENV)
                rc = acc_proto_fail(c, ACC_ERR_INVALID, err,
                                    "Job: more than %d environment entries", ACC_PROTO_MAX_ENV);
            if (!rc)
                rc = acc_proto_attrs(c, NULL, err);
            if (!rc)
                rc = acc_proto_text(c, ENV_TEXT_MAX, &j.env[j.n_env], err);
            if (!rc && !env_ok(j.env[j.n_env]))
                rc = acc_proto_fail(c, ACC_ERR_INVALID, err,
                                    "Environment: '%.60s' is not NAME=value", j.env[j.n_env]);
            j.n_env += j.env[j.n_env] != NULL;
        } else if (acc_proto_is(c, "End")) {
            rc = end ? acc_proto_twice(c, err) : acc_proto_el_time(c, &j.job.end, err);
            end = c;
        } else if (acc_proto_is(c, "Identity")) {
            rc = who ? acc_proto_twice(c, err) : acc_proto_read_identity(c, &j.identity, err);
            who = c;
        } else {
            rc = acc_proto_unknown(c, err);
        }
    }
    if (!rc && !j.executable)
        rc = acc_proto_missing(root, "Executable", err);
    if (rc) {
        acc_proto_job_release(&j);
    } else {
        j.job.key = j.key;
        j.job.local_id = j.local_id;
        j.job.host = j.host;
        j.job.executable = j.executable;
        j.job.directory = j.directory;
        j.job.output = j.output;
        j.job.args = (const char *const *)j.args;
        j.job.env = j.n_env ? (const char *const *)j.env : NULL;
        *out = j;
        out->job.identity = who ? &out->identity : NULL;
    }
    xmlFreeDoc(doc);
    return rc;
}

/* ------------------------------------------------ JobRef and JobStatus */

acc_err acc_proto_read_job_ref(const char *body, size_t len, char *id, size_t id_len,
                               struct acc_error *err)
{
    static const char *const attrs[] = {"id", NULL};
    const char *v;
    xmlDocPtr doc = NULL;
    xmlNode *root = NULL;
    acc_err rc = acc_proto_open(body, len, "JobRef", attrs, &doc, &root, err);
    if (rc)
        return rc;
    rc = acc_proto_empty(root, err);
    if (!rc)
        rc = acc_proto_attr_req(root, "id", &v, err);
    if (!rc && !acc_proto_key_ok(v))
        rc = acc_proto_fail(root, ACC_ERR_INVALID, err,
                            "JobRef: id '%.100s' is not 1 to %d characters A-Z a-z 0-9 . _ : -", v,
                            ACC_KEY_MAX - 1);
    if (!rc && strlen(v) >= id_len)
        rc = acc_proto_fail(root, ACC_ERR_INVALID, err, "JobRef: id '%s' is longer than %zu bytes",
                            v, id_len ? id_len - 1 : 0);
    if (!rc)
        acc_strlcpy(id, v, id_len);
    xmlFreeDoc(doc);
    return rc;
}

acc_err acc_proto_read_job_status(const char *body, size_t len, struct acc_job_status *out,
                                  struct acc_error *err)
{
    static const char *const attrs[] = {"done", "exitStatus", "signal", "state", NULL};
    struct acc_job_status s = {.exit_status = -1};
    const char *done, *ex, *sig, *st;
    int64_t x = 0, g = 0;
    xmlDocPtr doc = NULL;
    xmlNode *root = NULL;
    acc_err rc = acc_proto_open(body, len, "JobStatus", attrs, &doc, &root, err);
    if (rc)
        return rc;
    rc = acc_proto_empty(root, err);
    if (!rc)
        rc = acc_proto_attr_req(root, "done", &done, err);
    if (!rc)
        rc = acc_proto_attr_req(root, "exitStatus", &ex, err);
    if (!rc)
        rc = acc_proto_attr_req(root, "signal", &sig, err);
    if (!rc)
        rc = acc_proto_attr_req(root, "state", &st, err);
    if (!rc)
        rc = acc_proto_bool(root, "done", done, &s.done, err);
    if (!rc)
        rc = acc_proto_i64(root, "exitStatus", ex, -1, 255, &x, err);
    if (!rc)
        rc = acc_proto_i64(root, "signal", sig, 0, 128, &g, err);
    if (!rc && !acc_proto_token_ok(st, sizeof s.state - 1))
        rc = acc_proto_fail(root, ACC_ERR_INVALID, err,
                            "JobStatus: state '%.40s' is not 1 to %zu printable characters "
                            "without blanks",
                            st, sizeof s.state - 1);
    if (!rc) {
        s.exit_status = (int)x;
        s.signal = (int)g;
        acc_strlcpy(s.state, st, sizeof s.state);
        *out = s;
    }
    xmlFreeDoc(doc);
    return rc;
}

/* ----------------------------------------------------------------- Fault */

acc_err acc_proto_read_fault(const char *body, size_t len, struct acc_error *err)
{
    static const char *const attrs[] = {"code", "site", NULL};
    struct acc_error e;
    const char *code;
    char *msg = NULL;
    xmlDocPtr doc = NULL;
    struct acc_error local;

    if (!err)
        err = &local;
    acc_err rc = acc_proto_parse(body, len, "Fault", &doc, &e);
    xmlNode *root = rc ? NULL : xmlDocGetRootElement(doc);
    if (!rc)
        rc = acc_proto_attrs(root, attrs, &e);
    if (!rc)
        rc = acc_proto_attr_req(root, "code", &code, &e);
    if (!rc)
        rc = acc_proto_text(root, ACC_ERROR_MSG_MAX * 4, &msg, &e);
    if (rc) {
        acc_error_set(err, ACC_ERR_ADAPTER, "protocol error: an unreadable fault: %s", e.msg);
        goto out;
    }
    /* Control characters (but new lines) become blanks. */
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20 && *p != '\n')
            *p = ' ';
    acc_strtrim(msg);
    acc_err c = acc_err_from_symbol(code);
    if (c == ACC_ERR__COUNT || c == ACC_OK)
        acc_error_set(err, ACC_ERR_ADAPTER, "%.64s: %s", code, msg[0] ? msg : "(no message)");
    else
        acc_error_set(err, c, "%s", msg[0] ? msg : acc_err_text(c));
out:
    free(msg);
    xmlFreeDoc(doc);
    return err->code;
}
