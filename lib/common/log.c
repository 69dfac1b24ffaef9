#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int current_level = ACC_LOG_INFO;
/* Set once at start-up, before any thread logs. */
static const char *program = "accordd";

void acc_log_set_program(const char *name)
{
    program = name;
}

static const char *const names[] = {"error", "warn", "info", "debug"};

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

void acc_log(enum acc_log_level level, const char *fmt, ...)
{
    if (!acc_log_enabled(level))
        return;
    char line[2048];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof line,
                     "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s: ", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     ts.tv_nsec / 1000000, program, names[level]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    /* One write per line keeps lines whole when threads log at once. */
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}
