#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check-sql-backend.sh - the store hides its backend (lib/sql/sql.h,
# "backends"): no source outside lib/sql reads a database location's form
# (a test for "://") or asks which backend a database is; callers ask for
# a capability (acc_sql_location_can, acc_sql_can) instead.
#
# Prints every line that breaks the rule and exits non-zero when there is one.
set -eu
cd "$(dirname "$0")/.."
out=${TMPDIR:-/tmp}/check-sql-backend.$$
trap 'rm -f "$out"' EXIT
# the sources of every layer, and the tests' own support code
find lib db server site adapters resources simulator client cli tools tests/support \
    -name '*.[ch]' ! -path 'lib/sql/*' -print | sort |
    xargs grep -nE '"://"|acc_sql_is_pg|"postgres(ql)?://"' >"$out" || true
if [ -s "$out" ]; then
    echo "outside lib/sql, a database location is read or its backend asked (ask lib/sql for a capability):"
    cat "$out"
    exit 1
fi
echo "no source outside lib/sql reads a location's form or asks for the backend"
