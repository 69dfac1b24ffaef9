/* SPDX-License-Identifier: Apache-2.0 */
/* fixture.h - accordd started in-process on port 0, for integration tests. */
#ifndef ACC_FIXTURE_H
#define ACC_FIXTURE_H

#include "config.h"
#include "http.h"
#include "service.h"

struct fixture {
    struct acc_config cfg;
    struct acc_service *svc;
    struct acc_http_ctx ctx;
    struct acc_http_server *srv;
    char base[64]; /* http://127.0.0.1:PORT */
    bool dsig;     /* acc_dsig_init() was called (fixture_start_signed) */
};

/* ini NULL: the embedded testbed.  db: the database file. */
int fixture_start(struct fixture *f, const char *ini, const char *db);
/* The same with agreements signed as accordd signs them: the signer of the
 * configuration ([signing], or the self-made pair beside db). */
int fixture_start_signed(struct fixture *f, const char *ini, const char *db);
void fixture_stop(struct fixture *f);

/* Parses an offer document, submits it and waits for its negotiation: the
 * result code (see acc_service_submit); *id receives the agreement's id
 * when one was stored (else ""); *us, if given, the time of the submit and
 * the wait (not the parse). */
acc_err svc_negotiate_doc(struct acc_service *svc, const char *doc, char id[ACC_ID_LEN + 1],
                          int64_t *us, struct acc_error *err);
/* Terminates an agreement and waits for a negotiation under way. */
acc_err svc_terminate_wait(struct acc_service *svc, const char *id, struct acc_error *err);

#endif
