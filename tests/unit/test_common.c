/* SPDX-License-Identifier: Apache-2.0 */
/* test_common.c - times, durations, ids, buffers, maps, numbers, log lines,
 * databases as messages show them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "dbname.h"
#include "hostlist.h"
#include "id.h"
#include "hostname.h"
#include "log.h"
#include "map.h"
#include "proc.h"
#include "procstat.h"
#include "strutil.h"
#include "testutil.h"
#include "timefmt.h"

static void test_time_roundtrip(void)
{
    acc_time t;
    char s[ACC_TIME_STRLEN];
    ACC_ASSERT_OK(acc_time_parse("2026-11-22T08:00:00Z", &t, NULL));
    CU_ASSERT_EQUAL(t, 1795334400);
    acc_time_format(t, s);
    CU_ASSERT_STRING_EQUAL(s, "2026-11-22T08:00:00Z");
    ACC_ASSERT_OK(acc_time_parse("1970-01-01T00:00:00Z", &t, NULL));
    CU_ASSERT_EQUAL(t, 0);
    ACC_ASSERT_OK(acc_time_parse("2024-02-29T23:59:59Z", &t, NULL));
    acc_time_format(t, s);
    CU_ASSERT_STRING_EQUAL(s, "2024-02-29T23:59:59Z");
}

static void test_time_offsets_and_fractions(void)
{
    acc_time a, b, c;
    ACC_ASSERT_OK(acc_time_parse("2026-11-22T09:30:00+01:30", &a, NULL));
    ACC_ASSERT_OK(acc_time_parse("2026-11-22T08:00:00.999Z", &b, NULL));
    ACC_ASSERT_OK(acc_time_parse("2026-11-22T08:00:00", &c, NULL)); /* no zone: UTC */
    CU_ASSERT_EQUAL(a, b);
    CU_ASSERT_EQUAL(b, c);
}

static void test_time_rejects(void)
{
    static const char *const bad[] = {
        "",
        "2026-11-22",
        "2026-13-01T00:00:00Z",
        "2026-02-30T00:00:00Z",
        "tomorrow",
        "2026-11-22T25:00:00Z",
        "2026-11-22T08:00:00Zjunk",
        "1969-12-31T23:59:59Z",
        "2023-02-29T00:00:00Z",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct acc_error err;
        acc_time t;
        CU_ASSERT_EQUAL(acc_time_parse(bad[i], &t, &err), ACC_ERR_INVALID);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "RFC 3339"));
    }
}

/* Nothing after 9999-12-31T23:59:59Z is taken (the format has four digits
 * for the year), and nothing ever wraps around to year 0000. */
static void test_time_bounds(void)
{
    acc_time t;
    char s[ACC_TIME_STRLEN];
    struct acc_error err;
    ACC_ASSERT_OK(acc_time_parse("9999-12-31T23:59:59Z", &t, NULL));
    CU_ASSERT_EQUAL(t, ACC_TIME_MAX);
    acc_time_format(t, s);
    CU_ASSERT_STRING_EQUAL(s, "9999-12-31T23:59:59Z");
    static const char *const late[] = {
        "9999-12-31T23:00:00-05:00", /* 10000-01-01T04:00:00Z */
        "9999-12-31T23:59:59-00:01",
        "10000-01-01T00:00:00Z",
        "99999-01-01T00:00:00Z",
    };
    for (size_t i = 0; i < sizeof late / sizeof late[0]; i++) {
        CU_ASSERT_EQUAL(acc_time_parse(late[i], &t, &err), ACC_ERR_INVALID);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, late[i]));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "after 9999-12-31T23:59:59Z"));
    }
    /* A computed time beyond the bound is shown as the bound, never as
     * 0000-01-01 (which would sort before its start). */
    acc_time_format(ACC_TIME_MAX + 1, s);
    CU_ASSERT_STRING_EQUAL(s, "9999-12-31T23:59:59Z");
    acc_time_format(ACC_TIME_MAX + 14 * 86400, s);
    CU_ASSERT_STRING_EQUAL(s, "9999-12-31T23:59:59Z");
    acc_time_format(INT64_MAX, s);
    CU_ASSERT_STRING_EQUAL(s, "9999-12-31T23:59:59Z");
    acc_time_format(INT64_MIN, s);
    CU_ASSERT_STRING_EQUAL(s, "0001-01-01T00:00:00Z");
    acc_time_format(-1, s);
    CU_ASSERT_STRING_EQUAL(s, "1969-12-31T23:59:59Z");
}

static void test_duration(void)
{
    int64_t s;
    char out[ACC_DURATION_STRLEN];
    ACC_ASSERT_OK(acc_duration_parse("PT2H", &s, NULL));
    CU_ASSERT_EQUAL(s, 7200);
    ACC_ASSERT_OK(acc_duration_parse("P1DT2H30M15S", &s, NULL));
    CU_ASSERT_EQUAL(s, 86400 + 2 * 3600 + 30 * 60 + 15);
    ACC_ASSERT_OK(acc_duration_parse("PT90M", &s, NULL));
    CU_ASSERT_EQUAL(s, 5400);
    ACC_ASSERT_OK(acc_duration_parse("-PT1H", &s, NULL));
    CU_ASSERT_EQUAL(s, -3600);
    ACC_ASSERT_OK(acc_duration_parse("PT0S", &s, NULL));
    CU_ASSERT_EQUAL(s, 0);
    acc_duration_format(5400, out);
    CU_ASSERT_STRING_EQUAL(out, "PT1H30M");
    acc_duration_format(86400, out);
    CU_ASSERT_STRING_EQUAL(out, "P1D");
    acc_duration_format(0, out);
    CU_ASSERT_STRING_EQUAL(out, "PT0S");
    acc_duration_format(90061, out);
    CU_ASSERT_STRING_EQUAL(out, "P1DT1H1M1S");

    struct acc_error err;
    CU_ASSERT_EQUAL(acc_duration_parse("P1M", &s, &err), ACC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "months"));
    static const char *const bad[] = {"",       "P",      "PT",     "2H", "PT2",
                                      "PT1.5H", "PT1H2H", "PT1M1H", "P1H"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CU_ASSERT_EQUAL(acc_duration_parse(bad[i], &s, NULL), ACC_ERR_INVALID);
}

static void test_ids(void)
{
    char a[ACC_ID_LEN + 1], b[ACC_ID_LEN + 1];
    ACC_ASSERT_OK(acc_id_new(a, NULL));
    ACC_ASSERT_OK(acc_id_new(b, NULL));
    CU_ASSERT_EQUAL(strlen(a), ACC_ID_LEN);
    CU_ASSERT_STRING_NOT_EQUAL(a, b);
    CU_ASSERT_TRUE(acc_id_valid(a));
    CU_ASSERT_FALSE(acc_id_valid("short"));
    CU_ASSERT_FALSE(acc_id_valid("ABCDEFGHIJKLMNOP"));
    CU_ASSERT_FALSE(acc_id_valid("abcdefgh'; drop "));
    CU_ASSERT_FALSE(acc_id_valid(NULL));
}

static void test_buf(void)
{
    struct acc_buf b = ACC_BUF_INIT;
    CU_ASSERT_STRING_EQUAL(acc_buf_str(&b), "");
    acc_buf_puts(&b, "abc");
    acc_buf_printf(&b, "-%d-", 42);
    for (int i = 0; i < 1000; i++)
        acc_buf_putc(&b, 'x');
    CU_ASSERT_TRUE(acc_buf_ok(&b));
    CU_ASSERT_EQUAL(b.len, 3 + 4 + 1000);
    CU_ASSERT_EQUAL(strncmp(acc_buf_str(&b), "abc-42-xxx", 10), 0);
    size_t len;
    char *p = acc_buf_detach(&b, &len);
    CU_ASSERT_EQUAL(len, 1007);
    CU_ASSERT_PTR_NULL(b.data);
    free(p);
    acc_buf_release(&b);
}

static void test_map(void)
{
    struct acc_map m;
    acc_map_init(&m);
    char keys[2000][16];
    for (int i = 0; i < 2000; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        ACC_ASSERT_OK(acc_map_put(&m, keys[i], keys[i]));
    }
    CU_ASSERT_EQUAL(m.n, 2000);
    for (int i = 0; i < 2000; i += 2)
        CU_ASSERT_PTR_EQUAL(acc_map_take(&m, keys[i]), keys[i]);
    CU_ASSERT_EQUAL(m.n, 1000);
    for (int i = 0; i < 2000; i++)
        CU_ASSERT_PTR_EQUAL(acc_map_get(&m, keys[i]), i % 2 ? keys[i] : NULL);
    /* Churn through tombstones without growing without bound. */
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 2000; i += 2)
            acc_map_put(&m, keys[i], keys[i]);
        for (int i = 0; i < 2000; i += 2)
            acc_map_take(&m, keys[i]);
    }
    CU_ASSERT_EQUAL(m.n, 1000);
    CU_ASSERT_TRUE(m.cap <= 8192);
    CU_ASSERT_PTR_NULL(acc_map_take(&m, "absent"));
    acc_map_release(&m);
}

static void test_numbers(void)
{
    int64_t v;
    ACC_ASSERT_OK(acc_parse_i64(" 42 ", 0, 100, &v, NULL));
    CU_ASSERT_EQUAL(v, 42);
    CU_ASSERT_EQUAL(acc_parse_i64("101", 0, 100, &v, NULL), ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(acc_parse_i64("99999999999999999999", 0, INT64_MAX, &v, NULL), ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(acc_parse_i64("12x", 0, 100, &v, NULL), ACC_ERR_INVALID);
    CU_ASSERT_EQUAL(acc_parse_i64("", 0, 100, &v, NULL), ACC_ERR_INVALID);
    CU_ASSERT_TRUE(acc_name_valid("fzj-xd1", 64));
    CU_ASSERT_FALSE(acc_name_valid("a b", 64));
    CU_ASSERT_FALSE(acc_name_valid("../etc", 64));
    CU_ASSERT_FALSE(acc_name_valid("a/b", 64));
    CU_ASSERT_FALSE(acc_name_valid("", 64));
}

static void test_errors(void)
{
    struct acc_error err;
    CU_ASSERT_EQUAL(acc_error_set(&err, ACC_ERR_NO_SLOT, "first %d", 1), ACC_ERR_NO_SLOT);
    acc_error_append(&err, "second");
    CU_ASSERT_STRING_EQUAL(err.msg, "first 1\nsecond");
    acc_error_prefix(&err, "site %s", "x");
    CU_ASSERT_STRING_EQUAL(err.msg, "site x: first 1\nsecond");
    CU_ASSERT_EQUAL(acc_err_http_status(ACC_ERR_NO_SLOT), 409);
    CU_ASSERT_EQUAL(acc_err_http_status(ACC_ERR_TOO_LARGE), 413);
    CU_ASSERT_EQUAL(acc_err_http_status(ACC_ERR_UNAVAILABLE), 503);
    CU_ASSERT_EQUAL(acc_err_http_status((acc_err)999), 500);
    /* Every code has a distinct symbol. */
    for (int i = 0; i < ACC_ERR__COUNT; i++) {
        CU_ASSERT_PTR_NOT_NULL(acc_err_symbol((acc_err)i));
        for (int j = 0; j < i; j++)
            CU_ASSERT_STRING_NOT_EQUAL(acc_err_symbol((acc_err)i), acc_err_symbol((acc_err)j));
    }
}

/* Found by fuzzing the configuration (tests/fuzz/fuzz_config): a host number
 * at LONG_MAX overflowed the expansion loop (undefined; in practice an endless
 * loop that eats memory), and ranges under ranges multiplied past any bound
 * ("a[1-99999][1-99999]": ten billion names).  Regression inputs:
 * tests/data/fuzz/config-hostlist-*.ini. */
static void test_hostlist_bounds(void)
{
    struct acc_hostlist h = {0};
    static const char *const bad[] = {
        "n[9223372036854775807]",  "n[9223372036854775806-9223372036854775807]",
        "n[18446744073709551616]", "n[1000000000]",
        "a[1-99999][1-99999]",     "a[1-1000],b[1-1000][1-100]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(acc_hostlist_expand(bad[i], &h), ACC_ERR_INVALID);
        acc_hostlist_release(&h);
    }
    /* The bounds leave room for real clusters. */
    ACC_ASSERT_OK(acc_hostlist_expand("n[999999998-999999999],r[1-300][1-300]", &h));
    CU_ASSERT_EQUAL(h.n, 2 + 300 * 300);
    acc_hostlist_release(&h);
}

static void test_proc(void)
{
    struct acc_proc_result r;
    struct acc_error err;
    const char *echo[] = {"echo", "hi there", NULL};
    ACC_ASSERT_OK(acc_proc_run(echo, NULL, NULL, 5000, 1024, &r, &err));
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_STRING_EQUAL(r.out, "hi there\n");
    acc_proc_result_release(&r);

    const char *sh[] = {"/bin/sh", "-c", "echo $ACC_X; echo oops >&2; exit 3", NULL};
    const char *env[] = {"ACC_X=from-env", NULL};
    ACC_ASSERT_OK(acc_proc_run(sh, env, NULL, 5000, 1024, &r, &err));
    CU_ASSERT_EQUAL(r.status, 3);
    CU_ASSERT_STRING_EQUAL(r.out, "from-env\n");
    CU_ASSERT_STRING_EQUAL(r.err, "oops\n");
    acc_proc_result_release(&r);

    const char *cat[] = {"cat", NULL};
    ACC_ASSERT_OK(acc_proc_run(cat, NULL, "fed through stdin", 5000, 1024, &r, &err));
    CU_ASSERT_STRING_EQUAL(r.out, "fed through stdin");
    acc_proc_result_release(&r);

    /* Output is bounded; the program still runs to its end. */
    const char *yes[] = {"/bin/sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x", NULL};
    ACC_ASSERT_OK(acc_proc_run(yes, NULL, NULL, 5000, 1000, &r, &err));
    CU_ASSERT_EQUAL(r.out_len, 1000);
    CU_ASSERT_EQUAL(r.status, 0);
    acc_proc_result_release(&r);

    /* Past the limit the whole process group dies, grandchildren too. */
    const char *slow[] = {"/bin/sh", "-c", "sleep 30 & sleep 30", NULL};
    int64_t t0 = acc_mono_us();
    CU_ASSERT_EQUAL(acc_proc_run(slow, NULL, NULL, 200, 1024, &r, &err), ACC_ERR_TIMEOUT);
    CU_ASSERT_TRUE(r.timed_out);
    CU_ASSERT_TRUE(acc_mono_us() - t0 < 3000000);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "200 ms"));
    acc_proc_result_release(&r);

    const char *none[] = {"/nonexistent/program", NULL};
    CU_ASSERT_EQUAL(acc_proc_run(none, NULL, NULL, 1000, 1024, &r, &err), ACC_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/program"));
    acc_proc_result_release(&r);
}

/* Standard error into a temporary file while fn logs; the file's text. */
static char *captured_log(bool journal, void (*fn)(void))
{
    char path[] = "/tmp/acc-log-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    unlink(path);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    struct stat st;
    fstat(fd, &st);
    char v[64];
    /* Another file's inode: not the journal. */
    snprintf(v, sizeof v, "%llu:%llu", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino + (journal ? 0 : 1));
    setenv("JOURNAL_STREAM", v, 1);
    CU_ASSERT_EQUAL(acc_log_detect_journal(), journal);
    fn();
    dup2(saved, STDERR_FILENO);
    close(saved);
    unsetenv("JOURNAL_STREAM");
    acc_log_detect_journal();
    static char text[1024];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    text[n > 0 ? n : 0] = '\0';
    return text;
}

static void log_each_level(void)
{
    acc_log_set_level(ACC_LOG_DEBUG);
    acc_log_error("broken %d", 1);
    acc_log_warn("odd");
    acc_log_info("fine");
    acc_log_debug("detail");
    acc_log_set_level(ACC_LOG_INFO);
    acc_log_debug("not shown");
}

static void test_log_journal(void)
{
    const char *t = captured_log(true, log_each_level);
    CU_ASSERT_STRING_EQUAL(t, "<3>broken 1\n<4>odd\n<6>fine\n<7>detail\n");
    t = captured_log(false, log_each_level);
    /* 2026-11-27T12:00:00.123Z accordd error: broken 1 */
    CU_ASSERT_EQUAL(strlen(t) > 25 ? t[4] : 0, '-');
    CU_ASSERT_EQUAL(strlen(t) > 25 ? t[23] : 0, 'Z');
    CU_ASSERT_PTR_NOT_NULL(strstr(t, " accordd error: broken 1\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t, " accordd warn: odd\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t, " accordd info: fine\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t, " accordd debug: detail\n"));
    CU_ASSERT_PTR_NULL(strstr(t, "<3>"));
    CU_ASSERT_PTR_NULL(strstr(t, "not shown"));
    /* Nonsense in the variable is no journal. */
    setenv("JOURNAL_STREAM", "garbage", 1);
    CU_ASSERT_FALSE(acc_log_detect_journal());
    unsetenv("JOURNAL_STREAM");
    CU_ASSERT_FALSE(acc_log_detect_journal());
}

static void log_forgeries(void)
{
    /* what a client could put in a path, a header or a certificate */
    acc_log_warn("peer %s", "CN=x\r\n<3>forged line\x1b[2J");
    acc_log_warn("path %s", "/a\xc2\x9b"
                            "31m\xe2\x80\xa8z\xe2\x80\xae"
                            "evil\xff.");
    acc_log_warn("fine: caf\xc3\xa9 \\x41 \xe2\x82\xac");
}

/* Every line is one line and drives no terminal, whatever a message holds:
 * CR, LF, ESC, C1's CSI (U+009B), U+2028, a bidirectional override and a
 * byte that is not UTF-8 are written \xHH; printable UTF-8 stays. */
static void test_log_forgeries(void)
{
    const char *t = captured_log(true, log_forgeries);
    CU_ASSERT_STRING_EQUAL(t, "<4>peer CN=x\\x0D\\x0A<3>forged line\\x1B[2J\n"
                              "<4>path /a\\xC2\\x9B31m\\xE2\\x80\\xA8z\\xE2\\x80\\xAEevil\\xFF.\n"
                              "<4>fine: caf\xc3\xa9 \\x41 \xe2\x82\xac\n");
}

/* Host and Origin authorities, and the names a server answers to. */
static void test_hostnames(void)
{
    static const struct {
        const char *in, *host;
        unsigned port;
    } split[] = {
        {"a.example:8080", "a.example", 8080},
        {"a.example", "a.example", 0},
        {"[::1]:80", "::1", 80},
        {"[::1]", "::1", 0},
        {"::1", "::1", 0},
        {"127.0.0.1:65535", "127.0.0.1", 65535},
    };
    for (size_t i = 0; i < sizeof split / sizeof split[0]; i++) {
        const char *h = NULL;
        size_t n = 0;
        unsigned port = 1;
        CU_ASSERT_TRUE(acc_hostport_split(split[i].in, strlen(split[i].in), &h, &n, &port));
        CU_ASSERT_TRUE(h && n == strlen(split[i].host) && !memcmp(h, split[i].host, n));
        CU_ASSERT_EQUAL(port, split[i].port);
    }
    const char *bad[] = {"a:", "a:0", "a:65536", "a:8x", "[::1", "[]", ":80", "[::1]x", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *h;
        size_t n;
        unsigned port;
        CU_ASSERT_FALSE(acc_hostport_split(bad[i], strlen(bad[i]), &h, &n, &port));
    }
    struct acc_hostnames names;
    struct acc_error err;
    ACC_ASSERT_OK(acc_hostnames_init(&names, "Accord.Example.org, [::1] 10.0.0.5", NULL, &err));
    CU_ASSERT_TRUE(acc_hostnames_has(&names, "accord.example.ORG.", 19));
    CU_ASSERT_TRUE(acc_hostnames_has(&names, "::1", 3));
    CU_ASSERT_FALSE(acc_hostnames_has(&names, "127.0.0.1", 9)); /* not named, not the default */
    CU_ASSERT_FALSE(acc_hostnames_has(&names, "accord.example.org.evil", 23));
    acc_hostnames_release(&names);
    /* the default of a loopback server: loopback, its address */
    ACC_ASSERT_OK(acc_hostnames_init(&names, NULL, "127.0.0.1", &err));
    CU_ASSERT_TRUE(acc_hostnames_has(&names, "127.3.2.1", 9));
    CU_ASSERT_TRUE(acc_hostnames_has(&names, "localhost", 9));
    CU_ASSERT_FALSE(acc_hostnames_has(&names, "localhost.evil", 14));
    CU_ASSERT_FALSE(acc_hostnames_has(&names, "128.0.0.1", 9));
    acc_hostnames_release(&names);
    /* listening on every address: also its interfaces' (loopback is one) */
    ACC_ASSERT_OK(acc_hostnames_init(&names, NULL, "0.0.0.0", &err));
    CU_ASSERT_TRUE(names.n >= 1);
    CU_ASSERT_FALSE(acc_hostnames_has(&names, "rebound.example", 15));
    acc_hostnames_release(&names);
    ACC_ASSERT_OK(acc_hostnames_init(&names, "*", NULL, &err));
    CU_ASSERT_TRUE(acc_hostnames_has(&names, "anything", 8));
    acc_hostnames_release(&names);
    CU_ASSERT_EQUAL(acc_hostnames_init(&names, "a b/c", NULL, &err), ACC_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'b/c'"));
}

/* A database's name without its secrets: libpq's key=value form, URLs
 * (the user's password, secret parameters, percent-encoded too), a file as
 * it is; the secrets out of a message that quotes them. */
/* The process figures: each read on Linux, plausible, and an open file
 * counted; the text has the names every exporter gives. */
static void test_procstat(void)
{
    struct acc_procstat a, b;
    acc_procstat_read(&a);
    CU_ASSERT_TRUE(a.has_cpu && a.has_memory && a.has_fds && a.has_start);
    CU_ASSERT(a.cpu_seconds >= 0);
    CU_ASSERT(a.resident > 0 && a.virtual_size >= a.resident);
    CU_ASSERT(a.open_fds >= 3); /* stdin, stdout, stderr at least */
    double now = (double)acc_now();
    CU_ASSERT(a.start_time > now - 3600 && a.start_time <= now + 1);
    FILE *f = fopen("/dev/null", "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    acc_procstat_read(&b);
    fclose(f);
    CU_ASSERT_EQUAL(b.open_fds, a.open_fds + 1);
    CU_ASSERT_EQUAL(b.start_time, a.start_time);
    struct acc_buf out = ACC_BUF_INIT;
    acc_procstat_metrics(&out);
    const char *t = acc_buf_str(&out);
    const char *want[] = {"# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total ",
                          "# TYPE process_resident_memory_bytes gauge\n",
                          "# TYPE process_open_fds gauge\nprocess_open_fds ",
                          "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds "};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        CU_ASSERT_PTR_NOT_NULL(strstr(t, want[i]));
    acc_buf_release(&out);
}

static void test_db_shown(void)
{
    static const struct {
        const char *db, *shown;
    } cases[] = {
        {"host=/tmp port=5 dbname=x user=u password=secret", "host=/tmp port=5 dbname=x user=u"},
        {"password=secret host=/tmp", "host=/tmp"},
        {"host=h  password = 'se cr\\'et'\tsslpassword=pass2 dbname=x", "host=h dbname=x"},
        {"host=h password=a\\ b dbname=x", "host=h dbname=x"},
        {"host=h PASSWORD=secret", "host=h"},
        {"host=h password secret dbname=x", "host=h"}, /* broken: the rest hidden */
        {"postgresql://accord:s3cret@db1,db2:5433/accord?sslmode=require",
         "postgresql://accord@db1,db2:5433/accord?sslmode=require"},
        {"postgresql://accord@db/accord?password=s3cret&sslmode=require&sslpassword=k3y",
         "postgresql://accord@db/accord?sslmode=require"},
        {"postgres://db/accord?pass%77ord=s3cret", "postgres://db/accord"},
        {"postgresql://u:pa?ss@db/accord", "postgresql://u@db/accord"},
        {"postgresql://u:pa/ss@db/accord", "postgresql://u@db/accord"},
        {"postgresql://[::1]:5432/accord?application_name=a@b",
         "postgresql://[::1]:5432/accord?application_name=a@b"},
        {"/var/lib/accord/accord.db", "/var/lib/accord/accord.db"},
        {"my dir/a=b.db", "my dir/a=b.db"},
        {"/data/host=x password.db", "/data/host=x password.db"},
        {"x.db password=secret", "x.db"},
        {":memory:", ":memory:"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = acc_db_shown(cases[i].db);
        CU_ASSERT_PTR_NOT_NULL_FATAL(got);
        if (strcmp(got, cases[i].shown) != 0)
            fprintf(stderr, "\n  case %zu: '%s' shown as '%s'\n", i, cases[i].db, got);
        CU_ASSERT_STRING_EQUAL(got, cases[i].shown);
        free(got);
    }
    CU_ASSERT_TRUE(acc_db_is_conninfo("host=/tmp port=5 dbname=x user=u password=secret"));
    CU_ASSERT_TRUE(acc_db_is_conninfo("  dbname = accord"));
    CU_ASSERT_FALSE(acc_db_is_conninfo("accord.db"));
    CU_ASSERT_FALSE(acc_db_is_conninfo("a=b.db"));
    CU_ASSERT_FALSE(acc_db_is_conninfo("host"));
    CU_ASSERT_FALSE(acc_db_is_conninfo("/data/host=x.db"));
    CU_ASSERT_TRUE(acc_db_is_conninfo("x.db password=secret"));
    CU_ASSERT_FALSE(acc_db_is_conninfo("postgresql://u@h/db?host=x"));

    char msg[160] = "invalid percent-encoded token: \"s3%2\" in \"postgresql://u:s3%2@h/d\"";
    acc_db_scrub(msg, sizeof msg, "postgresql://u:s3%2@h/d");
    CU_ASSERT_STRING_EQUAL(msg,
                           "invalid percent-encoded token: \"***\" in \"postgresql://u:***@h/d\"");
    snprintf(msg, sizeof msg, "bad: p@ss and 'a b' and x");
    acc_db_scrub(msg, sizeof msg, "postgresql://u:p%40ss@h/d?sslpassword=x");
    CU_ASSERT_STRING_EQUAL(msg, "bad: *** and 'a b' and ***");
    snprintf(msg, sizeof msg, "missing value near 'se cr'et'");
    acc_db_scrub(msg, sizeof msg, "host=h password='se cr\\'et'");
    CU_ASSERT_STRING_EQUAL(msg, "missing value near '***'");
}

static const struct acc_test_case tests[] = {
    {"host names and authorities", test_hostnames},
    {"log lines in a terminal and in the journal", test_log_journal},
    {"log lines cannot be forged nor drive a terminal", test_log_forgeries},
    {"child processes", test_proc},
    {"time round trip", test_time_roundtrip},
    {"time offsets and fractions", test_time_offsets_and_fractions},
    {"time rejects", test_time_rejects},
    {"time bounds", test_time_bounds},
    {"durations", test_duration},
    {"ids", test_ids},
    {"buffers", test_buf},
    {"map", test_map},
    {"numbers and names", test_numbers},
    {"errors", test_errors},
    {"host list bounds", test_hostlist_bounds},
    {"databases shown without their secrets", test_db_shown},
    {"process figures from /proc/self", test_procstat},
    {NULL, NULL},
};

const struct acc_test_suite acc_test_suites[] = {
    {"common", NULL, NULL, tests},
    {NULL, NULL, NULL, NULL},
};
