/* SPDX-License-Identifier: Apache-2.0 */
/* remote_http.c - the remote adapter's exchanges with its site daemon:
 * a bounded pool of libcurl easy handles (each keeps its TLS connection
 * alive, so a handshake is paid once per connection, not per call), one
 * time limit per call, bounded retries of idempotent calls, and faults that
 * name the site.
 *
 * What every call shares (TLS files, callbacks, headers) is set on each
 * handle once, at open; a call sets only what is its own.  The handles are
 * never reset: a reset drops the settings, and setting the TLS files again
 * on every call cost more than the exchange's own work on loopback. */
#include "remote_internal.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../../lib/common/sync.h"
#include "../../lib/proto/proto.h"
#include "../../lib/tls/tls_client.h"

void remote_reply_release(struct remote_reply *r)
{
    if (!r)
        return;
    acc_buf_release(&r->body);
    memset(r, 0, sizeof *r);
}

struct sink {
    struct acc_buf *buf;
    bool too_large;
};

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    struct sink *s = arg;
    size_t add = size * n;
    if (add > ACC_PROTO_BODY_MAX - s->buf->len) {
        s->too_large = true;
        return 0;
    }
    acc_buf_append(s->buf, data, add);
    return acc_buf_ok(s->buf) ? add : 0;
}

/* libcurl calls this while a transfer runs (also while it waits); a
 * non-zero answer aborts it: interrupt makes calls return. */
static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    return atomic_load(&((struct remote *)arg)->stop) ? 1 : 0;
}

/* What every call of this adapter shares, set once on a new handle; a
 * config error when the TLS files cannot be used. */
static acc_err handle_setup(struct remote *r, CURL *c, struct acc_error *err)
{
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, r);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->headers);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, r->insecure_http ? "https,http" : "https");
    /* TLS: the site's certificate must verify against its CA and name it;
     * accordd shows its own client certificate (lib/tls). */
    struct acc_tls_client tls = {r->ca, r->cert, r->key};
    if (acc_tls_curl_setup(c, &tls))
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s: cannot use its TLS files (ca %s, certificate %s)", r->what,
                             r->ca ? r->ca : "-", r->cert ? r->cert : "-");
    return ACC_OK;
}

acc_err remote_http_open(struct remote *r, struct acc_error *err)
{
    /* curl_global_init is not thread-safe before 7.84 and accordd opens
     * adapters from one thread; later calls only count up. */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return acc_error_set(err, ACC_ERR_INTERNAL, "libcurl failed to initialise");
    pthread_mutex_init(&r->lock, NULL);
    acc_cond_init_monotonic(&r->freed);
    r->lock_init = true;
    r->slots = calloc(r->n_slots, sizeof *r->slots);
    if (!r->slots)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    struct curl_slist *h = curl_slist_append(NULL, "Accept: application/xml");
    r->headers = h;
    h = h ? curl_slist_append(h, "Content-Type: application/xml") : NULL;
    /* No "Expect: 100-continue": it would cost a round trip per PUT/POST. */
    h = h ? curl_slist_append(h, "Expect:") : NULL;
    if (!h)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < r->n_slots; i++) {
        r->slots[i].curl = curl_easy_init();
        if (!r->slots[i].curl)
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory (libcurl handle)");
        acc_err rc = handle_setup(r, r->slots[i].curl, err);
        if (rc)
            return rc;
    }
    return ACC_OK;
}

void remote_http_close(struct remote *r)
{
    for (size_t i = 0; r->slots && i < r->n_slots; i++) {
        if (r->slots[i].curl)
            curl_easy_cleanup(r->slots[i].curl);
    }
    free(r->slots);
    r->slots = NULL;
    curl_slist_free_all(r->headers);
    r->headers = NULL;
    if (r->lock_init) {
        pthread_cond_destroy(&r->freed);
        pthread_mutex_destroy(&r->lock);
        r->lock_init = false;
        curl_global_cleanup();
    }
}

void remote_http_interrupt(struct remote *r)
{
    atomic_store(&r->stop, true);
    if (r->lock_init) {
        pthread_mutex_lock(&r->lock);
        pthread_cond_broadcast(&r->freed);
        pthread_mutex_unlock(&r->lock);
    }
}

/* A free handle, waiting for one until deadline (monotonic us); NULL when
 * none came free in time or the adapter was interrupted. */
static struct remote_slot *slot_take(struct remote *r, int64_t deadline)
{
    struct remote_slot *got = NULL;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        if (atomic_load(&r->stop))
            break;
        for (size_t i = 0; i < r->n_slots && !got; i++) {
            if (!r->slots[i].busy)
                got = &r->slots[i];
        }
        if (got) {
            got->busy = true;
            break;
        }
        int64_t left = deadline - acc_mono_us();
        if (left <= 0)
            break;
        struct timespec ts = acc_mono_deadline(left);
        pthread_cond_timedwait(&r->freed, &r->lock, &ts);
    }
    pthread_mutex_unlock(&r->lock);
    return got;
}

static void slot_give(struct remote *r, struct remote_slot *s)
{
    pthread_mutex_lock(&r->lock);
    s->busy = false;
    pthread_cond_signal(&r->freed);
    pthread_mutex_unlock(&r->lock);
}

/* How one attempt went. */
enum attempt {
    ATTEMPT_ANSWERED,  /* an HTTP answer: status and body */
    ATTEMPT_TRANSPORT, /* no answer (connect, reset, TLS...): err set, may retry */
    ATTEMPT_TIMEOUT,   /* the time limit: err set */
    ATTEMPT_FINAL,     /* anything else: err set, no retry */
};

/* The options of one attempt within ms (connecting within cms). */
static void setup(CURL *c, const char *method, const char *url, const char *body, size_t len,
                  bool idempotent, long ms, long cms, char *ebuf, struct sink *sink)
{
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, cms);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
    /* libcurl sends a request again by itself when a kept-alive connection
     * turns out dead without any answer, POSTs included; a call that must
     * not run twice (submit) therefore takes a fresh connection. */
    curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, idempotent ? 0L : 1L);
    /* Back to a GET without a body, then the call's method and body. */
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, NULL);
    if (strcmp(method, "GET") != 0) {
        if (body) {
            curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
            curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        }
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    }
}

/* An attempt that got no answer: a bad URL, a certificate that does not
 * verify (final), or a connection that failed or broke (may retry). */
static enum attempt no_answer(struct remote *r, CURLcode cc, const char *why, long connects,
                              struct acc_error *err)
{
    switch (cc) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
        acc_error_set(err, ACC_ERR_CONFIG, "%s: bad url: %s", r->what, why);
        return ATTEMPT_FINAL;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
        /* A certificate that does not verify does not get better by asking again. */
        acc_error_set(err, ACC_ERR_UNAVAILABLE, "%s: unreachable: TLS: %s", r->what, why);
        return ATTEMPT_FINAL;
    default:
        break;
    }
    /* A new connection that broke before any answer: with TLS 1.3 the site
     * checks accordd's certificate after the client's side of the handshake
     * is done, and a site that does not admit it closes the connection
     * there. */
    bool tls_fail = cc == CURLE_SSL_CONNECT_ERROR ||
                    (connects > 0 && strncasecmp(r->url, "https:", 6) == 0 &&
                     (cc == CURLE_GOT_NOTHING || cc == CURLE_SEND_ERROR || cc == CURLE_RECV_ERROR));
    if (tls_fail)
        acc_error_set(err, ACC_ERR_UNAVAILABLE,
                      "%s: unreachable: TLS handshake failed or the connection was closed "
                      "right after it (does the site admit accordd's certificate?): %s",
                      r->what, why);
    else
        acc_error_set(err, ACC_ERR_UNAVAILABLE, "%s: unreachable: %s", r->what, why);
    return ATTEMPT_TRANSPORT;
}

static enum attempt attempt_once(struct remote *r, CURL *c, const char *method, const char *url,
                                 const char *body, size_t len, bool idempotent, int64_t left_us,
                                 struct remote_reply *out, struct acc_error *err)
{
    char ebuf[CURL_ERROR_SIZE] = "";
    struct sink sink = {&out->body, false};
    acc_buf_reset(&out->body);
    long ms = (long)(left_us / 1000) > 0 ? (long)(left_us / 1000) : 1;
    long cms = (long)(r->connect_timeout_s * 1000) < ms ? (long)(r->connect_timeout_s * 1000) : ms;
    setup(c, method, url, body, len, idempotent, ms, cms, ebuf, &sink);
    int64_t t0 = acc_mono_us();
    CURLcode cc = curl_easy_perform(c);
    out->rtt_us = acc_mono_us() - t0;
    /* The handle outlives this frame: nothing of it may point here later
     * (a connection closed while the pool idles may report an error). */
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, NULL);
    atomic_fetch_add(&r->attempts, 1);
    long connects = 0;
    if (curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK && connects > 0)
        atomic_fetch_add(&r->connects, (uint64_t)connects);
    const char *why = ebuf[0] ? ebuf : curl_easy_strerror(cc);
    switch (cc) {
    case CURLE_OK:
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
        if (!acc_buf_ok(&out->body)) {
            acc_error_set(err, ACC_ERR_NOMEM, "%s: out of memory reading its answer", r->what);
            return ATTEMPT_FINAL;
        }
        return ATTEMPT_ANSWERED;
    case CURLE_ABORTED_BY_CALLBACK:
        acc_error_set(err, ACC_ERR_CANCELLED, "%s: call interrupted (shutting down)", r->what);
        return ATTEMPT_FINAL;
    case CURLE_WRITE_ERROR:
        if (sink.too_large) {
            acc_error_set(err, ACC_ERR_ADAPTER, "%s: protocol error: answer over %d bytes", r->what,
                          ACC_PROTO_BODY_MAX);
            return ATTEMPT_FINAL;
        }
        acc_error_set(err, ACC_ERR_NOMEM, "%s: out of memory reading its answer", r->what);
        return ATTEMPT_FINAL;
    case CURLE_OPERATION_TIMEDOUT:
        if (out->rtt_us / 1000 + 50 < ms) {
            /* The connect time limit, with time left for another try. */
            acc_error_set(err, ACC_ERR_TIMEOUT, "%s: timed out connecting after %ld ms (%s)",
                          r->what, cms, why);
            return ATTEMPT_TRANSPORT;
        }
        acc_error_set(err, ACC_ERR_TIMEOUT, "%s: timed out after %lld s (%s)", r->what,
                      (long long)r->timeout_s, why);
        return ATTEMPT_TIMEOUT;
    case CURLE_OUT_OF_MEMORY:
        acc_error_set(err, ACC_ERR_NOMEM, "%s: out of memory (libcurl)", r->what);
        return ATTEMPT_FINAL;
    default:
        return no_answer(r, cc, why, connects, err);
    }
}

acc_err remote_protocol_error(struct remote *r, const char *op, const struct acc_error *why,
                              struct acc_error *err)
{
    const char *m = why->msg;
    if (strncmp(m, "protocol error: ", 16) == 0)
        m += 16;
    return acc_error_set(err, ACC_ERR_ADAPTER, "%s: protocol error: %s: %s", r->what, op, m);
}

/* The site's answer that is not 2xx, as a fault naming the site. */
static acc_err answer_fault(struct remote *r, const struct remote_reply *rep, struct acc_error *err)
{
    struct acc_error f = {0};
    acc_err code = acc_proto_read_fault(acc_buf_str(&rep->body), rep->body.len, &f);
    if (code == ACC_OK)
        code = ACC_ERR_ADAPTER;
    if (strncmp(f.msg, "protocol error", 14) == 0)
        return acc_error_set(err, ACC_ERR_ADAPTER,
                             "%s: protocol error: HTTP %ld without a fault (%s)", r->what,
                             rep->status, f.msg);
    return acc_error_set(err, code, "%s: refused: %s", r->what, f.msg);
}

acc_err remote_call(struct remote *r, const char *method, const char *path, const char *body,
                    size_t len, bool idempotent, struct remote_reply *out, struct acc_error *err)
{
    acc_err rc = ACC_OK;
    char url[512];
    acc_buf_init(&out->body);
    out->status = 0;
    atomic_fetch_add(&r->calls, 1);
    if (atomic_load(&r->stop))
        return acc_error_set(err, ACC_ERR_CANCELLED, "%s: call interrupted (shutting down)",
                             r->what);
    if ((size_t)snprintf(url, sizeof url, "%s%s", r->url, path) >= sizeof url)
        return acc_error_set(err, ACC_ERR_INVALID, "%s: url too long for %s", r->what, path);
    int64_t t0 = acc_mono_us(), deadline = t0 + r->timeout_s * 1000000;
    struct remote_slot *slot = slot_take(r, deadline);
    if (!slot) {
        rc = atomic_load(&r->stop)
                 ? acc_error_set(err, ACC_ERR_CANCELLED, "%s: call interrupted (shutting down)",
                                 r->what)
                 : acc_error_set(err, ACC_ERR_TIMEOUT,
                                 "%s: timed out after %lld s waiting for one of its %zu "
                                 "connections",
                                 r->what, (long long)r->timeout_s, r->n_slots);
        goto out;
    }
    int64_t backoff_us = 50000;
    for (int64_t tried = 0;; tried++) {
        enum attempt a = attempt_once(r, slot->curl, method, url, body, len, idempotent,
                                      deadline - acc_mono_us(), out, err);
        if (a == ATTEMPT_ANSWERED) {
            if (out->status >= 200 && out->status < 300) {
                acc_error_clear(err);
                rc = ACC_OK;
            } else {
                rc = answer_fault(r, out, err);
            }
            break;
        }
        rc = err ? err->code : ACC_ERR_UNAVAILABLE;
        int64_t left = deadline - acc_mono_us();
        if (a != ATTEMPT_TRANSPORT || !idempotent || tried >= r->retries ||
            left <= backoff_us + 1000 || atomic_load(&r->stop))
            break;
        atomic_fetch_add(&r->retries_done, 1);
        struct timespec ts = {0, (long)backoff_us * 1000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        backoff_us *= 2;
    }
    slot_give(r, slot);
out:
    if (rc)
        acc_buf_release(&out->body);
    return rc;
}
