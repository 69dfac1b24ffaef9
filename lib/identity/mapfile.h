/* SPDX-License-Identifier: Apache-2.0 */
/* mapfile.h - from a user's identity to a local account, as HTCondor-CE's
 * mapfile does it: ordered lines, the first that matches wins.
 *
 * One rule a line, "KIND PATTERN ACCOUNT":
 *
 *   token  /^https:\/\/idp\.example\.org\/,alice$/  alice01
 *   group  "/cms/production"                        cmsprod
 *   dn     "/C=DE/O=GridGermany/CN=Alice Example"   alice01
 *   user   bob                                      bob
 *
 * KIND says what the pattern is matched against: token the token's
 * "ISSUER,SUBJECT" (an identity with an issuer), group each of its groups,
 * dn a certificate's subject DN (an identity with a subject and no issuer),
 * user the broker's user name.  PATTERN is a word or a "quoted" string
 * (matched whole and exactly) or a /POSIX extended regex/ (matched
 * anywhere, as regexec does: anchor it with ^ and $; "\/" is a slash).
 * ACCOUNT must exist and must not be root.  '#' starts a comment line, and
 * after the account a comment to the end of the line.
 *
 * Both accord-site ([site] mapfile) and accordd ([accounts] mapfile) use
 * it (docs/security.md). */
#ifndef ACC_MAPFILE_H
#define ACC_MAPFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/error.h"
#include "../model/identity.h"

#define ACC_MAPFILE_MAX_BYTES (1024 * 1024)
#define ACC_MAPFILE_MAX_LINES 10000

struct acc_mapfile;

/* Reads the mapfile at path.  Every problem is ACC_ERR_CONFIG naming the
 * file and line ("PATH:3: unknown kind 'tokn'..."), an account that does
 * not exist or is root too (check_accounts: the rules' accounts are looked
 * up now, as a start does; false only for tests of the syntax). */
acc_err acc_mapfile_load(const char *path, bool check_accounts, struct acc_mapfile **out,
                         struct acc_error *err);
/* As load, from text; name stands for the path in messages. */
acc_err acc_mapfile_parse(const char *text, size_t len, const char *name, bool check_accounts,
                          struct acc_mapfile **out, struct acc_error *err);
void acc_mapfile_free(struct acc_mapfile *m);

/* The account of the first rule that matches id, or NULL when none does;
 * *line (may be NULL): that rule's line.  The string is the mapfile's. */
const char *acc_mapfile_map(const struct acc_mapfile *m, const struct acc_identity *id,
                            size_t *line);
size_t acc_mapfile_rules(const struct acc_mapfile *m);

/* How an identity is named in messages: "https://idp/ sub alice",
 * "DN /C=DE/CN=Alice", or "user bob" (also "anonymous"). */
void acc_identity_describe(const struct acc_identity *id, char *buf, size_t len);

#endif
