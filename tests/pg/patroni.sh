# SPDX-License-Identifier: Apache-2.0
# patroni.sh - sourced by test_patroni.sh: a three-member etcd and a Patroni
# cluster of two PostgreSQL 15 nodes, from Debian's etcd-server and patroni
# packages, on loopback ports and in $T alone.  The caller sets T and
# defines fail.  Every process runs as nobody; patroni_stop removes it all
# (also what a failed start left behind).
#
#   etcd         127.0.0.1:2379N (clients), :2380N (peers), N = 1..3
#   PostgreSQL   127.0.0.1:1553N, N = 1..2 (members pg1, pg2)
#   Patroni API  127.0.0.1:1800N
#
# The Patroni configuration is the one docs/operations.md gives, with the
# DCS settings at Patroni's defaults (ttl 30, loop_wait 10, retry_timeout
# 10) and synchronous_mode on, so that a commit acknowledged to accordd is
# on both nodes and a failover loses none of them.
PATRONI_BIN=/usr/lib/postgresql/15/bin
PATRONI_PIDS=()
ETCD_PIDS=()
ETCD_HOSTS=127.0.0.1:23791,127.0.0.1:23792,127.0.0.1:23793

pat_as() { runuser -u nobody -- "$@"; }

etcd_start() {
    local cluster="" n
    for n in 1 2 3; do cluster+="${cluster:+,}e$n=http://127.0.0.1:2380$n"; done
    mkdir -p "$T/etcd"
    chown nobody "$T/etcd"
    for n in 1 2 3; do
        pat_as etcd --name "e$n" --data-dir "$T/etcd/e$n" \
            --listen-client-urls "http://127.0.0.1:2379$n" --advertise-client-urls "http://127.0.0.1:2379$n" \
            --listen-peer-urls "http://127.0.0.1:2380$n" --initial-advertise-peer-urls "http://127.0.0.1:2380$n" \
            --initial-cluster "$cluster" --initial-cluster-token "accord-test-$$" \
            --initial-cluster-state new >"$T/etcd/e$n.log" 2>&1 &
        ETCD_PIDS+=($!)
    done
    for _ in $(seq 100); do
        ETCDCTL_API=3 etcdctl --endpoints="$ETCD_HOSTS" endpoint health >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    tail -5 "$T"/etcd/e*.log >&2
    fail "etcd did not become healthy"
}

# patroni_conf N: member pgN's configuration.
patroni_conf() {
    local n=$1
    cat <<YML
scope: accord-test
name: pg$n
restapi:
  listen: 127.0.0.1:1800$n
  connect_address: 127.0.0.1:1800$n
etcd3:
  hosts: $ETCD_HOSTS
bootstrap:
  dcs:
    ttl: 30
    loop_wait: 10
    retry_timeout: 10
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        max_connections: 200
        wal_level: replica
        hot_standby: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        wal_log_hints: "on"
        log_lock_waits: "on"
        fsync: "off"
  initdb:
    - encoding: UTF8
    - locale: C
    - auth: trust
postgresql:
  listen: 127.0.0.1:1553$n
  connect_address: 127.0.0.1:1553$n
  data_dir: $T/pg$n/data
  bin_dir: $PATRONI_BIN
  pgpass: $T/pg$n/pgpass
  authentication:
    superuser:
      username: accord
    replication:
      username: accord
  parameters:
    unix_socket_directories: '$T/pg$n'
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
YML
}

# patroni_start N: member pgN, logging to $T/pgN/patroni.log.
patroni_start() {
    local n=$1
    mkdir -p "$T/pg$n"
    patroni_conf "$n" >"$T/pg$n/patroni.yml"
    chown -R nobody "$T/pg$n"
    # setpriv execs (runuser would fork): $! is Patroni itself
    setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
        env HOME="$T/pg$n" patroni "$T/pg$n/patroni.yml" >>"$T/pg$n/patroni.log" 2>&1 &
    PATRONI_PIDS[$n]=$!
}

patronictl_() { pat_as env HOME="$T/pg1" patronictl -c "$T/pg1/patroni.yml" "$@"; }

# patroni_leader: the member (1 or 2) whose REST API says it leads.
patroni_leader() {
    local n
    for n in 1 2; do
        curl -s -f -m 2 -o /dev/null "http://127.0.0.1:1800$n/primary" && { echo "$n"; return 0; }
    done
    return 1
}

# patroni_healthy: a leader that runs and a synchronous standby that
# streams from it, as the DCS has them (patronictl list).
patroni_healthy() {
    patronictl_ list -f json 2>/dev/null | python3 -c '
import json, sys
m = json.load(sys.stdin)
ok = any(x["Role"] == "Leader" and x["State"] == "running" for x in m) and \
     any(x["Role"] == "Sync Standby" and x["State"] in ("running", "streaming") for x in m)
sys.exit(0 if ok else 1)' 2>/dev/null
}

patroni_up() {
    etcd_start
    patroni_start 1
    local until=$((SECONDS + 120))
    while [ "$SECONDS" -lt "$until" ]; do [ "$(patroni_leader)" = 1 ] && break; sleep 0.2; done
    [ "$(patroni_leader)" = 1 ] || { tail -20 "$T/pg1/patroni.log" >&2; fail "pg1 did not bootstrap as leader"; }
    patroni_start 2
    local until=$((SECONDS + 120))
    while [ "$SECONDS" -lt "$until" ]; do patroni_healthy && break; sleep 0.5; done
    patroni_healthy || { tail -20 "$T/pg2/patroni.log" >&2; fail "pg2 did not become a synchronous standby"; }
    psql "postgresql://accord@127.0.0.1:15531/postgres" -q -c "CREATE DATABASE accord" >/dev/null ||
        fail "cannot create the database"
}

patroni_stop() {
    local p n
    for p in "${PATRONI_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    for n in 1 2; do
        [ -f "$T/pg$n/data/postmaster.pid" ] &&
            pat_as "$PATRONI_BIN/pg_ctl" -D "$T/pg$n/data" -m immediate -w stop >/dev/null 2>&1
    done
    for p in "${ETCD_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait "${PATRONI_PIDS[@]}" "${ETCD_PIDS[@]}" 2>/dev/null
    # whatever escaped: a Patroni started again by the test, a postmaster a
    # killed Patroni had started and not yet written down
    pkill -9 -u nobody -f "patroni $T/pg[12]/patroni.yml" 2>/dev/null
    pkill -9 -u nobody -f "$T/pg[12]/data" 2>/dev/null
    pkill -9 -u nobody -f "etcd .*--data-dir $T/etcd" 2>/dev/null
    return 0
}
