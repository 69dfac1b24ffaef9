/* SPDX-License-Identifier: Apache-2.0 */
/* json_sites.c - the sites, networks and links (GET /sites, GET
 * /sites/{name}) and a site's free frames (the preview) as JSON
 * (docs/documents.md). */
#include "json.h"

#include <string.h>

#include "json_writer.h"

static void site_members(struct jw *j, const struct acc_site_info *s, bool nodes)
{
    jw_str(j, "name", s->name);
    jw_str(j, "adapter", s->adapter);
    if (nodes)
        jw_i64(j, "nodes", s->nodes);
    jw_bool(j, "up", s->up);
    jw_str(j, "health", s->health);
    jw_i64(j, "calls", (int64_t)s->calls);
    jw_i64(j, "failures", (int64_t)s->failures);
    jw_i64(j, "rttUs", s->rtt_us);
    jw_str(j, "endpoint", s->endpoint && s->endpoint[0] ? s->endpoint : NULL);
}

static void link_obj(struct jw *j, const struct acc_link_info *l)
{
    jw_elem_obj(j);
    jw_str(j, "name", l->name);
    jw_str(j, "siteA", l->site_a);
    jw_str(j, "siteB", l->site_b);
    jw_str(j, "network", l->network);
    jw_str(j, "adapter", l->adapter);
    jw_i64(j, "capacity", l->capacity);
    jw_bool(j, "up", l->up);
    jw_close_obj(j);
}

void acc_json_sites(const struct acc_sites_view *v, const char *only_site, struct acc_buf *out)
{
    struct jw j = {.out = out};

    if (only_site) {
        const struct acc_site_info *s = NULL;
        for (size_t i = 0; i < v->n_sites && !s; i++)
            if (v->sites[i].name && strcmp(v->sites[i].name, only_site) == 0)
                s = &v->sites[i];
        if (!s) {
            /* The caller checks existence first; still answer with JSON. */
            acc_json_fault(ACC_ERR_NOT_FOUND, "no such site", NULL, out);
            return;
        }
        jw_open_obj(&j);
        site_members(&j, s, true);
        jw_open_arr(&j, "links");
        for (size_t i = 0; i < v->n_links; i++) {
            const struct acc_link_info *l = &v->links[i];
            if ((l->site_a && strcmp(l->site_a, only_site) == 0) ||
                (l->site_b && strcmp(l->site_b, only_site) == 0))
                link_obj(&j, l);
        }
        jw_close_arr(&j);
        jw_close_obj(&j);
        jw_end_doc(&j);
        return;
    }

    jw_open_obj(&j);
    jw_open_arr(&j, "sites");
    for (size_t i = 0; i < v->n_sites; i++) {
        jw_elem_obj(&j);
        site_members(&j, &v->sites[i], true);
        jw_close_obj(&j);
    }
    jw_close_arr(&j);
    jw_open_arr(&j, "networks");
    for (size_t i = 0; i < v->n_networks; i++) {
        jw_elem_obj(&j);
        site_members(&j, &v->networks[i], false);
        jw_close_obj(&j);
    }
    jw_close_arr(&j);
    jw_open_arr(&j, "links");
    for (size_t i = 0; i < v->n_links; i++)
        link_obj(&j, &v->links[i]);
    jw_close_arr(&j);
    jw_close_obj(&j);
    jw_end_doc(&j);
}

void acc_json_preview(const struct acc_preview_view *v, struct acc_buf *out)
{
    struct jw j = {.out = out};

    jw_open_obj(&j);
    jw_str(&j, "site", v->site);
    jw_i64(&j, "nodes", v->nodes);
    jw_duration(&j, "duration", v->duration);
    jw_time(&j, "from", v->from);
    jw_time(&j, "until", v->until);
    jw_bool(&j, "truncated", v->frames && v->frames->truncated);
    jw_open_arr(&j, "frames");
    for (size_t i = 0; v->frames && i < v->frames->n; i++) {
        jw_elem_obj(&j);
        jw_time(&j, "start", v->frames->v[i].start);
        jw_time(&j, "end", v->frames->v[i].end);
        jw_close_obj(&j);
    }
    jw_close_arr(&j);
    jw_close_obj(&j);
    jw_end_doc(&j);
}
