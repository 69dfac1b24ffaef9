/* SPDX-License-Identifier: Apache-2.0 */
/* test_config_check.c - `accordd --check-config` checks what a start
 * checks.  Every key accordd reads (acc_config_keys_each: the key tables
 * and the keys read by code of their own, so a new key is walked without
 * changing this file), and the settings of each adapter kind (the list
 * each kind keeps, struct acc_adapter_ops settings, and cases of settings
 * missing), get a bad value in an otherwise good file; the real accordd binary must then
 * refuse it both with --check-config and when started (on a temporary
 * database, which it must not create), exit 1 both times, name the file,
 * the line and the key, and print the same lines.
 *
 * Defect: --check-config passed a Grid Engine site without sge_root and a
 * Slurm site with an unknown key; the start then refused them (with no
 * line), after --check-config had said the file was fine. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../adapters/adapter.h"
#include "config.h"
#include "testutil.h"

/* ------------------------------------------------------------ the file */

/* The good file every case starts from: two simulated sites, a network and
 * a link between them, on a loopback port. */
static const char *const base[][3] = {
    {"server", "listen", "127.0.0.1:0"},
    {"site a", "adapter", "sim-batch"},
    {"site a", "nodes", "4"},
    {"site b", "adapter", "sim-batch"},
    {"site b", "nodes", "2"},
    {"network wan", "adapter", "sim-network"},
    {"link a_b", "sites", "a b"},
    {"link a_b", "capacity", "1000"},
    {"link a_b", "network", "wan"},
};
enum { N_BASE = sizeof base / sizeof base[0] };

/* A change to the base file: key = value in section (replacing the base's
 * value of that key, else added to the section, else in a new section). */
struct change {
    const char *section, *key, *value;
};

static bool changes(const struct change *ch, size_t n, const char *section, const char *key,
                    const char **value)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(ch[i].section, section) == 0 && strcmp(ch[i].key, key) == 0) {
            *value = ch[i].value;
            return true;
        }
    }
    return false;
}

/* Writes the base with the changes to path; *line: the line of the key
 * `at` of section `at_section`, or of that section's adapter = line when
 * the key is not in the file (0: neither). */
static bool write_conf(const char *path, const struct change *ch, size_t n, const char *at_section,
                       const char *at, int *line)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    int no = 0, adapter_line = 0;
    *line = 0;
    const char *done[32];
    size_t n_done = 0;
    /* the base's sections in order, then sections only the changes name */
    const char *sections[32];
    size_t n_sections = 0;
    for (size_t i = 0; i < N_BASE + n; i++) {
        const char *s = i < N_BASE ? base[i][0] : ch[i - N_BASE].section;
        bool seen = false;
        for (size_t k = 0; k < n_sections; k++)
            seen |= strcmp(sections[k], s) == 0;
        if (!seen && n_sections < 32)
            sections[n_sections++] = s;
    }
    for (size_t k = 0; k < n_sections; k++) {
        const char *s = sections[k];
        fprintf(f, "[%s]\n", s);
        no++;
        n_done = 0;
        for (size_t i = 0; i < N_BASE; i++) {
            if (strcmp(base[i][0], s) != 0)
                continue;
            const char *v = base[i][2];
            changes(ch, n, s, base[i][1], &v);
            fprintf(f, "%s = %s\n", base[i][1], v);
            no++;
            if (strcmp(s, at_section) == 0 && strcmp(base[i][1], at) == 0)
                *line = no;
            if (strcmp(s, at_section) == 0 && strcmp(base[i][1], "adapter") == 0)
                adapter_line = no;
            if (n_done < 32)
                done[n_done++] = base[i][1];
        }
        for (size_t i = 0; i < n; i++) {
            if (strcmp(ch[i].section, s) != 0)
                continue;
            bool in_base = false;
            for (size_t d = 0; d < n_done; d++)
                in_base |= strcmp(done[d], ch[i].key) == 0;
            if (in_base)
                continue;
            fprintf(f, "%s = %s\n", ch[i].key, ch[i].value);
            no++;
            if (strcmp(s, at_section) == 0 && strcmp(ch[i].key, at) == 0)
                *line = no;
            if (strcmp(s, at_section) == 0 && strcmp(ch[i].key, "adapter") == 0)
                adapter_line = no;
        }
        fputc('\n', f);
        no++;
    }
    if (!*line)
        *line = adapter_line;
    return fclose(f) == 0;
}

/* ------------------------------------------------------------ accordd */

/* Runs accordd with args (NULL-terminated after the program), its stderr
 * into *err (freed by the caller); its exit status, or -1 when it was
 * still running after 20 s (then killed: it started). */
static int run(char *const argv[], char **err)
{
    char path[512];
    snprintf(path, sizeof path, "%s/stderr", acc_test_tmpdir());
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen(path, "w", stderr))
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    pid_t got = 0;
    for (int i = 0; i < 2000 && (got = waitpid(pid, &st, WNOHANG)) == 0; i++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    if (got == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    size_t len = 0;
    *err = acc_test_slurp(path, &len);
    if (!*err || len == 0) { /* an empty buffer is not a string */
        free(*err);
        *err = strdup("");
    }
    return got == 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int failures;

/* The case as a file: both --check-config and the start refuse it alike,
 * at line `line`, naming key. */
static void expect_refused(const char *label, const char *conf, int line, const char *key)
{
    char db[512], where[600];
    snprintf(db, sizeof db, "%s/start.db", acc_test_tmpdir());
    unlink(db);
    char *check_err = NULL, *start_err = NULL;
    char *check_argv[] = {ACCORDD_PATH, "--config", (char *)conf, "--check-config", NULL};
    char *start_argv[] = {ACCORDD_PATH, "--config", (char *)conf,  "--db",
                          db,           "--listen", "127.0.0.1:0", NULL};
    int check_st = run(check_argv, &check_err);
    int start_st = run(start_argv, &start_err);
    snprintf(where, sizeof where, "%s:%d: %s: ", conf, line, key);
    bool named = strncmp(check_err, where, strlen(where)) == 0 || strstr(check_err, where);
    bool ok = check_st == 1 && start_st == 1 && named && strcmp(check_err, start_err) == 0 &&
              access(db, F_OK) != 0;
    if (!ok) {
        failures++;
        fprintf(stderr,
                "%s: --check-config exit %d, start exit %d (both should be 1), the database %s "
                "(it should not), '%s' %snamed\n  check said: %s  start said: %s",
                label, check_st, start_st, access(db, F_OK) == 0 ? "was made" : "was not made",
                where, named ? "" : "NOT ", check_err, start_err);
    }
    CU_ASSERT_TRUE(ok);
    free(check_err);
    free(start_err);
}

/* The section a key of acc_config_keys_each goes into in the base file. */
static const char *section_of(const char *section)
{
    if (strcmp(section, "site") == 0)
        return "site a";
    if (strcmp(section, "network") == 0)
        return "network wan";
    if (strcmp(section, "link") == 0)
        return "link a_b";
    if (strcmp(section, "issuer") == 0)
        return "issuer idp";
    return section;
}

struct walk {
    size_t n;
};

static void one_key(const char *section, const char *key, const char *bad, void *ctx)
{
    struct walk *w = ctx;
    char conf[512], label[256];
    snprintf(conf, sizeof conf, "%s/key.conf", acc_test_tmpdir());
    snprintf(label, sizeof label, "[%s] %s = '%s'", section, key, bad);
    struct change ch = {section_of(section), key, bad};
    int line = 0;
    CU_ASSERT_TRUE_FATAL(write_conf(conf, &ch, 1, ch.section, key, &line));
    expect_refused(label, conf, line, key);
    w->n++;
}

/* Every key accordd reads, with a bad value. */
static void test_every_key(void)
{
    failures = 0;
    struct walk w = {0};
    acc_config_keys_each(one_key, &w);
    printf("\n  %zu keys given a bad value, %d not refused alike\n", w.n, failures);
    /* the tables' keys and the others: 93 today */
    CU_ASSERT_TRUE(w.n >= 93);
}

/* ------------------------------------------------------------ adapters */

struct adapter_case {
    const char *label;
    struct change ch[4];
    size_t n;
    const char *section, *key; /* the key named (its line, or the adapter's) */
};

static const struct adapter_case adapter_cases[] = {
    {"slurm: an unknown key",
     {{"site a", "adapter", "slurm"}, {"site a", "colour", "red"}},
     2,
     "site a",
     "colour"},
    {"slurm: timeout",
     {{"site a", "adapter", "slurm"}, {"site a", "timeout", "soon"}},
     2,
     "site a",
     "timeout"},
    {"slurm: slurm_conf missing",
     {{"site a", "adapter", "slurm"}, {"site a", "slurm_conf", "/nonexistent/slurm.conf"}},
     2,
     "site a",
     "slurm_conf"},
    {"slurm: bin_dir",
     {{"site a", "adapter", "slurm"}, {"site a", "bin_dir", "/nonexistent"}},
     2,
     "site a",
     "bin_dir"},
    {"sge: no sge_root",
     {{"site a", "adapter", "sge"}, {"site a", "pe", "mpi"}},
     2,
     "site a",
     "sge_root"},
    {"sge: no pe", {{"site a", "adapter", "sge"}, {"site a", "sge_root", "/"}}, 2, "site a", "pe"},
    {"sge: sge_root not a Grid Engine",
     {{"site a", "adapter", "sge"},
      {"site a", "sge_root", "/nonexistent"},
      {"site a", "pe", "mpi"}},
     3,
     "site a",
     "sge_root"},
    {"sge: slots",
     {{"site a", "adapter", "sge"}, {"site a", "slots", "0"}, {"site a", "pe", "mpi"}},
     3,
     "site a",
     "slots"},
    {"sge: an unknown key",
     {{"site a", "adapter", "sge"}, {"site a", "colour", "red"}},
     2,
     "site a",
     "colour"},
    {"sim-batch: load", {{"site a", "load", "maybe"}}, 1, "site a", "load"},
    {"sim-batch: load_percent", {{"site a", "load_percent", "99"}}, 1, "site a", "load_percent"},
    {"sim-batch: on_conflict", {{"site a", "on_conflict", "panic"}}, 1, "site a", "on_conflict"},
    {"sim-batch: an unknown key", {{"site a", "colour", "red"}}, 1, "site a", "colour"},
    {"sim-network: seed", {{"network wan", "seed", "-1"}}, 1, "network wan", "seed"},
    {"sim-batch on a network",
     {{"network wan", "adapter", "sim-batch"}},
     1,
     "network wan",
     "adapter"},
    {"launch = sbatch on sim-batch", {{"site a", "launch", "sbatch"}}, 1, "site a", "launch"},
    {"tc: ceil",
     {{"network wan", "adapter", "tc"},
      {"network wan", "path.a_b.a", "-/lo"},
      {"network wan", "path.a_b.b", "-/lo"},
      {"network wan", "ceil", "fast"}},
     4,
     "network wan",
     "ceil"},
    {"tc: a path of no link",
     {{"network wan", "adapter", "tc"}, {"network wan", "path.x_y.a", "-/lo"}},
     2,
     "network wan",
     "path.x_y.a"},
    {"tc: a link without its paths",
     {{"network wan", "adapter", "tc"}},
     1,
     "network wan",
     "adapter"},
    {"remote: no url", {{"site a", "adapter", "remote"}}, 1, "site a", "url"},
    {"remote: url",
     {{"site a", "adapter", "remote"}, {"site a", "url", "ftp://x"}},
     2,
     "site a",
     "url"},
    {"remote: ca",
     {{"site a", "adapter", "remote"},
      {"site a", "url", "https://127.0.0.1:1"},
      {"site a", "ca", "/nonexistent/ca.pem"}},
     3,
     "site a",
     "ca"},
    {"remote: connections",
     {{"site a", "adapter", "remote"},
      {"site a", "url", "http://127.0.0.1:1"},
      {"site a", "insecure_http", "yes"},
      {"site a", "connections", "0"}},
     4,
     "site a",
     "connections"},
    {"remote: an unknown key",
     {{"site a", "adapter", "remote"}, {"site a", "colour", "red"}},
     2,
     "site a",
     "colour"},
};

/* Each adapter kind's own settings: what its open refuses, the check
 * refuses at the setting's line (a missing one: at adapter =). */
static void test_adapter_settings(void)
{
    failures = 0;
    char conf[512];
    snprintf(conf, sizeof conf, "%s/adapter.conf", acc_test_tmpdir());
    for (size_t i = 0; i < sizeof adapter_cases / sizeof adapter_cases[0]; i++) {
        const struct adapter_case *c = &adapter_cases[i];
        int line = 0;
        CU_ASSERT_TRUE_FATAL(write_conf(conf, c->ch, c->n, c->section, c->key, &line));
        expect_refused(c->label, conf, line, c->key);
    }
    printf("\n  %zu adapter cases, %d not refused alike\n",
           sizeof adapter_cases / sizeof adapter_cases[0], failures);
}

/* What each kind needs besides the setting under test: a good value of
 * each setting it requires. */
static size_t kind_base(const char *kind, const char *section, struct change *ch, char *sge_root)
{
    size_t n = 0;
    ch[n++] = (struct change){section, "adapter", kind};
    if (strcmp(kind, "sge") == 0) {
        ch[n++] = (struct change){section, "sge_root", sge_root};
        ch[n++] = (struct change){section, "pe", "mpi"};
    } else if (strcmp(kind, "remote") == 0) {
        ch[n++] = (struct change){section, "url", "http://127.0.0.1:1"};
        ch[n++] = (struct change){section, "insecure_http", "yes"};
    } else if (strcmp(kind, "tc") == 0) {
        ch[n++] = (struct change){section, "path.a_b.a", "-/lo"};
        ch[n++] = (struct change){section, "path.a_b.b", "-/lo"};
    }
    return n;
}

/* Every setting every compiled-in kind lists (struct acc_adapter_ops
 * settings, which a kind must keep whole), with the bad value it lists:
 * refused alike at its line; a setting that takes any value is taken. */
static void test_every_adapter_setting(void)
{
    failures = 0;
    char conf[512], sge_root[512], cmd[700];
    snprintf(conf, sizeof conf, "%s/setting.conf", acc_test_tmpdir());
    snprintf(sge_root, sizeof sge_root, "%s/sge", acc_test_tmpdir());
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/default/common'", sge_root);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    size_t walked = 0, kinds = 0;
    for (size_t k = 0; acc_adapter_kinds[k]; k++) {
        const struct acc_adapter_ops *ops = acc_adapter_kinds[k];
        CU_ASSERT_PTR_NOT_NULL(ops->check);
        CU_ASSERT_PTR_NOT_NULL(ops->settings);
        if (!ops->settings)
            continue;
        kinds++;
        const char *section = ops->caps & ACC_CAP_NODES ? "site a" : "network wan";
        for (const struct acc_adapter_setting *set = ops->settings; set->name; set++) {
            struct change ch[8];
            size_t n = kind_base(ops->kind, section, ch, sge_root);
            /* a prefix: the first base setting it covers */
            const char *key = set->name;
            size_t len = strlen(key);
            for (size_t i = 0; key[len - 1] == '.' && i < n; i++) {
                if (strncmp(ch[i].key, key, len) == 0)
                    key = ch[i].key;
            }
            size_t i = 0;
            while (i < n && strcmp(ch[i].key, key) != 0)
                i++;
            ch[i] = (struct change){section, key, set->bad ? set->bad : "anything"};
            n += i == n;
            int line = 0;
            CU_ASSERT_TRUE_FATAL(write_conf(conf, ch, n, section, key, &line));
            char label[256];
            snprintf(label, sizeof label, "%s: %s = '%s'", ops->kind, key, ch[i].value);
            walked++;
            if (set->bad) {
                expect_refused(label, conf, line, key);
                continue;
            }
            char *argv[] = {ACCORDD_PATH, "--config", conf, "--check-config", NULL};
            char *err = NULL;
            int st = run(argv, &err);
            if (st != 0) {
                failures++;
                fprintf(stderr, "%s: taken by the kind, but --check-config exit %d: %s", label, st,
                        err);
            }
            CU_ASSERT_EQUAL(st, 0);
            free(err);
        }
    }
    printf("\n  %zu settings of %zu kinds, %d not as expected\n", walked, kinds, failures);
    CU_ASSERT_TRUE(kinds >= 6);
}

/* ------------------------------------------------------------ warnings */

/* A dangerous combination: --check-config warns (the line), exits 0. */
static void expect_warning(const char *label, const struct change *ch, size_t n,
                           const char *const *extra, const char *want)
{
    char conf[512];
    snprintf(conf, sizeof conf, "%s/warn.conf", acc_test_tmpdir());
    int line = 0;
    CU_ASSERT_TRUE_FATAL(write_conf(conf, ch, n, "", "", &line));
    char *argv[8] = {ACCORDD_PATH, "--config", conf, "--check-config"};
    size_t k = 4;
    for (size_t i = 0; extra && extra[i] && k < 7; i++)
        argv[k++] = (char *)extra[i];
    argv[k] = NULL;
    char *err = NULL;
    int st = run(argv, &err);
    char full[700];
    snprintf(full, sizeof full, "%s:%s", conf, want); /* "FILE:LINE: warning: KEY: ..." */
    bool ok = st == 0 && strstr(err, full);
    if (!ok)
        fprintf(stderr, "%s: exit %d (0 expected), no '%s' in: %s", label, st, full, err);
    CU_ASSERT_TRUE(ok);
    free(err);
}

static void test_warnings(void)
{
    struct change all[] = {{"server", "listen", "0.0.0.0:0"}};
    expect_warning("listen on all addresses", all, 1, NULL,
                   "2: warning: listen: 0.0.0.0 is not a loopback address and there is no HTTPS");
    expect_warning("listen on all addresses, no [auth]", all, 1, NULL,
                   "2: warning: listen: 0.0.0.0 is not a loopback address and there is no [auth]");
    const char *const listen[] = {"--listen", "[::]:0", NULL};
    expect_warning("--listen on all addresses", NULL, 0, listen,
                   " warning: --listen: :: is not a loopback address and there is no HTTPS");
    struct change launch[] = {{"launch", "enabled", "yes"}};
    expect_warning("launching with no account", launch, 1, NULL,
                   "21: warning: enabled: jobs are launched with no [launch] account");
    struct change backup[] = {{"server", "anonymous_backup", "yes"}};
    expect_warning("anonymous_backup", backup, 1, NULL,
                   "3: warning: anonymous_backup: POST /admin/backup answers anyone");

    /* and none for the good base file */
    char conf[512];
    int line;
    snprintf(conf, sizeof conf, "%s/quiet.conf", acc_test_tmpdir());
    CU_ASSERT_TRUE_FATAL(write_conf(conf, NULL, 0, "", "", &line));
    char *argv[] = {ACCORDD_PATH, "--config", conf, "--check-config", NULL};
    char *err = NULL;
    CU_ASSERT_EQUAL(run(argv, &err), 0);
    if (*err)
        fprintf(stderr, "the good file: %s", err);
    CU_ASSERT_STRING_EQUAL(err, "");
    free(err);
}

/* --print-config shows --db and --listen. */
static void test_print_overrides(void)
{
    char db[512], out[512];
    snprintf(db, sizeof db, "%s/elsewhere.db", acc_test_tmpdir());
    snprintf(out, sizeof out, "%s/printed.ini", acc_test_tmpdir());
    for (int with_config = 0; with_config < 2; with_config++) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "'%s' %s%s --print-config --db '%s' --listen 127.0.0.2:9911 >'%s'", ACCORDD_PATH,
                 with_config ? "--config " : "",
                 with_config ? ACC_SOURCE_DIR "/tests/data/config/good/minimal.conf" : "", db, out);
        CU_ASSERT_EQUAL(system(cmd), 0);
        char *text = acc_test_slurp(out, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        char want[600];
        snprintf(want, sizeof want, "\npath = %s\n", db);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
        CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nlisten = 127.0.0.2:9911\n"));
        free(text);
    }
    CU_ASSERT_NOT_EQUAL(access(db, F_OK), 0); /* printing makes no database */
}

static const struct acc_test_case tests[] = {
    {"every key with a bad value: --check-config and a start refuse it alike", test_every_key},
    {"each adapter's settings: --check-config and a start refuse them alike",
     test_adapter_settings},
    {"every setting each adapter kind lists: refused alike, or taken", test_every_adapter_setting},
    {"dangerous combinations: warnings, exit 0", test_warnings},
    {"--print-config with --db and --listen", test_print_overrides},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"config_check", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
