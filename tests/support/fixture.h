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
};

/* ini NULL: the embedded testbed.  db: the database file. */
int fixture_start(struct fixture *f, const char *ini, const char *db);
void fixture_stop(struct fixture *f);

#endif
