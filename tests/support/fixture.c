#include "fixture.h"

#include <stdio.h>
#include <string.h>

#include "xml.h"

int fixture_start(struct fixture *f, const char *ini, const char *db)
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
    if (!rc)
        rc = acc_config_set_db(&f->cfg, db, &err);
    if (!rc)
        rc = acc_config_set_listen(&f->cfg, "127.0.0.1:0", &err);
    if (!rc)
        rc = acc_service_open(&f->cfg, &f->svc, &err);
    if (!rc) {
        f->ctx.svc = f->svc;
        f->ctx.limits = (struct acc_xml_limits){f->cfg.max_body, f->cfg.max_depth, 20000,
                                                f->cfg.max_attributes, f->cfg.max_total_attributes};
        struct acc_http_options o = {f->cfg.listen_host, 0, 64, 30, f->cfg.max_body};
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

void fixture_stop(struct fixture *f)
{
    acc_http_stop(f->srv);
    acc_service_close(f->svc);
    acc_config_release(&f->cfg);
    memset(f, 0, sizeof *f);
}
