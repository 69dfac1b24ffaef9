/* SPDX-License-Identifier: Apache-2.0 */
/* config_auth.c - HTTPS and client certificates: [server] certificate and
 * key, [auth] client_ca and client_certificates (a file of
 * "user SUBJECT-or-SHA256:FINGERPRINT [admin|metrics]" lines), the users they name
 * and the checks across them. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/common/strutil.h"
#include "config_internal.h"

#define MAX_CERT_LINES 10000
#define FP_LEN         (7 + 32 * 3) /* "SHA256:" and 32 hex pairs joined by ':', with the NUL */

int cfg_tls_server_key(struct cfg_parse *p, const char *k, const char *v)
{
    char **field = strcmp(k, "certificate") == 0 ? &p->c->tls_certificate : &p->c->tls_key;
    if (!*v)
        return cfg_bad(p, "server", "%s is empty", k);
    if (*field)
        return cfg_bad(p, "server", "%s is given twice", k);
    return acc_conf_set_str(field, v);
}

/* "SHA256:" + 32 hex pairs, either case, into upper case (as lib/tls
 * prints fingerprints). */
static bool fingerprint_norm(const char *s, char *out)
{
    if (strncasecmp(s, "SHA256:", 7) != 0 || strlen(s) != FP_LEN - 1)
        return false;
    for (size_t i = 7; s[i]; i++) {
        bool colon = (i - 7) % 3 == 2;
        if (colon ? s[i] != ':' : !isxdigit((unsigned char)s[i]))
            return false;
    }
    memcpy(out, "SHA256", 6);
    for (size_t i = 6; i < FP_LEN; i++)
        out[i] = (char)toupper((unsigned char)s[i]);
    return true;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* One line: user, then the identity (a subject DN may hold spaces), then
 * an optional last word: its role, "admin" or "metrics". */
static acc_err cert_line(struct acc_config *c, char *line, const char *path, unsigned no,
                         struct acc_error *err)
{
    char *s = trim(line);
    if (!*s)
        return ACC_OK;
    char *sp = s + strcspn(s, " \t");
    if (!*sp)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "client certificates file %s line %u: expected "
                             "'user SUBJECT-or-SHA256:FINGERPRINT [admin|metrics]'",
                             path, no);
    *sp = '\0';
    const char *name = s;
    char *id = trim(sp + 1);
    bool admin = false, metrics = false;
    size_t n = strlen(id);
    if (n > 6 && strcmp(id + n - 5, "admin") == 0 && isspace((unsigned char)id[n - 6])) {
        admin = true;
        id[n - 5] = '\0';
        id = trim(id);
    } else if (n > 8 && strcmp(id + n - 7, "metrics") == 0 && isspace((unsigned char)id[n - 8])) {
        metrics = true;
        id[n - 7] = '\0';
        id = trim(id);
    }
    if (strlen(name) > 127 || !acc_name_valid(name, 127))
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "client certificates file %s line %u: '%s' is not a user name", path,
                             no, name);
    char fp[FP_LEN];
    bool is_fp = strncasecmp(id, "SHA256:", 7) == 0;
    if (is_fp && !fingerprint_norm(id, fp))
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "client certificates file %s line %u: '%s' is not a SHA-256 "
                             "fingerprint (SHA256: and 32 hex pairs joined by ':')",
                             path, no, id);
    if (!is_fp && (!strchr(id, '=') || strlen(id) > 511))
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "client certificates file %s line %u: '%s' is not a subject such "
                             "as CN=alice",
                             path, no, id);
    void *v = realloc(c->users, (c->n_users + 1) * sizeof *c->users);
    if (!v)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    c->users = v;
    struct acc_user *u = &c->users[c->n_users];
    memset(u, 0, sizeof *u);
    u->name = strdup(name);
    u->admin = admin;
    u->metrics = metrics;
    if (is_fp)
        u->fingerprint = strdup(fp);
    else
        u->subject = strdup(id);
    if (!u->name || (!u->fingerprint && !u->subject)) {
        free(u->name);
        free(u->fingerprint);
        free(u->subject);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    c->n_users++;
    c->n_cert_users++;
    return ACC_OK;
}

static acc_err read_certificates(struct acc_config *c, const char *path, struct acc_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return acc_error_set(err, ACC_ERR_CONFIG, "client certificates file %s: cannot open it",
                             path);
    char line[1024];
    unsigned no = 0;
    acc_err rc = ACC_OK;
    while (!rc && fgets(line, sizeof line, f)) {
        if (++no > MAX_CERT_LINES) {
            rc = acc_error_set(err, ACC_ERR_CONFIG,
                               "client certificates file %s: more than %d lines; is it the "
                               "right file?",
                               path, MAX_CERT_LINES);
            break;
        }
        if (!strchr(line, '\n') && !feof(f)) {
            rc = acc_error_set(err, ACC_ERR_CONFIG,
                               "client certificates file %s line %u: longer than %zu bytes", path,
                               no, sizeof line - 2);
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        rc = cert_line(c, line, path, no, err);
    }
    fclose(f);
    if (!rc && c->n_cert_users == 0)
        rc = acc_error_set(err, ACC_ERR_CONFIG, "client certificates file %s names no user", path);
    return rc;
}

int cfg_auth_cert_key(struct cfg_parse *p, const char *k, const char *v)
{
    struct acc_error e;
    if (!*v)
        return cfg_bad(p, "auth", "%s is empty", k);
    if (strcmp(k, "client_ca") == 0) {
        if (p->c->client_ca)
            return cfg_bad(p, "auth", "client_ca is given twice");
        return acc_conf_set_str(&p->c->client_ca, v);
    }
    if (p->c->n_cert_users)
        return cfg_bad(p, "auth", "client_certificates is given twice");
    if (read_certificates(p->c, v, &e))
        return cfg_bad(p, "auth", "%s", e.msg);
    return acc_conf_set_str(&p->c->client_certificates_file, v);
}

acc_err cfg_auth_check(const struct acc_config *c, struct acc_conf_report *r)
{
    acc_err rc = ACC_OK;
    if (!c->tls_certificate != !c->tls_key)
        rc = acc_conf_report_after(r, "server", c->tls_certificate ? "certificate" : "key",
                                   "certificate and key go together (HTTPS needs both)");
    if (c->client_ca && !c->tls_certificate)
        rc = acc_conf_report_after(r, "auth", "client_ca",
                                   "client_ca needs HTTPS: [server] certificate and key");
    if (c->n_cert_users && !c->client_ca)
        rc = acc_conf_report_after(r, "auth", "client_certificates",
                                   "client_certificates needs client_ca (the CA their "
                                   "certificates must verify against)");
    return rc;
}

acc_err cfg_auth_files(const struct acc_config *c, struct acc_conf_report *r)
{
    acc_err rc = ACC_OK;
    const struct {
        const char *section, *key, *path;
    } files[] = {
        {"server", "certificate", c->tls_certificate},
        {"server", "key", c->tls_key},
        {"auth", "client_ca", c->client_ca},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (files[i].path && access(files[i].path, R_OK) != 0)
            rc = acc_conf_report_after(r, files[i].section, files[i].key, "%s: cannot read %s: %s",
                                       files[i].key, files[i].path, strerror(errno));
    }
    return rc;
}

const struct acc_user *acc_config_user_by_cert(const struct acc_config *c, const char *subject,
                                               const char *fingerprint)
{
    for (size_t i = 0; i < c->n_users; i++) {
        const struct acc_user *u = &c->users[i];
        if ((u->fingerprint && fingerprint && strcmp(u->fingerprint, fingerprint) == 0) ||
            (u->subject && subject && strcmp(u->subject, subject) == 0))
            return u;
    }
    return NULL;
}
