/* SPDX-License-Identifier: Apache-2.0 */
/* calendar.h - a capacity calendar: how much of a resource (nodes of a
 * cluster, Mbit/s of a link) is booked at every instant.
 *
 * Kept as a step function: a sorted array of change points (t, used), where
 * `used` holds from t up to the next point; before the first point nothing is
 * used.  A preview is a binary search and one sweep over the points inside
 * the window, so it costs O(log n + points in window) whatever the total
 * number of bookings.  Booking or releasing touches only the points inside
 * the booked interval (plus a memmove for the two new points).
 *
 * The calendar knows nothing of keys or owners: the booking ledger
 * (lib/ledger) keeps those for the simulated sites and the tc adapter;
 * accord-sim and accordd --replay use calendars of their own.  Not
 * thread-safe: its owner locks.
 */
#ifndef ACC_CALENDAR_H
#define ACC_CALENDAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "../common/timefmt.h"
#include "../model/model.h"

struct acc_cal_point {
    acc_time t;
    int64_t used;
};

/* Declared here so that owners can embed calendars by value; the fields
 * are the calendar's own: read it through the functions below. */
struct acc_calendar {
    int64_t capacity;
    struct acc_cal_point *pts;
    size_t n, cap;
};

/* One booking, for acc_calendar_load. */
struct acc_cal_booking {
    acc_time start, end;
    int64_t amount;
};

void acc_calendar_init(struct acc_calendar *c, int64_t capacity);
void acc_calendar_release(struct acc_calendar *c);

int64_t acc_calendar_capacity(const struct acc_calendar *c);

/* Replaces the contents with the given bookings in O(n log n).  Bookings are
 * taken as they are, even if together they exceed the capacity (a capacity
 * lowered in the configuration): such times simply have no free frames. */
acc_err acc_calendar_load(struct acc_calendar *c, const struct acc_cal_booking *b, size_t n);

/* The most used during [start, end). */
int64_t acc_calendar_peak(const struct acc_calendar *c, acc_time start, acc_time end);

/* Whether `amount` more fits during all of [start, end). */
bool acc_calendar_fits(const struct acc_calendar *c, acc_time start, acc_time end, int64_t amount);

/* Books amount for [start, end); ACC_ERR_BUSY when it does not fit. */
acc_err acc_calendar_add(struct acc_calendar *c, acc_time start, acc_time end, int64_t amount);
/* For a booking that is being replaced (an agreement being changed): takes
 * its amount off [start, end) for a while and makes room so that one
 * acc_calendar_add in between and the acc_calendar_unlift after it cannot
 * run out of memory.  ACC_ERR_NOMEM: nothing changed. */
acc_err acc_calendar_lift(struct acc_calendar *c, acc_time start, acc_time end, int64_t amount);
/* Puts back what acc_calendar_lift took, even beyond the capacity (the old
 * and the new booking then both exist until one is released). */
void acc_calendar_unlift(struct acc_calendar *c, acc_time start, acc_time end, int64_t amount);

/* Books amount for [start, end) even beyond the capacity: a booking that
 * exists elsewhere (read back from a shared store) counts whatever the
 * calendar holds.  ACC_ERR_NOMEM: nothing changed. */
acc_err acc_calendar_force(struct acc_calendar *c, acc_time start, acc_time end, int64_t amount);

/* Releases what acc_calendar_add booked. */
acc_err acc_calendar_remove(struct acc_calendar *c, acc_time start, acc_time end, int64_t amount);

/* Appends to out the maximal frames within [from, until) during which
 * `amount` is free, keeping those at least `duration` long; at most
 * max_frames (then out->truncated is set). */
acc_err acc_calendar_preview(const struct acc_calendar *c, acc_time from, acc_time until,
                             int64_t duration, int64_t amount, size_t max_frames,
                             struct acc_frames *out);

/* The earliest start >= from at which amount fits for duration, ending by
 * until; -1 when there is none. */
acc_time acc_calendar_earliest(const struct acc_calendar *c, acc_time from, acc_time until,
                               int64_t duration, int64_t amount);

/* A walk over the step function from an instant on, change point by change
 * point (accordd --replay steps through its overlay's levels this way).
 * Valid while the calendar does not change. */
struct acc_cal_walk {
    const struct acc_calendar *c;
    size_t next; /* the index of the next change point */
};

/* Starts a walk at t; returns the amount used at t. */
int64_t acc_calendar_walk_start(struct acc_cal_walk *w, const struct acc_calendar *c, acc_time t);
/* The next change point after the walk's position: true with its instant
 * and the amount used from then on; false when there is none. */
bool acc_calendar_walk_next(struct acc_cal_walk *w, acc_time *t, int64_t *used);

#endif
