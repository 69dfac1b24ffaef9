/* SPDX-License-Identifier: Apache-2.0 */
/* test_backup.c - backup and restore as docs/operations.md tells them: the
 * real accordd with durable storage under 16 clients posting offers while
 * `accordctl admin backup` runs; the archive unpacked into a new
 * directory, accordd started on it; every agreement the backup counted is
 * back as it was, and a signature made before the backup verifies after
 * (the signing key came back). */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "http_client.h"
#include "testutil.h"
#include "wal_load.h"

#define CLIENTS 16

static const char config[] = "[database]\n"
                             "durable = yes\n"
                             "[quota]\n"
                             "max_agreements = unlimited\n"
                             "[site alpha]\n"
                             "adapter = sim-batch\n"
                             "nodes = 1000000\n"
                             "[site beta]\n"
                             "adapter = sim-batch\n"
                             "nodes = 1000000\n"
                             "[network net]\n"
                             "adapter = sim-network\n"
                             "[link alpha_beta]\n"
                             "sites = alpha beta\n"
                             "capacity = 100000000\n"
                             "network = net\n";

static pid_t live = -1, restored = -1;
static char dir[256], ini[300];

static void stop(pid_t *pid)
{
    if (*pid > 0) {
        kill(*pid, SIGTERM);
        waitpid(*pid, NULL, 0);
    }
    *pid = -1;
}

static int setup(void)
{
    snprintf(dir, sizeof dir, "%s", acc_test_tmpdir());
    snprintf(ini, sizeof ini, "%s/accordd.ini", dir);
    FILE *f = fopen(ini, "w");
    if (!f)
        return 1;
    /* no [auth] here: the backup is asked for by name */
    fprintf(f, "%s[server]\nanonymous_backup = yes\n", config);
    fclose(f);
    return 0;
}

static int teardown(void)
{
    stop(&live);
    stop(&restored);
    return 0;
}

static bool save(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fputs(text, f);
    return fclose(f) == 0;
}

/* A command's exit status and its first line of output. */
static int shell(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int shell(char *out, size_t size, const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    if (out) {
        out[0] = '\0';
        if (!fgets(out, (int)size, p))
            out[0] = '\0';
    }
    char sink[256];
    while (fgets(sink, sizeof sink, p))
        ;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void *load_main(void *arg)
{
    wal_load_run(arg);
    return NULL;
}

struct row {
    char id[32];
    bool pending;
};

/* The agreements of a database file (and whether each was Pending). */
static struct row *rows_of(const char *db, size_t *n)
{
    sqlite3 *c = NULL;
    sqlite3_stmt *s = NULL;
    struct row *v = NULL;
    *n = 0;
    if (sqlite3_open_v2(db, &c, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c, "SELECT id, state FROM agreement", -1, &s, NULL) != SQLITE_OK) {
        sqlite3_close(c);
        return NULL;
    }
    while (sqlite3_step(s) == SQLITE_ROW) {
        struct row *w = realloc(v, (*n + 1) * sizeof *v);
        if (!w)
            break;
        v = w;
        snprintf(v[*n].id, sizeof v[*n].id, "%s", (const char *)sqlite3_column_text(s, 0));
        v[*n].pending = strncmp((const char *)sqlite3_column_text(s, 1), "Pending", 7) == 0;
        (*n)++;
    }
    sqlite3_finalize(s);
    sqlite3_close(c);
    return v;
}

/* An agreement, saved as the server signed it (pre), and the server's
 * certificate (cert); the certificate's text back (free it). */
static char *signed_before(const char *base, const char *pre, const char *cert)
{
    long st;
    char path[128];
    char *doc = daemon_call(base, "POST", "/agreements", daemon_offer, &st);
    char *id = st == 201 && doc ? xml_get(doc, "/wsag:Agreement/@wsag:AgreementId") : NULL;
    free(doc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(id);
    snprintf(path, sizeof path, "/agreements/%s", id);
    free(id);
    doc = daemon_call(base, "GET", path, NULL, &st);
    CU_ASSERT_TRUE_FATAL(st == 200 && doc && save(pre, doc));
    free(doc);
    doc = daemon_call(base, "GET", "/certificate", NULL, &st);
    CU_ASSERT_TRUE_FATAL(st == 200 && doc && save(cert, doc));
    return doc;
}

/* accordctl admin backup while CLIENTS clients post offers; the number of
 * agreements it reported. */
static long long backup_under_load(const char *base, const char *db, const char *tar)
{
    char wal[340], line[512];
    snprintf(wal, sizeof wal, "%s-wal", db);
    struct wal_load w = {.base = base,
                         .wal = wal,
                         .posters = CLIENTS,
                         .readers = 0,
                         .offers = 1000000,
                         .deadline = time(NULL) + 6};
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, load_main, &w), 0);
    usleep(1500 * 1000);
    int rc =
        shell(line, sizeof line, "%s --server %s admin backup %s 2>&1", ACCORDCTL_PATH, base, tar);
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    long long counted = -1;
    CU_ASSERT_EQUAL_FATAL(sscanf(line, "Backup: %lld agreement", &counted), 1);
    fprintf(stderr, "\n  %d posted under load, %d failed; the backup holds %lld agreement(s)\n",
            w.created, w.failed, counted);
    CU_ASSERT_TRUE(w.created > 0);
    CU_ASSERT_TRUE(counted > 1);
    return counted;
}

/* Every agreement is back as it was; one being negotiated when the copy
 * was made is back too (recovery ends it, as any restart does). */
static void compare(const char *base, const char *base2, const struct row *rows, size_t n)
{
    size_t same = 0;
    for (size_t i = 0; i < n; i++) {
        char path[128];
        snprintf(path, sizeof path, "/agreements/%s", rows[i].id);
        long s1, s2;
        char *d1 = daemon_call(base, "GET", path, NULL, &s1);
        char *d2 = daemon_call(base2, "GET", path, NULL, &s2);
        CU_ASSERT_EQUAL(s2, 200);
        bool equal = s1 == 200 && d1 && d2 && strcmp(d1, d2) == 0;
        if (!rows[i].pending)
            CU_ASSERT_TRUE(equal);
        same += equal;
        free(d1);
        free(d2);
    }
    fprintf(stderr, "  %zu of %zu restored agreements compared equal to the live ones\n", same, n);
}

static void test_backup_restore_under_load(void)
{
    char a_dir[300], db[320], base[64], base2[64], path[512], pre[400], cert[400], tar[400];
    snprintf(a_dir, sizeof a_dir, "%s/live", dir);
    mkdir(a_dir, 0700);
    snprintf(db, sizeof db, "%s/accord.db", a_dir);
    snprintf(pre, sizeof pre, "%s/before.xml", dir);
    snprintf(cert, sizeof cert, "%s/live.pem", dir);
    snprintf(tar, sizeof tar, "%s/backup.tar", dir);
    live = daemon_start(ACCORDD_PATH, ini, db, base, sizeof base);
    CU_ASSERT_TRUE_FATAL(live > 0);
    char *live_cert = signed_before(base, pre, cert);
    long long counted = backup_under_load(base, db, tar);
    /* A second backup of the same name is refused and changes nothing. */
    CU_ASSERT_NOT_EQUAL(
        shell(NULL, 0, "%s --server %s admin backup %s 2>/dev/null", ACCORDCTL_PATH, base, tar), 0);

    /* Restore: unpack into a new directory, start accordd on it. */
    char r_dir[300], r_db[320];
    snprintf(r_dir, sizeof r_dir, "%s/restored", dir);
    mkdir(r_dir, 0700);
    CU_ASSERT_EQUAL_FATAL(shell(NULL, 0, "tar -xf %s -C %s", tar, r_dir), 0);
    snprintf(r_db, sizeof r_db, "%s/accord.db", r_dir);
    size_t n = 0;
    struct row *rows = rows_of(r_db, &n);
    CU_ASSERT_EQUAL_FATAL((long long)n, counted);
    snprintf(path, sizeof path, "%s/accord-signing.key", r_dir);
    CU_ASSERT_EQUAL(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/accord.db.sim-alpha", r_dir);
    CU_ASSERT_EQUAL(access(path, R_OK), 0);
    restored = daemon_start(ACCORDD_PATH, ini, r_db, base2, sizeof base2);
    CU_ASSERT_TRUE_FATAL(restored > 0);
    compare(base, base2, rows, n);
    free(rows);

    /* The signing key is back: the same certificate, and the signature
     * made before the backup verifies with it. */
    long st;
    char *doc = daemon_call(base2, "GET", "/certificate", NULL, &st);
    CU_ASSERT_TRUE(st == 200 && doc && strcmp(doc, live_cert) == 0);
    char r_cert[400];
    snprintf(r_cert, sizeof r_cert, "%s/restored.pem", dir);
    CU_ASSERT_TRUE_FATAL(doc && save(r_cert, doc));
    free(doc);
    free(live_cert);
    CU_ASSERT_EQUAL(shell(NULL, 0, "%s verify %s --cert %s", ACCORDCTL_PATH, pre, r_cert), 0);
    stop(&restored);
    stop(&live);
}

/* Without [auth] and without anonymous_backup nobody takes a backup (it
 * holds the signing key): 403, exit 7, nothing written. */
static void refused_without_auth(void)
{
    char conf[300], db[300], base[64], tar[300];
    snprintf(conf, sizeof conf, "%s/open.ini", dir);
    snprintf(db, sizeof db, "%s/open.db", dir);
    snprintf(tar, sizeof tar, "%s/open.tar", dir);
    CU_ASSERT_TRUE_FATAL(save(conf, config));
    pid_t pid = daemon_start(ACCORDD_PATH, conf, db, base, sizeof base);
    CU_ASSERT_TRUE_FATAL(pid > 0);
    CU_ASSERT_EQUAL(
        shell(NULL, 0, "%s --server %s admin backup %s 2>/dev/null", ACCORDCTL_PATH, base, tar), 7);
    CU_ASSERT_EQUAL(access(tar, F_OK), -1);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

/* Only an administrator may take a backup; the archive then holds the
 * [auth] tokens file too. */
static void test_backup_admin_only(void)
{
    refused_without_auth();
    char tokens[300], conf[300], db[300], base[64], tar[300], line[512];
    snprintf(tokens, sizeof tokens, "%s/tokens", dir);
    snprintf(conf, sizeof conf, "%s/auth.ini", dir);
    snprintf(db, sizeof db, "%s/auth.db", dir);
    snprintf(tar, sizeof tar, "%s/auth.tar", dir);
    CU_ASSERT_TRUE_FATAL(save(tokens, "alice alice-token-0123456789\n"
                                      "root root-token-0123456789 admin\n"));
    chmod(tokens, 0600);
    char text[2048];
    snprintf(text, sizeof text, "%s[auth]\ntokens = %s\n", config, tokens);
    CU_ASSERT_TRUE_FATAL(save(conf, text));
    pid_t pid = daemon_start(ACCORDD_PATH, conf, db, base, sizeof base);
    CU_ASSERT_TRUE_FATAL(pid > 0);
    /* 7: not allowed; nothing written */
    CU_ASSERT_EQUAL(shell(NULL, 0,
                          "%s --server %s --token alice-token-0123456789 admin backup %s "
                          "2>/dev/null",
                          ACCORDCTL_PATH, base, tar),
                    7);
    CU_ASSERT_EQUAL(access(tar, F_OK), -1);
    CU_ASSERT_EQUAL(shell(NULL, 0, "%s --server %s --token root-token-0123456789 admin backup %s",
                          ACCORDCTL_PATH, base, tar),
                    0);
    CU_ASSERT_EQUAL(shell(line, sizeof line, "tar -tf %s | grep -c '^auth/tokens$'", tar), 0);
    CU_ASSERT_EQUAL(atoi(line), 1);
    /* No work files are left beside the database. */
    CU_ASSERT_EQUAL(shell(line, sizeof line, "ls -a %s | grep -c accord-backup", dir), 1);
    CU_ASSERT_EQUAL(atoi(line), 0);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

static const struct acc_test_case tests[] = {
    {"backup under load, restore into a new directory", test_backup_restore_under_load},
    {"only an administrator takes a backup", test_backup_admin_only},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"backup", setup, teardown, tests},
    {NULL, NULL, NULL, NULL},
};
