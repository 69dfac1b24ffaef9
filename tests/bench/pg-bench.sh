#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pg-bench.sh - one accordd on SQLite against one, two and three accordd on
# one PostgreSQL 15, side by side in one run (issue 20):
#
#   tests/bench/pg-bench.sh [ROUNDS, default 3] [OFFERS, default 2000]
#
# Starts a PostgreSQL cluster of its own (tests/pg/start-cluster.sh, with
# fsync and full-page writes on, pg_stat_statements loaded), then, ROUNDS
# times, each configuration in turn (sqlite1, pg1, pg2, pg3): a fresh
# database (an SQLite file, durable as by default; a new PostgreSQL
# database), its instances, OFFERS offers from 16 keep-alive clients spread
# evenly over the instances (accord_pg_bench), and what it cost.  Prints
# every round's figures and then, per configuration, the median over the
# rounds as a table and as "figure CONFIG.NAME VALUE" lines.  Everything it
# made (cluster, databases, processes, files) is removed at exit, also on
# failure.  Root: the cluster runs as nobody.  The accordd and client are
# built as Release into build-bench, or taken from $PG_BENCH_BUILD (a build
# directory: the smoke run uses the tree's own).  Exit 1 when a
# configuration agreed nothing.
#
#   PG_BENCH_CONFIGS  the configurations to run (default "sqlite1 pg1 pg2 pg3")
#   PG_BENCH_BASE     a build directory of another tree (a change's base):
#                     each configuration runs with its accordd too, as
#                     base-CONFIG, beside this tree's in every round (the
#                     base first in odd rounds, this tree first in even
#                     ones), so that before and after are side by side
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
ROUNDS=${1:-3}
OFFERS=${2:-2000}
CLIENTS=16
read -r -a CONFIGS <<<"${PG_BENCH_CONFIGS:-sqlite1 pg1 pg2 pg3}"
[ ${#CONFIGS[@]} -gt 0 ] || { echo "pg-bench.sh: PG_BENCH_CONFIGS names no configuration" >&2; exit 2; }
for cfg in "${CONFIGS[@]}"; do
    [[ $cfg =~ ^(sqlite1|pg[1-9])$ ]] ||
        { echo "pg-bench.sh: $cfg: a configuration is sqlite1 or pgN (N instances, 1 to 9)" >&2; exit 2; }
done
BASE=
if [ -n "${PG_BENCH_BASE:-}" ]; then
    BASE=$(cd "$PG_BENCH_BASE" && pwd)
    [ -x "$BASE/accordd" ] || { echo "pg-bench.sh: no accordd in $BASE" >&2; exit 2; }
    both=()
    for cfg in "${CONFIGS[@]}"; do both+=("base-$cfg" "$cfg"); done
    CONFIGS=("${both[@]}")
fi
[[ $ROUNDS =~ ^[1-9][0-9]*$ && $OFFERS =~ ^[1-9][0-9]*$ ]] ||
    { echo "usage: $0 [ROUNDS] [OFFERS]" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "pg-bench.sh: root needed (the cluster runs as nobody)" >&2; exit 1; }
if [ -n "${PG_BENCH_BUILD:-}" ]; then
    B=$(cd "$PG_BENCH_BUILD" && pwd)
else
    cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build-bench -j 2 --target accordd accord_pg_bench >/dev/null
    B=$SRC/build-bench
fi

T=$(mktemp -d /tmp/accord-pg-bench-XXXXXX)
chmod 0755 "$T" # the cluster's user must reach its directory inside
export PG_TEST_DIR=$T/pg PG_TEST_PORT=15432
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    "$SRC/tests/pg/stop-cluster.sh" || true
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

PG_TEST_CONF="fsync = on
full_page_writes = on
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track_utility = on
track_wal_io_timing = on" "$SRC/tests/pg/start-cluster.sh" >/dev/null
url_of() { echo "postgresql:///$1?host=$PG_TEST_DIR&port=$PG_TEST_PORT&user=accord"; }
q() { psql "$(url_of "$1")" -Atq -v ON_ERROR_STOP=1 -c "$2"; }
q postgres "CREATE EXTENSION pg_stat_statements"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/sign.key" \
    -out "$T/sign.crt" -subj "/CN=Accord pg-bench" -days 2 2>/dev/null
chmod 600 "$T/sign.key"
TCK=$(getconf CLK_TCK)

# The configuration of every instance: four sites, a full mesh of links.
config() { # config DATABASE-LINES
    printf '[server]\nlisten = 127.0.0.1:0\n\n[database]\n%s\n\n' "$1"
    printf '[signing]\nkey = %s\ncertificate = %s\n\n' "$T/sign.key" "$T/sign.crt"
    printf '[negotiation]\nhorizon = P14D\nlead_time = PT5S\n\n'
    printf '[quota]\nmax_agreements = unlimited\nmax_node_hours = unlimited\nmax_mbit_hours = unlimited\n\n[launch]\nenabled = no\n\n'
    for s in s1 s2 s3 s4; do printf '[site %s]\nadapter = sim-batch\nnodes = 128\n\n' $s; done
    printf '[network wan]\nadapter = sim-network\n\n'
    for l in s1_s2 s1_s3 s1_s4 s2_s3 s2_s4 s3_s4; do
        printf '[link %s]\nsites = %s %s\ncapacity = 10000\nnetwork = wan\n\n' $l ${l%_*} ${l#*_}
    done
}

cpu_ms() { # cpu_ms [-c] PID...: user + system CPU (-c: with reaped children's)
    local fields='$12 + $13'
    [ "$1" = -c ] && { fields='$12 + $13 + $14 + $15'; shift; }
    for p; do sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null || true; done |
        awk -v t="$TCK" "{ s += $fields } END { printf \"%.0f\", s * 1000 / t }"
}
pg_cpu_ms() { # the postmaster's CPU with its reaped children's, and its live children's
    local pm
    pm=$(head -1 "$PG_TEST_DIR/data/postmaster.pid")
    echo $(($(cpu_ms -c "$pm") + $(cpu_ms $(ps -o pid= --ppid "$pm"))))
}

start_instances() { # start_instances DIR N BUILD: their pids into PIDS (empty), URLs into DIR/urls
    local d=$1 k port
    : >"$d/urls"
    for k in $(seq "$2"); do
        : >"$d/a$k.log" # there before the child opens it
        "$3/accordd" --config "$d/accord.ini" >"$d/a$k.log" 2>&1 &
        PIDS+=($!)
        port=
        for _ in $(seq 200); do
            port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$d/a$k.log")
            [ -n "$port" ] && break
            kill -0 "${PIDS[-1]}" 2>/dev/null || break
            sleep 0.05
        done
        [ -n "$port" ] || { cat "$d/a$k.log" >&2; echo "pg-bench.sh: accordd did not start" >&2; exit 1; }
        echo "http://127.0.0.1:$port" >>"$d/urls"
    done
}

stop_instances() { # stop_instances [DB]: SIGTERM to PIDS; DB's sessions gone
    kill "${PIDS[@]}" 2>/dev/null || true
    wait "${PIDS[@]}" 2>/dev/null || true
    PIDS=()
    [ -n "${1:-}" ] || return 0
    for _ in $(seq 200); do
        [ "$(q postgres "SELECT count(*) FROM pg_stat_activity WHERE datname = '$1'")" = 0 ] && return 0
        sleep 0.05
    done
    echo "pg-bench.sh: the sessions of $1 did not end" >&2
    exit 1
}

# PostgreSQL's counters for database DB: statements, transactions (read-only ones
# too), WAL.
pg_counters() { # pg_counters DB -> "statements rows exec_ms transactions wal_syncs wal_writes wal_bytes sync_ms"
    q postgres "SELECT (SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s
                        JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '$1'),
                       (SELECT coalesce(sum(rows), 0) FROM pg_stat_statements s
                        JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '$1'),
                       (SELECT round(coalesce(sum(total_exec_time), 0)::numeric, 3)
                        FROM pg_stat_statements s
                        JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '$1'),
                       (SELECT xact_commit FROM pg_stat_database WHERE datname = '$1'),
                       wal_sync, wal_write, wal_bytes, round(wal_sync_time::numeric, 3)
                FROM pg_stat_wal" | tr '|' ' '
}

top_statements() { # top_statements DB AGREED: the most frequent statements, per agreement
    q postgres "SELECT to_char(calls::float / $2, '990.99'), to_char(mean_exec_time, '990.999'),
                       left(regexp_replace(query, '\\s+', ' ', 'g'), 90)
                FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
                WHERE d.datname = '$1' ORDER BY calls DESC LIMIT 12" |
        awk -F'|' '{ printf "  %s  %s ms  %s\n", $1, $2, $3 }'
}

run_config() { # run_config CONFIG ROUND: its figures appended to $T/figures
    local cfg=$1 round=$2 kind=${1#base-} d=$T/$1.$2 db="" pg=() c0 c1 p0 p1 bin=$B n
    [ "$kind" = "$cfg" ] || bin=$BASE
    n=${kind#sqlite}
    n=${n#pg}
    mkdir -p "$d"
    if [[ $kind == sqlite* ]]; then
        config "path = $d/accord.db" >"$d/accord.ini"
    else
        db=bench_${cfg//-/_}_$round
        q postgres "CREATE DATABASE $db"
        config "url = $(url_of "$db")
lease = PT10S" >"$d/accord.ini"
        pg=(--pg "$(url_of postgres)" "$db")
    fi
    # A first start makes the tables; its sessions' counters are flushed
    # when they end, before the measured start.
    start_instances "$d" 1 "$bin"
    stop_instances "$db"
    start_instances "$d" "$n" "$bin"
    sleep 0.5 # the lease, the first sessions: let the instances settle
    local before after
    if [ -n "$db" ]; then
        q postgres "SELECT pg_stat_statements_reset(), pg_stat_reset_shared('wal')" >/dev/null
        before=$(pg_counters "$db")
    fi
    c0=$(cpu_ms "${PIDS[@]}")
    p0=$(pg_cpu_ms)
    "$B/tests/accord_pg_bench" "$OFFERS" "$CLIENTS" "${pg[@]}" $(cat "$d/urls") >"$d/out" ||
        { cat "$d/out" "$d"/a*.log >&2; echo "pg-bench.sh: $cfg agreed nothing" >&2; exit 1; }
    c1=$(cpu_ms "${PIDS[@]}")
    # PostgreSQL's sessions report their counters when they end: stop the
    # instances first (what that costs PostgreSQL is counted: a few statements)
    stop_instances "$db"
    p1=$(pg_cpu_ms)
    if [ -n "$db" ]; then
        after=$(pg_counters "$db")
        top_statements "$db" "$(sed -n 's/^figure agreed //p' "$d/out")" >"$T/top.$cfg"
    fi
    grep '^pg_bench:' "$d/out" | sed "s/^pg_bench:/  $cfg round $round:/"
    local ok
    ok=$(sed -n 's/^figure agreed //p' "$d/out")
    {
        sed -n "s/^figure \([a-z0-9_]*\) \(.*\)$/$cfg \1 \2/p" "$d/out"
        echo "$cfg accordd_cpu_ms_per_agreement $(echo "scale=4; ($c1 - $c0) / $ok" | bc)"
        if [ -n "$db" ]; then
            echo "$cfg pg_cpu_ms_per_agreement $(echo "scale=4; ($p1 - $p0) / $ok" | bc)"
            # statements and transactions of this database only; WAL of the cluster
            paste <(echo "$before" | tr ' ' '\n') <(echo "$after" | tr ' ' '\n') |
                awk -v ok="$ok" -v c="$cfg" 'BEGIN { split("statements rows exec_ms transactions wal_syncs \
                    wal_writes wal_bytes wal_sync_ms", name, " ") }
                    { printf "%s %s_per_agreement %.4f\n", c, name[NR], ($2 - $1) / ok }'
        fi
    } >>"$T/figures"
    if [ -n "$db" ]; then q postgres "DROP DATABASE $db"; fi
    rm -rf "$d"
}

echo "machine: $(nproc) cores, $(uname -srm); $ROUNDS round(s) of $OFFERS offers, $CLIENTS clients"
: >"$T/figures"
for round in $(seq "$ROUNDS"); do
    for cfg in "${CONFIGS[@]}"; do
        # with a base: base first in odd rounds, this tree first in even ones
        if [ -n "$BASE" ] && [ $((round % 2)) = 0 ]; then
            case $cfg in
            base-*) run_config "${cfg#base-}" "$round"; run_config "$cfg" "$round" ;;
            esac
        else
            run_config "$cfg" "$round"
        fi
    done
done

# The median over the rounds of every figure of every configuration.
median() { # median CONFIG NAME
    awk -v c="$1" -v f="$2" '$1 == c && $2 == f { print $3 }' "$T/figures" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
              else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
cols=(agreements_per_s latency_median_ms latency_p90_ms accordd_cpu_ms_per_agreement
    pg_cpu_ms_per_agreement statements_per_agreement rows_per_agreement transactions_per_agreement
    exec_ms_per_agreement round_trip_ms wal_syncs_per_agreement wal_sync_ms_per_agreement
    wal_bytes_per_agreement lock_wait_ms_per_agreement lock_wait_sample_fraction
    idle_in_transaction_ms_per_agreement io_wait_ms_per_agreement pg_running_ms_per_agreement)
heads=("agr/s" "med ms" "p90 ms" "accordd CPU ms/agr" "PG CPU ms/agr" "stmts/agr" "rows/agr"
    "transactions/agr" "stmt exec ms/agr" "round trip ms" "WAL fsyncs/agr" "fsync ms/agr"
    "WAL B/agr" "lock wait ms/agr" "samples w/ lock wait" "idle in tx ms/agr" "I/O wait ms/agr"
    "PG running ms/agr")
echo
echo "medians over $ROUNDS round(s) ($OFFERS offers each; 16 clients; per agreement = per 201):"
printf '%-22s' ""
printf '%13s' "${CONFIGS[@]}"
echo
for k in "${!cols[@]}"; do
    printf '%-22s' "${heads[$k]}"
    for cfg in "${CONFIGS[@]}"; do
        v=$(median "$cfg" "${cols[$k]}")
        [ "$v" = - ] && printf '%13s' - || printf '%13.2f' "$v"
    done
    echo
done
# What a core of each brings, from the CPU per agreement (the estimate of
# docs/operations.md: N accordd machines and one database server).
echo
for cfg in "${CONFIGS[@]}"; do
    a=$(median "$cfg" accordd_cpu_ms_per_agreement) p=$(median "$cfg" pg_cpu_ms_per_agreement)
    printf '%s: a core serves about %s agreements/s of accordd' "$cfg" \
        "$(awk -v x="$a" 'BEGIN { printf "%.0f", (x > 0 ? 1000 / x : 0) }')"
    [ "$p" = - ] && echo || printf ', %s of PostgreSQL\n' \
        "$(awk -v x="$p" 'BEGIN { printf "%.0f", (x > 0 ? 1000 / x : 0) }')"
done
for cfg in "${CONFIGS[@]}"; do
    [[ ${cfg#base-} == pg1 || ${cfg#base-} == pg3 ]] && [ -f "$T/top.$cfg" ] || continue
    echo
    echo "$cfg, round $ROUNDS: the most frequent statements (calls per agreement, mean execution):"
    cat "$T/top.$cfg"
done
for cfg in "${CONFIGS[@]}"; do
    for name in $(awk -v c="$cfg" '$1 == c { print $2 }' "$T/figures" | sort -u); do
        echo "figure $cfg.$name $(median "$cfg" "$name")"
    done
done
