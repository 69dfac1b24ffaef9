/* SPDX-License-Identifier: Apache-2.0 */
/* h_signing.c - signed agreements: the one place a wsag:Agreement document
 * is made and signed, GET /certificate, and the signer of a configuration
 * (configured files, or the self-made pair beside the database). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/common/log.h"
#include "../../lib/sql/sql.h"
#include "../../lib/dsig/dsig.h"
#include "http.h"

acc_err acc_http_agreement_xml(struct acc_http_ctx *ctx, const struct acc_agreement *a,
                               struct acc_buf *out, struct acc_error *err)
{
    if (!ctx->signer)
        return acc_xml_agreement(a, out, err);
    struct acc_buf plain = ACC_BUF_INIT;
    unsigned char kept[ACC_DSIG_KEPT_MAX];
    size_t kept_len = 0;
    bool fresh = false;
    acc_err rc = acc_xml_agreement(a, &plain, err);
    if (!rc)
        rc = acc_dsig_sign_kept(ctx->signer, plain.data, plain.len, a->signature, a->signature_len,
                                out, &fresh, kept, &kept_len, err);
    acc_buf_release(&plain);
    /* A new signature of the current version's document is kept with the
     * agreement, for the GETs after this one (also after a restart). */
    if (!rc && fresh && ctx->svc && a->version && a->version == a->versions) {
        struct acc_error kerr;
        if (acc_service_keep_signature(ctx->svc, a->id, a->updated, kept, kept_len, &kerr))
            acc_log_warn("agreement %s: its signature is not kept: %s", a->id, kerr.msg);
    }
    return rc;
}

acc_err acc_http_agreement_check(void *arg, struct acc_agreement *a, struct acc_error *err)
{
    struct acc_http_ctx *ctx = arg;
    if (!ctx->signer)
        return ACC_OK;
    /* Signed here, before the commit, as it will be read back: the
     * signature is stored with the commit (a->signature) and the reply,
     * the same bytes, is sent with it.  A new agreement is committed as its
     * version 1 (a version it does not know yet is 0 here); were the bytes
     * to differ, the reply would only be signed again. */
    struct acc_agreement v = *a;
    if (!v.version)
        v.version = v.versions = 1;
    struct acc_buf doc = ACC_BUF_INIT, out = ACC_BUF_INIT;
    unsigned char kept[ACC_DSIG_KEPT_MAX];
    size_t kept_len = 0;
    bool fresh = false;
    acc_err rc = acc_xml_agreement(&v, &doc, err);
    if (!rc)
        rc = acc_dsig_sign_kept(ctx->signer, doc.data, doc.len, NULL, 0, &out, &fresh, kept,
                                &kept_len, err);
    acc_buf_release(&doc);
    acc_buf_release(&out);
    if (!rc && fresh) {
        unsigned char *sig = malloc(kept_len);
        if (!sig)
            return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
        memcpy(sig, kept, kept_len);
        free(a->signature);
        a->signature = sig;
        a->signature_len = kept_len;
    }
    return rc;
}

void acc_h_certificate(struct acc_http_ctx *ctx, const struct acc_request *rq,
                       struct acc_response *rs)
{
    if (!ctx->signer) {
        acc_reply_error(rq, rs, ACC_ERR_NOT_FOUND, "this server signs nothing", NULL);
        return;
    }
    size_t n;
    const char *pem = acc_signer_cert_pem(ctx->signer, &n);
    acc_buf_reset(&rs->body);
    acc_buf_append(&rs->body, pem, n);
    if (!acc_buf_ok(&rs->body)) {
        acc_reply_error(rq, rs, ACC_ERR_NOMEM, "out of memory", NULL);
        return;
    }
    acc_reply_text(rs, 200, "application/x-pem-file");
}

/* The permission bits of path that give its group or others access (0
 * when only the owner has any, or it cannot be read); *mode all of them. */
static mode_t exposed(const char *path, mode_t *mode)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return 0;
    *mode = sb.st_mode & 07777;
    return sb.st_mode & 077;
}

/* path's directory joined with name. */
static acc_err beside(const char *path, const char *name, char *out, size_t size,
                      struct acc_error *err)
{
    const char *slash = strrchr(path, '/');
    int n = slash ? snprintf(out, size, "%.*s/%s", (int)(slash - path), path, name)
                  : snprintf(out, size, "%s", name);
    if (n < 0 || (size_t)n >= size)
        return acc_error_set(err, ACC_ERR_CONFIG, "database path %s is too long", path);
    return ACC_OK;
}

acc_err acc_http_signer_open(const struct acc_config *cfg, struct acc_signer **out,
                             struct acc_error *err)
{
    *out = NULL;
    if (cfg->sign_key || cfg->sign_cert) {
        if (!cfg->sign_key || !cfg->sign_cert)
            return acc_error_set(err, ACC_ERR_CONFIG,
                                 "[signing] needs both key and certificate (%s is missing)",
                                 cfg->sign_key ? "certificate" : "key");
        acc_err rc = acc_signer_open(cfg->sign_key, cfg->sign_cert, out, err);
        if (rc) {
            acc_error_prefix(err, "[signing]");
            return rc;
        }
        /* The operator's file and the operator's choice (a group may be
         * meant to read it): said, not refused. */
        mode_t mode = 0;
        if (exposed(cfg->sign_key, &mode))
            acc_log_warn("signing key %s has mode %04o: others than its owner can read or "
                         "change it, and could sign agreements as this accordd (chmod 600 %s)",
                         cfg->sign_key, (unsigned)mode, cfg->sign_key);
        return ACC_OK;
    }
    /* A URL (--db postgresql://... overriding the file) has no directory
     * beside it, and several instances sign as one: the operator's pair. */
    if (!acc_sql_location_can(cfg->db_path, ACC_SQL_CAP_FILE) &&
        strcmp(cfg->db_path, ":memory:") != 0)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "a PostgreSQL database needs [signing] key and certificate (the same "
                             "pair on every accordd sharing it)");
    /* The pair beside the database (":memory:" has no directory: the
     * current one). */
    const char *db = strcmp(cfg->db_path, ":memory:") == 0 ? "./accord.db" : cfg->db_path;
    char key[PATH_MAX], cert[PATH_MAX], host[256] = "localhost", cn[300];
    acc_err rc = beside(db, "accord-signing.key", key, sizeof key, err);
    if (!rc)
        rc = beside(db, "accord-signing.crt", cert, sizeof cert, err);
    if (rc)
        return rc;
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "localhost");
    snprintf(cn, sizeof cn, "Accord on %s", host);
    bool created = false;
    if ((rc = acc_dsig_keypair_ensure(key, cert, cn, &created, err)))
        return rc;
    if (created)
        acc_log_info("made the signing key %s and its self-signed certificate %s", key, cert);
    /* accordd made it 0600 and nothing but accordd reads it: more is a
     * change made since, refused (as ssh refuses an open private key). */
    mode_t mode = 0;
    if (exposed(key, &mode))
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "signing key %s has mode %04o, but accordd made it 0600: others "
                             "than its owner can read or change it, and could sign agreements as "
                             "this accordd. chmod 600 %s; if it may have been copied, remove it "
                             "and %s to have a new pair made (clients then need the new "
                             "certificate)",
                             key, (unsigned)mode, key, cert);
    return acc_signer_open(key, cert, out, err);
}
