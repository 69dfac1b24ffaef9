/* SPDX-License-Identifier: Apache-2.0 */
/* ctl.h - what accordctl's commands share.
 *
 * accordctl speaks only the HTTP API (libcurl), like any other client: it asks
 * for JSON and shows it in tables, or passes the server's JSON (--json) or
 * XML (--xml) through for scripts.  Each command is one file with a
 * `const struct ctl_command`; main.c lists them. */
#ifndef ACC_CTL_H
#define ACC_CTL_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "../client/client.h"

/* Exit codes: stable, documented in docs/man/accordctl.1. */
enum {
    CTL_OK = 0,        /* done */
    CTL_ERROR = 1,     /* the server refused the request as wrong (400, 413, 415) */
    CTL_USAGE = 2,     /* the command line is wrong */
    CTL_NOT_FOUND = 3, /* no such agreement, site or template (404) */
    CTL_REJECTED = 4,  /* no common slot, or not possible in the agreement's state (409) */
    CTL_SERVER = 5,    /* the server or an adapter failed (5xx) */
    CTL_NETWORK = 6,   /* no answer from the server */
    CTL_DENIED = 7,    /* authentication or ownership (401, 403) */
    CTL_RETRY = 75,    /* try again later (429, 503): sysexits.h's EX_TEMPFAIL */
};

struct ctl {
    const char *server; /* base URL, no trailing slash needed */
    const char *token;  /* bearer token, or NULL */
    const char *cacert; /* HTTPS: CA file the server must verify against; NULL: the system's */
    const char *cert;   /* client certificate file, or NULL */
    const char *key;    /* its key file, or NULL */
    long timeout;       /* seconds for the whole exchange */
    bool json, xml;     /* pass the server's document through */
    /* Columns of the terminal (else $COLUMNS); 0 when unknown, that is when
     * standard output is not a terminal and COLUMNS is unset: tables are
     * then never cut. */
    unsigned width;
};

/* One request (through the client library, client/client.h).  Returns
 * CTL_OK when the server answered (any status) and CTL_NETWORK (with a
 * message on stderr) when it did not; free *out with acc_client_reply_free
 * either way.  The body is JSON unless c->xml (then XML).  headers: extra,
 * NULL-terminated. */
int ctl_request(const struct ctl *c, const char *method, const char *path, const char *body,
                size_t len, const char *const *headers, struct acc_client_reply *out);

/* The exit code for a status. */
int ctl_exit_for(long status);

/* Prints a failed reply as "accordctl: CODE: message" plus its details, and
 * returns the exit code for its status. */
int ctl_fault(const struct acc_client_reply *r);

/* Parses a JSON reply (jansson); NULL (with a message) when the server sent
 * no JSON.  Free with json_decref. */
json_t *ctl_parse(const struct acc_client_reply *r);

/* Writes the reply's body as it came (--json, --xml). */
int ctl_pass_through(const struct acc_client_reply *r);

/* The usual course of a command: the request, then the server's document
 * passed through (--json, --xml), or shown by show() on success, or the
 * fault on failure.  Returns the exit code. */
int ctl_run(const struct ctl *c, const char *method, const char *path, const char *body, size_t len,
            const char *const *headers, void (*show)(const struct ctl *c, const json_t *doc));

/* A whole file (- for standard input, at most 64 MiB); NULL when it cannot
 * be read.  free() it. */
char *ctl_read_file(const char *path, size_t *len);

/* Escapes s for a URL query (into out, of size bytes). */
void ctl_url_escape(const char *s, char *out, size_t size);

/* ------------------------------------------------------------- options */

/* Codes of common options without a letter: above every character, so that
 * they never meet a command's own option letters. */
enum { CTL_OPT_CACERT = 0x100, CTL_OPT_CERT, CTL_OPT_KEY };

/* The options every command takes. */
#define CTL_COMMON_OPTIONS                                                             \
    {"server", required_argument, NULL, 'S'}, {"token", required_argument, NULL, 'T'}, \
        {"json", no_argument, NULL, 'J'}, {"xml", no_argument, NULL, 'X'},             \
        {"timeout", required_argument, NULL, 'W'},                                     \
        {"cacert", required_argument, NULL, CTL_OPT_CACERT},                           \
        {"cert", required_argument, NULL, CTL_OPT_CERT},                               \
        {"key", required_argument, NULL, CTL_OPT_KEY},                                 \
    {                                                                                  \
        "help", no_argument, NULL, 'h'                                                 \
    }

/* Handles a common option; returns -1 when opt is not one, else an exit
 * code to stop with (CTL_OK for --help after printing it) or -2 to go on. */
int ctl_common_option(struct ctl *c, int opt, const char *arg, void (*help)(FILE *));

/* For commands that take only the common options and one argument (what:
 * "agreement ID"), or none (what NULL): parses them and sets *arg.  Returns
 * -2 to go on, or an exit code. */
int ctl_one_argument(struct ctl *c, int argc, char **argv, const char *cmd, const char *what,
                     void (*help)(FILE *), const char **arg);

/* A path with an escaped segment: fmt has one %s. */
void ctl_path(char *out, size_t size, const char *fmt, const char *segment);

/* ---------------------------------------------------------------- JSON */

/* A member of a JSON object, or dflt when o is not an object, the member is
 * absent or of another type. */
const char *ctl_str(const json_t *o, const char *key, const char *dflt);
long long ctl_int(const json_t *o, const char *key, long long dflt);
bool ctl_bool(const json_t *o, const char *key, bool dflt);
/* An element of an array that is a string, or dflt. */
const char *ctl_str_at(const json_t *a, size_t i, const char *dflt);

/* ------------------------------------------------------------ printing */

/* Bytes of a short time, its '\0' included. */
enum { CTL_TIME_LEN = 17 };
/* "2026-11-22T02:45:00Z" -> "2026-11-22 02:45" (UTC; out: CTL_TIME_LEN
 * bytes); "-" for NULL or what is not such a time. */
void ctl_short_time(const char *t, char *out);
/* Columns s takes on a terminal: one per character (UTF-8). */
int ctl_columns(const char *s);
/* Prints s cut to width columns, with '+' marking a cut (never inside a
 * UTF-8 character), padded to width unless it is the last column. */
void ctl_cell(const char *s, int width, bool pad);
/* An agreement document (JSON), as accordctl show prints it. */
void ctl_print_agreement(const struct ctl *c, const json_t *a);

/* accordctl list's output (list_print.c): the fields of -o FORMAT, parsed
 * once (a message and CTL_USAGE when FORMAT is wrong); the agreements of a
 * list (a JSON array) in that format, or NULL for the table; the header
 * line unless header is false. */
struct ctl_list_format;
int ctl_list_format_parse(const char *spec, struct ctl_list_format **out);
void ctl_list_format_free(struct ctl_list_format *f);
void ctl_list_print(const struct ctl *c, const json_t *list, const struct ctl_list_format *f,
                    bool header);

/* ------------------------------------------------------------ commands */

struct ctl_command {
    const char *name;
    const char *summary;
    int (*run)(struct ctl *c, int argc, char **argv);
    void (*help)(FILE *f);
};

extern const struct ctl_command ctl_cmd_submit, ctl_cmd_list, ctl_cmd_show, ctl_cmd_state,
    ctl_cmd_trace, ctl_cmd_terminate, ctl_cmd_sites, ctl_cmd_preview, ctl_cmd_launch,
    ctl_cmd_verify, ctl_cmd_modify, ctl_cmd_quote, ctl_cmd_commit, ctl_cmd_release;

#endif
