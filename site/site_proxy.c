/* SPDX-License-Identifier: Apache-2.0 */
/* site_proxy.c - what a site daemon agrees to start: hydra_pmi_proxy with
 * exactly the options Hydra's manual launcher prints, each value checked.
 *
 * Measured with MPICH 4.0.2 (docs/launch.md): one line per host,
 *   HYDRA_LAUNCH: /usr/bin/hydra_pmi_proxy --control-port 127.0.0.1:45839
 *   --rmk user --launcher manual --demux poll --pgid 0 --retries 10
 *   --usize -2 --pmi-port 0 --gpus-per-proc -2 --proxy-id 0
 * A proxy connects to --control-port and takes its executable and
 * arguments from mpiexec over that connection, so the control address is
 * what decides which mpiexec the site's job user serves: it must lie inside
 * the site's control_networks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/common/strutil.h"
#include "site_jobs.h"

#define MAX_NETS 64

/* One dotted quad, exactly four decimal parts 0..255 without signs or
 * blanks; false otherwise. */
static bool parse_quad(const char *s, size_t len, uint32_t *out)
{
    uint32_t v = 0;
    unsigned parts = 0;
    size_t i = 0;
    while (parts < 4) {
        unsigned n = 0, digits = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9' && digits < 4) {
            n = n * 10 + (unsigned)(s[i] - '0');
            digits++;
            i++;
        }
        if (digits == 0 || digits > 3 || n > 255 || (digits > 1 && s[i - digits] == '0'))
            return false;
        v = (v << 8) | n;
        parts++;
        if (parts < 4) {
            if (i >= len || s[i] != '.')
                return false;
            i++;
        }
    }
    if (i != len)
        return false;
    *out = v;
    return true;
}

acc_err acc_site_cidrs_parse(const char *text, struct acc_site_cidr **out, size_t *n,
                             struct acc_error *err)
{
    struct acc_site_cidr v[MAX_NETS];
    size_t k = 0;
    const char *p = text ? text : "";
    for (;;) {
        p += strspn(p, " \t,");
        if (!*p)
            break;
        size_t len = strcspn(p, " \t,");
        const char *slash = memchr(p, '/', len);
        size_t alen = slash ? (size_t)(slash - p) : len;
        uint32_t addr = 0;
        int64_t bits = 32;
        bool ok = parse_quad(p, alen, &addr);
        if (ok && slash) {
            size_t blen = len - alen - 1;
            ok = blen > 0 && blen <= 2 && strspn(slash + 1, "0123456789") >= blen;
            bits = 0;
            for (size_t i = 0; ok && i < blen; i++)
                bits = bits * 10 + (slash[1 + i] - '0');
            ok = ok && bits <= 32;
        }
        if (!ok)
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "control_networks: '%.*s' is not an IPv4 network A.B.C.D/N",
                                 (int)(len > 64 ? 64 : len), p);
        if (k == MAX_NETS)
            return acc_error_set(err, ACC_ERR_CONFIG, "control_networks: more than %d networks",
                                 MAX_NETS);
        uint32_t mask = bits == 0 ? 0 : 0xffffffffu << (32 - bits);
        v[k].addr = addr & mask;
        v[k].mask = mask;
        k++;
        p += len;
    }
    if (k == 0)
        return acc_error_set(err, ACC_ERR_CONFIG, "control_networks: no network given");
    struct acc_site_cidr *copy = malloc(k * sizeof *copy);
    if (!copy)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    memcpy(copy, v, k * sizeof *copy);
    *out = copy;
    *n = k;
    return ACC_OK;
}

bool acc_site_cidrs_contain(const struct acc_site_cidr *nets, size_t n_nets, const char *a)
{
    uint32_t addr;
    if (!a || !parse_quad(a, strlen(a), &addr))
        return false;
    for (size_t i = 0; i < n_nets; i++) {
        if ((addr & nets[i].mask) == nets[i].addr)
            return true;
    }
    return false;
}

enum opt_kind { OPT_CONTROL, OPT_WORD, OPT_NUMBER };

struct opt {
    const char *name;
    enum opt_kind kind;
    bool required;
    const char *words; /* OPT_WORD: the accepted values, '|'-separated */
    long min, max;     /* OPT_NUMBER */
};

static const struct opt opts[] = {
    {"--control-port", OPT_CONTROL, true, NULL, 0, 0},
    {"--rmk", OPT_WORD, true, "user", 0, 0},
    {"--launcher", OPT_WORD, true, "manual", 0, 0},
    {"--demux", OPT_WORD, true, "poll|select", 0, 0},
    {"--pgid", OPT_NUMBER, true, NULL, 0, 1000000},
    {"--retries", OPT_NUMBER, false, NULL, 0, 1000},
    {"--usize", OPT_NUMBER, false, NULL, -2, 1000000},
    {"--pmi-port", OPT_NUMBER, false, NULL, 0, 65535},
    {"--gpus-per-proc", OPT_NUMBER, false, NULL, -2, 1000000},
    {"--proxy-id", OPT_NUMBER, true, NULL, 0, 1000000},
};
#define N_OPTS (sizeof opts / sizeof opts[0])

static bool word_ok(const char *words, const char *v)
{
    size_t vl = strlen(v);
    for (const char *p = words; *p;) {
        size_t l = strcspn(p, "|");
        if (l == vl && memcmp(p, v, l) == 0)
            return true;
        p += l;
        if (*p == '|')
            p++;
    }
    return false;
}

/* A decimal number, optional leading '-', no blanks, no '+', in [min, max]. */
static bool number_ok(const char *v, long min, long max, long *out)
{
    const char *d = v[0] == '-' ? v + 1 : v;
    size_t l = strlen(d);
    if (l == 0 || l > 9 || strspn(d, "0123456789") != l)
        return false;
    int64_t n;
    struct acc_error ignored;
    if (acc_parse_i64(v, min, max, &n, &ignored))
        return false;
    *out = (long)n;
    return true;
}

static acc_err control_ok(const char *v, const struct acc_site_cidr *nets, size_t n_nets,
                          struct acc_error *err)
{
    const char *colon = strrchr(v, ':');
    char addr[16];
    long port;
    if (!colon || (size_t)(colon - v) >= sizeof addr)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "proxy: --control-port '%.64s' is not A.B.C.D:PORT", v);
    memcpy(addr, v, (size_t)(colon - v));
    addr[colon - v] = '\0';
    uint32_t ignored;
    if (!parse_quad(addr, strlen(addr), &ignored) || !number_ok(colon + 1, 1, 65535, &port) ||
        colon[1] == '-')
        return acc_error_set(err, ACC_ERR_INVALID,
                             "proxy: --control-port '%.64s' is not A.B.C.D:PORT", v);
    if (!acc_site_cidrs_contain(nets, n_nets, addr))
        return acc_error_set(err, ACC_ERR_INVALID,
                             "proxy: --control-port %s is outside this site's control_networks",
                             addr);
    return ACC_OK;
}

acc_err acc_site_proxy_check(const char *executable, const char *const *args, size_t n_args,
                             const struct acc_site_cidr *nets, size_t n_nets, long *proxy_id,
                             struct acc_error *err)
{
    if (!executable || !*executable)
        return acc_error_set(err, ACC_ERR_INVALID, "proxy: no executable");
    const char *base = strrchr(executable, '/');
    base = base ? base + 1 : executable;
    if (strcmp(base, ACC_SITE_PROXY_NAME) != 0)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "proxy: this site starts only " ACC_SITE_PROXY_NAME ", not '%.64s'",
                             base);
    if (n_args > ACC_SITE_PROXY_MAX_ARGS)
        return acc_error_set(err, ACC_ERR_INVALID, "proxy: %zu arguments, at most %d", n_args,
                             ACC_SITE_PROXY_MAX_ARGS);
    bool seen[N_OPTS] = {false};
    long id = -1;
    for (size_t i = 0; i < n_args; i++) {
        const char *a = args[i];
        if (!a)
            return acc_error_set(err, ACC_ERR_INVALID, "proxy: argument %zu is missing", i + 1);
        size_t k = 0;
        while (k < N_OPTS && strcmp(opts[k].name, a) != 0)
            k++;
        if (k == N_OPTS)
            return acc_error_set(err, ACC_ERR_INVALID,
                                 "proxy: argument '%.64s' is not one of Hydra's proxy options", a);
        if (seen[k])
            return acc_error_set(err, ACC_ERR_INVALID, "proxy: %s given twice", a);
        seen[k] = true;
        if (i + 1 >= n_args || !args[i + 1])
            return acc_error_set(err, ACC_ERR_INVALID, "proxy: %s has no value", a);
        const char *v = args[++i];
        long num = 0;
        switch (opts[k].kind) {
        case OPT_CONTROL: {
            acc_err rc = control_ok(v, nets, n_nets, err);
            if (rc)
                return rc;
            break;
        }
        case OPT_WORD:
            if (!word_ok(opts[k].words, v))
                return acc_error_set(err, ACC_ERR_INVALID, "proxy: %s '%.64s' (only %s)", a, v,
                                     opts[k].words);
            break;
        case OPT_NUMBER:
            if (!number_ok(v, opts[k].min, opts[k].max, &num))
                return acc_error_set(err, ACC_ERR_INVALID,
                                     "proxy: %s '%.64s' is not a number in %ld..%ld", a, v,
                                     opts[k].min, opts[k].max);
            if (strcmp(a, "--proxy-id") == 0)
                id = num;
            break;
        }
    }
    for (size_t k = 0; k < N_OPTS; k++) {
        if (opts[k].required && !seen[k])
            return acc_error_set(err, ACC_ERR_INVALID, "proxy: %s is missing", opts[k].name);
    }
    if (proxy_id)
        *proxy_id = id;
    return ACC_OK;
}
