/* SPDX-License-Identifier: Apache-2.0 */
/* site_jobs_int.h - shared by site_jobs.c (the table, starting and stopping
 * proxies) and site_jobs_record.c (a job's files); nothing else includes
 * it.  Internal names start with sjobs_. */
#ifndef ACC_SITE_JOBS_INT_H
#define ACC_SITE_JOBS_INT_H

#include <pthread.h>
#include <sys/types.h>

#include "site_jobs.h"

#define MAX_GROUPS 64

struct site_job {
    char id[ACC_SITE_JOB_ID_MAX];
    char peer[256], key[96], host[64];
    pid_t pid;
    int64_t pid_start;
    acc_time end;
    bool child; /* ours to reap (started by this process) */
    bool done;
    struct acc_job_status st;
};

/* Whom a job runs as. */
struct sjobs_account {
    char name[64];
    uid_t uid;
    gid_t gid;
    gid_t groups[MAX_GROUPS];
    int n_groups;
};

struct acc_site_jobs {
    char *dir, *proxy;
    struct sjobs_account user; /* the job user: jobs that name no account */
    struct acc_adapter *batch; /* the batch adapter's process command, or NULL */
    struct acc_site_cidr *nets;
    size_t n_nets, max_jobs, output_limit;
    pthread_mutex_t lock;
    struct site_job *jobs;
    size_t n;
    unsigned seq;
};

/* DIRECTORY/ID, or DIRECTORY/ID/name: the job's directory (the job's
 * account owns it) and the files the proxy's wrapper writes there. */
void sjobs_dir_path(const struct acc_site_jobs *j, const char *id, const char *name, char *out,
                    size_t len);
/* DIRECTORY/ID + suffix (".job", ".cancelled"): the daemon's own files. */
void sjobs_record_path(const struct acc_site_jobs *j, const char *id, const char *suffix, char *out,
                       size_t len);
/* Writes DIRECTORY/ID.job; false when it could not. */
bool sjobs_write_record(struct acc_site_jobs *j, const struct site_job *x);
/* Removes the job's directory, its files and its record. */
void sjobs_remove(struct acc_site_jobs *j, const char *id);
/* Settles x (done, its outcome from status and .cancelled) when its
 * process group's leader is gone. */
void sjobs_settle(struct acc_site_jobs *j, struct site_job *x);
/* Finds the jobs of an earlier run in the directory again (and j->seq past
 * theirs); ACC_ERR_CONFIG when the directory cannot be read. */
acc_err sjobs_load_existing(struct acc_site_jobs *j, struct acc_error *err);

#endif
