/* SPDX-License-Identifier: Apache-2.0 */
/* metrics.c - the service's figures in Prometheus' text format: the
 * negotiations (outcomes, a latency histogram), the queue, agreements and
 * meta-jobs, each adapter's calls and whether its last one failed, its
 * bulkhead and circuit breaker, the build.  The latency is the service's
 * measure around its call of the engine (negotiate.c), so that the engine
 * itself keeps no clock of ours. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>

#include "internal.h"

static void metric(struct acc_buf *out, const char *name, const char *type, const char *help)
{
    acc_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The histogram's upper bounds (microseconds). */
static const int64_t bounds_us[SVC_NEGOTIATION_BUCKETS] = {
    1000,   2500,    5000,    10000,   25000,    50000,    100000,   250000,
    500000, 1000000, 2500000, 5000000, 10000000, 30000000, 60000000,
};

void svc_observe_negotiation(struct acc_service *svc, int64_t us)
{
    if (us < 0)
        us = 0;
    size_t i = 0;
    while (i < SVC_NEGOTIATION_BUCKETS && us > bounds_us[i])
        i++;
    atomic_fetch_add(&svc->negotiation_buckets[i], 1);
    atomic_fetch_add(&svc->negotiation_us, (uint64_t)us);
}

/* The histogram, cumulative as Prometheus reads it; the count is the +Inf
 * bucket's, read with the others. */
static void negotiation_histogram(struct acc_service *svc, struct acc_buf *out)
{
    metric(out, "accord_negotiation_seconds", "histogram",
           "How long negotiations took, from their start on a worker to their recorded end.");
    uint64_t sum = 0;
    for (size_t i = 0; i <= SVC_NEGOTIATION_BUCKETS; i++) {
        sum += atomic_load(&svc->negotiation_buckets[i]);
        if (i < SVC_NEGOTIATION_BUCKETS)
            acc_buf_printf(out, "accord_negotiation_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
                           (double)bounds_us[i] / 1e6, sum);
        else
            acc_buf_printf(out, "accord_negotiation_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n",
                           sum);
    }
    acc_buf_printf(out, "accord_negotiation_seconds_sum %.6f\n",
                   (double)atomic_load(&svc->negotiation_us) / 1e6);
    acc_buf_printf(out, "accord_negotiation_seconds_count %" PRIu64 "\n", sum);
}

static void adapters(struct acc_service *svc, struct acc_buf *out)
{
    metric(out, "accord_adapter_calls_total", "counter", "Calls into each adapter.");
    metric(out, "accord_adapter_failures_total", "counter", "Failed calls into each adapter.");
    metric(out, "accord_adapter_seconds_total", "counter", "Time spent inside each adapter.");
    metric(out, "accord_adapter_up", "gauge",
           "1 unless the adapter's last call failed (1 before any call).");
    metric(out, "accord_adapter_last_error_timestamp_seconds", "gauge",
           "When the adapter's last failed call ended (Unix time; 0: none yet).");
    for (size_t i = 0; i < acc_resources_count(svc->adapters); i++) {
        struct acc_adapter *ad = acc_resources_at(svc->adapters, i);
        struct acc_adapter_stats st;
        acc_adapter_stats(ad, &st);
        const char *n = acc_adapter_name(ad), *k = acc_adapter_kind(ad);
        acc_buf_printf(out,
                       "accord_adapter_calls_total{adapter=\"%s\",kind=\"%s\"} %" PRIu64 "\n"
                       "accord_adapter_failures_total{adapter=\"%s\",kind=\"%s\"} %" PRIu64 "\n"
                       "accord_adapter_seconds_total{adapter=\"%s\",kind=\"%s\"} %.6f\n"
                       "accord_adapter_up{adapter=\"%s\",kind=\"%s\"} %d\n"
                       "accord_adapter_last_error_timestamp_seconds{adapter=\"%s\",kind=\"%s\"} "
                       "%" PRId64 "\n",
                       n, k, st.calls, n, k, st.failures, n, k, (double)st.busy_us / 1e6, n, k,
                       st.up ? 1 : 0, n, k, (int64_t)st.last_failure);
    }
}

/* Each adapter's bulkhead and circuit breaker (server/engine/breaker.c). */
static void guards(struct acc_service *svc, struct acc_buf *out)
{
    metric(out, "accord_adapter_breaker_open", "gauge",
           "1 while the adapter's circuit breaker is open or half-open (its calls fail at "
           "once), else 0.");
    metric(out, "accord_adapter_breaker_opened_total", "counter",
           "Times the adapter's circuit breaker opened.");
    metric(out, "accord_adapter_calls_in_flight", "gauge",
           "The adapter's calls on the engine's threads now, abandoned ones included.");
    metric(out, "accord_adapter_calls_refused_total", "counter",
           "Calls failed at once: busy (over [negotiation] adapter_max_calls), open (the "
           "circuit breaker).");
    for (size_t i = 0; i < acc_resources_count(svc->adapters); i++) {
        struct acc_engine_guard_state g;
        acc_engine_guard(svc->engine, acc_adapter_name(acc_resources_at(svc->adapters, i)), &g);
        const char *n = g.name;
        acc_buf_printf(
            out,
            "accord_adapter_breaker_open{site=\"%s\"} %d\n"
            "accord_adapter_breaker_opened_total{site=\"%s\"} %" PRIu64 "\n"
            "accord_adapter_calls_in_flight{site=\"%s\"} %u\n"
            "accord_adapter_calls_refused_total{site=\"%s\",reason=\"busy\"} %" PRIu64 "\n"
            "accord_adapter_calls_refused_total{site=\"%s\",reason=\"open\"} %" PRIu64 "\n",
            n, g.state != ACC_BREAKER_CLOSED, n, g.opened, n, g.in_flight, n, g.refused_busy, n,
            g.refused_open);
    }
}

void acc_service_metrics(struct acc_service *svc, struct acc_buf *out)
{
    static const char *const outcome_names[OUT__COUNT] = {"agreed", "no_slot", "failed", "stopped",
                                                          "interrupted"};
    metric(out, "accord_negotiations_total", "counter", "Negotiations by outcome.");
    for (int i = 0; i < OUT__COUNT; i++)
        acc_buf_printf(out, "accord_negotiations_total{outcome=\"%s\"} %" PRIu64 "\n",
                       outcome_names[i], (uint64_t)atomic_load(&svc->outcomes[i]));
    metric(out, "accord_negotiation_rounds_total", "counter",
           "Preview rounds of all negotiations.");
    acc_buf_printf(out, "accord_negotiation_rounds_total %" PRIu64 "\n",
                   (uint64_t)atomic_load(&svc->rounds));
    metric(out, "accord_negotiation_rollbacks_total", "counter", "Reservation rounds undone.");
    acc_buf_printf(out, "accord_negotiation_rollbacks_total %" PRIu64 "\n",
                   (uint64_t)atomic_load(&svc->rollbacks));
    /* The time spent negotiating is the histogram's _sum: a counter
     * accord_negotiation_seconds_total beside it would be a second family
     * of the same name, which OpenMetrics parsers refuse. */
    negotiation_histogram(svc, out);
    metric(out, "accord_offers_total", "counter",
           "Offers submitted, refused as bad input, refused for a full queue, refused for a "
           "quota, refused for a site whose circuit breaker is open.");
    acc_buf_printf(out, "accord_offers_total{result=\"submitted\"} %" PRIu64 "\n",
                   (uint64_t)atomic_load(&svc->submitted));
    acc_buf_printf(out, "accord_offers_total{result=\"bad_input\"} %" PRIu64 "\n",
                   (uint64_t)atomic_load(&svc->rejected_input));
    acc_buf_printf(out, "accord_offers_total{result=\"overloaded\"} %" PRIu64 "\n",
                   (uint64_t)atomic_load(&svc->refused_busy));
    acc_buf_printf(out, "accord_offers_total{result=\"quota\"} %" PRIu64 "\n",
                   (uint64_t)atomic_load(&svc->refused_quota));
    acc_buf_printf(out, "accord_offers_total{result=\"breaker_open\"} %" PRIu64 "\n",
                   (uint64_t)atomic_load(&svc->refused_breaker));
    metric(out, "accord_pruned_total", "counter",
           "Rows deleted by retention ([database] retain): agreements and quotes; and "
           "Rejected agreements over [database] max_rejected_per_user.");
    acc_buf_printf(out, "accord_pruned_total{kind=\"agreement\"} %" PRIu64 "\n",
                   (uint64_t)atomic_load(&svc->pruned_agreements));
    acc_buf_printf(out, "accord_pruned_total{kind=\"quote\"} %" PRIu64 "\n",
                   (uint64_t)atomic_load(&svc->pruned_quotes));
    acc_buf_printf(out, "accord_pruned_total{kind=\"rejected\"} %" PRIu64 "\n",
                   (uint64_t)atomic_load(&svc->pruned_rejected));
    metric(out, "accord_negotiation_queue", "gauge", "Negotiations queued or running.");
    pthread_mutex_lock(&svc->queue.lock);
    size_t queued = svc->queue.length;
    pthread_mutex_unlock(&svc->queue.lock);
    acc_buf_printf(out, "accord_negotiation_queue %zu\n", queued);

    uint64_t counts[ACC_STATE__COUNT];
    if (acc_store_agreement_counts(svc->store, counts, NULL) == ACC_OK) {
        metric(out, "accord_agreements", "gauge", "Agreements in the database by state.");
        for (int i = 0; i < ACC_STATE__COUNT; i++)
            acc_buf_printf(out, "accord_agreements{state=\"%s\"} %" PRIu64 "\n",
                           acc_state_name((enum acc_state)i), counts[i]);
    }
    unsigned waiting = 0, running = 0;
    acc_launcher_counts(svc->launcher, &waiting, &running);
    metric(out, "accord_jobs", "gauge", "Meta-jobs waiting for their start, and running.");
    acc_buf_printf(out, "accord_jobs{state=\"waiting\"} %u\naccord_jobs{state=\"running\"} %u\n",
                   waiting, running);
    adapters(svc, out);
    guards(svc, out);
    metric(out, "accord_leader", "gauge",
           "1 while this accordd leads the duties that run once (always on a database file).");
    acc_buf_printf(out, "accord_leader %d\n", svc_instance_leads(svc) ? 1 : 0);
    metric(out, "accord_clock_offset_seconds", "gauge",
           "The database's clock minus this accordd's, measured at its last beat (0 on a "
           "database file).");
    acc_buf_printf(out, "accord_clock_offset_seconds %.6f\n",
                   (double)atomic_load(&svc->clock_offset_us) / 1e6);
    metric(out, "accord_clock_refused", "gauge",
           "1 while this accordd's clock is further from the database's than [database] "
           "clock_refuse: it neither leads nor negotiates.");
    acc_buf_printf(out, "accord_clock_refused %d\n",
                   atomic_load(&svc->clock_state) == SVC_CLOCK_REFUSE ? 1 : 0);
    metric(out, "accord_build_info", "gauge", "The running build: its version.");
    acc_buf_printf(out, "accord_build_info{version=\"%s\"} 1\n", ACCORD_VERSION);
}
