/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_admin.c - accordctl admin SUBCOMMAND: the operator's commands
 * (administrators only).
 *
 *   accordctl admin backup FILE   the server's backup archive (a tar of the
 *                                 database, the signing key, the [auth]
 *                                 files and the adapters' calendars) into FILE */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

static void help(FILE *f)
{
    fputs("usage: accordctl admin backup FILE\n"
          "\n"
          "Asks the server for a backup (administrators only) and writes it to FILE, a\n"
          "tar archive: a consistent copy of the database made while the server keeps\n"
          "serving, the signing key and certificate, the [auth] tokens and client\n"
          "certificates files, and the simulated sites' and tc's calendar databases,\n"
          "with a MANIFEST that says where each file came from.  FILE must not exist;\n"
          "it is made readable by its owner only (it holds the signing key).\n"
          "Restore: docs/operations.md, \"Backup and restore\".\n",
          f);
}

/* The MANIFEST's "agreements N" line (the archive's first file); -1 when
 * it is not there. */
static long long manifest_agreements(const char *tar, size_t len)
{
    if (len < 1024 || strncmp(tar, "MANIFEST", 100) != 0)
        return -1;
    char size[13];
    memcpy(size, tar + 124, 12);
    size[12] = '\0';
    unsigned long long n = strtoull(size, NULL, 8);
    if (n > len - 512)
        return -1;
    const char *m = tar + 512, *end = m + n;
    for (const char *p = m; p < end; p = memchr(p, '\n', (size_t)(end - p)), p = p ? p + 1 : end)
        if ((size_t)(end - p) > 11 && strncmp(p, "agreements ", 11) == 0)
            return strtoll(p + 11, NULL, 10);
    return -1;
}

/* The archive goes to FILE.part and is renamed once whole. */
static int save(const char *file, const struct acc_client_reply *r)
{
    char part[4200];
    snprintf(part, sizeof part, "%s.part", file);
    /* It holds the signing key and the tokens: the owner's only. */
    int fd = open(part, O_WRONLY | O_CREAT | O_EXCL, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        fprintf(stderr, "accordctl: %s: %s\n", part, strerror(errno));
        return CTL_ERROR;
    }
    bool ok = fwrite(r->body, 1, r->len, f) == r->len;
    ok = fflush(f) == 0 && fsync(fileno(f)) == 0 && ok;
    ok = fclose(f) == 0 && ok;
    if (!ok || access(file, F_OK) == 0 || rename(part, file) != 0) {
        fprintf(stderr, "accordctl: cannot write %s: %s\n", file,
                ok && access(file, F_OK) == 0 ? "it exists already" : strerror(errno));
        unlink(part);
        return CTL_ERROR;
    }
    return CTL_OK;
}

static int backup(const struct ctl *c, const char *file)
{
    if (access(file, F_OK) == 0) {
        fprintf(stderr, "accordctl: %s exists already; give a new file\n", file);
        return CTL_ERROR;
    }
    struct acc_client_reply r;
    int rc = ctl_request(c, "POST", "/admin/backup", NULL, 0, NULL, &r);
    if (rc == CTL_OK && r.status != 200)
        rc = ctl_fault(&r);
    else if (rc == CTL_OK && (rc = save(file, &r)) == CTL_OK)
        printf("Backup: %lld agreement(s), %zu bytes in %s\n", manifest_agreements(r.body, r.len),
               r.len, file);
    acc_client_reply_free(&r);
    return rc;
}

static int run(struct ctl *c, int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        help(stdout);
        return CTL_OK;
    }
    if (argc < 2 || strcmp(argv[1], "backup") != 0) {
        fprintf(stderr, "accordctl admin: %s%s\n",
                argc < 2 ? "which command? " : "unknown: ", argc < 2 ? "(backup)" : argv[1]);
        help(stderr);
        return CTL_USAGE;
    }
    const char *file;

    int rc = ctl_one_argument(c, argc - 1, argv + 1, "admin backup", "FILE", help, &file);
    if (rc != -2)
        return rc;
    return backup(c, file);
}

const struct ctl_command ctl_cmd_admin = {"admin", "operator commands: backup FILE", run, help};
