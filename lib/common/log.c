#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

void acc_log(enum acc_log_level level, const char *fmt, ...)
{
    if (!acc_log_enabled(level))
        return;
    char line[2048];
    int n = line_head(line, sizeof line, level);
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

const char *acc_log_level_name(enum acc_log_level level)
{
    return (unsigned)level < sizeof names / sizeof names[0] ? names[level] : "info";
}
