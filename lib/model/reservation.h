/* SPDX-License-Identifier: Apache-2.0 */
/* reservation.h - what is asked of a resource manager and what it answers,
 * as plain values: a resource and an amount, a reservation, a job to start
 * inside one, the endpoints of a link's traffic, what the data plane did,
 * and health.
 *
 * These are the values of the adapter interface (adapters/adapter.h) and of
 * the adapter protocol (lib/proto), which carries them between accordd and a
 * site daemon; they live here, below both, so that neither has to include
 * the other.
 */
#ifndef ACC_RESERVATION_H
#define ACC_RESERVATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/timefmt.h"
#include "identity.h"
#include "model.h"

/* Capabilities: ask "can it do X?", never "which adapter is it?". */
enum {
    ACC_CAP_NODES = 1u << 0,      /* reserves nodes on a cluster (batch adapter) */
    ACC_CAP_BANDWIDTH = 1u << 1,  /* reserves bandwidth on links (network adapter) */
    ACC_CAP_SUBMIT = 1u << 2,     /* can start a job inside a reservation */
    ACC_CAP_NODE_NAMES = 1u << 3, /* reports the node names of a reservation */
    ACC_CAP_THREADSAFE = 1u << 4, /* calls may run concurrently */
    ACC_CAP_FAULTS = 1u << 5,     /* takes fault-injection controls (simulators) */
    /* installs what a reservation guarantees on the wire at its start */
    ACC_CAP_PROVISION = 1u << 6,
    /* books a changed reservation beside the one it replaces, counting the
     * old one's amount as free (preview_replacing, reserve_replacing) */
    ACC_CAP_REPLACE = 1u << 7,
    /* gives the command that starts one process on one host of a
     * reservation through the batch system (process_command, version 7) */
    ACC_CAP_PROCESS = 1u << 8,
};

/* What is asked of an adapter: `amount` nodes of site `name`, or `amount`
 * Mbit/s on link `name`. */
struct acc_resource {
    enum acc_resource_kind kind;
    const char *name;
    int64_t amount;
    /* The local account the reservation is for (Slurm's Users=, Grid
     * Engine's qrsub -u): only that account's jobs may run in it.  NULL:
     * none named (the adapter's own user's reservation, as before). */
    const char *account;
    /* Whom the reservation is for, as the broker knows them: sent to a
     * remote site, which maps it to an account of its own.  NULL: no one
     * named (as before). */
    const struct acc_identity *identity;
};

/* A reservation as the adapter sees it. */
struct acc_reservation {
    char local_id[ACC_LOCAL_ID_MAX];
    acc_time start, end;
    int64_t amount;
    char *nodes; /* comma-separated node names (malloc'd) or NULL */
};

void acc_reservation_release(struct acc_reservation *r);

/* A component's job, to start inside its reservation (ACC_CAP_SUBMIT). */
struct acc_job {
    const char *key;      /* reservation key */
    const char *local_id; /* the adapter's reservation id */
    int64_t nodes, ppn;
    const char *executable;
    const char *const *args;
    size_t n_args;
    const char *directory;
    const char *output;     /* file for the job's standard output, or NULL */
    acc_time end;           /* the reservation's end: the job must be done by then */
    const char *const *env; /* "NAME=value" entries set for the job; NULL-terminated, or NULL */
    /* version 4: the one host of the reservation the job starts on (a Hydra
     * proxy of a meta-job launched across domains), or NULL: the whole
     * reservation */
    const char *host;
    /* the account the job runs as when the submitter may choose (Slurm's
     * sbatch --uid from root); NULL: the submitter's own.  Not sent to a
     * remote site: its daemon runs jobs as its own job user. */
    const char *user;
    /* whom the job is for (sent to a remote site, which maps it to its own
     * account and runs the job as that); NULL: no one named */
    const struct acc_identity *identity;
};

/* Where a submitted job stands. */
struct acc_job_status {
    bool done;       /* it ended: exit_status and signal say how */
    int exit_status; /* -1: unknown */
    int signal;      /* 0: none */
    char state[32];  /* the resource manager's own word (RUNNING, COMPLETED...) */
};

/* The endpoints of the traffic a link reservation carries: every address of
 * side a with every address of side b, both directions. */
struct acc_flow {
    const char *site_a, *site_b; /* the link's two sites */
    /* IPv4 dotted quads of side a's hosts, and of side b's */
    const char *const *addrs_a;
    size_t n_a;
    const char *const *addrs_b;
    size_t n_b;
};

/* A guarantee term's state (NSI): NotDetermined before the start, Fulfilled
 * while the data plane has been in place since the start, Violated (for
 * good) once it was found missing or came late. */
enum acc_guarantee {
    ACC_GUARANTEE_NOT_DETERMINED,
    ACC_GUARANTEE_FULFILLED,
    ACC_GUARANTEE_VIOLATED,
};

/* What the data plane of one reservation did (provision_status). */
struct acc_provision_status {
    bool provisioned;         /* endpoints were handed over */
    bool active;              /* its classes are in the kernel now */
    acc_time start, end;      /* the reservation */
    acc_time activated;       /* first time its classes were in place; 0: never */
    enum acc_guarantee state; /* see enum acc_guarantee */
    acc_time violated_at;     /* first violation; 0: none */
    char why[256];            /* the first violation in words */
    /* carried by its classes (summed over devices, both directions) */
    uint64_t bytes, packets, drops;
};

struct acc_health {
    bool up;
    char detail[256];
    /* version 4: the round trip of the health call to a remote site daemon
     * (0: not measured: an in-process adapter), and where it is ("" for
     * in-process adapters; the site daemon's URL for remote ones) */
    int64_t rtt_us;
    char endpoint[128];
};

#endif
