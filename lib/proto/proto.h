/* SPDX-License-Identifier: Apache-2.0 */
/* proto.h - the adapter protocol v1 between accordd (the remote adapter) and
 * a site daemon (accord-site): XML documents in the namespace
 * urn:accord:site:1, carried over HTTPS (docs/protocol.md,
 * schema/adapter-protocol.xsd).
 *
 * Writers append one document to an acc_buf (check acc_buf_ok() after);
 * they write what they are given.  Readers parse with the same hardening
 * as offers (no DTD, no entity, no network; size, depth, element and
 * attribute limits), accept only the elements and attributes of v1 in
 * their namespace, and validate every value: ACC_ERR_BAD_REQUEST for a
 * document of the wrong shape, ACC_ERR_INVALID for a bad value, each
 * naming the element; ACC_ERR_MALFORMED, ACC_ERR_DTD, ACC_ERR_TOO_LARGE,
 * ACC_ERR_TOO_DEEP, ACC_ERR_TOO_MANY_ATTRS as for offers.  On failure the
 * output holds nothing to release.  Thread-safe; no global state is
 * changed but libxml2's one-time initialisation.
 *
 * The engine and the adapters' callers never see this module: only the
 * remote adapter and accord-site use it.
 */
#ifndef ACC_PROTO_H
#define ACC_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/buf.h"
#include "../common/error.h"
#include "../common/timefmt.h"
#include "../model/identity.h"
#include "../model/model.h"
#include "../model/reservation.h"

#define ACC_PROTO_VERSION  1
#define ACC_PROTO_NS       "urn:accord:site:1"
#define ACC_PROTO_BODY_MAX (64 * 1024)

/* Limits of the readers (and of what the writers should be given). */
#define ACC_PROTO_MAX_ARGS      64  /* job arguments */
#define ACC_PROTO_MAX_ARG_LEN   512 /* bytes of one argument or environment entry */
#define ACC_PROTO_MAX_ENV       64  /* job environment entries */
#define ACC_PROTO_MAX_ADDRS     256 /* addresses per side of a flow */
#define ACC_PROTO_MAX_FRAMES    512 /* frames in one <Frames> (the writer truncates) */
#define ACC_PROTO_MAX_RESOURCES 16  /* resources in one <Health> */
/* Limits of <Identity> (bytes): the user's name, a token's issuer, a
 * subject (a token's "sub" or a certificate's DN), one group, the token. */
#define ACC_PROTO_MAX_USER    256
#define ACC_PROTO_MAX_ISSUER  1024
#define ACC_PROTO_MAX_SUBJECT 1024
#define ACC_PROTO_MAX_GROUP   512
#define ACC_PROTO_MAX_TOKEN   16384

/* POST /v1/preview */
struct acc_proto_preview {
    enum acc_resource_kind kind;
    char resource[128];
    int64_t amount;
    acc_time from, until;
    int64_t duration;
    char old_key[ACC_KEY_MAX]; /* "": none */
    /* Whom it is for (<Identity>, optional): read, it is owned
     * (acc_proto_preview_release); written, it is only looked at.  No user
     * and no subject: none (an older peer's document). */
    struct acc_identity identity;
};

/* PUT /v1/reservations/KEY */
struct acc_proto_reserve {
    char old_key[ACC_KEY_MAX]; /* "": none */
    enum acc_resource_kind kind;
    char resource[128];
    int64_t amount;
    acc_time start;
    int64_t duration;
    struct acc_identity identity; /* as acc_proto_preview's */
};

/* PUT /v1/reservations/KEY/provision: a flow read from a document. */
struct acc_proto_flow {
    struct acc_flow flow; /* views into the owned strings below */
    char *site_a, *site_b;
    char **addrs_a, **addrs_b; /* flow.n_a and flow.n_b entries */
};

/* POST /v1/jobs: a job read from a document. */
struct acc_proto_job {
    struct acc_job job; /* views into the owned strings below; job.host set */
    char *key, *local_id, *executable, *directory, *output, *host;
    char **args; /* job.n_args entries */
    char **env;  /* n_env entries and a NULL (job.env; NULL when none) */
    size_t n_env;
    /* whom the job is for (job.identity points here; NULL when the
     * document names no one) */
    struct acc_identity identity;
};

/* GET /v1/health */
struct acc_proto_health {
    bool up;
    unsigned version;
    char site[64];
    char detail[256];
    unsigned caps; /* ACC_CAP_* the daemon serves */
    size_t n_resources;
    struct {
        enum acc_resource_kind kind;
        char name[128];
        int64_t capacity;
    } resources[ACC_PROTO_MAX_RESOURCES];
};

void acc_proto_write_preview(const struct acc_proto_preview *p, struct acc_buf *out);
acc_err acc_proto_read_preview(const char *body, size_t len, struct acc_proto_preview *out,
                               struct acc_error *err);
/* Frees the identity a read preview holds. */
void acc_proto_preview_release(struct acc_proto_preview *p);

/* At most ACC_PROTO_MAX_FRAMES frames are written; with more, the document
 * says truncated (nothing is known after its last frame). */
void acc_proto_write_frames(const struct acc_frames *f, struct acc_buf *out);
/* out is initialised here (acc_frames_release() it after success). */
acc_err acc_proto_read_frames(const char *body, size_t len, struct acc_frames *out,
                              struct acc_error *err);

void acc_proto_write_reserve(const struct acc_proto_reserve *r, struct acc_buf *out);
acc_err acc_proto_read_reserve(const char *body, size_t len, struct acc_proto_reserve *out,
                               struct acc_error *err);
void acc_proto_reserve_release(struct acc_proto_reserve *r);

void acc_proto_write_reservation(const char *key, enum acc_resource_kind kind, const char *resource,
                                 const struct acc_reservation *r, struct acc_buf *out);
/* out->nodes is malloc'd (acc_reservation_release() it) or NULL. */
acc_err acc_proto_read_reservation(const char *body, size_t len, struct acc_reservation *out,
                                   struct acc_error *err);

void acc_proto_write_flow(const struct acc_flow *f, struct acc_buf *out);
acc_err acc_proto_read_flow(const char *body, size_t len, struct acc_proto_flow *out,
                            struct acc_error *err);
void acc_proto_flow_release(struct acc_proto_flow *f);

void acc_proto_write_provision_status(const struct acc_provision_status *s, struct acc_buf *out);
acc_err acc_proto_read_provision_status(const char *body, size_t len,
                                        struct acc_provision_status *out, struct acc_error *err);

void acc_proto_write_job(const struct acc_job *j, struct acc_buf *out);
acc_err acc_proto_read_job(const char *body, size_t len, struct acc_proto_job *out,
                           struct acc_error *err);
void acc_proto_job_release(struct acc_proto_job *j);

void acc_proto_write_job_ref(const char *id, struct acc_buf *out);
acc_err acc_proto_read_job_ref(const char *body, size_t len, char *id, size_t id_len,
                               struct acc_error *err);

void acc_proto_write_job_status(const struct acc_job_status *s, struct acc_buf *out);
acc_err acc_proto_read_job_status(const char *body, size_t len, struct acc_job_status *out,
                                  struct acc_error *err);

void acc_proto_write_health(const struct acc_proto_health *h, struct acc_buf *out);
acc_err acc_proto_read_health(const char *body, size_t len, struct acc_proto_health *out,
                              struct acc_error *err);

void acc_proto_write_fault(acc_err code, const char *site, const char *msg, struct acc_buf *out);
/* The fault a site answered, into err (code from its symbol; unknown symbol: ACC_ERR_ADAPTER;
 * unreadable body: ACC_ERR_ADAPTER "protocol error: ..."); returns err->code. */
acc_err acc_proto_read_fault(const char *body, size_t len, struct acc_error *err);

/* Keys and job ids in paths: [A-Za-z0-9._:-]{1,95}; false otherwise (also
 * for "." and "..", which a path would resolve). */
bool acc_proto_key_ok(const char *key);

#endif
