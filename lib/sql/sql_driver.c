/* SPDX-License-Identifier: Apache-2.0 */
/* sql_driver.c - which backend a location names, and what it can do
 * (sql.h, "backends").  The one place that reads a location's form: a URL
 * names its backend by its scheme, anything else is a file for SQLite. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dbname.h"
#include "sql_internal.h"

static const struct sql_backend *const backends[] = {&sql_sqlite, &sql_pg};

/* The length of location's scheme when it is a URL ("scheme://"), else 0.
 * A scheme is a letter, then letters, digits, '+', '-' and '.' (RFC 3986):
 * "/data/a://b" is a file's path. */
static size_t scheme_len(const char *location)
{
    if (!location)
        return 0;
    const char *colon = strstr(location, "://");
    if (!colon || colon == location)
        return 0;
    size_t n = (size_t)(colon - location);
    if (strspn(location, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.") !=
            n ||
        !strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", location[0]))
        return 0;
    return n;
}

bool acc_sql_is_url(const char *location)
{
    return scheme_len(location) > 0;
}

const struct sql_backend *sql_backend_of(const char *path)
{
    size_t n = scheme_len(path);
    if (!n)
        return &sql_sqlite;
    for (size_t i = 0; i < sizeof backends / sizeof *backends; i++)
        for (const char *const *s = backends[i]->driver.schemes; s && *s; s++)
            if (strlen(*s) == n && strncasecmp(path, *s, n) == 0)
                return backends[i];
    return NULL;
}

bool sql_is_file(const char *path)
{
    return path[0] != '\0' && strcmp(path, ":memory:") != 0 && !acc_sql_is_url(path);
}

const struct acc_sql_driver *acc_sql_driver_of(const char *location, struct acc_error *err)
{
    if (!location)
        location = "";
    const struct sql_backend *be = sql_backend_of(location);
    if (!be) {
        acc_error_set(err, ACC_ERR_CONFIG,
                      "database '%.*s://...': no backend of this build takes a %.*s:// URL (a "
                      "PostgreSQL database is postgresql://USER@HOST/DB?...; a file is a path)",
                      (int)scheme_len(location), location, (int)scheme_len(location), location);
        return NULL;
    }
    if (acc_db_is_conninfo(location)) {
        acc_conf_db_conninfo(location, err);
        return NULL;
    }
    return &be->driver;
}

/* What the driver can do for this location: "" and ":memory:" are
 * SQLite's but no file (nothing beside them, nobody else can open them,
 * nothing to copy). */
static unsigned caps_at(const struct acc_sql_driver *d, const char *location)
{
    unsigned have = d->caps;
    if (!sql_is_file(location))
        have &= ~(unsigned)(ACC_SQL_CAP_FILE | ACC_SQL_CAP_ONE_WRITER | ACC_SQL_CAP_ONLINE_BACKUP);
    return have;
}

bool acc_sql_location_can(const char *location, unsigned caps)
{
    const struct acc_sql_driver *d = acc_sql_driver_of(location, NULL);
    return d && (caps_at(d, location) & caps) == caps;
}

char *acc_sql_location_in_schema(const char *location, const char *schema)
{
    /* libpq's options parameter, percent-encoded: -csearch_path=SCHEMA */
    size_t n = strlen(location) + strlen(schema) + 32;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%s%coptions=-csearch_path%%3D%s", location,
                 strchr(location, '?') ? '&' : '?', schema);
    return out;
}

const struct acc_sql_driver *acc_sql_driver(const struct acc_sql *db)
{
    return &db->be->driver;
}

bool acc_sql_can(const struct acc_sql *db, unsigned caps)
{
    return (caps_at(&db->be->driver, db->opt.path) & caps) == caps;
}

acc_err acc_sql_need_file(const char *what, const char *location, struct acc_error *err)
{
    const struct acc_sql_driver *d = acc_sql_driver_of(location, err);
    if (!d)
        return ACC_ERR_CONFIG;
    if (caps_at(d, location) & ACC_SQL_CAP_FILE || strcmp(location, ":memory:") == 0)
        return ACC_OK;
    char *shown = acc_db_shown(location);
    acc_error_set(err, ACC_ERR_CONFIG,
                  "'%s' is a database on a %s server; %s is kept in an SQLite file only: give "
                  "a file's path",
                  shown ? shown : "?", d->name, what);
    free(shown);
    return ACC_ERR_CONFIG;
}
