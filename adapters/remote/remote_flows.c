/* SPDX-License-Identifier: Apache-2.0 */
/* remote_flows.c - the remote adapter's flows: the traffic a link
 * reservation carries handed to the site (provision), and what the site's
 * network adapter sees of it on the wire (provision status). */
#include "remote_internal.h"

#include "../../lib/proto/proto.h"

acc_err remote_provision(void *state, const char *key, const char *local_id,
                         const struct acc_flow *flow, struct acc_error *err)
{
    struct remote *r = state;
    struct acc_buf body = ACC_BUF_INIT;
    struct remote_reply rep = {0};
    char path[192];
    (void)local_id;
    acc_err rc = remote_key_path(r, "/v1/reservations/", key, "/provision", path, sizeof path, err);
    if (!rc) {
        acc_proto_write_flow(flow, &body);
        if (!acc_buf_ok(&body))
            rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    }
    if (!rc)
        rc = remote_call(r, "PUT", path, body.data, body.len, true, &rep, err);
    acc_buf_release(&body);
    remote_reply_release(&rep);
    return rc;
}

acc_err remote_provision_status(void *state, const char *key, struct acc_provision_status *out,
                                struct acc_error *err)
{
    struct remote *r = state;
    struct remote_reply rep = {0};
    char path[192];
    acc_err rc = remote_key_path(r, "/v1/reservations/", key, "/provision", path, sizeof path, err);
    if (!rc)
        rc = remote_call(r, "GET", path, NULL, 0, true, &rep, err);
    if (!rc) {
        struct acc_error why = {0};
        if (acc_proto_read_provision_status(acc_buf_str(&rep.body), rep.body.len, out, &why))
            rc = remote_protocol_error(r, "provision status", &why, err);
    }
    remote_reply_release(&rep);
    return rc;
}
