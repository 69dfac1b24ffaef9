/* SPDX-License-Identifier: Apache-2.0 */
#include "fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsig.h"
#include "testutil.h"
#include "timefmt.h"
#include "xml.h"

static int start(struct fixture *f, const char *ini, const char *db, bool sign)
{
    static bool xml_ready;
    struct acc_error err;
    memset(f, 0, sizeof *f);
    if (!xml_ready) {
        if (acc_xml_init(&err)) {
            fprintf(stderr, "fixture: %s\n", err.msg);
            return -1;
        }
        xml_ready = true;
    }
    acc_err rc = ini ? acc_config_load_string(ini, "test config", &f->cfg, &err)
                     : acc_config_embedded(&f->cfg, &err);
    /* the tests inject faults into the embedded testbed's simulators,
     * whose controls a plain accordd keeps off */
    if (!rc && !ini)
        f->cfg.allow_control = true;
    /* under root, the jobs of the tests' offers run as nobody (their
     * programs do not exist: they fail as they would as anyone) */
    if (!rc && f->cfg.launch.enabled && !f->cfg.launch.account && geteuid() == 0 &&
        !(f->cfg.launch.account = strdup("nobody")))
        rc = acc_error_set(&err, ACC_ERR_NOMEM, "out of memory");
    if (!rc)
        rc = acc_config_set_db(&f->cfg, db, &err);
    /* On PostgreSQL the pair is the operator's (none is made beside a URL). */
    const char *key, *cert;
    if (!rc && acc_test_db_is_pg() && !f->cfg.sign_key) {
        if (!acc_test_signing_pair(&key, &cert))
            rc = acc_error_set(&err, ACC_ERR_CONFIG, "no signing pair for PostgreSQL");
        else if (!(f->cfg.sign_key = strdup(key)) || !(f->cfg.sign_cert = strdup(cert)))
            rc = acc_error_set(&err, ACC_ERR_NOMEM, "out of memory");
    }
    if (!rc)
        rc = acc_config_set_listen(&f->cfg, "127.0.0.1:0", &err);
    if (!rc && sign && !(rc = acc_dsig_init(&err))) {
        f->dsig = true;
        rc = acc_http_signer_open(&f->cfg, &f->ctx.signer, &err);
    }
    /* As accordd: nothing is committed whose document could not be signed. */
    struct acc_service_options so = {.precommit = acc_http_agreement_check,
                                     .precommit_arg = &f->ctx};
    if (!rc)
        rc = acc_service_open_with(&f->cfg, &so, &f->svc, &err);
    if (!rc) {
        f->ctx.svc = f->svc;
        f->ctx.limits = acc_http_limits_of(&f->cfg);
        struct acc_http_options o = acc_http_options_of(&f->cfg);
        rc = acc_http_start(&f->ctx, &o, &f->srv, &err);
    }
    if (rc) {
        fprintf(stderr, "fixture: %s\n", err.msg);
        fixture_stop(f);
        return -1;
    }
    snprintf(f->base, sizeof f->base, "http://127.0.0.1:%u", acc_http_port(f->srv));
    return 0;
}

int fixture_start(struct fixture *f, const char *ini, const char *db)
{
    return start(f, ini, db, false);
}

int fixture_start_signed(struct fixture *f, const char *ini, const char *db)
{
    return start(f, ini, db, true);
}

void fixture_stop(struct fixture *f)
{
    acc_http_quiesce(f->srv);
    acc_service_shutdown(f->svc);
    acc_http_stop(f->srv);
    acc_service_close(f->svc);
    acc_signer_close(f->ctx.signer);
    if (f->dsig)
        acc_dsig_cleanup();
    acc_config_release(&f->cfg);
    memset(f, 0, sizeof *f);
}

acc_err svc_negotiate_doc(struct acc_service *svc, const char *doc, char id[ACC_ID_LEN + 1],
                          int64_t *us, struct acc_error *err)
{
    struct acc_offer o;
    struct acc_xml_limits lim = ACC_XML_LIMITS_DEFAULT;
    id[0] = '\0';
    acc_err rc = acc_xml_parse_offer(doc, strlen(doc), &lim, &o, err);
    if (rc)
        return rc;
    int64_t t0 = acc_mono_us();
    struct acc_submit s = {&o, doc, strlen(doc), NULL, false, NULL, NULL};
    struct acc_submission sub;
    rc = acc_service_submit(svc, &s, &sub, err);
    if (!rc) {
        memcpy(id, sub.id, ACC_ID_LEN + 1);
        acc_nego_wait(sub.job);
        rc = acc_nego_result(sub.job, err);
        acc_nego_release(sub.job);
    }
    if (us)
        *us = acc_mono_us() - t0;
    acc_offer_release(&o);
    return rc;
}

acc_err svc_terminate_wait(struct acc_service *svc, const char *id, struct acc_error *err)
{
    struct acc_agreement a;
    struct acc_nego *wait = NULL;
    acc_err rc = acc_service_terminate(svc, id, &a, &wait, err);
    if (wait) {
        acc_nego_wait(wait);
        acc_nego_release(wait);
    }
    acc_agreement_release(&a);
    return rc;
}
