/* SPDX-License-Identifier: Apache-2.0 */
/* flows.c - the endpoints of an agreement's link reservations (flows.h). */
#include "flows.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../../lib/common/strutil.h"

void acc_flows_release(struct acc_link_flows *f)
{
    if (!f)
        return;
    for (size_t i = 0; f->v && i < f->n; i++) {
        for (size_t k = 0; k < f->v[i].flow.n_a; k++)
            free(f->v[i].addrs_a[k]);
        for (size_t k = 0; k < f->v[i].flow.n_b; k++)
            free(f->v[i].addrs_b[k]);
        free(f->v[i].addrs_a);
        free(f->v[i].addrs_b);
    }
    free(f->v);
    memset(f, 0, sizeof *f);
}

/* The IPv4 address of host on site s into buf: configured, or looked up. */
static acc_err address_of(const struct acc_site_cfg *s, const char *host, char *buf, size_t len,
                          struct acc_error *err)
{
    const char *conf = acc_config_host_address(s, host);
    if (conf) {
        acc_strlcpy(buf, conf, len);
        return ACC_OK;
    }
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host, NULL, &hints, &res);
    if (gai != 0 || !res)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "site %s: host %s has no configured address (addresses =) and its "
                             "name does not resolve to an IPv4 address: %s",
                             s->name, host, gai ? gai_strerror(gai) : "no address");
    const struct sockaddr_in *sin = (const struct sockaddr_in *)res->ai_addr;
    const char *ok = inet_ntop(AF_INET, &sin->sin_addr, buf, (socklen_t)len);
    freeaddrinfo(res);
    if (!ok)
        return acc_error_set(err, ACC_ERR_INVALID, "site %s: host %s: address does not fit",
                             s->name, host);
    return ACC_OK;
}

/* Appends addr to the list unless it is in it already. */
static acc_err add_unique(char ***v, size_t *n, const char *addr)
{
    for (size_t i = 0; i < *n; i++) {
        if (strcmp((*v)[i], addr) == 0)
            return ACC_OK;
    }
    char **p = realloc(*v, (*n + 1) * sizeof **v);
    if (!p)
        return ACC_ERR_NOMEM;
    *v = p;
    if (!(p[*n] = strdup(addr)))
        return ACC_ERR_NOMEM;
    (*n)++;
    return ACC_OK;
}

/* Adds the addresses of component `name`'s hosts to side a or b of f. */
static acc_err add_component(struct acc_link_flow *f, const struct acc_launch_hosts *p,
                             const struct acc_config *cfg, const char *name, struct acc_error *err)
{
    const struct acc_launch_comp *c = NULL;
    for (size_t i = 0; i < p->n_comps && !c; i++) {
        if (strcmp(p->comps[i].comp->name, name) == 0)
            c = &p->comps[i];
    }
    if (!c)
        return acc_error_set(err, ACC_ERR_INVALID, "link reservation %s: no component '%.64s'",
                             f->key, name);
    const char *site = c->comp->site;
    bool side_a = strcmp(site, f->link->site_a) == 0;
    if (!side_a && strcmp(site, f->link->site_b) != 0)
        return acc_error_set(err, ACC_ERR_INVALID,
                             "link reservation %s: component %s is on %s, which link %s does "
                             "not join",
                             f->key, name, site, f->link->name);
    const struct acc_site_cfg *s = acc_config_site(cfg, site);
    if (!s)
        return acc_error_set(err, ACC_ERR_INVALID, "component %s: no site '%.64s'", name, site);
    for (size_t k = 0; k < c->n_hosts; k++) {
        char addr[INET_ADDRSTRLEN];
        acc_err rc = address_of(s, c->hosts[k], addr, sizeof addr, err);
        if (rc)
            return rc;
        rc = side_a ? add_unique(&f->addrs_a, &f->flow.n_a, addr)
                    : add_unique(&f->addrs_b, &f->flow.n_b, addr);
        if (rc)
            return acc_error_set(err, rc, "out of memory");
    }
    return ACC_OK;
}

/* The flow of reservation key, created on first sight. */
static struct acc_link_flow *flow_for(struct acc_link_flows *out, const struct acc_alloc_link *l,
                                      const struct acc_link_cfg *lc)
{
    for (size_t i = 0; i < out->n; i++) {
        if (strcmp(out->v[i].key, l->reservation) == 0)
            return &out->v[i];
    }
    struct acc_link_flow *v = realloc(out->v, (out->n + 1) * sizeof *v);
    if (!v)
        return NULL;
    out->v = v;
    struct acc_link_flow *f = &v[out->n++];
    *f = (struct acc_link_flow){.key = l->reservation, .local_id = l->local_id, .link = lc};
    f->flow.site_a = lc->site_a;
    f->flow.site_b = lc->site_b;
    return f;
}

acc_err acc_flows_build(const struct acc_agreement *a, const struct acc_launch_hosts *p,
                        const struct acc_config *cfg, acc_flow_filter want, void *want_ctx,
                        struct acc_link_flows *out, struct acc_error *err)
{
    memset(out, 0, sizeof *out);
    acc_err rc = ACC_OK;
    for (size_t i = 0; i < a->n_links && !rc; i++) {
        const struct acc_alloc_link *l = &a->links[i];
        if (!l->reservation || !*l->reservation || !l->link)
            continue; /* both ends on one site: nothing reserved */
        const struct acc_link_cfg *lc = NULL;
        for (size_t k = 0; k < cfg->res.n_links && !lc; k++) {
            if (strcmp(cfg->res.links[k].name, l->link) == 0)
                lc = &cfg->res.links[k];
        }
        if (!lc) {
            rc = acc_error_set(err, ACC_ERR_INVALID, "link %s: no configured link '%.64s'", l->name,
                               l->link);
            break;
        }
        if (want && !want(want_ctx, lc))
            continue;
        struct acc_link_flow *f = flow_for(out, l, lc);
        if (!f) {
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
            break;
        }
        rc = add_component(f, p, cfg, l->from, err);
        if (!rc)
            rc = add_component(f, p, cfg, l->to, err);
    }
    for (size_t i = 0; !rc && i < out->n; i++) {
        out->v[i].flow.addrs_a = (const char *const *)out->v[i].addrs_a;
        out->v[i].flow.addrs_b = (const char *const *)out->v[i].addrs_b;
    }
    if (rc)
        acc_flows_release(out);
    return rc;
}
