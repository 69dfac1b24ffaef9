/* SPDX-License-Identifier: Apache-2.0 */
/* hook_adapter.h - wraps a real adapter and runs a test's code just before
 * its first reservation: "another user books between preview and reserve". */
#ifndef ACC_HOOK_ADAPTER_H
#define ACC_HOOK_ADAPTER_H

#include "adapter.h"

typedef void (*hook_fn)(void *ctx, const struct acc_resource *res, acc_time start,
                        int64_t duration);

/* An adapter that forwards every call to inner (borrowed), calling
 * before_reserve once, before the first reserve. */
struct acc_adapter *hook_wrap(struct acc_adapter *inner, hook_fn before_reserve, void *ctx);

#endif
