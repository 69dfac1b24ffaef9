/* SPDX-License-Identifier: Apache-2.0 */
/* sign_bench.c - what signing adds to an agreement document: the median
 * time of rendering a stored agreement (acc_xml_agreement), of the check
 * before each commit (acc_http_agreement_check: render and sign, the
 * signature kept), of the rendering path accordd takes
 * (acc_http_agreement_xml: render, then sign with RSA-SHA256) the first
 * time a document is signed and once its signature is kept, and of
 * verifying the result (acc_dsig_verify), over N runs each, on the
 * embedded testbed with its self-made key (ECDSA P-256), or with an RSA
 * 2048 pair made by openssl in its place.
 *
 *   accord_sign_bench [N [rsa]]      (default 500; from the build directory) */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsig.h"
#include "fixture.h"
#include "timefmt.h"

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double median_us(int64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? (double)v[n / 2] : (double)(v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* An RSA 2048 pair made by openssl where accordd would make its own, beside
 * the database in dir. */
static int rsa_pair(const char *dir)
{
    char cmd[1600];
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=bench -keyout "
             "%s/accord-signing.key -out %s/accord-signing.crt 2>/dev/null && chmod 600 "
             "%s/accord-signing.key",
             dir, dir, dir);
    if (system(cmd) == 0)
        return 0;
    fprintf(stderr, "accord_sign_bench: openssl could not make an RSA pair\n");
    return 1;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 500;
    bool rsa = argc > 2 && strcmp(argv[2], "rsa") == 0;
    if (n < 1 || n > 100000 || (argc > 2 && !rsa)) {
        fprintf(stderr, "usage: accord_sign_bench [N (1-100000) [rsa]]\n");
        return 2;
    }
    char dir[] = "/tmp/accord-sign-bench-XXXXXX", db[600];
    if (!mkdtemp(dir))
        return 1;
    snprintf(db, sizeof db, "%s/bench.db", dir);
    if (rsa && rsa_pair(dir))
        return 1;
    struct fixture fx;
    if (fixture_start_signed(&fx, NULL, db))
        return 1;
    size_t len;
    char *offer = NULL;
    FILE *f = fopen(ACC_SOURCE_DIR "/docs/examples/offer.xml", "r");
    if (f) {
        offer = malloc(1 << 20);
        len = offer ? fread(offer, 1, (1 << 20) - 1, f) : 0;
        if (offer)
            offer[len] = '\0';
        fclose(f);
    }
    char id[ACC_ID_LEN + 1];
    struct acc_error err;
    struct acc_agreement a;
    int64_t *plain = calloc((size_t)n, sizeof *plain), *sig = calloc((size_t)n, sizeof *sig),
            *ver = calloc((size_t)n, sizeof *ver), *chk = calloc((size_t)n, sizeof *chk),
            *fresh = calloc((size_t)n, sizeof *fresh);
    int status = 1;
    if (!offer || !plain || !sig || !ver || !chk || !fresh ||
        svc_negotiate_doc(fx.svc, offer, id, NULL, &err) ||
        acc_service_get(fx.svc, id, true, &a, &err)) {
        fprintf(stderr, "sign_bench: set-up failed\n");
        goto out;
    }
    size_t plain_len = 0, signed_len = 0;
    for (int i = 0; i < n; i++) {
        struct acc_buf b = ACC_BUF_INIT, s = ACC_BUF_INIT, f1 = ACC_BUF_INIT;
        struct acc_dsig_verdict v;
        /* A document never signed before: another round count. */
        a.rounds = 1000000 + (unsigned)i;
        int64_t tf = acc_mono_us();
        acc_err r0 = acc_http_agreement_xml(&fx.ctx, &a, &f1, &err);
        fresh[i] = acc_mono_us() - tf;
        acc_buf_release(&f1);
        int64_t t0 = acc_mono_us();
        acc_err r1 = acc_xml_agreement(&a, &b, &err);
        int64_t t1 = acc_mono_us();
        acc_err r2 = acc_http_agreement_xml(&fx.ctx, &a, &s, &err);
        int64_t t2 = acc_mono_us();
        acc_err r3 = acc_dsig_verify(s.data, s.len, NULL, &v, &err);
        int64_t t3 = acc_mono_us();
        acc_err r4 = acc_http_agreement_check(&fx.ctx, &a, &err);
        int64_t t4 = acc_mono_us();
        plain[i] = t1 - t0;
        sig[i] = t2 - t1;
        ver[i] = t3 - t2;
        chk[i] = t4 - t3;
        plain_len = b.len;
        signed_len = s.len;
        acc_buf_release(&b);
        acc_buf_release(&s);
        if (r0 || r1 || r2 || r3 || r4 || !v.valid) {
            fprintf(stderr, "sign_bench: run %d failed\n", i);
            acc_agreement_release(&a);
            goto out;
        }
    }
    acc_agreement_release(&a);
    printf("agreement of docs/examples/offer.xml, %d runs, %s / SHA-256\n", n,
           rsa ? "RSA 2048" : "ECDSA P-256");
    printf("render only        median %8.1f us  (%zu bytes)\n", median_us(plain, n), plain_len);
    printf("render + check     median %8.1f us  (before each commit; signs)\n", median_us(chk, n));
    printf("render + sign      median %8.1f us  (%zu bytes; signed the first time)\n",
           median_us(fresh, n), signed_len);
    printf("render + sign      median %8.1f us  (the same bytes again: the kept signature)\n",
           median_us(sig, n));
    printf("verify (embedded)  median %8.1f us\n", median_us(ver, n));
    status = 0;
out:
    free(plain);
    free(sig);
    free(ver);
    free(chk);
    free(fresh);
    free(offer);
    fixture_stop(&fx);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "sign_bench: could not remove %s\n", dir);
    return status;
}
