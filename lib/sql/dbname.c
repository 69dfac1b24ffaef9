/* SPDX-License-Identifier: Apache-2.0 */
/* dbname.c - a database as messages show it, without its secrets (dbname.h).
 *
 * The strings are read the way libpq reads them: in key=value
 * form, a keyword, blanks allowed around '=', then a value that is either
 * quoted ('a b', with \' and \\ inside) or runs to the next blank (with \
 * escaping the next character); in a URL, a user's password between the
 * first ':' and the '@' of the authority and parameters after the '?',
 * key=value separated by '&', both percent-encoded.  Where a string is not
 * well formed the reading errs on the side of hiding: a secret keyword
 * without its '=' hides the rest of the string, and a URL whose '@' comes
 * after a '/' (a password with a '/' in it) has its password run to the
 * last '@' before the parameters. */
#include "dbname.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/buf.h"
#include "../common/conf.h"

/* libpq's settings that are secrets. */
static const char secret_keys[] = "password sslpassword oauth_client_secret";

/* libpq's keywords (PostgreSQL 15 to 18): a string with a word that is one
 * of them followed by '=' is libpq's key=value form, not a file. */
static const char libpq_keys[] =
    "host hostaddr port dbname user password passfile channel_binding connect_timeout "
    "client_encoding options application_name fallback_application_name keepalives "
    "keepalives_idle keepalives_interval keepalives_count tcp_user_timeout replication sslmode "
    "sslnegotiation sslcompression sslcert sslkey sslpassword sslcertmode sslrootcert sslcrl "
    "sslcrldir sslsni requirepeer require_auth ssl_min_protocol_version "
    "ssl_max_protocol_version min_protocol_version max_protocol_version gssencmode krbsrvname "
    "gsslib gssdelegation service target_session_attrs load_balance_hosts oauth_issuer "
    "oauth_client_id oauth_client_secret oauth_scope";

/* Whether k[0..n) is one of the blank-separated words (any case: hiding
 * more than libpq reads costs nothing). */
static bool listed(const char *words, const char *k, size_t n)
{
    for (const char *w = words; *w; w += strspn(w, " ")) {
        size_t len = strcspn(w, " ");
        if (len == n && n && strncasecmp(w, k, n) == 0)
            return true;
        w += len;
    }
    return false;
}

static int hex(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* s[0..n) percent-decoded into out (n + 1 bytes at least); its length. */
static size_t decode(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
            out[o++] = (char)(hex(s[i + 1]) * 16 + hex(s[i + 2]));
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    return o;
}

/* ------------------------------------------------------------- key=value */

struct pair {
    const char *start, *end; /* the whole pair */
    const char *key_end;
    const char *val, *val_end;
    bool secret;
    /* A keyword without '=' (libpq refuses the string): a secret one takes
     * the rest of the string as its value. */
    bool broken;
};

/* The next pair of the key=value form at *p (false: none left). */
static bool next_pair(const char **p, struct pair *out)
{
    const char *s = *p;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return false;
    memset(out, 0, sizeof *out);
    out->start = s;
    while (*s && *s != '=' && !isspace((unsigned char)*s))
        s++;
    out->key_end = s;
    out->secret = listed(secret_keys, out->start, (size_t)(s - out->start));
    while (isspace((unsigned char)*s))
        s++;
    if (*s != '=') {
        out->broken = true;
        out->val = s;
        out->end = out->val_end = out->secret ? s + strlen(s) : s;
        *p = out->end;
        return true;
    }
    s++;
    while (isspace((unsigned char)*s))
        s++;
    bool quoted = *s == '\'';
    out->val = s += quoted;
    while (*s && (quoted ? *s != '\'' : !isspace((unsigned char)*s)))
        s += s[0] == '\\' && s[1] ? 2 : 1;
    out->val_end = s;
    s += quoted && *s;
    out->end = s;
    *p = s;
    return true;
}

bool acc_db_is_conninfo(const char *s)
{
    if (!s || strstr(s, "://"))
        return false;
    const char *p = s;
    struct pair pr;
    while (next_pair(&p, &pr))
        if (!pr.broken && listed(libpq_keys, pr.start, (size_t)(pr.key_end - pr.start)))
            return true;
    return false;
}

/* ------------------------------------------------------------------- URL */

struct url {
    const char *pw, *pw_end; /* the user's password (NULL: none) */
    const char *query;       /* at the '?' (NULL: none) */
};

static void url_read(const char *s, struct url *u)
{
    memset(u, 0, sizeof *u);
    const char *auth = strstr(s, "://") + 3;
    /* libpq's user information: up to an '@' that comes before any '/' */
    const char *at = auth + strcspn(auth, "@/");
    if (*at != '@') {
        /* None for libpq; but a password with a '/' in it was meant as
         * one all the same: the last '@' before the parameters. */
        const char *q = strchr(auth, '?');
        const char *stop = q ? q : auth + strlen(auth);
        at = NULL;
        for (const char *c = auth; c < stop; c++)
            if (*c == '@')
                at = c;
    }
    const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    if (colon) {
        u->pw = colon + 1;
        u->pw_end = at;
    }
    u->query = strchr(at ? at : auth, '?');
}

/* The next parameter of a URL's query at *p: [*k, *v) its name (without
 * '='), [*v, *end) its value.  false: none left. */
static bool next_param(const char **p, const char **k, const char **v, const char **end)
{
    const char *s = *p;
    if (!*s)
        return false;
    *k = s;
    *end = s + strcspn(s, "&");
    const char *eq = memchr(s, '=', (size_t)(*end - s));
    *v = eq ? eq + 1 : *end;
    *p = **end ? *end + 1 : *end;
    return true;
}

static bool param_secret(const char *k, const char *v)
{
    size_t n = (size_t)(v - k) - (v > k && v[-1] == '=');
    char *name = malloc(n + 1);
    bool secret = name && listed(secret_keys, name, decode(k, n, name));
    free(name);
    return secret || !name; /* out of memory: hidden */
}

/* --------------------------------------------------------------- showing */

char *acc_db_shown(const char *s)
{
    if (!s)
        return NULL;
    struct acc_buf b;
    acc_buf_init(&b);
    if (strstr(s, "://")) {
        struct url u;
        url_read(s, &u);
        const char *rest = u.pw ? u.pw_end : s;
        if (u.pw)
            acc_buf_append(&b, s, (size_t)(u.pw - 1 - s));
        acc_buf_append(&b, rest, u.query ? (size_t)(u.query - rest) : strlen(rest));
        const char *p = u.query ? u.query + 1 : "", *k, *v, *end;
        char sep = '?';
        while (next_param(&p, &k, &v, &end)) {
            if (end == k || param_secret(k, v))
                continue;
            acc_buf_append(&b, &sep, 1);
            acc_buf_append(&b, k, (size_t)(end - k));
            sep = '&';
        }
    } else if (!acc_db_is_conninfo(s)) {
        acc_buf_puts(&b, s); /* a file's name, as it is */
    } else {
        /* Each secret pair goes with the blanks before it. */
        const char *p = s, *from = s;
        struct pair pr;
        bool cut = false;
        while (next_pair(&p, &pr)) {
            if (!pr.secret)
                continue;
            const char *start = pr.start;
            while (start > from && isspace((unsigned char)start[-1]))
                start--;
            acc_buf_append(&b, from, (size_t)(start - from));
            from = pr.end;
            cut = true;
        }
        acc_buf_puts(&b, from);
        if (cut && b.data) {
            size_t lead = strspn(b.data, " \t\n\r\f\v");
            memmove(b.data, b.data + lead, b.len - lead + 1);
            b.len -= lead;
        }
    }
    char *out = acc_buf_detach(&b, NULL);
    acc_buf_release(&b);
    return out;
}

/* --------------------------------------------------------------- scrubbing */

/* Every v (not "") in msg replaced with "***". */
static void hide(char *msg, size_t size, const char *v)
{
    size_t n = strlen(v);
    if (!n || !strstr(msg, v))
        return;
    char *out = malloc(size);
    if (!out) {
        msg[0] = '\0'; /* nothing rather than the secret */
        return;
    }
    size_t o = 0;
    for (const char *m = msg; *m && o + 1 < size;) {
        if (strncmp(m, v, n) == 0) {
            for (const char *r = "***"; *r && o + 1 < size; r++)
                out[o++] = *r;
            m += n;
        } else {
            out[o++] = *m++;
        }
    }
    out[o] = '\0';
    memcpy(msg, out, o + 1);
    free(out);
}

/* [v, end) in msg hidden as written, percent-decoded and unescaped (\x: x). */
static void hide_value(char *msg, size_t size, const char *v, const char *end)
{
    size_t n = (size_t)(end - v);
    char *alt = malloc(n + 1);
    if (!alt) {
        msg[0] = '\0';
        return;
    }
    memcpy(alt, v, n);
    alt[n] = '\0';
    hide(msg, size, alt);
    decode(v, n, alt);
    hide(msg, size, alt);
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        alt[o++] = v[i] == '\\' && i + 1 < n ? v[++i] : v[i];
    alt[o] = '\0';
    hide(msg, size, alt);
    free(alt);
}

void acc_db_scrub(char *msg, size_t size, const char *s)
{
    if (!msg || !s || !size)
        return;
    if (strstr(s, "://")) {
        struct url u;
        url_read(s, &u);
        if (u.pw)
            hide_value(msg, size, u.pw, u.pw_end);
        const char *p = u.query ? u.query + 1 : "", *k, *v, *end;
        while (next_param(&p, &k, &v, &end))
            if (param_secret(k, v))
                hide_value(msg, size, v, end);
        return;
    }
    const char *p = s;
    struct pair pr;
    while (acc_db_is_conninfo(s) && next_pair(&p, &pr))
        if (pr.secret)
            hide_value(msg, size, pr.val, pr.val_end);
}

char *acc_db_url_with_name(const char *s, const char *name)
{
    const char *auth = s ? strstr(s, "://") : NULL;
    if (!auth)
        return NULL;
    auth += 3;
    const char *query = strchr(auth, '?');
    const char *path = strchr(auth, '/');
    if (!path || (query && query < path))
        path = query ? query : auth + strlen(auth);
    struct acc_buf b;
    acc_buf_init(&b);
    acc_buf_printf(&b, "%.*s/%s%s", (int)(path - s), s, name, query ? query : "");
    char *out = acc_buf_ok(&b) ? acc_buf_detach(&b, NULL) : NULL;
    acc_buf_release(&b);
    return out;
}

/* ------------------------------------------------------------ configuration */

acc_err acc_conf_db_conninfo(const char *v, struct acc_error *err)
{
    char *shown = acc_db_shown(v);
    acc_error_set(err, ACC_ERR_CONFIG,
                  "the database '%s' is libpq's key=value settings, which are not taken: a "
                  "database is a file, or a PostgreSQL database a URL "
                  "(postgresql://USER@HOST/DB?sslmode=...)",
                  shown ? shown : "?");
    free(shown);
    return ACC_ERR_CONFIG;
}

acc_err acc_conf_db_path(char **dst, const char *path, struct acc_error *err)
{
    if (!path || !*path)
        return acc_error_set(err, ACC_ERR_CONFIG, "the database path is empty");
    if (acc_db_is_conninfo(path))
        return acc_conf_db_conninfo(path, err);
    if (!acc_conf_set_str(dst, path))
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}
