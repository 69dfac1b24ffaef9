/* SPDX-License-Identifier: Apache-2.0 */
/* model.h - what Accord talks about: offers, agreements, allocations and the
 * negotiation trace, as plain C data.
 *
 * No module's library types appear here, so the XML module fills these,
 * the store persists them, the engine reports into them and the HTTP layer
 * renders them without any of those knowing each other.  Every string is
 * owned by its struct (malloc'd) and freed by the _release functions.
 */
#ifndef ACC_MODEL_H
#define ACC_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "../common/id.h"
#include "../common/timefmt.h"
#include "identity.h"

/* ------------------------------------------------------------ enumerations */

#define ACC_KEY_MAX      96  /* reservation keys, chosen by Accord */
#define ACC_LOCAL_ID_MAX 128 /* reservation ids, chosen by adapters */

enum acc_resource_kind { ACC_RES_NODES, ACC_RES_BANDWIDTH };
const char *acc_resource_kind_name(enum acc_resource_kind k);

/* WS-Agreement agreement states. */
enum acc_state {
    ACC_STATE_PENDING,
    ACC_STATE_OBSERVED,
    ACC_STATE_REJECTED,
    ACC_STATE_COMPLETE,
    ACC_STATE_TERMINATED,
    ACC_STATE_PENDING_AND_TERMINATING,
    ACC_STATE_OBSERVED_AND_TERMINATING,
    ACC_STATE__COUNT
};

const char *acc_state_name(enum acc_state s);
bool acc_state_parse(const char *s, enum acc_state *out);
/* Rejected, Complete and Terminated never change again. */
bool acc_state_is_final(enum acc_state s);

/* WS-Agreement service term states. */
enum acc_term_state { ACC_TERM_NOT_READY, ACC_TERM_READY, ACC_TERM_PROCESSING, ACC_TERM_COMPLETED };
const char *acc_term_state_name(enum acc_term_state s);

enum acc_strategy { ACC_STRATEGY_DEFAULT, ACC_STRATEGY_INTERSECT, ACC_STRATEGY_ITERATIVE };
const char *acc_strategy_name(enum acc_strategy s);
bool acc_strategy_parse(const char *s, enum acc_strategy *out);

enum acc_launch { ACC_LAUNCH_NONE, ACC_LAUNCH_METAMPICH, ACC_LAUNCH_MPICH_G2 };
const char *acc_launch_name(enum acc_launch l);
bool acc_launch_parse(const char *s, enum acc_launch *out);

/* Whether exe can be a component's program: an absolute path, or a plain
 * name (no '/', found on the PATH) that mpiexec cannot take for one of its
 * own words: not an option ("-genv"), not the ':' between components, no
 * blank; and no control character in either.  ACC_ERR_INVALID with the
 * reason otherwise ("'-genv' would be read by mpiexec as an option ..."). */
acc_err acc_executable_check(const char *exe, struct acc_error *err);

/* ------------------------------------------------------------------- offer */

/* What a component term asks for (docs/policy.md, "Requests"): nodes of
 * its own (co:Component: fixed with a site, non-fixed without), or a total
 * that Accord places (co:Flexible: split over sites by the placement
 * policy, within bounds; co:Total: on one site).  The planner turns a
 * flexible or total request into generated components NAME.1, NAME.2, ...
 * (a total one: NAME) that the agreement shows. */
enum acc_comp_kind { ACC_COMP_SIZED, ACC_COMP_FLEXIBLE, ACC_COMP_TOTAL };

struct acc_component {
    char *name;    /* the ServiceDescriptionTerm's wsag:Name */
    char *site;    /* NULL: Accord chooses (always NULL unless SIZED) */
    int64_t nodes; /* >= 1; FLEXIBLE and TOTAL: the total */
    enum acc_comp_kind kind;
    int64_t min_nodes; /* FLEXIBLE: no part smaller (0: no bound) */
    int64_t max_nodes; /* FLEXIBLE: no part larger (0: no bound) */
    size_t max_parts;  /* FLEXIBLE: at most so many parts (0: no bound) */
    double ppbw;       /* FLEXIBLE: Mbit/s each node sends and receives in an
                        * all-to-all over every part (0: none); each pair of
                        * parts on two sites gets a generated link */
    int64_t ppn;       /* processes per node, >= 1 */
    char *executable;  /* may be NULL */
    char **args;
    size_t n_args;
};

/* How a link's bandwidth was given: a number, or the application's
 * communication, from which the offer parser computes the number. */
enum acc_link_sizing {
    ACC_LINK_GIVEN,         /* co:Bandwidth */
    ACC_LINK_PER_PROCESSOR, /* co:PerProcessorBandwidth: Jones et al.'s eq. (1) */
    ACC_LINK_PER_STEP       /* co:BytesPerStep every co:StepSeconds */
};

struct acc_link_req {
    char *name;        /* the term's wsag:Name */
    size_t a, b;       /* component indices, a != b */
    int64_t bandwidth; /* Mbit/s, >= 1 (computed, rounded up, unless GIVEN) */
    enum acc_link_sizing sizing;
    double ppbw;         /* PER_PROCESSOR: Mbit/s each node sends and receives */
    double step_bytes;   /* PER_STEP: bytes over the link per step */
    double step_seconds; /* PER_STEP: seconds per step */
    double computed;     /* the exact computed Mbit/s (0 when GIVEN) */
};

struct acc_offer {
    char *name;
    char *initiator;
    char *template_name;
    acc_time expiration; /* 0: none */
    acc_time earliest;   /* 0: as soon as possible */
    acc_time deadline;   /* 0: the preview horizon */
    int64_t duration;    /* seconds, >= 1 */
    enum acc_strategy strategy;
    char *policy; /* placement policy name (lib/policy); NULL: the configured one */
    enum acc_launch launch;
    struct acc_component *components;
    size_t n_components;
    struct acc_link_req *links;
    size_t n_links;
    char **guarantees; /* names of the offer's GuaranteeTerms */
    size_t n_guarantees;
    /* Whom it is for (the authenticated user: not in the document), handed
     * to every adapter call that books for it; empty: no one known. */
    struct acc_identity identity;
};

void acc_offer_release(struct acc_offer *o);

/* -------------------------------------------------------------- agreement */

struct acc_run;

struct acc_alloc_component {
    char *name;
    char *site;
    int64_t nodes;
    int64_t ppn;
    char *reservation; /* Accord's reservation key at the site's adapter */
    char *local_id;    /* the adapter's own id */
    char *node_names;  /* comma-separated, NULL where the adapter reports none */
    char *executable;  /* from the offer; NULL when it names none */
    char **args;
    size_t n_args;
};

struct acc_alloc_link {
    char *name;
    char *from, *to; /* component names */
    char *site_a, *site_b;
    char *link;        /* configured link name, NULL when both ends share a site */
    int64_t bandwidth; /* Mbit/s */
    char *reservation;
    char *local_id;
};

struct acc_agreement {
    char id[ACC_ID_LEN + 1];
    char *name;
    char *initiator;
    enum acc_state state;
    acc_time created, updated;
    acc_time start, end; /* 0 until allocated */
    acc_time earliest, deadline;
    int64_t duration;
    enum acc_strategy strategy;
    enum acc_launch launch;
    unsigned rounds, rollbacks;
    unsigned version;  /* 1, then one more per modification (0: not read from the store) */
    unsigned versions; /* the current version when an earlier one is shown; else = version */
    char *change;      /* a version made by a modification: what it changed, in words */
    char *offer_xml;   /* the offer as received */
    size_t offer_len;
    char *fault_code; /* why it is Rejected or failed: a symbol from error.h */
    char *reason;     /* and in words, one line per cause */
    char *terms;      /* the offer's component and link term names, one per line */
    char *guarantees; /* the offer's guarantee term names, one per line */
    struct acc_alloc_component *comps;
    size_t n_comps;
    struct acc_alloc_link *links;
    size_t n_links;
    struct acc_run *run; /* the launch descriptions written with a committed allocation;
                          * acc_store_agreement_settle stores it, _get never fills it */
    /* The signature kept for the current version's document (opaque bytes
     * of lib/dsig's, NULL: none): stored with a commit, read back by _get,
     * used when it is still the signature of the document rendered. */
    unsigned char *signature;
    size_t signature_len;
    /* The IP address of the client that offered it (NULL: unknown): kept,
     * never shown; without [auth] quotas count by it. */
    char *client;
    /* Whom it is for (the offer's identity without its token): stored with
     * it, handed to the adapters at every later booking and job start. */
    struct acc_identity identity;
};

void acc_agreement_release(struct acc_agreement *a);

/* A change of a committed agreement (POST /agreements/{id}/modify): what
 * changes; zero and empty: unchanged.  Names are the agreement's
 * components and links. */
#define ACC_MODIFY_MAX 16 /* most node and most bandwidth changes in one request */

struct acc_modification {
    acc_time start; /* new start (0: unchanged; alone it moves the whole reservation) */
    acc_time end;   /* new end (0: unchanged, or moved with the start) */
    struct {
        char name[64];
        int64_t value;
    } nodes[ACC_MODIFY_MAX], bandwidth[ACC_MODIFY_MAX];
    size_t n_nodes, n_bandwidth;
};

/* ----------------------------------------------------------------- quote */

/* A quote (POST /negotiations): counter-offers to an offer, committing
 * nothing, or with a hold the first one booked and held until hold_until.
 * WS-Agreement Negotiation offer states where they fit (docs/documents.md). */
enum acc_quote_state {
    ACC_QUOTE_ADVISORY,  /* counter-offers, nothing booked (WSAG-N Advisory) */
    ACC_QUOTE_HELD,      /* an option is booked and held (WSAG-N Solicited) */
    ACC_QUOTE_COMMITTED, /* the held option became an agreement (WSAG-N Acceptable) */
    ACC_QUOTE_EXPIRED,   /* the hold ran out; everything released (WSAG-N Rejected) */
    ACC_QUOTE_RELEASED,  /* the hold was given back (DELETE) (WSAG-N Rejected) */
    ACC_QUOTE_REJECTED,  /* no counter-offer exists (WSAG-N Rejected) */
    ACC_QUOTE__COUNT
};
const char *acc_quote_state_name(enum acc_quote_state s);
bool acc_quote_state_parse(const char *s, enum acc_quote_state *out);

struct acc_quote_option {
    acc_time start, end;
    char *why; /* why it starts no earlier, in words */
    /* Its own sites and links when the offer has components without a
     * site (each option may place them elsewhere); none (n_comps 0): the
     * quote's. */
    struct acc_alloc_component *comps;
    size_t n_comps;
    struct acc_alloc_link *links;
    size_t n_links;
};

struct acc_quote {
    char id[ACC_ID_LEN + 1];
    char *initiator;
    enum acc_quote_state state;
    acc_time created, updated;
    acc_time hold_until;            /* Held: when the hold expires; 0 without a hold */
    int held_option;                /* the option held (index), -1 for none */
    char agreement[ACC_ID_LEN + 1]; /* Committed: the agreement; "" otherwise */
    char *reason;                   /* Rejected, Expired, Released: why */
    int64_t duration;
    struct acc_quote_option *options;
    size_t n_options;
    /* Sites and links (as for every option); the reservations when held. */
    struct acc_alloc_component *comps;
    size_t n_comps;
    struct acc_alloc_link *links;
    size_t n_links;
    char *offer_xml;
    size_t offer_len;
    char *client; /* as an agreement's; stored with a new quote, not read back */
};

void acc_quote_release(struct acc_quote *q);

/* ------------------------------------------------------------------- run */

/* Where the launched meta-job of an agreement stands. */
enum acc_run_state {
    ACC_RUN_WAITING,    /* its start is not reached yet */
    ACC_RUN_RUNNING,    /* started; mpiexec runs */
    ACC_RUN_EXITED,     /* ended by itself: see exit_status and signal */
    ACC_RUN_STOPPED,    /* still running at the end of its reservation: stopped */
    ACC_RUN_TERMINATED, /* stopped (or never started) because the agreement was terminated */
    ACC_RUN_FAILED,     /* could not be started at all */
    ACC_RUN_MISSED,     /* accordd was down for the whole reservation */
    ACC_RUN_LOST,       /* accordd lost track of it (its status could not be read back) */
    ACC_RUN_DESCRIBED,  /* launch style none (or launching off): described, never started */
    ACC_RUN__COUNT
};

const char *acc_run_state_name(enum acc_run_state s);
bool acc_run_state_parse(const char *s, enum acc_run_state *out);
/* Waiting and running are the only states that change again. */
bool acc_run_state_is_final(enum acc_run_state s);

/* The launch of one agreement: its two launch descriptions (generated when
 * the agreement is committed) and what became of the job. */
struct acc_run {
    char agreement[ACC_ID_LEN + 1];
    enum acc_launch style; /* ACC_LAUNCH_NONE: described, never started */
    enum acc_run_state state;
    acc_time started, ended; /* 0: not yet */
    int exit_status;         /* -1: none (not ended, or killed by a signal) */
    int signal;              /* 0: none */
    int64_t pid;             /* the job's process group while it runs; 0: none */
    int64_t pid_start;       /* that process's start (clock ticks after boot) */
    char *directory;         /* where it runs and its files are kept */
    char *command;           /* the mpiexec command line, shell-quoted; NULL: none */
    char *batch;             /* components submitted to their site's batch system: "COMPONENT SITE
                              * JOBID" lines; NULL: none */
    char *reason;            /* in words: why it is in its state */
    char *output;            /* the first bytes of its output (stdout and stderr) */
    size_t output_len;
    int64_t output_total; /* bytes the job wrote in all; -1: unknown */
    char *metampich;      /* the MetaMPICH meta-configuration */
    char *rsl;            /* the MPICH-G2 multi-request RSL */
};

void acc_run_release(struct acc_run *r);
struct acc_agreement_list {
    struct acc_agreement *v;
    size_t n;
    size_t total; /* how many match the filter, on every page together */
};

void acc_agreement_list_release(struct acc_agreement_list *l);

/* GET /agreements filters. */
struct acc_list_filter {
    const char *state;     /* NULL: any */
    const char *initiator; /* NULL: any */
    const char *client;    /* the address it came from (acc_agreement.client); NULL: any */
    const char *site;      /* NULL: any */
    acc_time from, until;  /* overlap with [start, end); 0: open */
    unsigned limit, offset;
};

/* ----------------------------------------------------------------- frames */

/* A free time frame [start, end). */
struct acc_frame {
    acc_time start, end;
};

struct acc_frames {
    struct acc_frame *v;
    size_t n, cap;
    bool truncated; /* the adapter stopped early: nothing is known after the last frame */
};

void acc_frames_init(struct acc_frames *f);
void acc_frames_release(struct acc_frames *f);
void acc_frames_reset(struct acc_frames *f);
acc_err acc_frames_push(struct acc_frames *f, acc_time start, acc_time end);

/* ---------------------------------------------------------------- journal */

/* Where one reservation attempt stands.  Written before the request
 * (intent) and after each outcome, so recovery knows what to undo. */
enum acc_booking_state {
    ACC_BOOKING_INTENT,        /* about to be requested */
    ACC_BOOKING_RESERVED,      /* the adapter booked it */
    ACC_BOOKING_FAILED,        /* the adapter refused: nothing is booked */
    ACC_BOOKING_UNKNOWN,       /* no answer (time-out): may or may not exist */
    ACC_BOOKING_CANCELLED,     /* undone at the adapter */
    ACC_BOOKING_CANCEL_FAILED, /* undoing failed: retried by housekeeping */
    ACC_BOOKING_COMMITTED,     /* part of an Observed agreement */
    ACC_BOOKING_HELD,          /* booked for a quote's hold: released when it expires */
    ACC_BOOKING__COUNT
};

const char *acc_booking_state_name(enum acc_booking_state s);
bool acc_booking_state_parse(const char *s, enum acc_booking_state *out);
/* Intent, reserved, unknown and cancel-failed may hold a booking that
 * nobody will use: recovery cancels them. */
bool acc_booking_state_is_open(enum acc_booking_state s);

struct acc_booking {
    char key[ACC_KEY_MAX];
    char agreement[ACC_ID_LEN + 1];
    unsigned round;
    char adapter[64];
    enum acc_resource_kind kind;
    char resource[128];
    int64_t amount;
    acc_time start, end; /* as asked */
    enum acc_booking_state state;
    char local_id[ACC_LOCAL_ID_MAX];
    acc_time eff_start, eff_end; /* as the adapter reports it */
    char error[256];
};

/* ------------------------------------------------------------------ trace */

enum acc_trace_kind {
    ACC_TRACE_PLAN,     /* site choice for components without a site */
    ACC_TRACE_PREVIEW,  /* one adapter's preview */
    ACC_TRACE_PROPOSE,  /* the round's candidate start */
    ACC_TRACE_RESERVE,  /* one reservation request */
    ACC_TRACE_VERIFY,   /* one read-back */
    ACC_TRACE_CANCEL,   /* one cancellation */
    ACC_TRACE_ROLLBACK, /* the round's reservations are being undone */
    ACC_TRACE_AGREE,    /* every reservation is at the common start */
    ACC_TRACE_REJECT,   /* no common slot */
    ACC_TRACE_FAIL,     /* an adapter or the store failed */
    ACC_TRACE__COUNT
};

const char *acc_trace_kind_name(enum acc_trace_kind k);
bool acc_trace_kind_parse(const char *s, enum acc_trace_kind *out);

struct acc_trace_event {
    unsigned seq;
    unsigned round;
    enum acc_trace_kind kind;
    char *target;  /* "site caesar", "link caesar~fzj-xd1"; NULL for a whole round */
    char *adapter; /* adapter instance name */
    int64_t amount;
    acc_time t_from, t_until; /* window asked, or reservation start and end */
    acc_time t_result;        /* earliest start seen, or effective start; 0: none */
    acc_err status;
    int64_t elapsed_us;
    char *detail;
};

struct acc_trace {
    struct acc_trace_event *v;
    size_t n, cap;
};

void acc_trace_init(struct acc_trace *t);
void acc_trace_release(struct acc_trace *t);
/* Appends a copy of ev (its strings are duplicated); seq is assigned. */
acc_err acc_trace_add(struct acc_trace *t, const struct acc_trace_event *ev);

#endif
