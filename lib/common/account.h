/* SPDX-License-Identifier: Apache-2.0 */
/* account.h - the Unix accounts that programs are started as (the meta-jobs
 * of accordd's launcher, the Hydra proxies of accord-site), and what
 * privileges this process holds.
 *
 * A program is never started as root: a lookup of an account whose uid is 0
 * fails, and acc_proc_start_as (proc.h) checks again in the child. */
#ifndef ACC_ACCOUNT_H
#define ACC_ACCOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

#define ACC_ACCOUNT_NAME_MAX 64
#define ACC_ACCOUNT_GROUPS   64

struct acc_account {
    char name[ACC_ACCOUNT_NAME_MAX];
    uid_t uid;
    gid_t gid;
    gid_t groups[ACC_ACCOUNT_GROUPS]; /* its supplementary groups (the first ones) */
    size_t n_groups;
};

/* The account called name.  ACC_ERR_CONFIG when there is none, or when it
 * is root ("... is root: programs are never started as root"). */
acc_err acc_account_lookup(const char *name, struct acc_account *out, struct acc_error *err);

/* This process's own account (its effective uid); its uid may be 0. */
acc_err acc_account_self(struct acc_account *out, struct acc_error *err);

/* Whether this process may start programs as another account and look
 * after their directories: it holds CAP_SETUID, CAP_SETGID, CAP_CHOWN and
 * CAP_DAC_OVERRIDE (root does; a service may be given just these). */
bool acc_account_can_switch(void);

/* "accord (uid 998), capabilities: cap_net_admin" or "..., capabilities:
 * none": for the log line a daemon writes when it starts. */
void acc_account_describe_self(char *buf, size_t len);

#endif
