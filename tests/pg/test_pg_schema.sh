#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# test_pg_schema.sh SOURCE_DIR [--self-check] - one schema on both backends
# (issue 34): the store's migrations (db/migrations) and the ledger's
# (lib/ledger/migrations) build the same schema on SQLite and on
# PostgreSQL, by the correspondence of docs/architecture.md ("One schema,
# checked"); with --self-check, the comparison is shown to fail for a
# migration that changes one side only (tests/pg/schema-compare.py).
#
# Needs the cluster of start-cluster.sh (PG_TEST_DIR; ctest fixture "pg").
set -eu
SRC=${1:?usage: test_pg_schema.sh SOURCE_DIR [--self-check]}
DIR=${PG_TEST_DIR:?PG_TEST_DIR names the cluster of start-cluster.sh}
URL=$(cat "$DIR/url")
if [ "${2:-}" = --self-check ]; then
    exec python3 "$SRC/tests/pg/schema-compare.py" --url "$URL" --self-check "$SRC/db/migrations"
fi
exec python3 "$SRC/tests/pg/schema-compare.py" --url "$URL" "$SRC/db/migrations" \
    "$SRC/lib/ledger/migrations"
