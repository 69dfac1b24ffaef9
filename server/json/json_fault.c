/* SPDX-License-Identifier: Apache-2.0 */
/* json_fault.c - the error reply of every route as JSON: the code, the
 * HTTP status, the first line of the message and the rest as details
 * (docs/documents.md). */
#include "json.h"

#include <string.h>

#include "json_writer.h"

void acc_json_fault(acc_err code, const char *msg, const char *agreement_id, struct acc_buf *out)
{
    struct jw j = {.out = out};

    if (!msg || !*msg)
        msg = acc_err_text(code);
    const char *nl = strchr(msg, '\n');

    jw_open_obj(&j);
    jw_str(&j, "code", acc_err_symbol(code));
    jw_i64(&j, "status", acc_err_http_status(code));
    jw_key(&j, "message");
    /* The first line only: the others are the details. */
    if (nl == msg) {
        acc_json_string(out, acc_err_text(code));
    } else if (nl) {
        struct acc_buf first = ACC_BUF_INIT;
        acc_buf_append(&first, msg, (size_t)(nl - msg));
        const char *s = acc_buf_str(&first);
        acc_json_string(out, s ? s : "");
        acc_buf_release(&first);
    } else {
        acc_json_string(out, msg);
    }
    jw_open_arr(&j, "details");
    if (nl)
        jw_split(&j, nl + 1, '\n');
    jw_close_arr(&j);
    jw_str(&j, "agreementId", agreement_id);
    jw_close_obj(&j);
    jw_end_doc(&j);
}
