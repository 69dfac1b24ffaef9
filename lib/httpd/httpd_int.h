/* httpd_int.h - what the files of lib/httpd share and nothing outside sees:
 *
 *   httpd_daemon.c   libmicrohttpd's daemon: start, TLS, connections, stop
 *   httpd_request.c  one exchange: the checks, the body, the hooks, parking
 *   httpd_tally.c    open connections counted by key
 *   httpd_route.c    route tables: acc_httpd_match
 */
#ifndef ACC_HTTPD_INT_H
#define ACC_HTTPD_INT_H

#include <microhttpd.h>
#include <pthread.h>

#include "../tls/tls_server.h"
#include "httpd.h"

/* ------------------------------------------------------------------- tally */

/* Open connections per key (a client's address, a principal's name): a
 * hash table of keys with a count each, under one lock (connections come
 * and go rarely compared with what a request costs). */
struct httpd_tally;
struct httpd_tally_entry;

#define HTTPD_TALLY_KEY_MAX 64

struct httpd_tally *httpd_tally_new(void);
void httpd_tally_free(struct httpd_tally *t);
/* One more connection of key (at most HTTPD_TALLY_KEY_MAX bytes) into *out,
 * unless it holds limit already: then ACC_ERR_TOO_MANY, nothing counted and
 * *open the count.  ACC_ERR_NOMEM without memory. */
acc_err httpd_tally_open(struct httpd_tally *t, const void *key, size_t len, unsigned limit,
                         struct httpd_tally_entry **out, unsigned *open);
/* One connection fewer; NULL does nothing. */
void httpd_tally_close(struct httpd_tally *t, struct httpd_tally_entry *e);

/* ------------------------------------------------------------------ daemon */

struct acc_httpd {
    struct MHD_Daemon *daemon;
    struct acc_httpd_options opt;
    const struct acc_httpd_ops *ops;
    void *app;
    struct acc_tls_server *tls;     /* HTTPS; NULL: plain HTTP */
    struct httpd_tally *addresses;  /* client_connections; NULL: no bound */
    struct httpd_tally *principals; /* the auth hook's who */
    unsigned port;
    atomic_bool quiesced; /* acc_httpd_quiesce: every new connection is closed at once */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned parked; /* requests suspended or resumed and not yet completed */
};

/* Per connection (MHD's socket context). */
struct httpd_conn {
    struct httpd_tally_entry *address;   /* counted against its client address */
    bool over;                           /* beyond its address's bound: every request refused */
    struct httpd_tally_entry *principal; /* counted against the principal of its first request */
    /* The identity read from the client's certificate, kept with that
     * certificate's DER bytes: a later request on the connection whose
     * certificate is byte for byte the same (always, unless a renegotiation
     * changed it) skips parsing it again. */
    unsigned char *der;
    size_t der_len;
    struct acc_tls_peer id;
};

/* httpd_daemon.c: the client certificate's identity of a request on c. */
acc_err httpd_peer_identity(struct MHD_Connection *con, struct httpd_conn *c,
                            struct acc_tls_peer *out, struct acc_error *err);
void httpd_park_count(struct acc_httpd *d, int delta);

/* httpd_request.c: libmicrohttpd's callbacks of one exchange (cls: the
 * struct acc_httpd). */
void *httpd_uri_seen(void *cls, const char *uri, struct MHD_Connection *con);
enum MHD_Result httpd_access(void *cls, struct MHD_Connection *con, const char *url,
                             const char *method, const char *version, const char *upload_data,
                             size_t *upload_data_size, void **con_cls);
void httpd_completed(void *cls, struct MHD_Connection *con, void **con_cls,
                     enum MHD_RequestTerminationCode toe);

#endif
