/* SPDX-License-Identifier: Apache-2.0 */
#include "error.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *symbol;
    int status;
    const char *text;
} table[ACC_ERR__COUNT] = {
    [ACC_OK] = {"Ok", 200, "success"},
    [ACC_ERR_NOMEM] = {"OutOfMemory", 503, "out of memory"},
    [ACC_ERR_INVALID] = {"InvalidOffer", 400, "invalid input"},
    [ACC_ERR_MALFORMED] = {"MalformedDocument", 400, "document is not well-formed XML"},
    [ACC_ERR_SCHEMA] = {"SchemaViolation", 400, "document does not match the schema"},
    [ACC_ERR_DTD] = {"DtdForbidden", 400, "documents must not carry a DTD or entities"},
    [ACC_ERR_TOO_LARGE] = {"BodyTooLarge", 413, "request body too large"},
    [ACC_ERR_TOO_DEEP] = {"DocumentTooDeep", 400, "document nests too deeply"},
    [ACC_ERR_UNKNOWN_SITE] = {"UnknownSite", 400, "unknown site"},
    [ACC_ERR_NO_LINK] = {"UnknownLink", 400, "no network link between the sites"},
    [ACC_ERR_CAPACITY] = {"OverCapacity", 400, "more than the resource has"},
    [ACC_ERR_NOT_FOUND] = {"NotFound", 404, "not found"},
    [ACC_ERR_METHOD] = {"MethodNotAllowed", 405, "method not allowed"},
    [ACC_ERR_UNSUPPORTED_MEDIA] = {"UnsupportedMediaType", 415, "unsupported media type"},
    [ACC_ERR_UNAUTHORIZED] = {"Unauthorized", 401, "authentication required"},
    [ACC_ERR_FORBIDDEN] = {"Forbidden", 403, "not allowed for this user"},
    [ACC_ERR_STATE] = {"InvalidState", 409, "not allowed in the agreement's state"},
    [ACC_ERR_NO_SLOT] = {"NoCommonSlot", 409, "no common time slot within the window"},
    [ACC_ERR_BUSY] = {"ResourceBusy", 409, "resource is no longer free"},
    [ACC_ERR_ADAPTER] = {"AdapterFailed", 502, "an adapter failed"},
    [ACC_ERR_UNAVAILABLE] = {"AdapterUnavailable", 503, "an adapter is unreachable"},
    [ACC_ERR_TIMEOUT] = {"AdapterTimeout", 503, "an adapter did not answer in time"},
    [ACC_ERR_CANCELLED] = {"Cancelled", 409, "the operation was cancelled"},
    [ACC_ERR_INTERRUPTED] = {"Interrupted", 503, "interrupted by a stop or restart of accordd"},
    [ACC_ERR_UNSUPPORTED] = {"NotSupported", 501, "not supported"},
    [ACC_ERR_STORAGE] = {"StorageFailed", 500, "the database failed"},
    [ACC_ERR_CONFIG] = {"ConfigError", 500, "configuration error"},
    [ACC_ERR_IO] = {"IoError", 500, "input/output error"},
    [ACC_ERR_INTERNAL] = {"InternalError", 500, "internal error"},
    [ACC_ERR_OVERLOADED] = {"Overloaded", 503, "too many negotiations at once; retry later"},
    [ACC_ERR_KEY_REUSED] = {"IdempotencyKeyReused", 422,
                            "the idempotency key was used with another offer"},
    [ACC_ERR_TOO_MANY] = {"TooManyConnections", 429, "too many connections from this client"},
    [ACC_ERR_REQUEST_TIMEOUT] = {"RequestTimeout", 408, "the request did not arrive in time"},
    [ACC_ERR_HEADERS] = {"RequestHeaderFieldsTooLarge", 431,
                         "too many header fields or query parameters"},
    [ACC_ERR_BAD_REQUEST] = {"InvalidRequest", 400, "the request is malformed"},
    [ACC_ERR_TOO_MANY_ATTRS] = {"TooManyAttributes", 400, "too many attributes"},
    [ACC_ERR_PEER_LIMIT] = {"PeerLimit", 403, "over the limits the site gives this peer"},
    [ACC_ERR_QUOTA] = {"QuotaExceeded", 403, "over a quota of this user"},
    [ACC_ERR_STORAGE_AWAY] = {"StorageUnavailable", 503,
                              "the database cannot be reached now; retry later"},
};

static acc_err clamp(acc_err code)
{
    return (code >= 0 && code < ACC_ERR__COUNT) ? code : ACC_ERR_INTERNAL;
}

const char *acc_err_symbol(acc_err code)
{
    return table[clamp(code)].symbol;
}

acc_err acc_err_from_symbol(const char *symbol)
{
    for (int i = 0; symbol && i < ACC_ERR__COUNT; i++) {
        if (table[i].symbol && strcmp(table[i].symbol, symbol) == 0)
            return (acc_err)i;
    }
    return ACC_ERR__COUNT;
}

int acc_err_http_status(acc_err code)
{
    return table[clamp(code)].status;
}

const char *acc_err_text(acc_err code)
{
    return table[clamp(code)].text;
}

acc_err acc_error_vset(struct acc_error *err, acc_err code, const char *fmt, va_list ap)
{
    if (err) {
        err->code = code;
        err->retry_after = 0;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    }
    return code;
}

acc_err acc_error_set(struct acc_error *err, acc_err code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    acc_error_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

void acc_error_append(struct acc_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    size_t len = strlen(err->msg);
    if (len > 0 && len + 1 < sizeof err->msg)
        err->msg[len++] = '\n';
    if (len + 1 >= sizeof err->msg)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg + len, sizeof err->msg - len, fmt, ap);
    va_end(ap);
}

void acc_error_prefix(struct acc_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char head[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    size_t hl = strlen(head), ml = strlen(err->msg);
    size_t room = sizeof err->msg - 1 - hl - 2; /* head is at most 255 bytes */
    size_t keep = ml < room ? ml : room;
    memmove(err->msg + hl + 2, err->msg, keep);
    memcpy(err->msg, head, hl);
    err->msg[hl] = ':';
    err->msg[hl + 1] = ' ';
    err->msg[hl + 2 + keep] = '\0';
}

void acc_error_clear(struct acc_error *err)
{
    if (err) {
        err->code = ACC_OK;
        err->msg[0] = '\0';
        err->retry_after = 0;
    }
}

acc_err acc_error_copy(struct acc_error *dst, const struct acc_error *src)
{
    if (dst && dst != src)
        *dst = *src;
    return src->code;
}
