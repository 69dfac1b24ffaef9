/* SPDX-License-Identifier: Apache-2.0 */
/* procstat.c - the process figures from /proc/self (procstat.h), in the
 * names and units of Prometheus' client libraries, so that dashboards made
 * for any exporter read them. */
#include "procstat.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The first line of a small /proc file into buf; false when unreadable. */
static bool read_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    return ok;
}

/* /proc/stat's btime: the boot's Unix time; 0 when unknown. */
static long long boot_time(void)
{
    FILE *f = fopen("/proc/stat", "re");
    if (!f)
        return 0;
    char line[256];
    long long bt = 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "btime %lld", &bt) == 1)
            break;
    }
    fclose(f);
    return bt;
}

/* /proc/self/stat: utime, stime (fields 14, 15) and starttime (22), in
 * clock ticks.  The command name (field 2) may hold spaces and parentheses:
 * the fields are counted from after its last ')'. */
static void read_stat(struct acc_procstat *out)
{
    char buf[1024];
    if (!read_line("/proc/self/stat", buf, sizeof buf))
        return;
    const char *p = strrchr(buf, ')');
    if (!p)
        return;
    unsigned long long utime, stime, start;
    /* after ')': state(3) ppid pgrp session tty_nr tpgid flags minflt
     * cminflt majflt cmajflt utime(14) stime(15) cutime cstime priority
     * nice num_threads itrealvalue starttime(22) */
    if (sscanf(p + 1,
               " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d "
               "%*d %llu",
               &utime, &stime, &start) != 3)
        return;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0)
        return;
    out->cpu_seconds = (double)(utime + stime) / (double)hz;
    out->has_cpu = true;
    long long bt = boot_time();
    if (bt > 0) {
        out->start_time = (double)bt + (double)start / (double)hz;
        out->has_start = true;
    }
}

static void read_statm(struct acc_procstat *out)
{
    char buf[256];
    unsigned long long size, resident;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || !read_line("/proc/self/statm", buf, sizeof buf) ||
        sscanf(buf, "%llu %llu", &size, &resident) != 2)
        return;
    out->virtual_size = size * (uint64_t)page;
    out->resident = resident * (uint64_t)page;
    out->has_memory = true;
}

static void read_fds(struct acc_procstat *out)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    uint64_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.')
            n++;
    }
    closedir(d);
    out->open_fds = n > 0 ? n - 1 : 0; /* not the directory's own descriptor */
    out->has_fds = true;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        out->max_fds = (uint64_t)rl.rlim_cur;
}

void acc_procstat_read(struct acc_procstat *out)
{
    memset(out, 0, sizeof *out);
    read_stat(out);
    read_statm(out);
    read_fds(out);
}

static void metric(struct acc_buf *out, const char *name, const char *type, const char *help)
{
    acc_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void acc_procstat_metrics(struct acc_buf *out)
{
    struct acc_procstat st;
    acc_procstat_read(&st);
    if (st.has_cpu) {
        metric(out, "process_cpu_seconds_total", "counter",
               "Total user and system CPU time spent in seconds.");
        acc_buf_printf(out, "process_cpu_seconds_total %.2f\n", st.cpu_seconds);
    }
    if (st.has_memory) {
        metric(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
        acc_buf_printf(out, "process_resident_memory_bytes %" PRIu64 "\n", st.resident);
        metric(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
        acc_buf_printf(out, "process_virtual_memory_bytes %" PRIu64 "\n", st.virtual_size);
    }
    if (st.has_fds) {
        metric(out, "process_open_fds", "gauge", "Number of open file descriptors.");
        acc_buf_printf(out, "process_open_fds %" PRIu64 "\n", st.open_fds);
        if (st.max_fds) {
            metric(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
            acc_buf_printf(out, "process_max_fds %" PRIu64 "\n", st.max_fds);
        }
    }
    if (st.has_start) {
        metric(out, "process_start_time_seconds", "gauge",
               "Start time of the process since unix epoch in seconds.");
        acc_buf_printf(out, "process_start_time_seconds %.2f\n", st.start_time);
    }
}
