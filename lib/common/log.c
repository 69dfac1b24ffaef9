/* SPDX-License-Identifier: Apache-2.0 */
#include "log.h"

#include <stdint.h>

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "utf8.h"

static atomic_int current_level = ACC_LOG_INFO;
/* Set once at start-up, before any thread logs. */
static const char *program = "accordd";
/* Whether standard error is the journal: -1 not looked at yet. */
static atomic_int journal = -1;

void acc_log_set_program(const char *name)
{
    program = name;
}

static const char *const names[] = {"error", "warn", "info", "debug"};
/* syslog's priorities (sd-daemon.h's SD_ERR, SD_WARNING, SD_INFO, SD_DEBUG). */
static const char *const priorities[] = {"<3>", "<4>", "<6>", "<7>"};

void acc_log_set_level(enum acc_log_level level)
{
    atomic_store(&current_level, (int)level);
}

bool acc_log_enabled(enum acc_log_level level)
{
    return (int)level <= atomic_load(&current_level);
}

bool acc_log_parse_level(const char *s, enum acc_log_level *out)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (enum acc_log_level)i;
            return true;
        }
    }
    return false;
}

/* systemd sets JOURNAL_STREAM=DEV:INODE for a service whose standard error
 * is a stream to journald; standard error redirected since (a shell's 2>)
 * is another file, so the pair is compared with what fstat says. */
static bool stderr_is_journal(void)
{
    const char *v = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    char end;
    if (!v || sscanf(v, "%llu:%llu%c", &dev, &ino, &end) != 2)
        return false;
    struct stat st;
    if (fstat(STDERR_FILENO, &st) != 0)
        return false;
    return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

bool acc_log_detect_journal(void)
{
    bool j = stderr_is_journal();
    atomic_store(&journal, j ? 1 : 0);
    return j;
}

/* The start of a line: "<3>" for the journal, which stamps the time and the
 * program itself; else the time, the program and the level. */
static int line_head(char *line, size_t size, enum acc_log_level level)
{
    int j = atomic_load(&journal);
    if (j < 0)
        j = acc_log_detect_journal();
    if (j)
        return snprintf(line, size, "%s", priorities[level]);
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    return snprintf(line, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s: ", tm.tm_year + 1900,
                    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                    ts.tv_nsec / 1000000, program, names[level]);
}

/* Appends message m to line (at *len, room for size bytes) with every
 * character that could end the line, forge another or drive a terminal
 * written as \xHH, a byte each: control characters (CR, LF, ESC, and the
 * C1 controls such as CSI), the line separators and the bidirectional
 * controls, and any byte that is not UTF-8.  Whatever a client sent (a
 * path, a header, a certificate's subject) reaches the log through a
 * message, so every line is made safe here, once. */
static void append_said(char *line, size_t *len, size_t size, const char *m)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = *len;
    const unsigned char *p = (const unsigned char *)m;
    while (*p) {
        uint32_t c;
        size_t n = acc_utf8_decode(p, &c);
        bool bad = n == 0 || acc_utf8_unprintable(c);
        if (n == 0)
            n = 1;
        if (o + (bad ? 4 * n : n) > size)
            break;
        for (size_t i = 0; i < n; i++) {
            if (bad) {
                line[o++] = '\\';
                line[o++] = 'x';
                line[o++] = hex[p[i] >> 4];
                line[o++] = hex[p[i] & 15];
            } else {
                line[o++] = (char)p[i];
            }
        }
        p += n;
    }
    *len = o;
}

void acc_log(enum acc_log_level level, const char *fmt, ...)
{
    if (!acc_log_enabled(level))
        return;
    char msg[2048], line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int n = line_head(line, sizeof line, level);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    append_said(line, &len, sizeof line - 1, msg);
    line[len++] = '\n';
    /* One write per line keeps lines whole when threads log at once. */
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

const char *acc_log_level_name(enum acc_log_level level)
{
    return (unsigned)level < sizeof names / sizeof names[0] ? names[level] : "info";
}
