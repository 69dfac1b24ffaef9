/* SPDX-License-Identifier: Apache-2.0 */
/* json_bench.c - does a JSON library cost the GET path?  Renders the same
 * agreement (3 components, 3 links) with the server's own writer
 * (server/json) and with Debian's jansson building the same members, side
 * by side in one run, and prints the median time of each.  Not a test.
 * Run: build-bench/tests/accord_json_bench */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "timefmt.h"

static struct acc_alloc_component comps[3] = {
    {.name = "trace",
     .site = "caesar",
     .nodes = 16,
     .ppn = 2,
     .reservation = "acc-uluf5vlisnmw43fq-53wi-r1i0",
     .local_id = "caesar-f5287606",
     .node_names = "caesar-n1,caesar-n2,caesar-n3,caesar-n4"},
    {.name = "partrace",
     .site = "fzj-xd1",
     .nodes = 8,
     .ppn = 1,
     .reservation = "acc-uluf5vlisnmw43fq-53wi-r1i1",
     .local_id = "fzj-xd1-f5287607"},
    {.name = "viz",
     .site = "fh-brs",
     .nodes = 4,
     .ppn = 1,
     .reservation = "acc-uluf5vlisnmw43fq-53wi-r1i2",
     .local_id = "fh-brs-f5287608"},
};
static struct acc_alloc_link links[3] = {
    {.name = "wan1",
     .from = "trace",
     .to = "partrace",
     .site_a = "caesar",
     .site_b = "fzj-xd1",
     .link = "fzj-xd1_caesar",
     .bandwidth = 5000,
     .reservation = "acc-r1i3",
     .local_id = "wan-1"},
    {.name = "wan2",
     .from = "trace",
     .to = "viz",
     .site_a = "caesar",
     .site_b = "fh-brs",
     .link = "caesar_fh-brs",
     .bandwidth = 1000,
     .reservation = "acc-r1i4",
     .local_id = "wan-2"},
    {.name = "wan3",
     .from = "partrace",
     .to = "viz",
     .site_a = "fzj-xd1",
     .site_b = "fh-brs",
     .link = "fzj-xd1_fh-brs",
     .bandwidth = 1000,
     .reservation = "acc-r1i5",
     .local_id = "wan-3"},
};

static json_t *time_or_null(acc_time t)
{
    if (!t)
        return json_null();
    char s[ACC_TIME_STRLEN];
    acc_time_format(t, s);
    return json_string(s);
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *split(const char *s, char sep)
{
    json_t *a = json_array();
    while (s && *s) {
        const char *e = strchr(s, sep);
        size_t n = e ? (size_t)(e - s) : strlen(s);
        json_array_append_new(a, json_stringn(s, n));
        s = e ? e + 1 : s + n;
    }
    return a;
}

/* The members acc_json_agreement writes, built with jansson. */
static char *jansson_agreement(const struct acc_agreement *a)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(a->id));
    json_object_set_new(o, "name", str_or_null(a->name));
    json_object_set_new(o, "initiator", str_or_null(a->initiator));
    json_object_set_new(o, "state", json_string(acc_state_name(a->state)));
    json_object_set_new(o, "created", time_or_null(a->created));
    json_object_set_new(o, "start", time_or_null(a->start));
    json_object_set_new(o, "end", time_or_null(a->end));
    json_object_set_new(o, "earliest", time_or_null(a->earliest));
    json_object_set_new(o, "deadline", time_or_null(a->deadline));
    char d[ACC_DURATION_STRLEN];
    acc_duration_format(a->duration, d);
    json_object_set_new(o, "duration", json_string(d));
    json_object_set_new(o, "strategy", json_string(acc_strategy_name(a->strategy)));
    json_object_set_new(o, "launch", json_string(acc_launch_name(a->launch)));
    json_object_set_new(o, "rounds", json_integer(a->rounds));
    json_object_set_new(o, "rollbacks", json_integer(a->rollbacks));
    json_object_set_new(o, "faultCode", str_or_null(a->fault_code));
    json_object_set_new(o, "reasons", split(a->reason, '\n'));
    json_t *cs = json_array();
    for (size_t i = 0; i < a->n_comps; i++) {
        const struct acc_alloc_component *c = &a->comps[i];
        json_t *x = json_object();
        json_object_set_new(x, "name", json_string(c->name));
        json_object_set_new(x, "site", json_string(c->site));
        json_object_set_new(x, "nodes", json_integer(c->nodes));
        json_object_set_new(x, "processesPerNode", json_integer(c->ppn));
        json_object_set_new(x, "reservation", str_or_null(c->reservation));
        json_object_set_new(x, "localId", str_or_null(c->local_id));
        json_object_set_new(x, "nodeNames", split(c->node_names, ','));
        json_array_append_new(cs, x);
    }
    json_object_set_new(o, "components", cs);
    json_t *ls = json_array();
    for (size_t i = 0; i < a->n_links; i++) {
        const struct acc_alloc_link *l = &a->links[i];
        json_t *x = json_object();
        json_object_set_new(x, "name", json_string(l->name));
        json_object_set_new(x, "between", json_string(l->from));
        json_object_set_new(x, "and", json_string(l->to));
        json_object_set_new(x, "siteA", json_string(l->site_a));
        json_object_set_new(x, "siteB", json_string(l->site_b));
        json_object_set_new(x, "link", str_or_null(l->link));
        json_object_set_new(x, "bandwidth", json_integer(l->bandwidth));
        json_object_set_new(x, "reservation", str_or_null(l->reservation));
        json_object_set_new(x, "localId", str_or_null(l->local_id));
        json_array_append_new(ls, x);
    }
    json_object_set_new(o, "links", ls);
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return s;
}

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    struct acc_agreement a = {
        .id = "uluf5vlisnmw43fq",
        .name = "metatrace-run",
        .initiator = "alice",
        .state = ACC_STATE_OBSERVED,
        .created = 1795334400,
        .start = 1795338000,
        .end = 1795345200,
        .earliest = 1795334405,
        .deadline = 1795939200,
        .duration = 7200,
        .strategy = ACC_STRATEGY_INTERSECT,
        .launch = ACC_LAUNCH_METAMPICH,
        .rounds = 1,
        .comps = comps,
        .n_comps = 3,
        .links = links,
        .n_links = 3,
    };
    enum { ROUNDS = 31, N = 2000 };
    int64_t own[ROUNDS], lib[ROUNDS];
    size_t own_len = 0, lib_len = 0;
    for (int r = 0; r < ROUNDS; r++) {
        int64_t t0 = acc_mono_us();
        for (int i = 0; i < N; i++) {
            struct acc_buf b = ACC_BUF_INIT;
            acc_json_agreement(&a, &b);
            own_len = b.len;
            acc_buf_release(&b);
        }
        int64_t t1 = acc_mono_us();
        for (int i = 0; i < N; i++) {
            char *s = jansson_agreement(&a);
            lib_len = strlen(s);
            free(s);
        }
        int64_t t2 = acc_mono_us();
        own[r] = (t1 - t0) * 1000 / N;
        lib[r] = (t2 - t1) * 1000 / N;
    }
    qsort(own, ROUNDS, sizeof own[0], cmp);
    qsort(lib, ROUNDS, sizeof lib[0], cmp);
    printf("agreement as JSON (3 components, 3 links): server/json %lld ns (%zu bytes), jansson "
           "%lld ns (%zu bytes): jansson takes %.1fx as long (medians of %d rounds of %d)\n",
           (long long)own[ROUNDS / 2], own_len, (long long)lib[ROUNDS / 2], lib_len,
           (double)lib[ROUNDS / 2] / (double)own[ROUNDS / 2], ROUNDS, N);
    return 0;
}
