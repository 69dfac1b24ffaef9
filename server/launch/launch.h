/* SPDX-License-Identifier: Apache-2.0 */
/* launch.h - from a committed agreement to the command that starts its
 * meta-job.
 *
 *   hosts        per component: the hosts (the node names its reservation
 *                reports, or the first free names of the site's configured
 *                host list) and the site's resource manager contact
 *   descriptions the MetaMPICH meta-configuration and the MPICH-G2
 *                multi-request RSL, as text (docs/launch.md shows both)
 *   command      the mpiexec.hydra command line that runs it here: one MPMD
 *                segment per component, every host in one global -hosts list
 *
 * Pure functions of their inputs: nothing here starts a process, reads the
 * clock or touches the store (launcher.h starts and watches the jobs).
 */
#ifndef ACC_LAUNCH_H
#define ACC_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/error.h"
#include "../config/config.h"
#include "../../lib/model/model.h"

/* One component as it will be started. */
struct acc_launch_comp {
    const struct acc_alloc_component *comp; /* name, site, nodes, ppn, executable, args */
    char **hosts;                           /* comp->nodes host names, in order */
    size_t n_hosts;
    char *contact; /* the site's resourceManagerContact (MPICH-G2) */
    size_t index;  /* of the component in the agreement */
};

struct acc_launch_hosts {
    const struct acc_agreement *agreement; /* borrowed: outlives the hosts */
    struct acc_launch_comp *comps;         /* one per agreement->comps[i] */
    size_t n_comps;
    char *directory;      /* where the job runs and its files are kept */
    unsigned router_port; /* MetaMPICH: component i's router listens on router_port + i */
};

/* Resolves the hosts and contacts of every component of a committed
 * agreement.  Hosts come from the component's node_names when its adapter
 * reported them; otherwise from the site's `hosts` list (default
 * SITE-n[1-NODES]), skipping names that earlier components of the same
 * agreement on the same site already use.  ACC_ERR_INVALID (with the site
 * named) when a site's list is too short or unreadable. */
acc_err acc_launch_hosts_build(const struct acc_agreement *a, const struct acc_config *cfg,
                               const char *directory, struct acc_launch_hosts *out,
                               struct acc_error *err);
void acc_launch_hosts_release(struct acc_launch_hosts *p);

/* The MetaMPICH meta-configuration: NUMHOSTS, one METAHOST block per
 * component (site, nodes, nprocs, ppn, executable, args, router, port), and
 * CONNECTIONS between every pair of components (with the reserved bandwidth
 * where a link of the agreement joins them).  Appends to out; ACC_ERR_INVALID
 * (nothing appended) for hosts with a component without hosts (no router),
 * which acc_launch_hosts_build never makes. */
acc_err acc_launch_metampich(const struct acc_launch_hosts *p, struct acc_buf *out);

/* The MPICH-G2 multi-request RSL: "+" and one subjob per component with
 * resourceManagerContact, count, jobtype=mpi, label, environment
 * (GLOBUS_DUROC_SUBJOB_INDEX i), directory, executable and arguments.
 * Appends to out. */
acc_err acc_launch_rsl(const struct acc_launch_hosts *p, struct acc_buf *out);

/* A NULL-terminated argument vector. */
struct acc_argv {
    char **v;
    size_t n, cap;
};

void acc_argv_release(struct acc_argv *a);
/* Appends a copy of s; false when out of memory. */
bool acc_argv_push(struct acc_argv *a, const char *s);

/* ---- A job in a transient systemd unit of its own (launcher_unit.c) ---- */

/* The slice every job unit is started in: one place for limits that hold
 * for all jobs together (systemctl set-property accord-jobs.slice ...). */
#define ACC_LAUNCH_UNIT_SLICE "accord-jobs.slice"

/* What the unit of one job is made of. */
struct acc_launch_unit {
    const char *name;        /* "accord-job-ID-N.service" (acc_launch_unit_name) */
    const char *description; /* for systemctl status */
    const char *user;        /* the account it runs as; NULL: the caller's own */
    const char *directory;   /* its working directory */
    const char *const *env;  /* NAME=value for the job, NULL-terminated; NULL entries skipped */
    size_t n_env;
    unsigned stop_timeout; /* seconds from SIGTERM to SIGKILL when it is stopped */
    /* systemd gives the directory to user before the job starts (accordd
     * itself may not chown) */
    bool give_directory;
};

/* The unit's name for agreement id, started at unix time n: writes
 * "accord-job-ID-N.service" into out (size > 64); false when id is not a
 * valid unit name part (only [a-z0-9], as agreement ids are). */
bool acc_launch_unit_name(const char *id, long long n, char *out, size_t size);

/* The systemd-run command that starts cmd (argv, NULL-terminated) as the
 * main process of the transient service u, in ACC_LAUNCH_UNIT_SLICE, and
 * returns once it runs: --unit, --description, --slice, --collect (the
 * unit goes once it ended, even when it failed), --quiet, --working-
 * directory, --uid when u->user, TimeoutStopSec, with give_directory an
 * ExecStartPre that chowns the directory (run by systemd, as root), --setenv
 * for each variable, then "--" and cmd with every '$' doubled (systemd would
 * otherwise expand $NAME in them; "$$" is its escape for '$').
 * ACC_ERR_INVALID for a bad name, user, variable, directory or command. */
acc_err acc_launch_unit_command(const struct acc_launch_unit *u, const char *const *cmd,
                                struct acc_argv *out, struct acc_error *err);

/* The mpiexec.hydra command for the hosts (or a part of it: comps may be a
 * subset, each keeping its index) in the given style: the launcher
 * options of lc, -genv for lc's environment, every host in one -hosts list
 * (HOST:PPN per node), then per component ": -n NODES*PPN [-env ...]
 * EXECUTABLE ARGS...".  MetaMPICH runs get METAMPICH_CONFIG=description
 * and METAMPICH_METAHOST per segment; MPICH-G2 runs get
 * GLOBUS_DUROC_SUBJOB_INDEX per segment.  description is the path of the
 * written description file (may be NULL). */
acc_err acc_launch_command(const struct acc_launch_hosts *p, const struct acc_launch_cfg *lc,
                           enum acc_launch style, const char *description, struct acc_argv *out,
                           struct acc_error *err);

/* ---- Hydra's manual launcher (launcher = manual, docs/launch.md) ---- */

/* The most proxies (hosts) and words of one proxy command taken, and the
 * longest HYDRA_LAUNCH line. */
#define ACC_MANUAL_MAX_PROXIES 1024
#define ACC_MANUAL_MAX_WORDS   64
#define ACC_MANUAL_LINE_MAX    4096

/* One proxy command Hydra printed: argv[0] is the proxy's path. */
struct acc_manual_proxy {
    long id; /* --proxy-id */
    char **argv;
    size_t argc;
};

struct acc_manual_launch {
    struct acc_manual_proxy *proxies; /* in the order printed */
    size_t n;
    bool complete; /* HYDRA_LAUNCH_END was seen */
};

/* Reads mpiexec's output so far: every "HYDRA_LAUNCH: CMD..." line up to
 * "HYDRA_LAUNCH_END" (other lines are skipped; a line not yet ended by a
 * newline is left for the next read).  Each command must be words separated
 * by blanks, at most ACC_MANUAL_MAX_WORDS, carrying --proxy-id N with N <
 * n_hosts, each id once, and there must be exactly n_hosts of them once the
 * end is seen.  ACC_ERR_INVALID naming the line; out is empty then.
 * acc_manual_release() it either way. */
acc_err acc_manual_parse(const char *text, size_t len, size_t n_hosts,
                         struct acc_manual_launch *out, struct acc_error *err);
void acc_manual_release(struct acc_manual_launch *m);

/* Host n of the global -hosts list (the hosts of comps[0], then
 * comps[1], ...): its component's index in p->comps and its name; false
 * when there is no such host. */
bool acc_manual_host(const struct acc_launch_hosts *p, size_t n, size_t *comp, const char **host);

/* Appends argv as one shell-quoted line (for people and logs). */
void acc_launch_quote_argv(const struct acc_argv *argv, struct acc_buf *out);

#endif
