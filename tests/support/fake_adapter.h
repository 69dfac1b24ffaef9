/* SPDX-License-Identifier: Apache-2.0 */
/* fake_adapter.h - a scripted adapter for the engine's tests.
 *
 * Its previews are fixed frame lists; its reservations follow a script (one
 * step per reserve call: book as asked, book later, refuse, fail, hang,
 * shrink); it remembers what it booked and counts every call. */
#ifndef ACC_FAKE_ADAPTER_H
#define ACC_FAKE_ADAPTER_H

#include "adapter.h"

enum fake_action {
    FAKE_OK,          /* book as asked */
    FAKE_LATER,       /* book `delta` seconds later than asked */
    FAKE_BUSY,        /* refuse: taken */
    FAKE_FAIL,        /* adapter error */
    FAKE_UNAVAILABLE, /* resource manager down */
    FAKE_HANG,        /* block `delta` milliseconds, then book as asked */
    FAKE_SHRINK,      /* book `delta` less than asked (seen only by verify) */
    FAKE_LONGER,      /* book `delta` seconds longer than asked (whole minutes, say) */
};

struct fake;

/* Opens a fake adapter named `name` that provides nodes or bandwidth. */
struct acc_adapter *fake_open(const char *name, enum acc_resource_kind kind, struct fake **out);
/* Replaces the preview frames (pairs of start, end; n pairs). */
void fake_frames(struct fake *f, const acc_time *pairs, size_t n);
/* Appends a step to the reserve script (steps run in order; then FAKE_OK). */
void fake_script(struct fake *f, enum fake_action a, int64_t delta);
/* Makes previews fail with this code (ACC_OK: stop failing). */
void fake_preview_error(struct fake *f, acc_err code);

enum fake_op { FAKE_PREVIEW, FAKE_RESERVE, FAKE_QUERY, FAKE_CANCEL, FAKE_OPS };
unsigned fake_calls(struct fake *f, enum fake_op op);
/* Reservations currently held. */
size_t fake_live(struct fake *f);
/* Whether the reservation under key is held, and its start. */
bool fake_has(struct fake *f, const char *key, acc_time *start);

#endif
