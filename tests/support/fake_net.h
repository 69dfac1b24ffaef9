/* SPDX-License-Identifier: Apache-2.0 */
/* fake_net.h - a scripted network adapter that provisions, for the
 * service's tests of issue 10 (handing flows to the network, retries,
 * re-provisioning at restart, guarantee states).
 *
 * Kind "fake-net", caps BANDWIDTH | PROVISION | THREADSAFE.  Bandwidth is
 * always free (previews answer the whole window).  What it holds lives in
 * a record per instance name that outlives the instance, as an adapter's
 * own database file would, so a service opened again on the same name finds
 * its reservations.  It records every provision call and the last flow per
 * reservation, can fail the next provision calls, and answers
 * provision_status with a status the test sets. */
#ifndef ACC_FAKE_NET_H
#define ACC_FAKE_NET_H

#include <stdbool.h>
#include <stddef.h>

#include "adapter.h"

extern const struct acc_adapter_ops fake_net_ops;

struct fake_net;

/* The record of the instance named name (created empty on first use). */
struct fake_net *fake_net_get(const char *name);
/* Forgets every record (between tests). */
void fake_net_reset(void);

/* The next n provision calls fail with ACC_ERR_ADAPTER. */
void fake_net_fail_next(struct fake_net *f, unsigned n);
/* Provision calls so far (failed ones too), in all or for one key. */
unsigned fake_net_provisions(struct fake_net *f, const char *key);
/* Reservations held. */
size_t fake_net_held(struct fake_net *f);
/* The key of held reservation i (in booking order), or NULL. */
const char *fake_net_key(struct fake_net *f, size_t i, char *buf, size_t len);
/* The last flow provisioned for key as "SITE_A=a1,a2 SITE_B=b1" with the
 * addresses sorted; false when none was. */
bool fake_net_flow(struct fake_net *f, const char *key, char *buf, size_t len);
/* What provision_status answers for every provisioned key (provisioned is
 * set by the fake itself). */
void fake_net_set_status(struct fake_net *f, const struct acc_provision_status *st);

#endif
