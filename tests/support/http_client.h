/* SPDX-License-Identifier: Apache-2.0 */
/* http_client.h - requests and XML helpers for the tests.  http_do is the
 * client library's acc_client_do (client/client.h) with a URL, a 60 s time
 * limit and the reply in the tests' struct. */
#ifndef ACC_HTTP_CLIENT_H
#define ACC_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

struct http_reply {
    long status;
    char *body; /* NUL-terminated */
    size_t len;
    char location[256];
    char content_type[128];
    bool replayed;
};

/* One request; headers is a NULL-terminated list of "Name: value" (or NULL).
 * Returns 0 on a completed exchange (any status), -1 on a transport error. */
int http_do(const char *method, const char *url, const char *body, size_t len,
            const char *const *headers, struct http_reply *out);
void http_reply_free(struct http_reply *r);

/* The text of the first node matching an XPath (prefixes wsag and co are
 * bound), or NULL; free() it. */
char *xml_get(const char *doc, const char *xpath);
/* How many nodes match. */
int xml_count(const char *doc, const char *xpath);

/* Reads a whole file; NULL on failure; free() it. */
char *read_file(const char *path, size_t *len);

#endif
