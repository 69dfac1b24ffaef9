/* SPDX-License-Identifier: Apache-2.0 */
/* quota.h - the per-user quotas ([quota], [quota USER]) as policy of the
 * service: whom a request counts against, and the limits of one agreement
 * checked on an offer, on a plan (with the links the planner generates)
 * and on a change.  Pure: no store, no HTTP.  Counting a user's open
 * agreements is quota_ledger.c's, their open quotes quote.c's.
 *
 * Every refusal is ACC_ERR_QUOTA (403 QuotaExceeded) and names the section
 * and key of the limit ("[quota alice] max_nodes = 64"). */
#ifndef ACC_SVC_QUOTA_H
#define ACC_SVC_QUOTA_H

#include "../../lib/common/error.h"
#include "../../lib/model/model.h"
#include "../config/config.h"

struct acc_plan;

/* Whom a request counts against, and their limits. */
struct svc_quota_who {
    const char *user; /* with [auth] the initiator; NULL: everyone, as one user */
    /* Without [auth]: the client's IP address, held to its share of the
     * one user's quota (max_agreements_per_address, max_quotes_per_address)
     * and to the node-hours and Mbit-hours; NULL with [auth], or unknown. */
    const char *address;
    /* Copies: the quotas may be reloaded (SIGHUP) while the request runs. */
    struct acc_quota q;
    char section[128]; /* "quota" or "quota USER", for messages */
};

/* The quota an agreement or quote of this initiator, offered from this
 * address (NULL: unknown), counts against: with [auth] the initiator's own
 * (the HTTP layer has checked that the caller may act for it); without,
 * one for every request, since an initiator that nobody vouches for would
 * let anyone count as somebody else, and a share of it per address.  The
 * users and quotas are those of now (config.h: acc_config_live). */
struct svc_quota_who svc_quota_who(const struct acc_config *cfg, const char *initiator,
                                   const char *address);

/* An offer's own limits: its nodes (every component's, a flexible or total
 * request's total), the bandwidth of the links it names, its duration, and
 * its earliest start no further ahead than max_advance. */
acc_err svc_quota_offer(const struct svc_quota_who *w, const struct acc_offer *o, acc_time now,
                        struct acc_error *err);

/* Cuts a window's deadline so that no start lies beyond max_advance. */
void svc_quota_window(const struct svc_quota_who *w, acc_time now, int64_t duration,
                      acc_time *deadline);

/* A plan's links (the offer's and those generated for a flexible request's
 * parts) within max_bandwidth. */
acc_err svc_quota_plan(const struct svc_quota_who *w, const struct acc_plan *p,
                       struct acc_error *err);

/* What a change of a committed agreement touches. */
struct svc_quota_shape {
    int64_t nodes, bandwidth; /* over all components, all links */
    acc_time start, end;
};

/* A change may keep or shrink what is over a limit (a quota lowered since),
 * but grow nothing past one: nodes, bandwidth, duration, nor a start moved
 * later than max_advance. */
acc_err svc_quota_change(const struct svc_quota_who *w, const struct svc_quota_shape *was,
                         const struct svc_quota_shape *to, acc_time now, struct acc_error *err);

/* ------------------------------------- node-hours and Mbit-hours held
 * ([quota] max_node_hours per site, max_mbit_hours per link).  Amounts are
 * kept in node-seconds and Mbit-seconds. */

/* What a reservation of amount from start to end counts from now on: the
 * part of it within max_advance and max_duration of now (no agreement
 * admitted now reaches further), as amount x seconds (saturating). */
int64_t svc_quota_charge(const struct svc_quota_who *w, int64_t amount, acc_time start,
                         acc_time end, acc_time now);

/* One site's or link's use: what the owner holds there besides the
 * agreement or quote in question (held), what that one held before (was:
 * a change's current version; 0 for a new one) and will hold (asked). */
struct svc_quota_use {
    enum acc_resource_kind kind; /* nodes: a site; bandwidth: a link */
    const char *name;
    int64_t held, was, asked;
};

/* Each within max_node_hours or max_mbit_hours: held + asked, unless the
 * agreement grows nothing there (asked <= was: a change may keep or shrink
 * what is over a limit lowered since).  ACC_ERR_QUOTA naming the key and
 * the site or link. */
acc_err svc_quota_hours(const struct svc_quota_who *w, const struct svc_quota_use *u, size_t n,
                        struct acc_error *err);

#endif
