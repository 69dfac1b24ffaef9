/* testdb.c - a database per test program: a file in the temporary
 * directory, or a fresh database on the PostgreSQL server that
 * ACCORD_TEST_DB_URL names (testutil.h). */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

bool acc_test_db_is_pg(void)
{
    const char *url = getenv("ACCORD_TEST_DB_URL");
    return url && *url;
}

/* url with its database (the path after the host) replaced by db. */
static bool with_db(const char *url, const char *db, char *out, size_t size)
{
    const char *auth = strstr(url, "://");
    if (!auth)
        return false;
    const char *path = strchr(auth + 3, '/');
    const char *query = strchr(auth + 3, '?');
    if (!path || (query && query < path))
        path = query ? query : url + strlen(url);
    const char *rest = query ? query : "";
    int n = snprintf(out, size, "%.*s/%s%s", (int)(path - url), url, db, rest);
    return n > 0 && (size_t)n < size;
}

bool acc_test_db(const char *name, char *out, size_t size)
{
    if (!acc_test_db_is_pg()) {
        int n = snprintf(out, size, "%s/%s.db", acc_test_tmpdir(), name);
        return n > 0 && (size_t)n < size;
    }
    const char *url = getenv("ACCORD_TEST_DB_URL");
    char db[64], sql[160];
    snprintf(db, sizeof db, "t_%s_%ld", name, (long)getpid());
    for (char *p = db; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
            *p = '_';
    PGconn *c = PQconnectdb(url);
    bool ok = PQstatus(c) == CONNECTION_OK;
    if (ok)
        PQclear(PQexec(c, "SET client_min_messages = warning"));
    for (int i = 0; ok && i < 2; i++) {
        snprintf(sql, sizeof sql, i ? "CREATE DATABASE %s" : "DROP DATABASE IF EXISTS %s", db);
        PGresult *r = PQexec(c, sql);
        ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok)
            fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
        PQclear(r);
    }
    if (PQstatus(c) != CONNECTION_OK)
        fprintf(stderr, "%s: %s", url, PQerrorMessage(c));
    PQfinish(c);
    return ok && with_db(url, db, out, size);
}
