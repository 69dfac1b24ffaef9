/* SPDX-License-Identifier: Apache-2.0 */
/* account.c - Unix accounts by name, this process's own, and the
 * capabilities it holds (from /proc/self/status). */
#define _GNU_SOURCE /* getgrouplist */
#include "account.h"

#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strutil.h"

static void fill(struct acc_account *out, const struct passwd *pw)
{
    memset(out, 0, sizeof *out);
    acc_strlcpy(out->name, pw->pw_name, sizeof out->name);
    out->uid = pw->pw_uid;
    out->gid = pw->pw_gid;
    int n = ACC_ACCOUNT_GROUPS;
    if (getgrouplist(pw->pw_name, pw->pw_gid, out->groups, &n) < 0) {
        /* more than we keep: the primary group alone is the safe choice */
        out->groups[0] = pw->pw_gid;
        n = 1;
    }
    out->n_groups = (size_t)n;
}

static acc_err by(const char *name, uid_t uid, struct acc_account *out, struct acc_error *err)
{
    struct passwd pw, *found = NULL;
    char buf[4096];
    int e = name ? getpwnam_r(name, &pw, buf, sizeof buf, &found)
                 : getpwuid_r(uid, &pw, buf, sizeof buf, &found);
    if (e != 0 || !found) {
        if (name)
            return acc_error_set(err, ACC_ERR_CONFIG, "account %s: %s", name,
                                 e ? strerror(e) : "no such user");
        return acc_error_set(err, ACC_ERR_CONFIG, "uid %ld: %s", (long)uid,
                             e ? strerror(e) : "no such user");
    }
    if (strlen(pw.pw_name) >= sizeof out->name)
        return acc_error_set(err, ACC_ERR_CONFIG, "account %.32s...: name too long", pw.pw_name);
    fill(out, &pw);
    return ACC_OK;
}

acc_err acc_account_lookup(const char *name, struct acc_account *out, struct acc_error *err)
{
    if (!name || !*name)
        return acc_error_set(err, ACC_ERR_CONFIG, "no account named");
    acc_err rc = by(name, 0, out, err);
    if (!rc && out->uid == 0)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "account %s is root (uid 0): programs are never started as root",
                             name);
    return rc;
}

acc_err acc_account_self(struct acc_account *out, struct acc_error *err)
{
    return by(NULL, geteuid(), out, err);
}

/* The effective capability set, from /proc/self/status; 0 when unknown. */
static uint64_t effective_caps(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return 0;
    char line[256];
    uint64_t caps = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "CapEff:", 7) == 0) {
            caps = strtoull(line + 7, NULL, 16);
            break;
        }
    }
    fclose(f);
    return caps;
}

#define CAP_BIT(n) ((uint64_t)1 << (n))
enum { CHOWN = 0, DAC_OVERRIDE = 1, SETGID = 6, SETUID = 7 };

bool acc_account_can_switch(void)
{
    uint64_t need = CAP_BIT(CHOWN) | CAP_BIT(DAC_OVERRIDE) | CAP_BIT(SETGID) | CAP_BIT(SETUID);
    return (effective_caps() & need) == need;
}

static const char *const cap_names[] = {"cap_chown",
                                        "cap_dac_override",
                                        "cap_dac_read_search",
                                        "cap_fowner",
                                        "cap_fsetid",
                                        "cap_kill",
                                        "cap_setgid",
                                        "cap_setuid",
                                        "cap_setpcap",
                                        "cap_linux_immutable",
                                        "cap_net_bind_service",
                                        "cap_net_broadcast",
                                        "cap_net_admin",
                                        "cap_net_raw",
                                        "cap_ipc_lock",
                                        "cap_ipc_owner",
                                        "cap_sys_module",
                                        "cap_sys_rawio",
                                        "cap_sys_chroot",
                                        "cap_sys_ptrace",
                                        "cap_sys_pacct",
                                        "cap_sys_admin",
                                        "cap_sys_boot",
                                        "cap_sys_nice",
                                        "cap_sys_resource",
                                        "cap_sys_time",
                                        "cap_sys_tty_config",
                                        "cap_mknod",
                                        "cap_lease",
                                        "cap_audit_write",
                                        "cap_audit_control",
                                        "cap_setfcap",
                                        "cap_mac_override",
                                        "cap_mac_admin",
                                        "cap_syslog",
                                        "cap_wake_alarm",
                                        "cap_block_suspend",
                                        "cap_audit_read",
                                        "cap_perfmon",
                                        "cap_bpf",
                                        "cap_checkpoint_restore"};
#define N_CAPS (sizeof cap_names / sizeof cap_names[0])

void acc_account_describe_self(char *buf, size_t len)
{
    struct acc_account me;
    struct acc_error e;
    size_t at = 0;
    if (acc_account_self(&me, &e) == ACC_OK)
        at = (size_t)snprintf(buf, len, "%s (uid %ld), capabilities: ", me.name, (long)me.uid);
    else
        at = (size_t)snprintf(buf, len, "uid %ld, capabilities: ", (long)geteuid());
    uint64_t caps = effective_caps();
    uint64_t known = CAP_BIT(N_CAPS) - 1;
    if (at >= len)
        return;
    if ((caps & known) == known) {
        snprintf(buf + at, len - at, "all");
        return;
    }
    if (!caps) {
        snprintf(buf + at, len - at, "none");
        return;
    }
    /* most of them (root in a container): the few it lacks are shorter */
    size_t held = 0;
    for (size_t i = 0; i < N_CAPS; i++)
        held += (caps & CAP_BIT(i)) != 0;
    bool but = held > N_CAPS / 2;
    if (but)
        at += (size_t)snprintf(buf + at, len - at, "all but ");
    const char *sep = "";
    for (size_t i = 0; i < (but ? N_CAPS : 64) && at < len; i++) {
        if (((caps & CAP_BIT(i)) != 0) == but)
            continue;
        int n = i < N_CAPS ? snprintf(buf + at, len - at, "%s%s", sep, cap_names[i])
                           : snprintf(buf + at, len - at, "%scap_%zu", sep, i);
        at += n > 0 ? (size_t)n : 0;
        sep = ",";
    }
}
