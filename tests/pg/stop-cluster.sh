#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# stop-cluster.sh - stops every cluster start-cluster.sh (or a test) made in
# PG_TEST_DIR (data, and standby* beside it) and removes the directory.
DIR=${PG_TEST_DIR:?PG_TEST_DIR must name the directory of the cluster}
BIN=/usr/lib/postgresql/15/bin
USER_=${PG_TEST_USER:-nobody}
[ -d "$DIR" ] || exit 0
for d in "$DIR"/data "$DIR"/standby*; do
    [ -f "$d/postmaster.pid" ] && runuser -u "$USER_" -- "$BIN/pg_ctl" -D "$d" -m immediate -w -t 30 stop >/dev/null 2>&1
done
rm -rf "$DIR"
exit 0
