/* SPDX-License-Identifier: Apache-2.0 */
/* site_jobs_record.c - what a job of accord-site leaves on disk, read back
 * after a restart of the daemon.
 *
 * The daemon's record of a job (peer, key, host, pid, its start time, the
 * reservation's end) is DIRECTORY/ID.job; the job's directory (DIRECTORY/ID,
 * owned by the job user) holds
 *   output          the proxy's standard output and error, bounded
 *   output.dropped  how many bytes past the bound were dropped
 *   status          the proxy's exit code, written when it ended by itself
 * and is only ever read by the daemon (no links followed, regular files
 * only); DIRECTORY/ID.cancelled marks a job a peer (or the reservation's
 * end) stopped. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/common/proc.h"
#include "../lib/common/strutil.h"
#include "site_jobs_int.h"

#define FILE_MAX 4096

void sjobs_dir_path(const struct acc_site_jobs *j, const char *id, const char *name, char *out,
                    size_t len)
{
    snprintf(out, len, "%s/%s%s%s", j->dir, id, name ? "/" : "", name ? name : "");
}

/* The daemon's own files of a job, DIRECTORY/ID.job (the record) and
 * DIRECTORY/ID.cancelled (a peer or the reservation's end stopped it):
 * beside the job's directory, not in it, since the job user owns that
 * directory and could replace anything in it (a forged pid would be
 * signalled on cancel; a symbolic link written through as root). */
void sjobs_record_path(const struct acc_site_jobs *j, const char *id, const char *suffix, char *out,
                       size_t len)
{
    snprintf(out, len, "%s/%s%s", j->dir, id, suffix);
}

/* At most FILE_MAX bytes of a regular file; NULL otherwise.  Never follows a
 * symbolic link nor blocks on a FIFO: the job user owns the job's directory
 * and may have put either there. */
static char *read_small(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *buf = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? malloc(FILE_MAX + 1) : NULL;
    size_t n = 0;
    while (buf && n < FILE_MAX) {
        ssize_t r = read(fd, buf + n, FILE_MAX - n);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* The value of "name=value" line name in text, copied into out. */
static bool field(const char *text, const char *name, char *out, size_t len)
{
    size_t nl = strlen(name);
    for (const char *p = text; p && *p;) {
        if (strncmp(p, name, nl) == 0 && p[nl] == '=') {
            size_t vl = strcspn(p + nl + 1, "\n");
            if (vl >= len)
                return false;
            memcpy(out, p + nl + 1, vl);
            out[vl] = '\0';
            return true;
        }
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return false;
}

static bool load_job(struct acc_site_jobs *j, const char *id, struct site_job *out)
{
    char path[PATH_MAX], pid[32], start[32], end[32];
    sjobs_record_path(j, id, ".job", path, sizeof path);
    char *text = read_small(path);
    memset(out, 0, sizeof *out);
    int64_t v1, v2, v3;
    struct acc_error ignored;
    bool ok =
        text && field(text, "peer", out->peer, sizeof out->peer) &&
        field(text, "key", out->key, sizeof out->key) &&
        field(text, "host", out->host, sizeof out->host) && field(text, "pid", pid, sizeof pid) &&
        field(text, "pid_start", start, sizeof start) && field(text, "end", end, sizeof end) &&
        !acc_parse_i64(pid, 1, INT_MAX, &v1, &ignored) &&
        !acc_parse_i64(start, 0, INT64_MAX, &v2, &ignored) &&
        !acc_parse_i64(end, 0, INT64_MAX, &v3, &ignored);
    free(text);
    if (!ok)
        return false;
    acc_strlcpy(out->id, id, sizeof out->id);
    out->pid = (pid_t)v1;
    out->pid_start = v2;
    out->end = (acc_time)v3;
    return true;
}

void sjobs_remove(struct acc_site_jobs *j, const char *id)
{
    static const char *const files[] = {"output", "output.dropped", "status", "status.tmp"};
    char path[PATH_MAX];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        sjobs_dir_path(j, id, files[i], path, sizeof path);
        unlink(path);
    }
    sjobs_dir_path(j, id, NULL, path, sizeof path);
    rmdir(path);
    sjobs_record_path(j, id, ".job", path, sizeof path);
    unlink(path);
    sjobs_record_path(j, id, ".cancelled", path, sizeof path);
    unlink(path);
}

/* Settles job x when its process group's leader is gone. */
void sjobs_settle(struct acc_site_jobs *j, struct site_job *x)
{
    if (x->done)
        return;
    if (x->child) {
        int ws;
        pid_t r = waitpid(x->pid, &ws, WNOHANG);
        if (r == 0)
            return;
    } else if (acc_proc_start_time(x->pid) == x->pid_start && x->pid_start != 0) {
        return;
    }
    char path[PATH_MAX];
    sjobs_record_path(j, x->id, ".cancelled", path, sizeof path);
    bool cancelled = access(path, F_OK) == 0;
    sjobs_dir_path(j, x->id, "status", path, sizeof path);
    char *s = read_small(path);
    int64_t code = -1;
    struct acc_error ignored;
    if (!s || acc_parse_i64(s, 0, 255, &code, &ignored))
        code = -1;
    free(s);
    x->done = true;
    x->st.done = true;
    x->st.exit_status = (int)code;
    x->st.signal = cancelled ? SIGTERM : 0;
    acc_strlcpy(x->st.state,
                cancelled   ? "CANCELLED"
                : code == 0 ? "COMPLETED"
                            : "FAILED",
                sizeof x->st.state);
}

bool sjobs_write_record(struct acc_site_jobs *j, const struct site_job *x)
{
    char path[PATH_MAX];
    sjobs_record_path(j, x->id, ".job", path, sizeof path);
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    int n = fprintf(f, "peer=%s\nkey=%s\nhost=%s\npid=%d\npid_start=%" PRId64 "\nend=%" PRId64 "\n",
                    x->peer, x->key, x->host, (int)x->pid, x->pid_start, (int64_t)x->end);
    return (fclose(f) == 0) & (n > 0);
}

acc_err sjobs_load_existing(struct acc_site_jobs *j, struct acc_error *err)
{
    DIR *d = opendir(j->dir);
    if (!d)
        return acc_error_set(err, ACC_ERR_CONFIG, "jobs directory %s: %s", j->dir, strerror(errno));
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        unsigned long long t;
        unsigned seq;
        int used = 0;
        if (de->d_name[0] != 'p' || sscanf(de->d_name, "p%llu-%u%n", &t, &seq, &used) != 2 ||
            (size_t)used >= ACC_SITE_JOB_ID_MAX)
            continue;
        if (seq >= j->seq)
            j->seq = seq + 1;
        if (strcmp(de->d_name + used, ".job") != 0)
            continue; /* a job's directory: its record says the rest */
        char id[ACC_SITE_JOB_ID_MAX];
        snprintf(id, sizeof id, "%.*s", used, de->d_name);
        struct site_job x;
        if (j->n >= j->max_jobs || !load_job(j, id, &x))
            continue;
        j->jobs[j->n++] = x;
        sjobs_settle(j, &j->jobs[j->n - 1]);
    }
    closedir(d);
    return ACC_OK;
}
