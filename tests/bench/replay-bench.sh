#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# replay-bench.sh - accordd --replay's speed: jobs placed per second of wall
# time on four simulated sites of 32 nodes with background load (the
# simulators' own, so the live calendars are not empty), for a few
# policies and workload sizes; the median of REPS runs (default 3).
#   tests/bench/replay-bench.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${1:-3}
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j 2 --target accordd >/dev/null
ACCORDD=$PWD/build-bench/accordd
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

{
    for s in a b c d; do
        printf '[site %s]\nadapter = sim-batch\nnodes = 32\nload = yes\nload_days = 14\n' "$s"
    done
} >"$TMP/accord.ini"
# KOALA-like: total sizes 8, 16 or 32, split by the policy, 180 s each, at
# 60% of the 128 nodes (in seconds: accordd's calendars are in seconds).
cat >"$TMP/koala.sim" <<'SIM'
workload = total
size = set:8,16,32
split = flexible
service = const:180
load = 0.6
seed = 1
SIM
# Bucur-like: 1 to 4 components of D(0.9) on [1, 8] nodes, Exp(600 s).
cat >"$TMP/bucur.sim" <<'SIM'
workload = synthetic
composition = 25,25,25,25
component_size = dq:0.9:1:8
service = exp:600
load = 0.6
seed = 1
SIM
FROM=$(date -u -d '+1 day' +%Y-%m-%dT00:00:00Z)
# The calendars' background load is generated once, before timing, by an
# accordd that starts and stops (a replay works on copies of the calendar
# files and keeps nothing it generates).
"$ACCORDD" --config "$TMP/accord.ini" --db "$TMP/accord.db" --listen 127.0.0.1:0 \
    >"$TMP/accordd.out" 2>&1 &
pid=$!
for _ in $(seq 200); do
    grep -q 'listening on' "$TMP/accordd.out" && break
    sleep 0.1
done
kill "$pid"
wait "$pid" || { cat "$TMP/accordd.out" >&2; exit 1; }

echo "machine: $(nproc) cores, $(uname -srm); median of $REPS runs; window 14 days from $FROM"
for spec in "koala earliest" "koala fcm" "koala worst-fit-distinct" "bucur earliest" "bucur worst-fit"; do
    set -- $spec
    for jobs in 10000 100000; do
        times=()
        for _ in $(seq "$REPS"); do
            t0=$(date +%s.%N)
            out=$("$ACCORDD" --config "$TMP/accord.ini" --db "$TMP/accord.db" \
                --replay "$TMP/$1.sim" --policy "$2" --jobs "$jobs" --from "$FROM" | tail -2)
            t1=$(date +%s.%N)
            times+=("$(echo "$t1 - $t0" | bc -l)")
        done
        med=$(printf '%s\n' "${times[@]}" | sort -g | sed -n "$(((REPS + 1) / 2))p")
        summary=$(echo "$out" | grep '^summary' | sed 's/^summary: //')
        printf '%-6s %-20s %6d jobs  %6.2f s  %9.0f jobs/s  (%s)\n' "$1" "$2" "$jobs" "$med" \
            "$(echo "$jobs / $med" | bc -l)" "$summary"
    done
done
