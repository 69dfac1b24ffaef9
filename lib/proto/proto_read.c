/* SPDX-License-Identifier: Apache-2.0 */
/* proto_read.c - the readers of the booking documents: Preview, Frames,
 * Reserve, Reservation and Health.  Each checks every value and leaves
 * *out untouched (or empty) on failure. */
#include <stdlib.h>
#include <string.h>

#include "../common/strutil.h"
#include "proto_internal.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static xmlNode *root_of(xmlDocPtr doc)
{
    return xmlDocGetRootElement(doc);
}

/* <Replacing key=".."/> into old_key (ACC_KEY_MAX bytes). */
static acc_err read_replacing(const xmlNode *n, char *old_key, struct acc_error *err)
{
    static const char *const allowed[] = {"key", NULL};
    const char *k;
    acc_err rc = acc_proto_attrs(n, allowed, err);
    if (!rc && n->children)
        rc = acc_proto_fail(n, ACC_ERR_BAD_REQUEST, err, "Replacing: must be empty");
    if (!rc)
        rc = acc_proto_attr_req(n, "key", &k, err);
    if (!rc)
        rc = acc_proto_key(n, "key", k, old_key, err);
    return rc;
}

/* end - start must not overflow and fit in the time range. */
static acc_err check_span(const xmlNode *n, acc_time start, int64_t duration, struct acc_error *err)
{
    if (start > ACC_TIME_MAX - duration)
        return acc_proto_fail(n, ACC_ERR_INVALID, err,
                              "%s: the start plus the duration is after 9999-12-31T23:59:59Z",
                              (const char *)n->name);
    return ACC_OK;
}

acc_err acc_proto_read_preview(const char *body, size_t len, struct acc_proto_preview *out,
                               struct acc_error *err)
{
    static const char *const names[] = {"Resource", "From",       "Until",
                                        "Duration", "?Replacing", "?Identity"};
    const xmlNode *f[N(names)];
    struct acc_proto_preview p = {.kind = ACC_RES_NODES};
    xmlDocPtr doc = NULL;
    xmlNode *root = NULL;
    acc_err rc = acc_proto_open(body, len, "Preview", NULL, &doc, &root, err);
    if (rc)
        return rc;
    rc = acc_proto_children(root, names, f, N(names), err);
    if (!rc)
        rc = acc_proto_resource(f[0], "amount", &p.kind, p.resource, sizeof p.resource, &p.amount,
                                err);
    if (!rc)
        rc = acc_proto_el_time(f[1], &p.from, err);
    if (!rc)
        rc = acc_proto_el_time(f[2], &p.until, err);
    if (!rc)
        rc = acc_proto_el_duration(f[3], &p.duration, err);
    if (!rc && f[4])
        rc = read_replacing(f[4], p.old_key, err);
    if (!rc && p.until <= p.from)
        rc = acc_proto_fail(f[2], ACC_ERR_INVALID, err, "Preview: Until must be after From");
    if (!rc && f[5])
        rc = acc_proto_read_identity(f[5], &p.identity, err);
    if (!rc)
        *out = p;
    xmlFreeDoc(doc);
    return rc;
}

void acc_proto_preview_release(struct acc_proto_preview *p)
{
    if (p)
        acc_identity_release(&p->identity);
}

void acc_proto_reserve_release(struct acc_proto_reserve *r)
{
    if (r)
        acc_identity_release(&r->identity);
}

acc_err acc_proto_read_frames(const char *body, size_t len, struct acc_frames *out,
                              struct acc_error *err)
{
    static const char *const root_attrs[] = {"truncated", NULL};
    static const char *const frame_attrs[] = {"start", "end", NULL};
    const xmlNode *c = NULL;
    xmlDocPtr doc = NULL;
    size_t count = 0;

    acc_frames_init(out);
    acc_err rc = acc_proto_parse(body, len, "Frames", &doc, err);
    if (rc)
        return rc;
    xmlNode *root = root_of(doc);
    const char *t = acc_proto_attr(root, "truncated");
    rc = acc_proto_attrs(root, root_attrs, err);
    if (!rc && t)
        rc = acc_proto_bool(root, "truncated", t, &out->truncated, err);
    while (!rc && !(rc = acc_proto_next(root, &c, err)) && c) {
        const char *s, *e;
        acc_time start = 0, end = 0;
        if (!acc_proto_is(c, "Frame")) {
            rc = acc_proto_unknown(c, err);
            break;
        }
        if (++count > ACC_PROTO_MAX_FRAMES) {
            rc = acc_proto_fail(c, ACC_ERR_INVALID, err, "Frames: more than %d frames",
                                ACC_PROTO_MAX_FRAMES);
            break;
        }
        rc = acc_proto_attrs(c, frame_attrs, err);
        if (!rc && c->children)
            rc = acc_proto_fail(c, ACC_ERR_BAD_REQUEST, err, "Frame: must be empty");
        if (!rc)
            rc = acc_proto_attr_req(c, "start", &s, err);
        if (!rc)
            rc = acc_proto_attr_req(c, "end", &e, err);
        if (!rc)
            rc = acc_proto_time(c, "start", s, &start, err);
        if (!rc)
            rc = acc_proto_time(c, "end", e, &end, err);
        if (!rc && end <= start)
            rc = acc_proto_fail(c, ACC_ERR_INVALID, err, "Frame: end must be after start");
        if (!rc && out->n && start < out->v[out->n - 1].end)
            rc = acc_proto_fail(c, ACC_ERR_INVALID, err,
                                "Frame: frames must be in order and must not overlap");
        if (!rc && acc_frames_push(out, start, end) != ACC_OK)
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    if (rc)
        acc_frames_release(out);
    xmlFreeDoc(doc);
    return rc;
}

acc_err acc_proto_read_reserve(const char *body, size_t len, struct acc_proto_reserve *out,
                               struct acc_error *err)
{
    static const char *const names[] = {"Resource", "Start", "Duration", "?Replacing", "?Identity"};
    const xmlNode *f[N(names)];
    struct acc_proto_reserve r = {.kind = ACC_RES_NODES};
    xmlDocPtr doc = NULL;
    xmlNode *root = NULL;
    acc_err rc = acc_proto_open(body, len, "Reserve", NULL, &doc, &root, err);
    if (rc)
        return rc;
    rc = acc_proto_children(root, names, f, N(names), err);
    if (!rc)
        rc = acc_proto_resource(f[0], "amount", &r.kind, r.resource, sizeof r.resource, &r.amount,
                                err);
    if (!rc)
        rc = acc_proto_el_time(f[1], &r.start, err);
    if (!rc)
        rc = acc_proto_el_duration(f[2], &r.duration, err);
    if (!rc && f[3])
        rc = read_replacing(f[3], r.old_key, err);
    if (!rc)
        rc = check_span(f[2], r.start, r.duration, err);
    if (!rc && f[4])
        rc = acc_proto_read_identity(f[4], &r.identity, err);
    if (!rc)
        *out = r;
    xmlFreeDoc(doc);
    return rc;
}

/* Node names: [A-Za-z0-9._-]{1,255} separated by single commas. */
static bool nodes_ok(const char *s)
{
    const char *p = s;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char name[256];
        if (n == 0 || n >= sizeof name)
            return false;
        memcpy(name, p, n);
        name[n] = '\0';
        if (!acc_name_valid(name, sizeof name - 1))
            return false;
        p += n;
        if (*p == ',' && !*++p)
            return false; /* a trailing comma */
    }
    return p != s;
}

acc_err acc_proto_read_reservation(const char *body, size_t len, struct acc_reservation *out,
                                   struct acc_error *err)
{
    static const char *const attrs[] = {"key", "localId", "state", NULL};
    static const char *const names[] = {"Resource", "Start", "End", "?Nodes"};
    const xmlNode *f[N(names)];
    struct acc_reservation r = {.nodes = NULL};
    enum acc_resource_kind kind;
    char name[128], key[ACC_KEY_MAX];
    const char *k, *id, *st;
    xmlDocPtr doc = NULL;
    xmlNode *root = NULL;
    acc_err rc = acc_proto_open(body, len, "Reservation", attrs, &doc, &root, err);
    if (rc)
        return rc;
    rc = acc_proto_attr_req(root, "key", &k, err);
    if (!rc)
        rc = acc_proto_attr_req(root, "localId", &id, err);
    if (!rc)
        rc = acc_proto_attr_req(root, "state", &st, err);
    if (!rc)
        rc = acc_proto_key(root, "key", k, key, err);
    if (!rc && id[0] && !acc_proto_token_ok(id, ACC_LOCAL_ID_MAX - 1))
        rc = acc_proto_fail(root, ACC_ERR_INVALID, err,
                            "Reservation: localId '%.140s' is not 0 to %d printable characters "
                            "without blanks",
                            id, ACC_LOCAL_ID_MAX - 1);
    if (!rc && strcmp(st, "Observed") != 0)
        rc = acc_proto_fail(root, ACC_ERR_INVALID, err,
                            "Reservation: state '%.40s' is not Observed (a reservation that is "
                            "gone is answered 404 NotFound)",
                            st);
    if (!rc)
        rc = acc_proto_children(root, names, f, N(names), err);
    if (!rc)
        rc = acc_proto_resource(f[0], "amount", &kind, name, sizeof name, &r.amount, err);
    if (!rc)
        rc = acc_proto_el_time(f[1], &r.start, err);
    if (!rc)
        rc = acc_proto_el_time(f[2], &r.end, err);
    if (!rc && r.end <= r.start)
        rc = acc_proto_fail(f[2], ACC_ERR_INVALID, err, "Reservation: End must be after Start");
    if (!rc && f[3]) {
        rc = acc_proto_attrs(f[3], NULL, err);
        if (!rc)
            rc = acc_proto_text(f[3], ACC_PROTO_MAX_NODES_TEXT, &r.nodes, err);
        if (!rc && !nodes_ok(r.nodes))
            rc = acc_proto_fail(f[3], ACC_ERR_INVALID, err,
                                "Nodes: '%.80s' is not a list of host names separated by commas",
                                r.nodes);
    }
    if (!rc) {
        acc_strlcpy(r.local_id, id, sizeof r.local_id);
        *out = r;
    } else {
        free(r.nodes);
    }
    xmlFreeDoc(doc);
    return rc;
}

static acc_err read_caps(const xmlNode *n, unsigned *caps, struct acc_error *err)
{
    char text[512];
    acc_err rc = acc_proto_attrs(n, NULL, err);
    if (!rc)
        rc = acc_proto_text_buf(n, text, sizeof text, err);
    *caps = 0;
    for (const char *p = text; !rc && *p;) {
        size_t l = 0;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        while (p[l] && p[l] != ' ' && p[l] != '\t' && p[l] != '\n' && p[l] != '\r')
            l++;
        for (size_t i = 0; i < l; i++)
            if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') || p[i] == '-'))
                return acc_proto_fail(n, ACC_ERR_INVALID, err,
                                      "Capabilities: '%.*s' is not a capability word", (int)l, p);
        /* A word of a newer site is not known here: it grants nothing. */
        *caps |= acc_proto_cap_of(p, l);
        p += l;
    }
    return rc;
}

acc_err acc_proto_read_health(const char *body, size_t len, struct acc_proto_health *out,
                              struct acc_error *err)
{
    static const char *const attrs[] = {"up", "version", "site", NULL};
    struct acc_proto_health *h = calloc(1, sizeof *h);
    const xmlNode *c = NULL;
    bool had_detail = false, had_caps = false;
    const char *up, *ver, *site;
    int64_t v = 0;
    xmlDocPtr doc = NULL;
    acc_err rc;

    if (!h)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    rc = acc_proto_parse(body, len, "Health", &doc, err);
    if (rc)
        goto out;
    xmlNode *root = root_of(doc);
    rc = acc_proto_attrs(root, attrs, err);
    if (!rc)
        rc = acc_proto_attr_req(root, "up", &up, err);
    if (!rc)
        rc = acc_proto_attr_req(root, "version", &ver, err);
    if (!rc)
        rc = acc_proto_attr_req(root, "site", &site, err);
    if (!rc)
        rc = acc_proto_bool(root, "up", up, &h->up, err);
    if (!rc)
        rc = acc_proto_i64(root, "version", ver, 1, 1000000, &v, err);
    if (!rc)
        rc = acc_proto_name(root, "site", site, h->site, sizeof h->site, err);
    h->version = (unsigned)v;
    while (!rc && !(rc = acc_proto_next(root, &c, err)) && c) {
        if (acc_proto_is(c, "Detail")) {
            rc = had_detail ? acc_proto_twice(c, err) : acc_proto_attrs(c, NULL, err);
            if (!rc)
                rc = acc_proto_text_buf(c, h->detail, sizeof h->detail, err);
            had_detail = true;
        } else if (acc_proto_is(c, "Capabilities")) {
            rc = had_caps ? acc_proto_twice(c, err) : read_caps(c, &h->caps, err);
            had_caps = true;
        } else if (acc_proto_is(c, "Resource")) {
            if (h->n_resources == ACC_PROTO_MAX_RESOURCES) {
                rc = acc_proto_fail(c, ACC_ERR_INVALID, err, "Health: more than %d resources",
                                    ACC_PROTO_MAX_RESOURCES);
                break;
            }
            size_t i = h->n_resources++;
            rc = acc_proto_resource(c, "capacity", &h->resources[i].kind, h->resources[i].name,
                                    sizeof h->resources[i].name, &h->resources[i].capacity, err);
        } else {
            rc = acc_proto_unknown(c, err);
        }
    }
    if (!rc && !had_caps)
        rc = acc_proto_missing(root, "Capabilities", err);
    if (!rc)
        *out = *h;
out:
    xmlFreeDoc(doc);
    free(h);
    return rc;
}
