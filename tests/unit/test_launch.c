/* SPDX-License-Identifier: Apache-2.0 */
/* test_launch.c - the launch module: the MetaMPICH meta-configuration and the
 * MPICH-G2 RSL of a hand-made plan, byte for byte against the golden files in
 * tests/data/launch/, and the quoting of what users typed.  The hosts each
 * component gets, the mpiexec.hydra command and the [launch] settings are in
 * test_launch_command.c; the launcher in test_launcher.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "testutil.h"

#define GOLDEN ACC_TEST_DATA "/launch/"

/* ---------------------------------------------------------------- fixture */

/* The agreement and plan are built by hand, without a configuration: the
 * descriptions depend on nothing else.  Strings are borrowed literals, so
 * nothing is released. */
struct fixture {
    struct acc_agreement ag;
    struct acc_alloc_component comps[3];
    struct acc_alloc_link links[5];
    struct acc_launch_comp lc[3];
    struct acc_launch_hosts plan;
};

static char *trace_args[] = {"--steps=500", "out dir/with \"quotes\""};
static char *trace_hosts[] = {"caesar-n1", "caesar-n2"};
static char *partrace_hosts[] = {"fzj-xd1-n1"};
static char *viz_args[] = {"it's C:\\viz\nsecond line"};
static char *viz_hosts[] = {"fh-brs-n1"};

#define START 1795334400 /* 2026-11-22T08:00:00Z */
#define END   (START + 2 * 3600)

static void component(struct fixture *f, size_t i, char *name, char *site, int64_t nodes,
                      int64_t ppn, char *executable, char **args, size_t n_args, char **hosts,
                      char *contact)
{
    struct acc_alloc_component *c = &f->comps[i];
    c->name = name;
    c->site = site;
    c->nodes = nodes;
    c->ppn = ppn;
    c->reservation = "accord-abcdefghijklmnop-r1";
    c->local_id = "4711";
    c->executable = executable;
    c->args = args;
    c->n_args = n_args;
    f->lc[i].comp = c;
    f->lc[i].hosts = hosts;
    f->lc[i].n_hosts = (size_t)nodes;
    f->lc[i].contact = contact;
}

static void add_link(struct fixture *f, size_t i, char *from, char *to, int64_t bandwidth,
                     char *local_id)
{
    struct acc_alloc_link *l = &f->links[i];
    l->name = "link";
    l->from = from;
    l->to = to;
    l->site_a = "a";
    l->site_b = "b";
    l->link = "wan";
    l->bandwidth = bandwidth;
    l->reservation = "accord-abcdefghijklmnop-l1";
    l->local_id = local_id;
    f->ag.n_links = i + 1;
}

/* trace (caesar, 2x2) ~ partrace (fzj-xd1, 1x4) ~ viz (fh-brs, 1x1). */
static void three(struct fixture *f)
{
    memset(f, 0, sizeof *f);
    memcpy(f->ag.id, "abcdefghijklmnop", sizeof f->ag.id);
    f->ag.name = "metatrace-run";
    f->ag.initiator = "alice";
    f->ag.state = ACC_STATE_OBSERVED;
    f->ag.start = START;
    f->ag.end = END;
    f->ag.duration = END - START;
    f->ag.launch = ACC_LAUNCH_METAMPICH;
    f->ag.comps = f->comps;
    f->ag.n_comps = 3;
    f->ag.links = f->links;
    component(f, 0, "trace", "caesar", 2, 2, "/opt/metatrace/trace", trace_args, 2, trace_hosts,
              "caesar");
    component(f, 1, "partrace", "fzj-xd1", 1, 4, "/opt/metatrace/partrace", NULL, 0, partrace_hosts,
              "fzj-xd1");
    component(f, 2, "viz", "fh-brs", 1, 1, "/opt/metatrace/viz", viz_args, 1, viz_hosts, "fh-brs");
    add_link(f, 0, "trace", "partrace", 5000, "net-17");
    add_link(f, 1, "viz", "partrace", 1000, "net-18"); /* either order names the pair */
    f->plan.agreement = &f->ag;
    f->plan.comps = f->lc;
    f->plan.n_comps = 3;
    f->plan.directory = "/var/lib/accord/jobs/abcdefghijklmnop";
    f->plan.router_port = 33000;
}

/* Only the first component, with the given executable and arguments. */
static void one(struct fixture *f, char *executable, char **args, size_t n_args)
{
    three(f);
    f->comps[0].executable = executable;
    f->comps[0].args = args;
    f->comps[0].n_args = n_args;
    f->ag.n_comps = 1;
    f->ag.n_links = 0;
    f->plan.n_comps = 1;
}

/* ---------------------------------------------------------------- helpers */

/* Compares with a golden file and, when they differ, shows where. */
static void check_golden(const char *name, const struct acc_buf *got)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", GOLDEN, name);
    size_t len = 0;
    char *want = acc_test_slurp(path, &len);
    if (!want)
        fprintf(stderr, "cannot read %s\n", path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    bool same = got->len == len && memcmp(got->data, want, len) == 0;
    if (!same) {
        size_t i = 0, line = 1;
        for (; i < len && i < got->len && want[i] == got->data[i]; i++)
            line += want[i] == '\n';
        fprintf(stderr, "\n%s differs from line %zu on; generated:\n%s\n", path, line,
                got->data ? got->data : "");
    }
    CU_ASSERT_TRUE(same);
    free(want);
}

/* True when the text contains needle; says what is missing otherwise. */
static bool has(const struct acc_buf *b, const char *needle)
{
    if (b->data && strstr(b->data, needle))
        return true;
    fprintf(stderr, "\nmissing: [%s]\nin:\n%s\n", needle, b->data ? b->data : "");
    return false;
}

static void metampich(const struct fixture *f, struct acc_buf *out)
{
    acc_buf_init(out);
    ACC_ASSERT_OK(acc_launch_metampich(&f->plan, out));
}

static void rsl(const struct fixture *f, struct acc_buf *out)
{
    acc_buf_init(out);
    ACC_ASSERT_OK(acc_launch_rsl(&f->plan, out));
}

/* ------------------------------------------------------------------ tests */

static void test_metampich_golden(void)
{
    struct fixture f;
    struct acc_buf b;
    three(&f);
    metampich(&f, &b);
    check_golden("three.metampich", &b);
    acc_buf_release(&b);
}

static void test_rsl_golden(void)
{
    struct fixture f;
    struct acc_buf b;
    three(&f);
    rsl(&f, &b);
    check_golden("three.rsl", &b);
    acc_buf_release(&b);
}

static char *hard_args[] = {
    "two words", "say \"hi\"", "it's", "back\\slash", "line\nbreak", "", "tab\tend", "bell\a",
};
#define N_HARD (sizeof hard_args / sizeof hard_args[0])

static void test_metampich_quoting(void)
{
    struct fixture f;
    struct acc_buf b;
    one(&f, "/opt/my apps/\"x\"\\y", hard_args, N_HARD);
    metampich(&f, &b);
    CU_ASSERT_TRUE(has(&b, "    executable=\"/opt/my apps/\\\"x\\\"\\\\y\";\n"));
    CU_ASSERT_TRUE(has(&b, "    args=\"two words\" \"say \\\"hi\\\"\" \"it's\" \"back\\\\slash\" "
                           "\"line\\nbreak\" \"\" \"tab\\tend\" \"bell\\x07\";\n"));
    acc_buf_release(&b);

    /* One empty argument is an argument: an args line with "". */
    static char *empty[] = {""};
    one(&f, "/bin/true", empty, 1);
    metampich(&f, &b);
    CU_ASSERT_TRUE(has(&b, "    args=\"\";\n"));
    acc_buf_release(&b);
}

static void test_rsl_quoting(void)
{
    struct fixture f;
    struct acc_buf b;
    one(&f, "/opt/my apps/\"x\"\\y", hard_args, N_HARD);
    rsl(&f, &b);
    CU_ASSERT_TRUE(has(&b, "   (executable=\"/opt/my apps/\"\"x\"\"\\y\")\n"));
    /* Only the quote is doubled; newlines and the rest stay verbatim. */
    CU_ASSERT_TRUE(has(&b,
                       "   (arguments=\"two words\" \"say \"\"hi\"\"\" \"it's\" \"back\\slash\" "
                       "\"line\nbreak\" \"\" \"tab\tend\" \"bell\a\")\n"));
    acc_buf_release(&b);

    static char *empty[] = {""};
    one(&f, "/bin/true", empty, 1);
    rsl(&f, &b);
    CU_ASSERT_TRUE(has(&b, "   (arguments=\"\")\n"));
    acc_buf_release(&b);
}

/* Both formats leave out the executable line when the offer named none:
 * the description still records the agreement (see describe.c). */
static void test_no_executable(void)
{
    struct fixture f;
    struct acc_buf b;
    three(&f);
    f.comps[1].executable = NULL;
    metampich(&f, &b);
    CU_ASSERT_TRUE(has(&b, "METAHOST partrace {\n"
                           "    site=fzj-xd1;\n"
                           "    nodes=fzj-xd1-n1;\n"
                           "    nprocs=4;\n"
                           "    ppn=4;\n"
                           "    router=fzj-xd1-n1;\n"
                           "    port=33001;\n"
                           "}\n"));
    CU_ASSERT_TRUE(has(&b, "executable=\"/opt/metatrace/viz\";")); /* the others keep theirs */
    acc_buf_release(&b);

    rsl(&f, &b);
    CU_ASSERT_TRUE(has(&b, "( &(resourceManagerContact=\"fzj-xd1\")\n"
                           "   (count=4)\n"
                           "   (jobtype=mpi)\n"
                           "   (label=\"subjob 1\")\n"
                           "   (environment=(GLOBUS_DUROC_SUBJOB_INDEX 1))\n"
                           "   (directory=\"/var/lib/accord/jobs/abcdefghijklmnop\")\n"
                           ")\n"));
    acc_buf_release(&b);

    /* Nor with neither executable nor arguments nor directory. */
    one(&f, NULL, NULL, 0);
    f.plan.directory = NULL;
    metampich(&f, &b);
    CU_ASSERT_PTR_NULL(strstr(b.data, "executable"));
    CU_ASSERT_PTR_NULL(strstr(b.data, "args"));
    acc_buf_release(&b);
    rsl(&f, &b);
    CU_ASSERT_PTR_NULL(strstr(b.data, "executable"));
    CU_ASSERT_PTR_NULL(strstr(b.data, "arguments"));
    CU_ASSERT_PTR_NULL(strstr(b.data, "directory"));
    acc_buf_release(&b);
}

static void test_single_component(void)
{
    struct fixture f;
    struct acc_buf b;
    one(&f, "/opt/metatrace/trace", NULL, 0);
    metampich(&f, &b);
    CU_ASSERT_STRING_EQUAL(b.data, "# MetaMPICH meta-configuration for agreement "
                                   "abcdefghijklmnop (metatrace-run)\n"
                                   "# reserved 2026-11-22T08:00:00Z to 2026-11-22T10:00:00Z\n"
                                   "NUMHOSTS 1\n"
                                   "METAHOST trace {\n"
                                   "    site=caesar;\n"
                                   "    nodes=caesar-n1,caesar-n2;\n"
                                   "    nprocs=4;\n"
                                   "    ppn=2;\n"
                                   "    executable=\"/opt/metatrace/trace\";\n"
                                   "    router=caesar-n1;\n"
                                   "    port=33000;\n"
                                   "}\n"
                                   "CONNECTIONS\n");
    acc_buf_release(&b);

    rsl(&f, &b);
    CU_ASSERT_STRING_EQUAL(b.data, "(* MPICH-G2 multi-request for agreement abcdefghijklmnop "
                                   "(metatrace-run) *)\n"
                                   "+\n"
                                   "( &(resourceManagerContact=\"caesar\")\n"
                                   "   (count=4)\n"
                                   "   (jobtype=mpi)\n"
                                   "   (label=\"subjob 0\")\n"
                                   "   (environment=(GLOBUS_DUROC_SUBJOB_INDEX 0))\n"
                                   "   (directory=\"/var/lib/accord/jobs/abcdefghijklmnop\")\n"
                                   "   (executable=\"/opt/metatrace/trace\")\n"
                                   ")\n");
    acc_buf_release(&b);
}

static void test_connections(void)
{
    struct fixture f;
    struct acc_buf b;
    three(&f);
    /* Three links between trace and partrace add up; the first local id
     * names the reservation.  One without a local id gives the bandwidth
     * alone; an id that is not a plain name is quoted; a link naming no
     * components joins nothing. */
    add_link(&f, 0, "partrace", "trace", 3000, NULL);
    add_link(&f, 1, "trace", "partrace", 2000, "net-17");
    add_link(&f, 2, "viz", "partrace", 1000, NULL);
    add_link(&f, 3, NULL, "trace", 700, "ghost");
    add_link(&f, 4, "partrace", "trace", 250, "net-99");
    static char *viz3[] = {"fh-brs-n1", "fh-brs-n2", "fh-brs-n3"};
    f.lc[2].hosts = viz3 + 2; /* the router is the first host, whatever its name */
    metampich(&f, &b);
    CU_ASSERT_TRUE(has(&b, "CONNECTIONS\n"
                           "trace partrace tcp caesar-n1:33000 fzj-xd1-n1:33001 bandwidth=5250 "
                           "reservation=net-17;\n"
                           "trace viz tcp caesar-n1:33000 fh-brs-n3:33002;\n"
                           "partrace viz tcp fzj-xd1-n1:33001 fh-brs-n3:33002 bandwidth=1000;\n"));
    CU_ASSERT_PTR_NULL(strstr(b.data, "ghost"));
    acc_buf_release(&b);

    add_link(&f, 0, "trace", "viz", 10, "job 12; evil");
    f.ag.n_links = 1;
    f.plan.router_port = 40000;
    metampich(&f, &b);
    CU_ASSERT_TRUE(has(&b, "trace partrace tcp caesar-n1:40000 fzj-xd1-n1:40001;\n"
                           "trace viz tcp caesar-n1:40000 fh-brs-n3:40002 bandwidth=10 "
                           "reservation=\"job 12; evil\";\n"
                           "partrace viz tcp fzj-xd1-n1:40001 fh-brs-n3:40002;\n"));
    CU_ASSERT_TRUE(has(&b, "    port=40002;\n"));
    acc_buf_release(&b);
}

/* The name is user text: without one the header has no parentheses, and
 * with one it stays on its line and cannot end the RSL comment. */
static void test_agreement_name(void)
{
    struct fixture f;
    struct acc_buf b;
    three(&f);
    f.ag.name = NULL;
    metampich(&f, &b);
    CU_ASSERT_TRUE(has(&b, "# MetaMPICH meta-configuration for agreement abcdefghijklmnop\n"
                           "# reserved "));
    acc_buf_release(&b);
    rsl(&f, &b);
    CU_ASSERT_TRUE(has(&b, "(* MPICH-G2 multi-request for agreement abcdefghijklmnop *)\n+\n"));
    acc_buf_release(&b);

    f.ag.name = "*run*) (*x\nNUMHOSTS 9**";
    metampich(&f, &b);
    CU_ASSERT_TRUE(has(&b, "# MetaMPICH meta-configuration for agreement abcdefghijklmnop "
                           "(*run*) (*x NUMHOSTS 9**)\n"
                           "# reserved "));
    acc_buf_release(&b);
    rsl(&f, &b);
    CU_ASSERT_TRUE(has(&b, "(* MPICH-G2 multi-request for agreement abcdefghijklmnop "
                           "( *run* ) ( *x NUMHOSTS 9** ) *)\n+\n( &"));
    /* The only comment end is the one that closes the header. */
    const char *end = strstr(b.data, "*)");
    CU_ASSERT_PTR_NOT_NULL_FATAL(end);
    CU_ASSERT_EQUAL(end[2], '\n');
    CU_ASSERT_PTR_NULL(strstr(b.data + 2, "(*"));
    acc_buf_release(&b);
}

static void test_appends(void)
{
    struct fixture f;
    three(&f);
    struct acc_buf b = ACC_BUF_INIT;
    acc_buf_puts(&b, "before\n");
    ACC_ASSERT_OK(acc_launch_metampich(&f.plan, &b));
    ACC_ASSERT_OK(acc_launch_rsl(&f.plan, &b));
    CU_ASSERT_EQUAL(strncmp(b.data, "before\n# MetaMPICH", 18), 0);
    CU_ASSERT_TRUE(has(&b, "reservation=net-18;\n(* MPICH-G2"));
    acc_buf_release(&b);

    /* A buffer that already failed stays failed and says so. */
    acc_buf_init(&b);
    b.failed = true;
    CU_ASSERT_EQUAL(acc_launch_metampich(&f.plan, &b), ACC_ERR_NOMEM);
    CU_ASSERT_EQUAL(acc_launch_rsl(&f.plan, &b), ACC_ERR_NOMEM);
    acc_buf_release(&b);
}

/* A plan without hosts (the plan builder never makes one) has no router
 * for MetaMPICH; RSL needs none. */
static void test_plan_without_hosts(void)
{
    struct fixture f;
    three(&f);
    f.lc[1].n_hosts = 0;
    f.lc[1].hosts = NULL;
    f.lc[1].contact = NULL; /* the site stands in for the contact */
    struct acc_buf b = ACC_BUF_INIT;
    CU_ASSERT_EQUAL(acc_launch_metampich(&f.plan, &b), ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(b.len, 0);
    ACC_ASSERT_OK(acc_launch_rsl(&f.plan, &b));
    CU_ASSERT_TRUE(has(&b, "( &(resourceManagerContact=\"fzj-xd1\")\n"));
    acc_buf_release(&b);
}

static const struct acc_test_case tests[] = {
    {"MetaMPICH golden file", test_metampich_golden},
    {"RSL golden file", test_rsl_golden},
    {"MetaMPICH quoting", test_metampich_quoting},
    {"RSL quoting", test_rsl_quoting},
    {"no executable", test_no_executable},
    {"single component", test_single_component},
    {"connections and links", test_connections},
    {"agreement name", test_agreement_name},
    {"appends, and a failed buffer", test_appends},
    {"plan without hosts", test_plan_without_hosts},
    {NULL, NULL},
};

/* tests/unit/test_launch_command.c, tests/unit/test_launcher.c */
extern const struct acc_test_case acc_launch_command_tests[];
extern const struct acc_test_case acc_launcher_tests[];

const struct acc_test_suite acc_test_suites[] = {
    {"launch descriptions", NULL, NULL, tests},
    {"launch hosts and command", NULL, NULL, acc_launch_command_tests},
    {"launcher", NULL, NULL, acc_launcher_tests},
    {NULL, NULL, NULL, NULL},
};
