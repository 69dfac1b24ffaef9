/* dsig_internal.h - shared by dsig.c, dsig_verify.c and dsig_keygen.c. */
#ifndef ACC_DSIG_INTERNAL_H
#define ACC_DSIG_INTERNAL_H

#include <openssl/x509.h>

#include "dsig.h"

/* The last error xmlsec reported in this thread ("" if none), cleared by
 * dsig_last_clear(). */
const char *dsig_last_error(void);
void dsig_last_clear(void);
/* Whether acc_dsig_init() has been called (and not undone). */
bool dsig_ready(void);
/* The certificate's subject and SHA-256 fingerprint into v. */
void dsig_describe_cert(X509 *cert, struct acc_dsig_verdict *v);
/* The PEM certificate of a file, or NULL with err set (ACC_ERR_CONFIG). */
X509 *dsig_read_cert(const char *path, struct acc_error *err);

#endif
