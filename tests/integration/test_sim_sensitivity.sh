#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The sensitivity campaign's smoke run (docs/simulator.md "Sensitivity of
# the open choices"): every line of examples/sim/sensitivity.choices on
# every parameter file of its group (so every sens-*.sim and every
# alternative), on a short workload; each result's header names the choice
# it ran with, and the report builds its tables from them.
#   tests/integration/test_sim_sensitivity.sh BUILD_DIR
set -eu
BUILD=${1:?usage: test_sim_sensitivity.sh BUILD_DIR}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

SIM="$BUILD/accord-sim" "$SRC/examples/sim/sensitivity.sh" --smoke "$TMP/out" 2 >"$TMP/log" 2>&1 ||
    { cat "$TMP/log" >&2; fail "sensitivity.sh --smoke"; }

# One CSV and one per-replication CSV per (line, file).
for f in "$SRC"/examples/sim/sens-*.sim; do
    b=$(basename "$f" .sim)
    [ -s "$TMP/out/$b--default.csv" ] || fail "$b: no default run"
done
runs=$(wc -l <"$TMP/out/labels.txt")
csvs=$(find "$TMP/out" -maxdepth 1 -name '*--*-reps.csv' | wc -l)
[ "$runs" -ge 40 ] || fail "only $runs runs"
[ "$csvs" -eq "$runs" ] || fail "$csvs per-replication CSVs for $runs runs"

# The header records the alternative, and the default where none is set.
expect_line() { # FILE LINE
    grep -qxF -- "$2" "$TMP/out/$1" || fail "$1 lacks '$2'"
}
expect_line 'sens-j-e3a--bsbw_reading=B.csv' '# bsbw_reading = B'
expect_line 'sens-j-e3a--bsbw_reading=B.csv' '# allotment = min'
expect_line 'sens-j-e3b-800--a1_solution=least-link.csv' '# a1_solution = least-link'
expect_line 'sens-j-e3b-300--triggers=periodic.csv' '# triggers = periodic'
expect_line 'sens-j-e3b-300--triggers=periodic.csv' '# scan_period = 60'
expect_line 'sens-j-e3a--ideal_placement=b4.csv' '# ideal_placement = b4'
expect_line 'sens-s-e5-d-excl--ca_average=idle.csv' '# ca_average = idle'
expect_line 'sens-s-e5-l-excl--default.csv' '# ca_average = all'
expect_line 'sens-s-e5-l-excl--default.csv' '# slow_clusters = 3'
expect_line 'sens-s-e5-l-excl--startup=30-reps.csv' '# startup = 30'

# The report: a row per alternative and policy.
"$SRC/examples/sim/sensitivity-report.sh" "$TMP/out" >"$TMP/report.md" || fail "report"
for row in '| bsbw_reading=B | A1 |' '| discount=>= | B4 |' '| ca_average=idle | CA |' \
    '| latency=flat | CA |' '| triggers=periodic | MIG |'; do
    grep -qF -- "$row" "$TMP/report.md" || fail "report lacks '$row'"
done
[ -s "$TMP/out/sensitivity-detail.csv" ] || fail "no sensitivity-detail.csv"
"$SRC/examples/sim/sensitivity-plot.sh" "$TMP/out" sens-s-e5-l-excl ccr_m=high load >/dev/null ||
    fail "plot"
[ -s "$TMP/out/sens-s-e5-l-excl--ccr_m=high.vs.png" ] || fail "no plot"

[ "$fails" -eq 0 ] && echo "ok: $runs runs" || exit 1
