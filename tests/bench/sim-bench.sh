#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sim-bench.sh - accord-sim's speed: simulated jobs per second of wall time
# for each discipline, 100,000 jobs of a 4-cluster workload, one process
# (one core), the median of REPS runs (default 3).
#   tests/bench/sim-bench.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${1:-3}
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j 2 --target accord-sim >/dev/null
SIM=build-bench/accord-sim
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
JOBS=100000

# name | experiment lines (the workload of the discipline's own study)
bucur="clusters = 32,32,32,32
workload = synthetic
composition = 25,25,25,25
component_size = dq:0.9:1:8
service = exp:1
load = 0.6"
koala="clusters = 85,32,41,46
workload = total
size = set:8,16,32
split = flexible
service = const:180
comm = ccr
ccr = 0.25
ccr_m = 1,1.2,1.3,1.4
load = 0.6"
jones="clusters = 100,100,100,100
workload = total
size = uniform:10:50
split = flexible
service = exp:450
comm = bandwidth
bsbw = 500
lslt = 1.0
load = 0.9"
reserve="$bucur"

run() { # run LABEL POLICY WORKLOAD
    local label=$1 policy=$2 wl=$3 f="$TMP/$1.sim"
    printf 'name = bench\njobs = %s\nwarmup = 1000\nreplications = 1\npolicy = %s\n%s\n' \
        "$JOBS" "$policy" "$wl" >"$f"
    local times=()
    for _ in $(seq "$REPS"); do
        local t0 t1
        t0=$(date +%s.%N)
        "$SIM" -j 1 "$f" >"$TMP/out.csv"
        t1=$(date +%s.%N)
        times+=("$(echo "$t1 - $t0" | bc -l)")
    done
    local med
    med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    local resp sat
    resp=$(awk -F, 'NR==2 {print $5}' "$TMP/out.csv")
    sat=$(awk -F, 'NR==2 {print $4}' "$TMP/out.csv")
    printf '%-22s %8.2f s %10.0f jobs/s   (mean response %s s, saturated %s)\n' "$label" "$med" \
        "$(echo "$JOBS / $med" | bc -l)" "$resp" "$sat"
}

echo "machine: $(nproc) cores, $(uname -srm); $JOBS jobs per run, median of $REPS runs"
run "FCFS GS" GS "$bucur"
run "FCFS LS-DO" LS-DO "$bucur"
run "FCFS GP" GP "$bucur"
run "FCFS LP-GF" LP-GF "$bucur"
run "KOALA scan FCM" FCM "$koala"
run "KOALA scan WF" WF "$koala"
run "Jones scan A1" A1 "$jones"
run "Jones scan B1" B1 "$jones"
run "Jones scan MIG" MIG "$jones"
# The worst case: a saturated queue of thousands scanned at every departure.
run "Jones INITIAL, 900" INITIAL "${jones/bsbw = 500/bsbw = 900}"
run "Reservation (AR)" AR "$reserve"
