#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# start-cluster.sh - a PostgreSQL 15 cluster of the tests' own: initdb in
# PG_TEST_DIR as an unprivileged user (nobody), database "accord", reached
# only through its socket in that directory: it listens on no TCP port at all,
# so it can clash with nothing (the port number only names the socket file,
# DIR/.s.PGSQL.PORT).  Writes the store's URL to PG_TEST_DIR/url.  Root: the
# cluster runs as nobody.  stop-cluster.sh removes it all.
#
#   PG_TEST_DIR   where (made afresh)
#   PG_TEST_PORT  the socket's number (default 15432)
#   PG_TEST_CONF  more lines for postgresql.conf, after the defaults (a later
#                 line wins): the benchmark's "fsync = on" for honest figures;
#                 the tests keep fsync off
set -eu
BIN=/usr/lib/postgresql/15/bin
DIR=${PG_TEST_DIR:?PG_TEST_DIR must name the directory of the cluster}
PORT=${PG_TEST_PORT:-15432}
USER_=${PG_TEST_USER:-nobody}

[ -x "$BIN/initdb" ] || { echo "postgresql-15 is not installed ($BIN/initdb)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "start-cluster.sh: root needed (the cluster runs as $USER_)" >&2; exit 1; }

# a cluster left running there (a run cut short, a fixture started again
# by ctest --repeat) is stopped, not orphaned with its directory removed
"$(dirname "$0")/stop-cluster.sh"
mkdir -p "$DIR"
chown "$USER_" "$DIR"
chmod 0755 "$DIR"
as() { runuser -u "$USER_" -- "$@"; }
as "$BIN/initdb" -D "$DIR/data" -A trust -U accord --no-sync -E UTF8 --locale=C >"$DIR/initdb.log" 2>&1 ||
    { cat "$DIR/initdb.log" >&2; exit 1; }
cat >>"$DIR/data/postgresql.conf" <<CONF
listen_addresses = ''
port = $PORT
unix_socket_directories = '$DIR'
fsync = off
synchronous_commit = on
full_page_writes = off
max_connections = 200
shared_buffers = 32MB
wal_level = replica
max_wal_senders = 4
hot_standby = on
log_min_messages = warning
${PG_TEST_CONF:-}
CONF
as "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w -t 60 start >/dev/null ||
    { cat "$DIR/log" >&2; exit 1; }
as "$BIN/psql" -h "$DIR" -p "$PORT" -U accord -d postgres -q -c "CREATE DATABASE accord" >/dev/null
echo "$PORT" >"$DIR/port"
echo "postgresql:///accord?host=$DIR&port=$PORT&user=accord" >"$DIR/url"
cat "$DIR/url"
