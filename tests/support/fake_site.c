/* SPDX-License-Identifier: Apache-2.0 */
/* fake_site.c - see fake_site.h. */
#include "fake_site.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto.h"
#include "strutil.h"
#include "tls_server.h"

struct fake_site {
    char name[64];
    struct acc_adapter *ad;
    struct acc_tls_server *tls;
    struct MHD_Daemon *d;
    uint16_t port;
    atomic_int mode;
    atomic_uint drops_left;
    atomic_int fault;
    atomic_bool stopping;
    atomic_uint counts[FAKE_OP__COUNT];
    atomic_uint connections;
    atomic_uint jobs;
    /* the identity of the last preview or reserve ("": none), under who_lock */
    pthread_mutex_t who_lock;
    char who_user[64], who_token[256];
};

/* Keeps the identity a preview or reserve named. */
static void note_identity(struct fake_site *fs, const struct acc_identity *id)
{
    pthread_mutex_lock(&fs->who_lock);
    acc_strlcpy(fs->who_user, id->user ? id->user : "", sizeof fs->who_user);
    acc_strlcpy(fs->who_token, id->token ? id->token : "", sizeof fs->who_token);
    pthread_mutex_unlock(&fs->who_lock);
}

void fake_site_last_identity(struct fake_site *fs, char *user, size_t user_len, char *token,
                             size_t token_len)
{
    pthread_mutex_lock(&fs->who_lock);
    acc_strlcpy(user, fs->who_user, user_len);
    acc_strlcpy(token, fs->who_token, token_len);
    pthread_mutex_unlock(&fs->who_lock);
}

struct req {
    struct acc_buf body;
    bool too_large;
};

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static enum MHD_Result reply(struct MHD_Connection *con, unsigned status, const struct acc_buf *b)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        b ? b->len : 0, b && b->data ? b->data : (void *)"", MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    if (b && b->len)
        MHD_add_response_header(r, "Content-Type", "application/xml");
    enum MHD_Result ok = MHD_queue_response(con, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result fault(struct fake_site *fs, struct MHD_Connection *con,
                             const struct acc_error *err)
{
    struct acc_buf b = ACC_BUF_INIT;
    acc_proto_write_fault(err->code, fs->name, err->msg, &b);
    enum MHD_Result ok = reply(con, (unsigned)acc_err_http_status(err->code), &b);
    acc_buf_release(&b);
    return ok;
}

static enum fake_site_op op_of(const char *method, const char *url, const char **key)
{
    *key = NULL;
    bool get = strcmp(method, "GET") == 0, del = strcmp(method, "DELETE") == 0;
    if (strcmp(url, "/v1/health") == 0 && get)
        return FAKE_OP_HEALTH;
    if (strcmp(url, "/v1/preview") == 0 && strcmp(method, "POST") == 0)
        return FAKE_OP_PREVIEW;
    if (strcmp(url, "/v1/jobs") == 0 && strcmp(method, "POST") == 0)
        return FAKE_OP_SUBMIT;
    if (strncmp(url, "/v1/jobs/", 9) == 0) {
        *key = url + 9;
        return get ? FAKE_OP_JOB_STATUS : del ? FAKE_OP_JOB_CANCEL : FAKE_OP_OTHER;
    }
    if (strncmp(url, "/v1/reservations/", 17) == 0 && !strchr(url + 17, '/')) {
        *key = url + 17;
        return get                          ? FAKE_OP_QUERY
               : del                        ? FAKE_OP_CANCEL
               : strcmp(method, "PUT") == 0 ? FAKE_OP_RESERVE
                                            : FAKE_OP_OTHER;
    }
    return FAKE_OP_OTHER;
}

static acc_err serve(struct fake_site *fs, enum fake_site_op op, const char *key,
                     const struct acc_buf *in, struct acc_buf *out, unsigned *status,
                     struct acc_error *err)
{
    acc_err rc = ACC_OK;
    *status = 200;
    if (key && !acc_proto_key_ok(key))
        return acc_error_set(err, ACC_ERR_BAD_REQUEST, "bad key in path");
    switch (op) {
    case FAKE_OP_HEALTH: {
        struct acc_proto_health h;
        memset(&h, 0, sizeof h);
        h.up = true;
        h.version = ACC_PROTO_VERSION;
        acc_strlcpy(h.site, fs->name, sizeof h.site);
        acc_strlcpy(h.detail, "ok", sizeof h.detail);
        h.caps = ACC_CAP_NODES | ACC_CAP_THREADSAFE;
        acc_proto_write_health(&h, out);
        return ACC_OK;
    }
    case FAKE_OP_PREVIEW: {
        struct acc_proto_preview p;
        if ((rc = acc_proto_read_preview(in->data ? in->data : "", in->len, &p, err)))
            return rc;
        note_identity(fs, &p.identity);
        acc_proto_preview_release(&p);
        struct acc_resource res = {.kind = p.kind, .name = p.resource, .amount = p.amount};
        struct acc_frames f;
        acc_frames_init(&f);
        rc = acc_adapter_preview_replacing(fs->ad, p.old_key[0] ? p.old_key : NULL, &res, p.from,
                                           p.until, p.duration, &f, err);
        if (!rc)
            acc_proto_write_frames(&f, out);
        acc_frames_release(&f);
        return rc;
    }
    case FAKE_OP_RESERVE: {
        struct acc_proto_reserve q;
        if ((rc = acc_proto_read_reserve(in->data ? in->data : "", in->len, &q, err)))
            return rc;
        note_identity(fs, &q.identity);
        acc_proto_reserve_release(&q);
        struct acc_resource res = {.kind = q.kind, .name = q.resource, .amount = q.amount};
        struct acc_reservation r;
        rc = acc_adapter_reserve_replacing(fs->ad, key, q.old_key[0] ? q.old_key : NULL, &res,
                                           q.start, q.duration, &r, err);
        if (!rc)
            acc_proto_write_reservation(key, q.kind, q.resource, &r, out);
        acc_reservation_release(&r);
        return rc;
    }
    case FAKE_OP_QUERY: {
        struct acc_reservation r;
        rc = acc_adapter_query(fs->ad, key, NULL, &r, err);
        if (!rc)
            acc_proto_write_reservation(key, ACC_RES_NODES, fs->name, &r, out);
        acc_reservation_release(&r);
        return rc;
    }
    case FAKE_OP_CANCEL:
        *status = 204;
        return acc_adapter_cancel(fs->ad, key, NULL, err);
    case FAKE_OP_SUBMIT: {
        struct acc_proto_job j;
        if ((rc = acc_proto_read_job(in->data ? in->data : "", in->len, &j, err)))
            return rc;
        char id[32];
        snprintf(id, sizeof id, "job-%u", atomic_fetch_add(&fs->jobs, 1) + 1);
        acc_proto_job_release(&j);
        acc_proto_write_job_ref(id, out);
        *status = 201;
        return ACC_OK;
    }
    case FAKE_OP_JOB_STATUS: {
        struct acc_job_status s = {.done = true, .exit_status = 0};
        acc_strlcpy(s.state, "COMPLETED", sizeof s.state);
        acc_proto_write_job_status(&s, out);
        return ACC_OK;
    }
    case FAKE_OP_JOB_CANCEL:
        *status = 204;
        return ACC_OK;
    default:
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no such operation");
    }
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *con, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    struct fake_site *fs = cls;
    struct req *rq = *con_cls;
    (void)version;
    if (!rq) {
        rq = calloc(1, sizeof *rq);
        if (!rq)
            return MHD_NO;
        *con_cls = rq;
        return MHD_YES;
    }
    if (*upload_size) {
        if (rq->body.len + *upload_size > ACC_PROTO_BODY_MAX)
            rq->too_large = true;
        else
            acc_buf_append(&rq->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    const char *key;
    enum fake_site_op op = op_of(method, url, &key);
    atomic_fetch_add(&fs->counts[op], 1);
    struct acc_error err = {0};
    switch ((enum fake_site_mode)atomic_load(&fs->mode)) {
    case FAKE_SITE_HANG:
        for (int i = 0;
             i < 3000 && atomic_load(&fs->mode) == FAKE_SITE_HANG && !atomic_load(&fs->stopping);
             i++)
            sleep_ms(10);
        return MHD_NO;
    case FAKE_SITE_DROP: {
        unsigned left = atomic_load(&fs->drops_left);
        while (left > 0 && !atomic_compare_exchange_weak(&fs->drops_left, &left, left - 1))
            ;
        if (left > 0)
            return MHD_NO; /* closes the connection: no answer at all */
        break;
    }
    case FAKE_SITE_FAULT:
        acc_error_set(&err, (acc_err)atomic_load(&fs->fault), "site %s says no (test)", fs->name);
        return fault(fs, con, &err);
    case FAKE_SITE_NORMAL:
        break;
    }
    if (rq->too_large) {
        acc_error_set(&err, ACC_ERR_TOO_LARGE, "body over %d bytes", ACC_PROTO_BODY_MAX);
        return fault(fs, con, &err);
    }
    struct acc_buf out = ACC_BUF_INIT;
    unsigned status;
    acc_err rc = serve(fs, op, key, &rq->body, &out, &status, &err);
    enum MHD_Result ok = rc ? fault(fs, con, &err) : reply(con, status, &out);
    acc_buf_release(&out);
    return ok;
}

static void completed(void *cls, struct MHD_Connection *con, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)con, (void)toe;
    struct req *rq = *con_cls;
    if (rq) {
        acc_buf_release(&rq->body);
        free(rq);
        *con_cls = NULL;
    }
}

static void notify(void *cls, struct MHD_Connection *con, void **socket_context,
                   enum MHD_ConnectionNotificationCode toe)
{
    (void)con, (void)socket_context;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED)
        atomic_fetch_add(&((struct fake_site *)cls)->connections, 1);
}

struct fake_site *fake_site_start(const struct fake_site_cfg *cfg)
{
    struct fake_site *fs = calloc(1, sizeof *fs);
    if (fs)
        pthread_mutex_init(&fs->who_lock, NULL);
    struct acc_error err = {0};
    if (!fs)
        return NULL;
    acc_strlcpy(fs->name, cfg->name, sizeof fs->name);
    fs->ad = cfg->ad;
    struct acc_tls_server_cfg tc = {
        .certificate = cfg->certificate, .key = cfg->key, .client_ca = cfg->client_ca};
    if (acc_tls_server_new(&tc, &fs->tls, &err)) {
        fprintf(stderr, "fake site %s: %s\n", cfg->name, err.msg);
        free(fs);
        return NULL;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_OptionItem opts[16];
    size_t n = acc_tls_mhd_options(fs->tls, opts, 16 - 6);
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &sa};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify, fs};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, 60, NULL};
    if (cfg->threads)
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, cfg->threads, NULL};
    opts[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | acc_tls_mhd_flags(fs->tls) |
                     (cfg->threads ? MHD_USE_EPOLL : MHD_USE_THREAD_PER_CONNECTION);
    fs->d =
        MHD_start_daemon(flags, 0, NULL, NULL, handler, fs, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (!fs->d || acc_tls_server_bind(fs->tls, fs->d, &err)) {
        fprintf(stderr, "fake site %s: cannot start: %s\n", cfg->name, err.msg);
        fake_site_stop(fs);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(fs->d, MHD_DAEMON_INFO_BIND_PORT);
    fs->port = info ? info->port : 0;
    return fs;
}

void fake_site_stop(struct fake_site *fs)
{
    if (!fs)
        return;
    atomic_store(&fs->stopping, true);
    if (fs->d)
        MHD_stop_daemon(fs->d);
    acc_tls_server_free(fs->tls);
    pthread_mutex_destroy(&fs->who_lock);
    free(fs);
}

uint16_t fake_site_port(const struct fake_site *fs)
{
    return fs->port;
}

void fake_site_set_mode(struct fake_site *fs, enum fake_site_mode mode, unsigned count,
                        acc_err code)
{
    atomic_store(&fs->drops_left, count);
    atomic_store(&fs->fault, (int)code);
    atomic_store(&fs->mode, (int)mode);
}

unsigned fake_site_count(const struct fake_site *fs, enum fake_site_op op)
{
    return atomic_load(&((struct fake_site *)fs)->counts[op]);
}

unsigned fake_site_connections(const struct fake_site *fs)
{
    return atomic_load(&((struct fake_site *)fs)->connections);
}
