/* SPDX-License-Identifier: Apache-2.0 */
/* testdb.c - a database per test program: a file in the temporary
 * directory, or a fresh database on the PostgreSQL server that
 * ACCORD_TEST_DB_URL names (testutil.h). */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dbname.h"
#include "testutil.h"

bool acc_test_db_is_pg(void)
{
    const char *url = getenv("ACCORD_TEST_DB_URL");
    return url && *url;
}

/* url with its database replaced by db, into out. */
static bool with_db(const char *url, const char *db, char *out, size_t size)
{
    char *u = acc_db_url_with_name(url, db);
    int n = u ? snprintf(out, size, "%s", u) : -1;
    free(u);
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

bool acc_test_signing_pair(const char **key, const char **cert)
{
    static char k[300], c[300];
    if (!k[0]) {
        char cmd[1024];
        snprintf(k, sizeof k, "%s/test-signing.key", acc_test_tmpdir());
        snprintf(c, sizeof c, "%s/test-signing.crt", acc_test_tmpdir());
        snprintf(cmd, sizeof cmd,
                 "openssl req -x509 -newkey rsa:2048 -nodes -keyout '%s' -out '%s' "
                 "-subj '/CN=Accord test' -days 2 2>/dev/null",
                 k, c);
        if (system(cmd) != 0 || chmod(k, 0600) != 0) {
            fprintf(stderr, "cannot make a signing pair: %s\n", cmd);
            k[0] = '\0';
            return false;
        }
    }
    *key = k;
    *cert = c;
    return true;
}

const char *acc_test_db_signing(void)
{
    static char section[700];
    const char *key, *cert;
    if (!acc_test_db_is_pg())
        return "";
    if (!section[0]) {
        if (!acc_test_signing_pair(&key, &cert))
            return NULL;
        snprintf(section, sizeof section, "[signing]\nkey = %s\ncertificate = %s\n", key, cert);
    }
    return section;
}
