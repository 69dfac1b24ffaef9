/* SPDX-License-Identifier: Apache-2.0 */
/* backup.c - POST /admin/backup: a consistent copy of everything accordd
 * needs to start again elsewhere, as one tar (ustar) archive: the database
 * (copied while it serves: a file's copy, or a server's dump in its own
 * format, sql.h), the signing key and certificate, the [auth] files, and
 * the adapters' own calendar databases, with a MANIFEST that says where
 * each came from (part of the service; docs/operations.md).
 *
 * One backup at a time; the copies are made in a directory beside the
 * database file (the same file system, and the operator's disk), or in
 * TMPDIR (/tmp) for a server's database, that is removed on every path. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/common/log.h"
#include "../../lib/common/timefmt.h"
#include "../../lib/ledger/ledger.h"
#include "../../lib/sql/dbname.h"
#include "../../lib/sql/sql.h"
#include "internal.h"

/* The most the archive may hold: it is built in memory and answered in one
 * piece. */
#define BACKUP_MAX ((size_t)1 << 30)
/* A plain file (a key, a tokens file) is small; more is the wrong file. */
#define PLAIN_MAX   ((size_t)16 << 20)
#define MAX_ENTRIES 64

struct entry {
    char name[100]; /* in the archive */
    char *origin;   /* where it lives on this server */
    char *copy;     /* the file to archive: the copy in the work directory, or origin */
    bool database;  /* copied through the SQL layer */
};

struct job {
    struct acc_service *svc;
    char dir[4096]; /* the work directory */
    struct entry e[MAX_ENTRIES];
    size_t n;
    int64_t agreements;
    bool dump; /* the database is a server's, dumped (ACC_SQL_CAP_DUMP) */
};

/* The archive's name of a server's dump. */
#define DUMP_NAME "accord.dump"

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* path's directory joined with name (".": none). */
static char *beside(const char *path, const char *name)
{
    const char *s = strrchr(path, '/');
    size_t n = (s ? (size_t)(s - path) + 1 : 0) + strlen(name) + 1;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%.*s%s", s ? (int)(s - path) + 1 : 0, path, name);
    return out;
}

/* TMPDIR/name (/tmp without TMPDIR). */
static char *in_tmpdir(const char *name)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    size_t n = strlen(tmp) + strlen(name) + 2;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%s/%s", tmp, name);
    return out;
}

/* An entry `dir/basename(origin)` ("" dir: at the top, beside the database),
 * or `name` when given. */
static acc_err add_as(struct job *j, const char *dir, const char *name, const char *origin,
                      bool database, struct acc_error *err)
{
    if (j->n == MAX_ENTRIES)
        return acc_error_set(err, ACC_ERR_INTERNAL, "backup: more than %d files", MAX_ENTRIES);
    for (size_t i = 0; i < j->n; i++)
        if (strcmp(j->e[i].origin, origin) == 0)
            return ACC_OK; /* named twice (a key that is also the certificate file) */
    struct entry *e = &j->e[j->n];
    int n = snprintf(e->name, sizeof e->name, "%s%s%s", dir, *dir ? "/" : "",
                     name ? name : base(origin));
    if (n < 0 || (size_t)n >= sizeof e->name)
        return acc_error_set(err, ACC_ERR_INVALID, "backup: file name too long: %.80s", origin);
    for (size_t i = 0; i < j->n; i++)
        if (strcmp(j->e[i].name, e->name) == 0)
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "backup: two files would both be %s in the archive (%s, %s)",
                                 e->name, j->e[i].origin, origin);
    if (!(e->origin = strdup(origin)))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    e->database = database;
    j->n++;
    return ACC_OK;
}

static acc_err add(struct job *j, const char *dir, const char *origin, bool database,
                   struct acc_error *err)
{
    return add_as(j, dir, NULL, origin, database, err);
}

/* The calendar file of a site's or network's adapter, if it keeps one. */
static acc_err add_calendar(struct job *j, const char *name, const struct acc_kv *kv, size_t n,
                            struct acc_error *err)
{
    const char *setting = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(kv[i].key, "calendar") == 0)
            setting = kv[i].value;
    char *path = NULL;
    acc_err rc = acc_ledger_calendar_path(j->svc->cfg->db_path, name, setting, &path, err);
    if (!rc && strcmp(path, ":memory:") != 0 && access(path, F_OK) == 0)
        rc = add(j, setting ? "calendars" : "", path, true, err);
    free(path);
    return rc;
}

/* Which files: the database, the signing pair, [auth], the calendars. */
static acc_err list_files(struct job *j, struct acc_error *err)
{
    const struct acc_config *cfg = j->svc->cfg;
    acc_err rc;
    if (j->dump) {
        /* the server's database as the MANIFEST names it: without its
         * password */
        char *shown = acc_db_shown(cfg->db_path);
        rc = shown ? add_as(j, "", DUMP_NAME, shown, true, err)
                   : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        free(shown);
    } else {
        rc = add(j, "", cfg->db_path, true, err);
    }
    if (!rc && cfg->sign_key) {
        rc = add(j, "signing", cfg->sign_key, false, err);
        if (!rc && cfg->sign_cert)
            rc = add(j, "signing", cfg->sign_cert, false, err);
    } else if (!rc) {
        char *key = beside(cfg->db_path, "accord-signing.key");
        char *cert = beside(cfg->db_path, "accord-signing.crt");
        rc = key && cert ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        if (!rc && access(key, F_OK) == 0)
            rc = add(j, "", key, false, err);
        if (!rc && access(cert, F_OK) == 0)
            rc = add(j, "", cert, false, err);
        free(key);
        free(cert);
    }
    if (!rc && cfg->tokens_file)
        rc = add(j, "auth", cfg->tokens_file, false, err);
    if (!rc && cfg->client_certificates_file)
        rc = add(j, "auth", cfg->client_certificates_file, false, err);
    for (size_t i = 0; !rc && i < cfg->res.n_sites; i++)
        rc = add_calendar(j, cfg->res.sites[i].name, cfg->res.sites[i].settings,
                          cfg->res.sites[i].n_settings, err);
    for (size_t i = 0; !rc && i < cfg->res.n_networks; i++)
        rc = add_calendar(j, cfg->res.networks[i].name, cfg->res.networks[i].settings,
                          cfg->res.networks[i].n_settings, err);
    return rc;
}

/* The databases are copied into the work directory (each a snapshot); the
 * plain files are read where they are. */
static acc_err copy_databases(struct job *j, struct acc_error *err)
{
    for (size_t i = 0; i < j->n; i++) {
        struct entry *e = &j->e[i];
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s/%zu.%s", j->dir, i, i == 0 && j->dump ? "dump" : "db");
        if (!(e->copy = strdup(e->database ? tmp : e->origin)))
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        if (!e->database)
            continue;
        acc_err rc = ACC_OK;
        if (i == 0)
            rc = acc_store_backup(j->svc->store, tmp, &j->agreements, err);
        else
            rc = acc_sql_copy_file("calendar", e->origin, tmp, err);
        if (rc)
            return rc;
    }
    return ACC_OK;
}

/* ------------------------------------------------------------------- ustar */

/* size - 1 octal digits and a NUL (the caller checked that v fits). */
static void octal(char *field, size_t size, uint64_t v)
{
    field[size - 1] = '\0';
    for (size_t i = size - 1; i-- > 0; v >>= 3)
        field[i] = (char)('0' + (v & 7));
}

static acc_err tar_header(struct acc_buf *out, const char *name, uint64_t size, char type,
                          unsigned mode, acc_time mtime, struct acc_error *err)
{
    unsigned char h[512] = {0};
    if (size > 077777777777ull)
        return acc_error_set(err, ACC_ERR_TOO_LARGE, "backup: %s is too large for tar", name);
    snprintf((char *)h, 100, "%s", name);
    octal((char *)h + 100, 8, mode);
    octal((char *)h + 108, 8, 0);
    octal((char *)h + 116, 8, 0);
    octal((char *)h + 124, 12, size);
    octal((char *)h + 136, 12, (uint64_t)(mtime > 0 ? mtime : 0));
    memset(h + 148, ' ', 8);
    h[156] = (unsigned char)type;
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    unsigned sum = 0;
    for (size_t i = 0; i < sizeof h; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    h[155] = ' ';
    acc_buf_append(out, h, sizeof h);
    return ACC_OK;
}

static acc_err tar_data(struct acc_buf *out, const char *name, const void *data, size_t n,
                        acc_time mtime, struct acc_error *err)
{
    static const char zero[512];
    if (out->len + 512 + n + 1024 > BACKUP_MAX)
        return acc_error_set(err, ACC_ERR_TOO_LARGE,
                             "backup: more than %zu MiB; copy the files as docs/operations.md "
                             "says instead",
                             BACKUP_MAX >> 20);
    acc_err rc = tar_header(out, name, n, '0', 0600, mtime, err);
    if (rc)
        return rc;
    acc_buf_append(out, data, n);
    if (n % 512)
        acc_buf_append(out, zero, 512 - n % 512);
    return acc_buf_ok(out) ? ACC_OK : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
}

static acc_err tar_file(struct acc_buf *out, const struct entry *e, acc_time mtime,
                        struct acc_error *err)
{
    FILE *f = fopen(e->copy, "rb");
    if (!f)
        return acc_error_set(err, ACC_ERR_IO, "backup: cannot read %s: %s", e->copy,
                             strerror(errno));
    struct stat sb;
    acc_err rc = ACC_OK;
    char *data = NULL;
    size_t limit = e->database ? BACKUP_MAX : PLAIN_MAX;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > limit)
        rc = acc_error_set(err, ACC_ERR_IO, "backup: %s is not a regular file of at most %zu MiB",
                           e->origin, limit >> 20);
    else if (!(data = malloc(sb.st_size ? (size_t)sb.st_size : 1)))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    else if (fread(data, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size)
        rc = acc_error_set(err, ACC_ERR_IO, "backup: cannot read %s", e->copy);
    fclose(f);
    if (!rc)
        rc = tar_data(out, e->name, data, (size_t)sb.st_size, mtime, err);
    free(data);
    return rc;
}

static acc_err write_archive(struct job *j, struct acc_buf *out, struct acc_error *err)
{
    acc_time now = acc_now();
    char when[ACC_TIME_STRLEN];
    acc_time_format(now, when);
    struct acc_buf m = ACC_BUF_INIT;
    acc_buf_printf(&m,
                   "# Accord backup (docs/operations.md, \"Backup and restore\")\n"
                   "created %s\nagreements %" PRId64 "\nfiles %zu\n",
                   when, j->agreements, j->n);
    for (size_t i = 0; i < j->n; i++)
        acc_buf_printf(&m, "file %s %s\n", j->e[i].name, j->e[i].origin);
    acc_err rc = acc_buf_ok(&m) ? tar_data(out, "MANIFEST", m.data, m.len, now, err)
                                : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    acc_buf_release(&m);
    for (size_t i = 0; !rc && i < j->n; i++)
        rc = tar_file(out, &j->e[i], now, err);
    static const char end[1024];
    if (!rc)
        acc_buf_append(out, end, sizeof end);
    return rc || acc_buf_ok(out) ? rc : acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
}

/* ------------------------------------------------------------------ backup */

static void job_release(struct job *j)
{
    for (size_t i = 0; i < j->n; i++) {
        if (j->e[i].database && j->e[i].copy)
            unlink(j->e[i].copy);
        free(j->e[i].origin);
        free(j->e[i].copy);
    }
    if (j->dir[0] && rmdir(j->dir) != 0)
        acc_log_warn("backup: cannot remove %s: %s", j->dir, strerror(errno));
}

acc_err acc_service_backup(struct acc_service *svc, struct acc_buf *out, int64_t *agreements,
                           struct acc_error *err)
{
    *agreements = 0;
    const char *db = svc->cfg->db_path;
    if (!db || !db[0] || strcmp(db, ":memory:") == 0)
        return acc_error_set(err, ACC_ERR_UNSUPPORTED,
                             "the database is in memory: there is nothing to back up");
    /* A file is copied beside itself; a server's database is dumped, and
     * has no directory beside it (the URL would name one, password and
     * all, in the message of a failed mkdtemp): the temporary one. */
    bool dump = acc_sql_location_can(db, ACC_SQL_CAP_DUMP);
    if (!dump && !acc_sql_location_can(db, ACC_SQL_CAP_ONLINE_BACKUP))
        return acc_error_set(err, ACC_ERR_UNSUPPORTED,
                             "the database cannot be copied by this build: back it up with its "
                             "own tools, and the signing pair and [auth]'s files as files");
    if (atomic_exchange(&svc->backing_up, true))
        return acc_error_set(err, ACC_ERR_STATE,
                             "a backup is being made already; ask again when it is done");
    struct job j = {.svc = svc, .dump = dump};
    acc_err rc = ACC_OK;
    char *dir = dump ? in_tmpdir("accord-backup-XXXXXX") : beside(db, ".accord-backup-XXXXXX");
    if (!dir || strlen(dir) >= sizeof j.dir)
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    else if (!mkdtemp(dir))
        rc = acc_error_set(err, ACC_ERR_IO, "backup: cannot make %s: %s", dir, strerror(errno));
    else
        snprintf(j.dir, sizeof j.dir, "%s", dir);
    free(dir);
    if (!rc)
        rc = list_files(&j, err);
    if (!rc)
        rc = copy_databases(&j, err);
    if (!rc)
        rc = write_archive(&j, out, err);
    job_release(&j);
    if (rc)
        acc_buf_reset(out);
    else
        acc_log_info("backup: %" PRId64 " agreement(s), %zu file(s), %zu bytes", j.agreements, j.n,
                     out->len);
    *agreements = j.agreements;
    atomic_store(&svc->backing_up, false);
    return rc;
}
