/* SPDX-License-Identifier: Apache-2.0 */
/* conf_report.c - every problem of a configuration file (conf_report.h). */
#include "conf_report.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void acc_conf_report_init(struct acc_conf_report *r, FILE *file, const char *text)
{
    memset(r, 0, sizeof *r);
    r->file = file;
    r->text = text;
}

void acc_conf_report_release(struct acc_conf_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_problems; i++) {
        free(r->problems[i].section);
        free(r->problems[i].key);
        free(r->problems[i].msg);
    }
    free(r->problems);
    for (size_t i = 0; i < r->n_seen; i++) {
        free(r->seen[i].section);
        free(r->seen[i].key);
    }
    free(r->seen);
    memset(r, 0, sizeof *r);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* msg without a leading "[section] " or "[section]: ". */
static const char *unbracket(const char *msg)
{
    if (msg[0] != '[')
        return msg;
    const char *end = strchr(msg, ']');
    if (!end)
        return msg;
    end++;
    if (*end == ':')
        end++;
    while (*end == ' ')
        end++;
    return end;
}

static void add_as(struct acc_conf_report *r, int line, bool after, bool warning,
                   const char *section, const char *key, const char *msg)
{
    msg = unbracket(msg);
    if (r->n_problems) {
        /* One report per unknown section, not one per key in it. */
        const struct acc_conf_problem *last = &r->problems[r->n_problems - 1];
        if (last->section && section && strcmp(last->section, section) == 0 &&
            strcmp(last->msg, msg) == 0)
            return;
    }
    struct acc_conf_problem *v = realloc(r->problems, (r->n_problems + 1) * sizeof *v);
    if (!v) {
        r->nomem = true;
        return;
    }
    r->problems = v;
    struct acc_conf_problem *p = &v[r->n_problems];
    *p = (struct acc_conf_problem){.line = line, .after = after, .warning = warning};
    p->section = dup_or_null(section);
    p->key = dup_or_null(key);
    p->msg = strdup(msg);
    if ((section && !p->section) || (key && !p->key) || !p->msg) {
        free(p->section);
        free(p->key);
        free(p->msg);
        r->nomem = true;
        return;
    }
    r->n_problems++;
}

static void add(struct acc_conf_report *r, int line, bool after, const char *section,
                const char *key, const char *msg)
{
    add_as(r, line, after, false, section, key, msg);
}

/* ---------------------------------------------------------------- reader */

/* The line just finished: inih called the handler for it, or it is blank,
 * a comment or a section header; anything else inih refused. */
static void line_done(struct acc_conf_report *r)
{
    if (r->keyed || r->first == '\0' || r->first == ';' || r->first == '#' ||
        (r->first == '[' && r->closes))
        return;
    add(r, r->lines, false, NULL, NULL, "not a valid INI line");
}

static char *read_chunk(struct acc_conf_report *r, char *str, int num)
{
    if (r->file)
        return fgets(str, num, r->file);
    if (!r->text || !*r->text || num < 2)
        return NULL;
    size_t n = 0;
    while (n + 1 < (size_t)num && r->text[n] && r->text[n] != '\n')
        n++;
    if (r->text[n] == '\n' && n + 1 < (size_t)num)
        n++;
    memcpy(str, r->text, n);
    str[n] = '\0';
    r->text += n;
    return str;
}

/* Whether the reader is at the end of its input. */
static bool at_end(struct acc_conf_report *r)
{
    if (!r->file)
        return !r->text || !*r->text;
    int ch = getc(r->file);
    if (ch == EOF)
        return true;
    ungetc(ch, r->file);
    return false;
}

/* Skips the rest of a line. */
static void skip_line(struct acc_conf_report *r)
{
    if (!r->file) {
        const char *nl = strchr(r->text, '\n');
        r->text = nl ? nl + 1 : r->text + strlen(r->text);
        return;
    }
    int ch;
    while ((ch = getc(r->file)) != EOF && ch != '\n')
        ;
}

char *acc_conf_report_read(char *str, int num, void *stream)
{
    struct acc_conf_report *r = stream;
    if (r->lines > 0 && !r->mid_line)
        line_done(r);
    char *got = read_chunk(r, str, num);
    if (!got) {
        if (r->lines > 0 && r->mid_line)
            line_done(r); /* the last line, without a newline */
        r->mid_line = false;
        return NULL;
    }
    size_t len = strlen(got);
    if (!r->mid_line && len && got[len - 1] != '\n' && !at_end(r)) {
        /* Longer than inih's buffer: inih would take the rest for lines of
         * their own, and a value cut short for the whole.  It gets a blank
         * line instead, so that its count of lines stays ours. */
        skip_line(r);
        r->lines++;
        r->keyed = false;
        r->first = '\0';
        r->closes = false;
        char msg[96];
        snprintf(msg, sizeof msg, "longer than %d bytes, the most a line may have", num - 2);
        add(r, r->lines, false, NULL, NULL, msg);
        snprintf(str, (size_t)num, "\n");
        return str;
    }
    const char *s = got;
    if (!r->mid_line) {
        r->lines++;
        r->keyed = false;
        r->first = '\0';
        r->closes = false;
        if (r->lines == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
            s += 3; /* a UTF-8 byte order mark, which inih skips */
    }
    if (r->first == '\0') {
        s += strspn(s, " \t\r\n\f\v");
        r->first = *s;
    }
    r->closes = r->closes || strchr(got, ']') != NULL;
    r->mid_line = len == 0 || got[len - 1] != '\n';
    return got;
}

/* --------------------------------------------------------------- reading */

void acc_conf_report_key(struct acc_conf_report *r, const char *section, const char *key)
{
    r->keyed = true;
    r->line = r->lines;
    r->section = section;
    r->key = key;
    struct acc_conf_seen *v = realloc(r->seen, (r->n_seen + 1) * sizeof *v);
    if (!v) {
        r->nomem = true;
        return;
    }
    r->seen = v;
    v[r->n_seen].section = strdup(section);
    v[r->n_seen].key = strdup(key);
    v[r->n_seen].line = r->line;
    if (!v[r->n_seen].section || !v[r->n_seen].key) {
        free(v[r->n_seen].section);
        free(v[r->n_seen].key);
        r->nomem = true;
        return;
    }
    r->n_seen++;
}

int acc_conf_report_bad(struct acc_conf_report *r, const char *section, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    add(r, r->line, false, section, r->key, msg);
    return 0;
}

int acc_conf_report_section_bad(struct acc_conf_report *r, const char *section, const char *msg)
{
    add(r, r->line, false, section, NULL, msg);
    return 0;
}

int acc_conf_report_take(struct acc_conf_report *r, acc_err rc, const struct acc_error *e)
{
    if (rc == ACC_OK)
        return 1;
    if (rc == ACC_ERR_NOMEM)
        r->nomem = true;
    else
        add(r, r->line, false, r->section, r->key, e->msg);
    return 0;
}

void acc_conf_report_parsed(struct acc_conf_report *r, int rc)
{
    if (rc == -2)
        r->nomem = true;
    if (rc <= 0)
        return;
    for (size_t i = 0; i < r->n_problems; i++) {
        if (r->problems[i].line == rc)
            return;
    }
    r->nomem = true; /* a reader refused a line without saying why */
}

/* ----------------------------------------------------------- after reading */

int acc_conf_report_line(const struct acc_conf_report *r, const char *section, const char *key)
{
    for (size_t i = r->n_seen; key && section && i-- > 0;) {
        if (strcmp(r->seen[i].section, section) == 0 && strcmp(r->seen[i].key, key) == 0)
            return r->seen[i].line;
    }
    return 0;
}

/* A problem or warning of key in section, found after reading: at the
 * line the key was read at. */
static void vadd_after(struct acc_conf_report *r, bool warning, const char *section,
                       const char *key, const char *fmt, va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    add_as(r, acc_conf_report_line(r, section, key), true, warning, section, key, msg);
}

acc_err acc_conf_report_after(struct acc_conf_report *r, const char *section, const char *key,
                              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vadd_after(r, false, section, key, fmt, ap);
    va_end(ap);
    return ACC_ERR_CONFIG;
}

acc_err acc_conf_report_after_at(struct acc_conf_report *r, int line, const char *key,
                                 const struct acc_error *e)
{
    char section[160] = "";
    const char *end = e->msg[0] == '[' ? strchr(e->msg, ']') : NULL;
    if (end && (size_t)(end - e->msg - 1) < sizeof section) {
        memcpy(section, e->msg + 1, (size_t)(end - e->msg - 1));
        section[end - e->msg - 1] = '\0';
    } else {
        end = NULL;
    }
    if (end && line <= 0)
        line = acc_conf_report_line(r, section, key);
    add(r, line > 0 ? line : 0, true, end ? section : NULL, end ? key : NULL, e->msg);
    return ACC_ERR_CONFIG;
}

acc_err acc_conf_report_after_err(struct acc_conf_report *r, const char *key,
                                  const struct acc_error *e)
{
    return acc_conf_report_after_at(r, 0, key, e);
}

void acc_conf_report_warn(struct acc_conf_report *r, const char *section, const char *key,
                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vadd_after(r, true, section, key, fmt, ap);
    va_end(ap);
}

/* The first problem that is not a warning, or NULL. */
static const struct acc_conf_problem *first_error(const struct acc_conf_report *r)
{
    for (size_t i = 0; i < r->n_problems; i++) {
        if (!r->problems[i].warning)
            return &r->problems[i];
    }
    return NULL;
}

bool acc_conf_report_failed(const struct acc_conf_report *r)
{
    return first_error(r) || r->nomem;
}

acc_err acc_conf_report_first(const struct acc_conf_report *r, const char *origin,
                              bool after_origin, struct acc_error *err)
{
    const struct acc_conf_problem *p = first_error(r);
    if (!p) {
        if (r->nomem)
            return acc_error_set(err, ACC_ERR_NOMEM, "%s: out of memory", origin);
        return ACC_OK;
    }
    char where[512] = "";
    if (!p->after)
        snprintf(where, sizeof where, "%s line %d: ", origin, p->line);
    else if (after_origin)
        snprintf(where, sizeof where, "%s: ", origin);
    if (p->section)
        return acc_error_set(err, ACC_ERR_CONFIG, "%s[%s] %s", where, p->section, p->msg);
    return acc_error_set(err, ACC_ERR_CONFIG, "%s%s", where, p->msg);
}

void acc_conf_report_print(const struct acc_conf_report *r, const char *origin, FILE *out)
{
    for (size_t i = 0; i < r->n_problems; i++) {
        const struct acc_conf_problem *p = &r->problems[i];
        if (p->line > 0)
            fprintf(out, "%s:%d: ", origin, p->line);
        else
            fprintf(out, "%s: ", origin);
        if (p->warning)
            fputs("warning: ", out);
        if (p->section && (p->line == 0 || !p->key))
            fprintf(out, "[%s] ", p->section);
        const char *msg = p->msg;
        if (p->key) {
            fprintf(out, "%s: ", p->key);
            size_t kl = strlen(p->key);
            if (strncmp(msg, p->key, kl) == 0 && msg[kl] == ':' && msg[kl + 1] == ' ')
                msg += kl + 2;
        }
        fprintf(out, "%s\n", msg);
    }
    if (r->nomem)
        fprintf(out, "%s: out of memory: some problems may not be listed\n", origin);
}
