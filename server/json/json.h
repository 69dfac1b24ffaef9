/* SPDX-License-Identifier: Apache-2.0 */
/* json.h - JSON views of the same documents, for clients that send
 * Accept: application/json (the CLI's --json, scripts).
 *
 * Field names are camelCase; times are RFC 3339 strings; absent values are
 * left out rather than null.  Each renderer appends one JSON object to out.
 * The shapes are documented in docs/documents.md. */
#ifndef ACC_JSON_H
#define ACC_JSON_H

#include "../../lib/common/buf.h"
#include "../../lib/common/error.h"
#include "../../lib/model/model.h"
#include "../view/view.h"

void acc_json_agreement(const struct acc_agreement *a, struct acc_buf *out);
void acc_json_state(const struct acc_state_view *v, struct acc_buf *out);
void acc_json_run(const struct acc_run *r, struct acc_buf *out);
void acc_json_list(const struct acc_agreement_list *l, struct acc_buf *out);
void acc_json_trace(const struct acc_agreement *a, const struct acc_trace *t, struct acc_buf *out);
void acc_json_sites(const struct acc_sites_view *v, const char *only_site, struct acc_buf *out);
void acc_json_preview(const struct acc_preview_view *v, struct acc_buf *out);
void acc_json_quote(const struct acc_quote *q, struct acc_buf *out);
void acc_json_fault(acc_err code, const char *msg, const char *agreement_id, struct acc_buf *out);

/* Appends s as a JSON string literal (quoted, escaped; NULL as null). */
void acc_json_string(struct acc_buf *out, const char *s);

#endif
