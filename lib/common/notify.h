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

#endif
