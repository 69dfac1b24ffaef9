/* SPDX-License-Identifier: Apache-2.0 */
/* dsig_keygen.c - the self-signed key pair the embedded testbed (or a
 * configuration without [signing]) makes at its first start and reuses. */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dsig_internal.h"

static X509 *make_cert(EVP_PKEY *k, const char *cn)
{
    X509 *c = X509_new();
    unsigned char serial[16];
    BIGNUM *bn = NULL;
    if (!c || RAND_bytes(serial, sizeof serial) != 1)
        goto fail;
    serial[0] &= 0x7f; /* a positive serial number */
    if (!(bn = BN_bin2bn(serial, sizeof serial, NULL)) ||
        !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(c)) || X509_set_version(c, 2) != 1 ||
        !X509_gmtime_adj(X509_getm_notBefore(c), -3600) ||
        !X509_gmtime_adj(X509_getm_notAfter(c), 10L * 366 * 24 * 3600) ||
        X509_set_pubkey(c, k) != 1)
        goto fail;
    X509_NAME *name = X509_get_subject_name(c);
    if (X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, (const unsigned char *)"Accord", -1,
                                   -1, 0) != 1 ||
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1,
                                   0) != 1 ||
        X509_set_issuer_name(c, name) != 1 || X509_sign(c, k, EVP_sha256()) <= 0)
        goto fail;
    BN_free(bn);
    return c;
fail:
    BN_free(bn);
    X509_free(c);
    return NULL;
}

/* Writes path.tmp (mode) with the PEM of key or cert, then renames it. */
static acc_err write_pem(const char *path, mode_t mode, EVP_PKEY *key, X509 *cert,
                         struct acc_error *err)
{
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >= sizeof tmp)
        return acc_error_set(err, ACC_ERR_CONFIG, "%s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
        return acc_error_set(err, ACC_ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return acc_error_set(err, ACC_ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
    }
    int ok =
        key ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) : PEM_write_X509(f, cert);
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
    if (fclose(f) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        acc_err rc = acc_error_set(err, ACC_ERR_IO, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return rc;
    }
    return ACC_OK;
}

acc_err acc_dsig_keypair_ensure(const char *key_path, const char *cert_path, const char *cn,
                                bool *created, struct acc_error *err)
{
    *created = false;
    struct stat sb;
    bool have_key = stat(key_path, &sb) == 0, have_cert = stat(cert_path, &sb) == 0;
    if (have_key && have_cert)
        return ACC_OK;
    if (have_key || have_cert)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "%s exists but %s does not: restore the pair, or remove %s to "
                             "have a new one made",
                             have_key ? key_path : cert_path, have_key ? cert_path : key_path,
                             have_key ? key_path : cert_path);
    acc_err rc = ACC_OK;
    X509 *cert = NULL;
    /* ECDSA P-256: a signature costs a fraction of RSA 2048's, for the
     * same strength and more */
    EVP_PKEY *k = EVP_EC_gen("P-256");
    if (!k || !(cert = make_cert(k, cn))) {
        rc = acc_error_set(err, ACC_ERR_INTERNAL, "OpenSSL could not make a key pair");
        goto out;
    }
    /* The certificate first: a key alone is never left behind by a crash
     * between the two (a certificate alone is, and is reported). */
    if ((rc = write_pem(cert_path, 0644, NULL, cert, err)))
        goto out;
    if ((rc = write_pem(key_path, 0600, k, NULL, err))) {
        unlink(cert_path);
        goto out;
    }
    *created = true;
out:
    X509_free(cert);
    EVP_PKEY_free(k);
    return rc;
}
