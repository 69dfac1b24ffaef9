/* SPDX-License-Identifier: Apache-2.0 */
/* hydra.c - the mpiexec.hydra command line of a meta-job.
 *
 * Measured with MPICH 4.0.2 (docs/launch.md): Hydra refuses a -hosts per
 * MPMD segment, so every host goes into one global list and the ranks fill
 * it in order; segment i therefore lands on component i's hosts as long as
 * segment i asks for exactly its hosts' slots, which it does. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"

void acc_argv_release(struct acc_argv *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
    memset(a, 0, sizeof *a);
}

static bool push(struct acc_argv *a, const char *s)
{
    if (a->n + 2 > a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 32;
        char **v = realloc(a->v, cap * sizeof *v);
        if (!v)
            return false;
        a->v = v;
        a->cap = cap;
    }
    if (!(a->v[a->n] = strdup(s)))
        return false;
    a->v[++a->n] = NULL;
    return true;
}

bool acc_argv_push(struct acc_argv *a, const char *s)
{
    return push(a, s);
}

static bool push2(struct acc_argv *a, const char *x, const char *y)
{
    return push(a, x) && push(a, y);
}

static bool push3(struct acc_argv *a, const char *x, const char *y, const char *z)
{
    return push(a, x) && push(a, y) && push(a, z);
}

acc_err acc_launch_command(const struct acc_launch_hosts *p, const struct acc_launch_cfg *lc,
                           enum acc_launch style, const char *description, struct acc_argv *out,
                           struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < p->n_comps; i++) {
        const struct acc_alloc_component *c = p->comps[i].comp;
        struct acc_error why;
        if (!c->executable)
            return acc_error_set(err, ACC_ERR_INVALID, "component %s names no executable", c->name);
        /* Checked with the offer already; a stored agreement is checked again
         * because mpiexec would take "-genv" for an option of its own,
         * valid for every component, and ':' for the end of a segment. */
        if (acc_executable_check(c->executable, &why))
            return acc_error_set(err, ACC_ERR_INVALID, "component %s: the executable %s", c->name,
                                 why.msg);
        for (size_t k = 0; k < c->n_args; k++) {
            /* mpiexec would read it as the end of the segment */
            if (strcmp(c->args[k], ":") == 0)
                return acc_error_set(err, ACC_ERR_INVALID,
                                     "component %s: an argument ':' cannot pass through mpiexec",
                                     c->name);
        }
    }
    struct acc_buf hosts = ACC_BUF_INIT;
    for (size_t i = 0; i < p->n_comps; i++) {
        for (size_t k = 0; k < p->comps[i].n_hosts; k++)
            acc_buf_printf(&hosts, "%s%s:%" PRId64, hosts.len ? "," : "", p->comps[i].hosts[k],
                           p->comps[i].comp->ppn);
    }
    bool ok = acc_buf_ok(&hosts) && push(out, lc->mpiexec ? lc->mpiexec : "mpiexec.hydra");
    if (ok && lc->launcher)
        ok = push2(out, "-launcher", lc->launcher);
    if (ok && lc->launcher_exec)
        ok = push2(out, "-launcher-exec", lc->launcher_exec);
    if (ok && lc->localhost)
        ok = push2(out, "-localhost", lc->localhost);
    for (size_t i = 0; ok && i < lc->n_env; i++)
        ok = push3(out, "-genv", lc->env[i].key, lc->env[i].value);
    if (ok)
        ok = push3(out, "-genv", "ACCORD_AGREEMENT", p->agreement->id);
    if (ok && description) {
        ok = push3(out, "-genv", "ACCORD_LAUNCH_DESCRIPTION", description);
        if (ok && style == ACC_LAUNCH_METAMPICH)
            ok = push3(out, "-genv", "METAMPICH_CONFIG", description);
    }
    if (ok)
        ok = push2(out, "-hosts", acc_buf_str(&hosts));
    for (size_t i = 0; ok && i < p->n_comps; i++) {
        const struct acc_alloc_component *c = p->comps[i].comp;
        char n[32], idx[32];
        snprintf(n, sizeof n, "%" PRId64, c->nodes * c->ppn);
        snprintf(idx, sizeof idx, "%zu", p->comps[i].index);
        if (i > 0)
            ok = push(out, ":");
        ok = ok && push2(out, "-n", n) && push3(out, "-env", "ACCORD_COMPONENT", c->name);
        if (ok && style == ACC_LAUNCH_METAMPICH)
            ok = push3(out, "-env", "METAMPICH_METAHOST", c->name);
        if (ok && style == ACC_LAUNCH_MPICH_G2)
            ok = push3(out, "-env", "GLOBUS_DUROC_SUBJOB_INDEX", idx);
        ok = ok && push(out, c->executable);
        for (size_t k = 0; ok && k < c->n_args; k++)
            ok = push(out, c->args[k]);
    }
    acc_buf_release(&hosts);
    if (!ok) {
        acc_argv_release(out);
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    return ACC_OK;
}

/* Single quotes unless the word is plainly safe. */
static void quote(const char *s, struct acc_buf *out)
{
    bool plain = *s != '\0';
    for (const char *c = s; *c && plain; c++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                       "_-+=/.,:@%",
                       *c) != NULL;
    if (plain)
        acc_buf_puts(out, s);
    else
        acc_buf_shell_quote(out, s);
}

void acc_launch_quote_argv(const struct acc_argv *argv, struct acc_buf *out)
{
    for (size_t i = 0; i < argv->n; i++) {
        if (i)
            acc_buf_putc(out, ' ');
        quote(argv->v[i], out);
    }
}
