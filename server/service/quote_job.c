/* SPDX-License-Identifier: Apache-2.0 */
/* quote_job.c - quotes as jobs on the negotiation queue: a quote previews
 * and may book at every adapter, and giving a hold back cancels there, so
 * neither runs on the thread that asked (part of the service; see
 * service.h).  Bounded like negotiations: a place on the queue is reserved
 * first (ACC_ERR_OVERLOADED when it is full). */
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/id.h"
#include "../../lib/common/strutil.h"
#include "internal.h"

struct quote_job {
    struct acc_offer offer; /* taken from the request */
    char *document;
    size_t len;
    int64_t hold;
    int option;
    char *address;           /* the client's; NULL: unknown */
    char id[ACC_ID_LEN + 1]; /* a release: the quote */
    struct acc_quote q;      /* the result */
};

static void quote_job_free(void *data)
{
    struct quote_job *x = data;
    if (!x)
        return;
    acc_offer_release(&x->offer);
    free(x->document);
    free(x->address);
    acc_quote_release(&x->q);
    free(x);
}

static acc_err run_quote(struct acc_service *svc, struct acc_nego *job, struct acc_error *err)
{
    struct quote_job *x = job->data;
    struct acc_quote_request rq = {&x->offer, x->document, x->len, x->hold, x->option, x->address};
    return acc_service_quote(svc, &rq, &x->q, err);
}

static acc_err run_release(struct acc_service *svc, struct acc_nego *job, struct acc_error *err)
{
    struct quote_job *x = job->data;
    return acc_service_quote_release(svc, x->id, &x->q, err);
}

/* Reserves a place, makes the job and queues it. */
static acc_err queue_job(struct acc_service *svc, const char *id,
                         acc_err (*run)(struct acc_service *, struct acc_nego *,
                                        struct acc_error *),
                         struct quote_job *x, struct acc_nego **out, struct acc_error *err)
{
    acc_err rc = svc_queue_reserve(svc, false, err);
    if (rc) {
        quote_job_free(x);
        return rc;
    }
    struct acc_nego *job = svc_nego_new_run(svc, id, run, x, quote_job_free);
    if (!job) {
        svc_queue_unreserve(svc, false);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    svc_queue_push(svc, job);
    *out = job;
    return ACC_OK;
}

acc_err acc_service_quote_submit(struct acc_service *svc, struct acc_offer *offer,
                                 const char *document, size_t len, int64_t hold, int option,
                                 const char *address, struct acc_nego **out, struct acc_error *err)
{
    *out = NULL;
    struct acc_quote_request rq = {offer, document, len, hold, option, address};
    acc_time earliest, deadline;
    acc_err rc = svc_quote_check(svc, &rq, acc_now(), &earliest, &deadline, err);
    if (rc)
        return rc;
    struct quote_job *x = calloc(1, sizeof *x);
    char id[ACC_ID_LEN + 1];
    if (!x || !(x->document = malloc(len + 1)) || (address && !(x->address = strdup(address)))) {
        quote_job_free(x);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    if ((rc = acc_id_new(id, err))) {
        quote_job_free(x);
        return rc;
    }
    memcpy(x->document, document, len);
    x->document[len] = '\0';
    x->len = len;
    x->hold = hold;
    x->option = option;
    x->q.held_option = -1;
    x->offer = *offer;
    memset(offer, 0, sizeof *offer);
    return queue_job(svc, id, run_quote, x, out, err);
}

acc_err acc_service_quote_release_submit(struct acc_service *svc, const char *id,
                                         struct acc_nego **out, struct acc_error *err)
{
    *out = NULL;
    struct quote_job *x = calloc(1, sizeof *x);
    if (!x)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_strlcpy(x->id, id, sizeof x->id);
    x->q.held_option = -1;
    return queue_job(svc, id, run_release, x, out, err);
}

const struct acc_quote *acc_nego_quote(const struct acc_nego *job)
{
    const struct quote_job *x = job->run ? job->data : NULL;
    return x && x->q.id[0] ? &x->q : NULL;
}
