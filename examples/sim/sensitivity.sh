#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sensitivity.sh - the sensitivity campaign of docs/simulator.md: every line
# of examples/sim/sensitivity.choices, i.e. each open modelling choice's
# alternatives one at a time against the defaults, on the sens-*.sim
# parameter files.  Each (line, file) writes OUT/FILE--LABEL.csv and
# OUT/FILE--LABEL-reps.csv (every replication, for paired comparisons), and
# the wall time of each run goes to OUT/times.txt.  Then
# examples/sim/sensitivity-report.sh OUT writes the tables.
#   examples/sim/sensitivity.sh [--smoke] [OUT] [JOBS]
# --smoke: every line on a short workload (CI: that every file and every
# alternative runs), 2 replications.  SETS="key=value ..." overrides keys
# of every run (a longer confirmation: SETS="jobs=100000 replications=10");
# CHOICES=FILE reads another list of lines.
set -euo pipefail
cd "$(dirname "$0")/../.."
SMOKE=0
if [ "${1:-}" = --smoke ]; then
    SMOKE=1
    shift
fi
OUT=${1:-docs/sim/sensitivity}
JOBS=${2:-2}
SIM=${SIM:-build/accord-sim}
CHOICES=${CHOICES:-examples/sim/sensitivity.choices}
mkdir -p "$OUT/gen"
: >"$OUT/times.txt"
: >"$OUT/labels.txt"

files_of() {
    case "$1" in
    @jones) echo sens-j-e3a.sim sens-j-e3b-300.sim sens-j-e3b-800.sim ;;
    @e3a) echo sens-j-e3a.sim ;;
    @latency) echo sens-s-e5-d-excl.sim sens-s-e5-l-excl.sim ;;
    @*)
        echo "sensitivity.sh: unknown group $1" >&2
        return 1
        ;;
    *) echo "$1" ;;
    esac
}

trim() { sed -e 's/^ *//' -e 's/ *$//' <<<"$1"; }

# The run of one (line, file): the file with its curves line replaced and
# the choice's keys appended, then accord-sim on it.
run_one() {
    local file=$1 label=$2 curves=$3 keys=$4
    local base=${file%.sim} name gen
    name="$base--$(tr -c 'A-Za-z0-9_.=-' '_' <<<"$label" | sed 's/_$//')"
    gen="$OUT/gen/$name.sim"
    printf '%s\t%s\t%s\n' "$name" "$base" "$label" >>"$OUT/labels.txt"
    {
        grep -v '^curves\|^name' "examples/sim/$file"
        echo "name = $name"
        local IFS=';'
        for kv in $keys; do
            kv=$(trim "$kv")
            [ -n "$kv" ] && echo "$kv"
        done
        echo "curves = policy: $(sed 's/ \+/ | /g' <<<"$(trim "$curves")")"
    } >"$gen"
    local extra=()
    if [ "$SMOKE" = 1 ]; then
        extra=(--set jobs=1500 --set warmup=150 --set replications=2)
    fi
    local sets=()
    IFS=' ' read -r -a sets <<<"${SETS:-}"
    for kv in "${sets[@]}"; do
        extra+=(--set "$kv")
    done
    local start end
    start=$(date +%s)
    # The generated file sits in gen/: relative paths of the parameter
    # files (none today) would need the examples directory.
    "$SIM" -j "$JOBS" -o "$OUT" "${extra[@]}" "$gen"
    end=$(date +%s)
    echo "$name $((end - start)) s" | tee -a "$OUT/times.txt"
}

total_start=$(date +%s)
while IFS='|' read -r group label curves keys; do
    group=$(trim "$group")
    case "$group" in '' | '#'*) continue ;; esac
    for f in $(files_of "$group"); do
        run_one "$f" "$(trim "$label")" "$curves" "${keys:-}"
    done
done <"$CHOICES"
echo "total $(($(date +%s) - total_start)) s" | tee -a "$OUT/times.txt"
