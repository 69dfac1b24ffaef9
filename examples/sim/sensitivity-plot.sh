#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sensitivity-plot.sh - one plot of the sensitivity campaign: every policy
# of one parameter file under the defaults (solid) and under one
# alternative (dashed), mean turnaround with 95% CIs against the file's x.
# Reads DIR/sensitivity-detail.csv (examples/sim/sensitivity-report.sh);
# writes DIR/BASE--LABEL.vs.dat, .vs.gp and .vs.png (gnuplot).
#   examples/sim/sensitivity-plot.sh DIR BASE LABEL [XLABEL]
set -euo pipefail
DIR=${1:?usage: sensitivity-plot.sh DIR BASE LABEL [XLABEL]}
BASE=${2:?usage: sensitivity-plot.sh DIR BASE LABEL [XLABEL]}
LABEL=${3:?usage: sensitivity-plot.sh DIR BASE LABEL [XLABEL]}
XLABEL=${4:-x}
detail="$DIR/sensitivity-detail.csv"
[ -s "$detail" ] || {
    echo "sensitivity-plot.sh: no $detail (run sensitivity-report.sh first)" >&2
    exit 1
}
out="$BASE--$(tr -c 'A-Za-z0-9_.=-' '_' <<<"$LABEL" | sed 's/_$//').vs"
# One gnuplot data block per policy: x, default mean, CI, alternative mean, CI.
awk -F, -v b="$BASE" -v l="$LABEL" '
NR > 1 && $1 == l && $2 == b {
    if (!($3 in seen)) { seen[$3] = 1; order[++n] = $3 }
    rows[$3] = rows[$3] sprintf("%s %s %s %s %s\n", $4, $5, $6, $7, $8)
}
END {
    if (!n) { print "no rows for " l " in " b > "/dev/stderr"; exit 1 }
    for (i = 1; i <= n; i++) printf "# %s\n%s\n\n", order[i], rows[order[i]]
    for (i = 1; i <= n; i++) printf "%s\n", order[i] > "/dev/stderr"
}' "$detail" >"$DIR/$out.dat" 2>"$DIR/$out.names"
mapfile -t names <"$DIR/$out.names"
rm -f "$DIR/$out.names"
{
    echo "# accord-sim sensitivity: $BASE, $LABEL against the defaults"
    echo "set terminal pngcairo size 900,600 noenhanced"
    echo "set output '$out.png'"
    echo "set title \"$BASE: defaults (solid) against $LABEL (dashed)\\nmean turnaround, 95% CI\""
    echo "set xlabel '$XLABEL'; set ylabel 'mean turnaround (s)'; set key outside right; set grid"
    printf "plot "
    for i in "${!names[@]}"; do
        [ "$i" -gt 0 ] && printf ", \\\\\n     "
        printf "'%s.dat' index %d using 1:2:3 with yerrorlines lc %d dt 1 title '%s', " \
            "$out" "$i" "$((i + 1))" "${names[$i]}"
        printf "'%s.dat' index %d using 1:4:5 with yerrorlines lc %d dt 2 title '%s, alt.'" \
            "$out" "$i" "$((i + 1))" "${names[$i]}"
    done
    echo
} >"$DIR/$out.gp"
(cd "$DIR" && gnuplot "$out.gp")
echo "$DIR/$out.png"
