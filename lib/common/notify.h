/* SPDX-License-Identifier: Apache-2.0 */
/* notify.h - telling the service manager how a daemon is doing: systemd's
 * notification protocol (sd_notify) without libsystemd.
 *
 * The service manager names a datagram socket in $NOTIFY_SOCKET (a path, or
 * an abstract name written with a leading '@'); each message is one
 * datagram of newline-separated VARIABLE=VALUE lines.  Without the variable
 * (not started by systemd, or a unit that is not Type=notify) nothing is
 * sent and nothing fails. */
#ifndef ACC_NOTIFY_H
#define ACC_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

/* Sends state (such as "READY=1") to $NOTIFY_SOCKET.  ACC_OK when it was
 * sent or when there is no socket to send it to; ACC_ERR_INVALID for an
 * address this cannot use (not absolute, not abstract, too long);
 * ACC_ERR_IO when the datagram could not be sent. */
acc_err acc_notify(const char *state, struct acc_error *err);

/* The daemons' moments: serving (READY=1), rereading their configuration
 * or certificates (RELOADING=1 with the monotonic clock, READY=1 again
 * after), shutting down (STOPPING=1).  A failure is logged as a warning:
 * the daemon goes on without its manager's view. */
void acc_notify_ready(void);
void acc_notify_reloading(void);
void acc_notify_stopping(void);

/* The watchdog: $WATCHDOG_USEC (for this process: $WATCHDOG_PID unset or
 * ours) halved, the interval at which WATCHDOG=1 keeps the service alive;
 * 0 when the unit sets no WatchdogSec=. */
int64_t acc_notify_watchdog_interval_us(void);
/* WATCHDOG=1, at most once per acc_notify_watchdog_interval_us (callers may
 * call it more often); nothing without a watchdog.  Thread-safe. */
void acc_notify_watchdog(void);
/* EXTEND_TIMEOUT_USEC=usec: the start (or stop) may take usec more from
 * now, for work of unknown length such as database migrations. */
void acc_notify_extend_timeout(uint64_t usec);

/* Whether systemd (PID 1) manages this process: $INVOCATION_ID or
 * $NOTIFY_SOCKET set, and /run/systemd/system there (sd_booted). */
bool acc_notify_under_systemd(void);

#endif
