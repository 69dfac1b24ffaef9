/* conf.h - what the INI readers of accordd (server/config), accord-site
 * (site/) and the resource sections (resources/) share: the first error of
 * a file, values copied into place, and the two keys both daemons have
 * (listen = HOST:PORT, the database path).
 *
 * The readers follow inih's handler convention: 1 to go on, 0 to stop.
 * inih goes on calling the handler after a 0 without reading more, so the
 * first error is kept and the loader reports it with its line.  inih
 * itself is the readers' business: nothing here parses a file. */
#ifndef ACC_CONF_H
#define ACC_CONF_H

#include <stdbool.h>

#include "error.h"

/* The first error of an INI reader. */
struct acc_conf_first {
    struct acc_error err;
    bool failed;
};

/* Records "[section] message" in f unless an error is recorded already;
 * returns 0 (inih's "stop"). */
int acc_conf_bad(struct acc_conf_first *f, const char *section, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A reader's answer (rc, with e when it is an error) in inih's convention:
 * 1 for ACC_OK; else 0, and e is kept as the first error unless it says
 * out of memory (the loader then reports the line as not valid). */
int acc_conf_take(struct acc_conf_first *f, acc_err rc, const struct acc_error *e);

/* Replaces *dst with a copy of v; 1, or 0 when out of memory (*dst kept). */
int acc_conf_set_str(char **dst, const char *v);

/* listen = HOST:PORT or [HOST]:PORT into *host (replaced) and *port. */
acc_err acc_conf_listen(const char *v, char **host, unsigned *port, struct acc_error *err);

/* A database path (not empty) into *dst (replaced). */
acc_err acc_conf_db_path(char **dst, const char *path, struct acc_error *err);

#endif
