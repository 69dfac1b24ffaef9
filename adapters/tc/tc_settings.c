/* SPDX-License-Identifier: Apache-2.0 */
/* tc_settings.c - the tc adapter's own settings (tc_setting in
 * tc_internal.h): path.LINK.SITE, ceil, quantum, audit_interval,
 * command_timeout, activation_grace, state.  The ledger's (calendar,
 * on_conflict, max_later) are lib/ledger's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "../../lib/common/strutil.h"
#include "tc_internal.h"

/* "5s", "500ms", "2m", "1h", "5" (seconds) or an ISO duration ("PT5S"), in ms within
 * [min_ms, max_ms]. */
static acc_err parse_ms(const char *v, int64_t min_ms, int64_t max_ms, int64_t *out,
                        struct acc_error *err)
{
    int64_t n = -1;
    if (v[0] == 'P') {
        if (acc_duration_parse(v, &n, NULL) == ACC_OK && n >= 0 && n <= INT64_MAX / 1000)
            n *= 1000;
        else
            n = -1;
    } else {
        char *end = NULL;
        long long x = (v[0] >= '0' && v[0] <= '9') ? strtoll(v, &end, 10) : -1;
        if (x >= 0 && x < INT64_MAX / 1000 && end) {
            if (strcmp(end, "ms") == 0)
                n = x;
            else if (strcmp(end, "s") == 0 || *end == '\0')
                n = x * 1000;
            else if (strcmp(end, "m") == 0 && x < INT64_MAX / 60000)
                n = x * 60000;
            else if (strcmp(end, "h") == 0 && x < INT64_MAX / 3600000)
                n = x * 3600000;
        }
    }
    if (n < 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "'%s' is not a duration such as 5s or 500ms", v);
    if (n < min_ms || n > max_ms)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s is out of range (%" PRId64 " ms to %" PRId64 " ms)", v, min_ms,
                             max_ms);
    *out = n;
    return ACC_OK;
}

static bool dev_name_ok(const char *s, size_t len)
{
    if (len == 0 || len >= TC_NAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.'))
            return false;
    }
    return true;
}

/* The index of device netns/dev, added when new. */
static acc_err add_dev(struct tc *t, const char *ns, size_t ns_len, const char *dev, size_t dev_len,
                       int64_t capacity, size_t *idx, struct acc_error *err)
{
    for (size_t i = 0; i < t->n_devs; i++) {
        struct tc_dev *d = &t->devs[i];
        if (strlen(d->netns) == ns_len && strncmp(d->netns, ns, ns_len) == 0 &&
            strlen(d->dev) == dev_len && strncmp(d->dev, dev, dev_len) == 0) {
            if (capacity > d->capacity)
                d->capacity = capacity;
            *idx = i;
            return ACC_OK;
        }
    }
    if (t->n_devs == TC_MAX_DEVS)
        return acc_error_set(err, ACC_ERR_CONFIG, "more than %d devices", TC_MAX_DEVS);
    struct tc_dev *d = &t->devs[t->n_devs];
    d->netns = acc_strndup(ns, ns_len);
    d->dev = acc_strndup(dev, dev_len);
    if (!d->netns || !d->dev) {
        free(d->netns);
        free(d->dev);
        d->netns = d->dev = NULL;
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    d->capacity = capacity;
    *idx = t->n_devs++;
    return ACC_OK;
}

/* path.LINK.SITE = NETNS/DEV ... */
static acc_err parse_path(struct tc *t, const char *key, const char *v, struct acc_error *err)
{
    const char *ls = key + 5, *dot = strrchr(ls, '.');
    struct tc_link *l = NULL;
    int side = -1;
    for (size_t i = 0; dot && i < t->n_links && !l; i++) {
        if (strlen(t->links[i].name) == (size_t)(dot - ls) &&
            strncmp(t->links[i].name, ls, (size_t)(dot - ls)) == 0)
            l = &t->links[i];
    }
    if (!l)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "'%s': no such link in this network (path.LINK.SITE)", key);
    for (int s = 0; s < 2; s++) {
        if (strcmp(dot + 1, l->site[s]) == 0)
            side = s;
    }
    if (side < 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "'%s': %s is not a site of link %s (%s, %s)", key,
                             dot + 1, l->name, l->site[0], l->site[1]);
    if (l->n_devs[side])
        return acc_error_set(err, ACC_ERR_CONFIG, "'%s' is given twice", key);
    for (const char *p = v + strspn(v, " \t"); *p; p += strspn(p, " \t")) {
        size_t len = strcspn(p, " \t"), ns_len = strcspn(p, "/");
        const char *dev = p + ns_len + 1;
        size_t dev_len = ns_len < len ? len - ns_len - 1 : 0;
        bool ns_ok = ns_len == 1 ? p[0] == '-' : ns_len > 0 && ns_len < TC_NETNS_MAX;
        for (size_t i = 0; ns_ok && !(ns_len == 1 && p[0] == '-') && i < ns_len; i++) {
            char c = p[i];
            ns_ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
        }
        if (ns_len >= len || !ns_ok || !dev_name_ok(dev, dev_len))
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "'%s': '%.*s' is not NETNS/DEV (a namespace name or '-', a "
                                 "device name of at most %d characters)",
                                 key, (int)len, p, TC_NAME_MAX - 1);
        if (l->n_devs[side] == TC_MAX_PATH)
            return acc_error_set(err, ACC_ERR_CONFIG, "'%s': more than %d devices", key,
                                 TC_MAX_PATH);
        size_t idx = 0;
        acc_err rc = add_dev(t, p, ns_len, dev, dev_len, l->capacity, &idx, err);
        if (rc)
            return rc;
        l->devs[side][l->n_devs[side]++] = idx;
        p += len;
    }
    if (!l->n_devs[side])
        return acc_error_set(err, ACC_ERR_CONFIG, "'%s' lists no device", key);
    return ACC_OK;
}

acc_err tc_setting(struct tc *t, const char *k, const char *v, const char **state_file,
                   struct acc_error *err)
{
    int64_t n;
    if (strncmp(k, "path.", 5) == 0)
        return parse_path(t, k, v, err);
    if (strcmp(k, "ceil") == 0) {
        if (strcmp(v, "rate") == 0)
            t->ceil = TC_CEIL_RATE;
        else if (strcmp(v, "link") == 0)
            t->ceil = TC_CEIL_LINK;
        else
            return acc_error_set(err, ACC_ERR_CONFIG, "ceil: '%s' is neither rate nor link", v);
        return ACC_OK;
    }
    if (strcmp(k, "quantum") == 0) {
        if (acc_parse_i64(v, 1000, 200000, &n, err))
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "quantum: '%s' is not a byte count from 1000 to 200000", v);
        t->quantum = n;
        return ACC_OK;
    }
    if (strcmp(k, "audit_interval") == 0)
        return parse_ms(v, 100, 3600000, &t->audit_ms, err);
    if (strcmp(k, "command_timeout") == 0)
        return parse_ms(v, 100, 120000, &t->timeout_ms, err);
    if (strcmp(k, "activation_grace") == 0) {
        if (parse_ms(v, 0, 3600000, &n, err))
            return ACC_ERR_CONFIG;
        t->grace = n / 1000;
        return ACC_OK;
    }
    if (strcmp(k, "state") == 0) {
        /* The file is made at open; its directory must be there. */
        const char *slash = strrchr(v, '/');
        char dir[PATH_MAX];
        struct stat sb;
        if (!*v)
            return acc_error_set(err, ACC_ERR_CONFIG, "state is empty");
        /* a file, never a server's database (tc_store.c) */
        acc_err rc = tc_store_check(NULL, NULL, v, err);
        if (rc)
            return rc;
        if (slash && slash > v && (size_t)(slash - v) < sizeof dir) {
            memcpy(dir, v, (size_t)(slash - v));
            dir[slash - v] = '\0';
            if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
                return acc_error_set(err, ACC_ERR_CONFIG,
                                     "state %s: its directory %s does not exist", v, dir);
        }
        *state_file = v;
        return ACC_OK;
    }
    return acc_error_set(err, ACC_ERR_CONFIG,
                         "unknown setting '%s' (tc takes path.LINK.SITE, ceil, quantum, "
                         "audit_interval, activation_grace, command_timeout, state, calendar, "
                         "on_conflict, max_later)",
                         k);
}
