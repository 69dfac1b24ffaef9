/* SPDX-License-Identifier: Apache-2.0 */
/* dbname.h - a database as the operator names it (a file, a PostgreSQL URL,
 * or by mistake libpq's key=value settings) and as messages, logs and
 * --print-config show it: never with a password.
 *
 * The secrets are libpq's: the password of a URL's user
 * (postgresql://user:secret@host/db) and the settings password,
 * sslpassword (the client key's passphrase) and oauth_client_secret,
 * either as a URL's parameters (?password=secret) or in key=value form
 * (password=secret, password = 'a b'). */
#ifndef ACC_DBNAME_H
#define ACC_DBNAME_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/error.h"

/* Whether s is libpq's key=value form of a connection ("host=/run/pg
 * dbname=accord ..."): a word of it is one of libpq's keywords followed by
 * '='.  Accord takes a PostgreSQL database as a URL only, and such a string
 * is no database file either. */
bool acc_db_is_conninfo(const char *s);

/* A copy of the database s to show: a URL without its password (user:secret@
 * -> user@) and without its secret parameters; key=value settings without
 * their secret ones (the others kept as they were, so that the operator can
 * tell which string it was); anything else (a file's path) as it is.  NULL
 * when out of memory.  free() it. */
char *acc_db_shown(const char *s);

/* Replaces in msg (NUL-terminated, in a buffer of size bytes) every secret
 * value of the database s, as written in s and percent-decoded, with "***":
 * for the messages of a library that quotes back what it was given (libpq's
 * for a URL it cannot parse). */
void acc_db_scrub(char *msg, size_t size, const char *s);

/* The URL s with its database (the path after the hosts) replaced by
 * name, its user, hosts and parameters kept: another database on the same
 * server (a test's own, a restore's target).  NULL when s is not a URL or
 * out of memory.  free() it. */
char *acc_db_url_with_name(const char *s, const char *name);

/* A database path (not empty) into *dst (replaced).  libpq's key=value
 * settings ("host=... password=...") are refused, by
 * acc_conf_db_conninfo: a message that says so, without their secrets. */
acc_err acc_conf_db_path(char **dst, const char *path, struct acc_error *err);
acc_err acc_conf_db_conninfo(const char *v, struct acc_error *err);

#endif
