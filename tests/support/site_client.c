/* SPDX-License-Identifier: Apache-2.0 */
/* site_client.c - see site_client.h. */
#include "site_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../lib/proto/proto.h"
#include "../../lib/tls/tls_client.h"

static char certs_dir[512];
static unsigned site_port;

void site_client_set(const char *certs, unsigned port)
{
    snprintf(certs_dir, sizeof certs_dir, "%s", certs);
    site_port = port;
}

static size_t collect(char *p, size_t size, size_t n, void *arg)
{
    acc_buf_append(arg, p, size * n);
    return size * n;
}

static CURL *make(const char *name, const char *path, struct acc_buf *out)
{
    char url[1024], cert[600], key[600], ca[600];
    snprintf(url, sizeof url, "https://127.0.0.1:%u%s", site_port, path);
    snprintf(cert, sizeof cert, "%s/%s.crt", certs_dir, name ? name : "");
    snprintf(key, sizeof key, "%s/%s.key", certs_dir, name ? name : "");
    snprintf(ca, sizeof ca, "%s/ca.crt", certs_dir);
    CURL *c = curl_easy_init();
    if (!c)
        return NULL;
    struct acc_tls_client tc = {ca, name ? cert : NULL, name ? key : NULL};
    if (acc_tls_curl_setup(c, &tc) != ACC_OK) {
        curl_easy_cleanup(c);
        return NULL;
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L); /* /../ as written: bad keys are tested */
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    return c;
}

long site_perform(CURL *c, struct acc_buf *out)
{
    long status = -1;
    acc_buf_reset(out);
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

long site_request(const char *name, const char *method, const char *path, const char *body,
                  size_t len, struct acc_buf *out)
{
    CURL *c = make(name, path, out);
    if (!c)
        return -2;
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/xml");
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    long status = site_perform(c, out);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return status;
}

CURL *site_handle(const char *name, struct acc_buf *out)
{
    return make(name, "/v1/health", out);
}

acc_err site_fault_of(const struct acc_buf *b)
{
    struct acc_error err;
    return acc_proto_read_fault(b->data ? b->data : "", b->len, &err);
}

int site_silent_listener(unsigned *port_out)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port_out = ntohs(a.sin_port);
    return fd;
}
