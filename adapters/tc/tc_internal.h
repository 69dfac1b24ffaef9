/* SPDX-License-Identifier: Apache-2.0 */
/* tc_internal.h - the parts of the tc network adapter (docs/adapters/tc.md).
 *
 * The adapter books bandwidth on a booking ledger (lib/ledger) exactly as
 * sim-network does (the ledger's operations serve preview, reserve, query
 * and cancel), and puts what a provisioned reservation guarantees on the
 * wire with Linux traffic control: an HTB leaf class per reservation and
 * device, with u32 filters for the reservation's address pairs.
 *
 *   tc.c          the ops table, open, provision, status, cancel
 *   tc_settings.c the adapter's own settings (the ledger takes its own)
 *   tc_plan.c     PURE: parses `tc` show text, builds a change set's batch
 *                 text, and the guarantee term's state
 *   tc_kernel.c   runs `tc -batch` (reads and changes) under a time limit
 *   tc_store.c    the adapter's own SQLite file: provisions, class ids,
 *                 violations, last counters
 *   tc_audit.c    the reconciliation (thread, and at once on demand)
 */
#ifndef ACC_TC_INTERNAL_H
#define ACC_TC_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/common/buf.h"
#include "../../lib/common/map.h"
#include "../adapter.h"
#include "../../lib/ledger/ledger.h"

#define TC_ID_MIN     10   /* reservation leaf classes 1:N, N in TC_ID_MIN..TC_ID_MAX */
#define TC_ID_MAX     8999 /* (written and read as the text "1:N") */
#define TC_ID_BE      9999 /* the best-effort class 1:9999, the qdisc's default */
#define TC_MAX_ADDRS  64   /* addresses per side of a flow */
#define TC_MAX_DEVS   64   /* devices per adapter */
#define TC_MAX_PATH   8    /* devices per direction of a link */
#define TC_NAME_MAX   16   /* IFNAMSIZ */
#define TC_NETNS_MAX  64
#define TC_MAX_OUTPUT (4u << 20) /* bytes of a `tc` show kept */

/* ------------------------------------------------------------- tc_plan.c */

/* A u32 filter of the kernel's: pref, flowid minor, matched addresses. */
struct tc_filter {
    unsigned pref;
    unsigned flow;     /* N of flowid 1:N as written (text), 0: none */
    uint32_t src, dst; /* host order; 0: no such match */
};

struct tc_class {
    unsigned id;         /* N of classid 1:N as written */
    uint64_t rate, ceil; /* bit/s */
    uint64_t bytes, packets, drops;
};

/* What one device has, from `qdisc show`, `-s class show` and `filter show`. */
struct tc_dev_state {
    bool htb_root;             /* the root qdisc is htb 1: */
    bool root_class, be_class; /* 1:1 and 1:9999 exist */
    struct tc_class *classes;
    size_t n_classes;
    struct tc_filter *filters;
    size_t n_filters;
};

void tc_dev_state_release(struct tc_dev_state *s);
/* Parses the output of `tc -s -batch` with "qdisc show dev D", "class show
 * dev D" and "filter show dev D" (any of them; any order). */
acc_err tc_parse_show(const char *text, struct tc_dev_state *out, struct acc_error *err);
/* "200Mbit", "1600b", "15Kbit" -> bit/s; false when not a rate. */
bool tc_parse_rate(const char *s, uint64_t *bits);

/* A leaf class one device should have. */
struct tc_want {
    unsigned id;
    int64_t rate, ceil;        /* Mbit/s */
    const uint32_t *src, *dst; /* the (src, dst) pairs, host order */
    size_t n_pairs;
};

/* What a plan found, per wanted class (aligned with want). */
enum tc_fix { TC_FIX_NONE, TC_FIX_ADDED, TC_FIX_REPAIRED };

/* Appends to out the batch lines that make device dev (capacity Mbit/s,
 * quantum bytes) have exactly the wanted leaf classes among ids
 * TC_ID_MIN..TC_ID_MAX, keeping everything else: the HTB root tree when
 * missing, removal of stale filters then classes, wanted classes added (or
 * rates changed) and their filters (re)made.  fix[i] says what became of
 * want[i] (ADDED: the class was absent; REPAIRED: present with wrong
 * filters or rates).  *removed receives how many stale classes go. */
void tc_plan(const char *dev, int64_t capacity, int64_t quantum, const struct tc_want *want,
             size_t n_want, const struct tc_dev_state *have, struct acc_buf *out, enum tc_fix *fix,
             size_t *removed);

/* The lines that remove leaf class id from dev (filters, then class). */
void tc_plan_remove(const char *dev, unsigned id, struct acc_buf *out);

/* A guarantee term as the adapter records it. */
struct tc_term {
    bool provisioned;
    acc_time start, end;
    acc_time activated;   /* 0: never in place */
    acc_time violated_at; /* recorded violation; 0: none */
};

/* The term's state at `now`.  When a violation that is not yet recorded
 * follows from the times (never provisioned, or activated later than start
 * + grace, or not activated by then), *new_at and why receive it; else
 * *new_at is 0. */
enum acc_guarantee tc_guarantee(const struct tc_term *t, acc_time now, int64_t grace,
                                acc_time *new_at, char *why, size_t why_len);

/* ----------------------------------------------------------- tc_kernel.c */

/* Reads dev in namespace netns ("-": ours). */
acc_err tc_kernel_read(const char *netns, const char *dev, int64_t timeout_ms,
                       struct tc_dev_state *out, struct acc_error *err);
/* Runs batch text in netns as one `tc -force -batch -`; a failure names
 * the namespace and quotes tc's own words. */
acc_err tc_kernel_apply(const char *netns, const char *batch, int64_t timeout_ms,
                        struct acc_error *err);

/* ------------------------------------------------------------ tc_store.c */

struct tc_prov {
    char *key;
    char *local_id;
    size_t link; /* index into struct tc's links */
    acc_time start, end;
    int64_t amount;  /* Mbit/s */
    unsigned id;     /* leaf class 1:id */
    char **addrs[2]; /* side a, side b (IPv4 text) */
    size_t n_addrs[2];
    acc_time activated, violated_at;
    char why[256];
    uint64_t bytes, packets, drops; /* totals over every incarnation of its classes */
    bool active;                    /* its classes were all in place at the last reconciliation */
    /* per device, the counters of its class at the last reading; a class
     * made anew (deleted by hand) starts from zero and adds to the totals */
    uint64_t last[TC_MAX_DEVS][3];
    bool have_last[TC_MAX_DEVS];
    bool adopt; /* loaded at open: the classes found were counted before */
};

void tc_prov_free(struct tc_prov *p);

struct tc_store;

/* Whether the adapter's file can be had: `setting` a file's path (only
 * SQLite keeps the state), or none beside a database file; a server's URL
 * is refused, with what to give instead.  Run by the adapter's check
 * (--check-config) and at open. */
acc_err tc_store_check(const char *db_path, const char *name, const char *setting,
                       struct acc_error *err);

/* The adapter's file: `setting` when given, else "<db_path>.tc-<name>",
 * ":memory:" for an in-memory database.  Opens (creating) it. */
acc_err tc_store_open(const char *db_path, const char *name, const char *setting, bool durable,
                      struct tc_store **out, struct acc_error *err);
void tc_store_close(struct tc_store *st);
/* Writes (inserts or replaces) a provision; link_name names p->link. */
acc_err tc_store_put(struct tc_store *st, const struct tc_prov *p, const char *link_name,
                     struct acc_error *err);
acc_err tc_store_delete(struct tc_store *st, const char *key, struct acc_error *err);
/* Removes the provisions that ended before `before`. */
acc_err tc_store_purge(struct tc_store *st, acc_time before, struct acc_error *err);
/* Calls fn with every stored provision (fn owns it; link unresolved, with
 * link_name given) */
acc_err tc_store_load(struct tc_store *st,
                      acc_err (*fn)(void *ctx, struct tc_prov *p, const char *link_name,
                                    struct acc_error *err),
                      void *ctx, struct acc_error *err);

/* ------------------------------------------------------------------ tc.c */

struct tc_dev {
    char *netns; /* "-": accordd's own */
    char *dev;
    int64_t capacity; /* Mbit/s: the largest of the links through it */
};

struct tc_link {
    const char *name; /* the ledger's resource name */
    char *site[2];
    int64_t capacity;
    size_t devs[2][TC_MAX_PATH]; /* egress devices of traffic leaving site[i] */
    size_t n_devs[2];
};

enum tc_ceil { TC_CEIL_RATE, TC_CEIL_LINK };

struct tc {
    struct acc_ledger *ledger; /* the bookings: links are its resources */
    const char *name;          /* the adapter's (the ledger's copy) */
    struct tc_link *links;
    size_t n_links;
    struct tc_dev devs[TC_MAX_DEVS];
    size_t n_devs;
    enum tc_ceil ceil;
    int64_t quantum, grace; /* bytes; seconds */
    int64_t audit_ms, timeout_ms;

    struct tc_store *store;
    pthread_mutex_t lock; /* provs and store */
    struct acc_map provs; /* key -> struct tc_prov */

    pthread_mutex_t audit_lock; /* one reconciliation at a time */
    pthread_cond_t wake;        /* the thread: something changed, or stopping */
    bool stopping, kick, thread_started;
    pthread_t thread;
    acc_time last_audit;
    char last_error[256];
};

/* Applies one of the adapter's own settings (*state_file: the state
 * setting's value); an unknown key is an error that lists the others. */
acc_err tc_setting(struct tc *t, const char *k, const char *v, const char **state_file,
                   struct acc_error *err);

/* ---------------------------------------------------------- tc_audit.c */

/* Makes the kernel match the provisions active now (and notes activations,
 * violations, counters).  Takes audit_lock. */
acc_err tc_reconcile(struct tc *t, struct acc_error *err);
acc_err tc_audit_start(struct tc *t, struct acc_error *err);
void tc_audit_kick(struct tc *t);
void tc_audit_stop(struct tc *t);

#endif
