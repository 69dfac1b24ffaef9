/* SPDX-License-Identifier: Apache-2.0 */
/* query.c - reading agreements, their state, trace and launch (part of the
 * service). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* -------------------------------------------------------------- queries */

acc_err acc_service_get(struct acc_service *svc, const char *id, bool with_offer,
                        struct acc_agreement *out, struct acc_error *err)
{
    if (!acc_id_valid(id))
        return acc_error_set(err, ACC_ERR_NOT_FOUND, "no agreement with id '%.40s'", id);
    return acc_store_agreement_get(svc->store, id, with_offer, out, err);
}

acc_err acc_service_keep_signature(struct acc_service *svc, const char *id, acc_time updated,
                                   const void *sig, size_t len, struct acc_error *err)
{
    return acc_store_agreement_keep_signature(svc->store, id, updated, sig, len, err);
}

acc_err acc_service_list(struct acc_service *svc, const struct acc_list_filter *f,
                         struct acc_agreement_list *out, struct acc_error *err)
{
    return acc_store_agreement_list(svc->store, f, out, err);
}

acc_err acc_service_trace(struct acc_service *svc, const char *id, struct acc_agreement *a,
                          struct acc_trace *out, struct acc_error *err)
{
    acc_err rc = acc_service_get(svc, id, false, a, err);
    if (!rc) {
        rc = acc_store_trace_get(svc->store, id, out, err);
        if (rc)
            acc_agreement_release(a);
    }
    return rc;
}

static enum acc_term_state term_state(const struct acc_agreement *a, const struct acc_run *run,
                                      acc_time now)
{
    /* A launched job decides: Processing while it runs, Completed after. */
    if (run && run->state == ACC_RUN_RUNNING)
        return ACC_TERM_PROCESSING;
    if (run && run->state != ACC_RUN_DESCRIBED && acc_run_state_is_final(run->state) &&
        run->started)
        return ACC_TERM_COMPLETED;
    switch (a->state) {
    case ACC_STATE_OBSERVED:
    case ACC_STATE_OBSERVED_AND_TERMINATING:
        return now >= a->end ? ACC_TERM_COMPLETED : ACC_TERM_READY;
    case ACC_STATE_COMPLETE:
        return ACC_TERM_COMPLETED;
    case ACC_STATE_TERMINATED:
        return a->start && now >= a->start ? ACC_TERM_COMPLETED : ACC_TERM_NOT_READY;
    default:
        return ACC_TERM_NOT_READY;
    }
}

static size_t count_lines(const char *s)
{
    size_t n = s && *s ? 1 : 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

acc_err acc_service_state(struct acc_service *svc, const char *id, struct acc_service_state *out,
                          struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    acc_err rc = acc_service_get(svc, id, false, &out->agreement, err);
    if (rc)
        return rc;
    struct acc_agreement *a = &out->agreement;
    size_t nt = count_lines(a->terms), ng = count_lines(a->guarantees), nlinks = 0;
    for (size_t i = 0; i < a->n_links; i++)
        nlinks += a->links[i].reservation && a->links[i].link;
    out->terms = calloc(nt ? nt : 1, sizeof *out->terms);
    out->guarantees = calloc(ng + nlinks ? ng + nlinks : 1, sizeof *out->guarantees);
    out->reasons = calloc(nlinks ? nlinks : 1, sizeof *out->reasons);
    if (!out->terms || !out->guarantees || !out->reasons) {
        acc_service_state_release(out);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    /* The term names are lines of a->terms: cut them in place. */
    out->has_run = acc_store_run_get(svc->store, id, false, &out->run, NULL) == ACC_OK;
    enum acc_term_state ts = term_state(a, out->has_run ? &out->run : NULL, acc_now());
    for (char *p = a->terms; p && *p;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        out->terms[out->n_terms++] = (struct acc_term_view){p, ts};
        p = nl ? nl + 1 : p + strlen(p);
    }
    const char *gs = a->state == ACC_STATE_COMPLETE ? "Fulfilled" : "NotDetermined";
    for (char *p = a->guarantees; p && *p;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        out->guarantees[out->n_guarantees++] = (struct acc_guarantee_view){.name = p, .state = gs};
        p = nl ? nl + 1 : p + strlen(p);
    }
    /* Every reserved link is a guarantee of its bandwidth: what its network
     * adapter saw on the wire (provision.c). */
    for (size_t i = 0, k = 0; i < a->n_links; i++) {
        if (a->links[i].reservation && a->links[i].link)
            svc_link_guarantee(svc, &a->links[i], &out->guarantees[out->n_guarantees++],
                               out->reasons[k++], sizeof out->reasons[0]);
    }
    out->view = (struct acc_state_view){a,
                                        out->terms,
                                        out->n_terms,
                                        out->guarantees,
                                        out->n_guarantees,
                                        out->has_run ? &out->run : NULL};
    return ACC_OK;
}

void acc_service_state_release(struct acc_service_state *s)
{
    if (!s)
        return;
    acc_agreement_release(&s->agreement);
    if (s->has_run)
        acc_run_release(&s->run);
    free(s->terms);
    free(s->guarantees);
    free(s->reasons);
    memset(s, 0, sizeof *s);
}
