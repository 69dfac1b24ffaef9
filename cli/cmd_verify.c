/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_verify.c - accordctl verify FILE: checks the signature of a saved
 * agreement offline (xmlsec, lib/dsig), with the service's certificate or,
 * trusted explicitly, the one the document carries.  No server is asked. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/dsig/dsig.h"
#include "ctl.h"

/* A saved agreement is a few kilobytes; this bounds what is read. */
#define MAX_DOC (16 * 1024 * 1024)

static void help(FILE *f)
{
    fputs("usage: accordctl verify FILE --cert CERT\n"
          "       accordctl verify FILE --trust-embedded\n"
          "\n"
          "Checks offline that FILE, an agreement saved from Accord (GET\n"
          "/agreements/ID), carries a valid enveloped XML signature over the whole\n"
          "document: with the public key of CERT, the service's certificate in PEM\n"
          "(GET /certificate), or with --trust-embedded the certificate inside the\n"
          "document itself (this proves the document is unchanged since it was signed\n"
          "by that certificate's key, not who holds the key: compare the fingerprint\n"
          "printed with the service's).  Exit 0 valid, 1 invalid (the reason is\n"
          "printed), 2 usage.\n",
          f);
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "accordctl: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(MAX_DOC + 1);
    size_t n = buf ? fread(buf, 1, MAX_DOC + 1, f) : 0;
    bool bad = !buf || ferror(f);
    if (f != stdin)
        fclose(f);
    if (bad || n > MAX_DOC) {
        fprintf(stderr, "accordctl: %s: %s\n", path,
                !buf          ? "out of memory"
                : n > MAX_DOC ? "larger than 16 MiB"
                              : "read error");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static int run(struct ctl *c, int argc, char **argv)
{
    (void)c;
    static const struct option opts[] = {{"cert", required_argument, NULL, 'c'},
                                         {"trust-embedded", no_argument, NULL, 'e'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *cert = NULL;
    bool embedded = false;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (opt == 'c') {
            cert = optarg;
        } else if (opt == 'e') {
            embedded = true;
        } else if (opt == 'h') {
            help(stdout);
            return CTL_OK;
        } else {
            help(stderr);
            return CTL_USAGE;
        }
    }
    if (optind + 1 != argc || (!cert && !embedded) || (cert && embedded)) {
        fprintf(stderr, "accordctl verify: give one FILE and either --cert CERT or "
                        "--trust-embedded\n");
        help(stderr);
        return CTL_USAGE;
    }
    const char *file = argv[optind];
    size_t len = 0;
    char *doc = read_all(file, &len);
    if (!doc)
        return CTL_ERROR;
    struct acc_error err;
    struct acc_dsig_verdict v;
    int rc = CTL_ERROR;
    if (acc_dsig_init(&err)) {
        fprintf(stderr, "accordctl: %s\n", err.msg);
        free(doc);
        return CTL_ERROR;
    }
    if (acc_dsig_verify(doc, len, cert, &v, &err)) {
        fprintf(stderr, "accordctl: %s\n", err.msg);
        goto out;
    }
    if (cert)
        printf("certificate: %s (given with --cert)\n", cert);
    else if (v.subject[0])
        printf("certificate: the one inside the document, trusted explicitly "
               "(--trust-embedded)\n");
    if (v.subject[0])
        printf("subject: %s\nsha256 fingerprint: %s\n", v.subject, v.sha256);
    if (v.valid) {
        printf("%s: valid signature\n", file);
        rc = CTL_OK;
    } else {
        printf("%s: INVALID: %s\n", file, v.reason);
    }
out:
    acc_dsig_cleanup();
    free(doc);
    return rc;
}

const struct ctl_command ctl_cmd_verify = {
    "verify", "check an agreement's signature offline (no server)", run, help};
