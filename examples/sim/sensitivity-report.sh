#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sensitivity-report.sh - the tables of the sensitivity campaign
# (examples/sim/sensitivity.sh) from its per-replication CSVs, as markdown
# on standard output, and every (choice, policy, x) comparison in
# DIR/sensitivity-detail.csv.
#   examples/sim/sensitivity-report.sh DIR [METRIC]
#
# Every replication r of a point runs the same workload under every
# setting and every policy (common random numbers), so differences are
# taken replication by replication: the shift of a policy's mean under an
# alternative is the mean of (alternative - default) over the replications
# with its 95% Student-t interval, and two policies' order at a point is
# the sign of their paired difference.  An order change is "firm" when the
# paired interval of the two policies' difference excludes 0 with one sign
# under the default and with the other under the alternative.
set -euo pipefail
DIR=${1:?usage: sensitivity-report.sh DIR [METRIC]}
METRIC=${2:-mean_resp}
shopt -s nullglob
files=("$DIR"/*--*-reps.csv)
if [ ${#files[@]} -eq 0 ]; then
    echo "sensitivity-report.sh: no *--*-reps.csv in $DIR" >&2
    exit 1
fi
# name -> label: from labels.txt, else the name's tail.
labels="$DIR/labels.txt"
[ -s "$labels" ] || labels=/dev/null

awk -v metric="$METRIC" -v detail="$DIR/sensitivity-detail.csv" -F, '
function tq(df) { # two-sided 95% Student t quantile
    if (df < 1) return 0
    if (df <= 30) return T[df]
    return 1.96 + 2.4 / df
}
BEGIN {
    split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086 2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045 2.042", T, " ")
}
FILENAME ~ /labels/ { split($0, f, "\t"); LAB[f[1]] = f[3]; next }
FNR == 1 {
    name = FILENAME; sub(/.*\//, "", name); sub(/-reps\.csv$/, "", name)
    base = name; sub(/--.*/, "", base)
    label = (name in LAB) ? LAB[name] : substr(name, length(base) + 3)
    sub(/[+_]ref$/, "", label)
    if (!(base in SEENB)) { SEENB[base] = 1; BASES[++nb] = base }
    if (!((base, label) in SEENL)) { SEENL[base, label] = 1; NL[base]++; LABS[base, NL[base]] = label }
}
/^#/ { next }
$1 == "curve" {
    for (i = 1; i <= NF; i++) if ($i == metric) col = i
    XKEY[base] = $2
    next
}
{
    c = $1; x = $2; r = $3
    V[base, label, c, x, r] = $col
    SAT[base, label, c, x] += $4
    if (r > R[base]) R[base] = r
    if (!((base, c) in SEENC)) { SEENC[base, c] = 1; NC[base]++; CURV[base, NC[base]] = c }
    if (!((base, x) in SEENX)) { SEENX[base, x] = 1; NX[base]++; XS[base, NX[base]] = x }
    HAS[base, label, c] = 1
}
# mean and 95% half-width over replications of d[1..n]
function stats(n,    i, s, ss) {
    s = 0; for (i = 1; i <= n; i++) s += D[i]
    M = s / n; ss = 0
    for (i = 1; i <= n; i++) ss += (D[i] - M) ^ 2
    H = n > 1 ? tq(n - 1) * sqrt(ss / (n - 1) / n) : 0
}
# the value of (base, label, c, x, r), the default where label lacks c
function val(b, l, c, x, r) {
    return HAS[b, l, c] ? V[b, l, c, x, r] : V[b, "default", c, x, r]
}
END {
    print "choice,experiment,policy,x,default_mean,default_ci,alt_mean,alt_ci,shift,shift_ci,shift_pct,saturated_default,saturated_alt" > detail
    for (bi = 1; bi <= nb; bi++) {
        b = BASES[bi]; n = R[b]
        printf "\n#### %s: %s (mean over %d replications, 95%% CI)\n\n", b, metric, n
        printf "| policy |"; for (xi = 1; xi <= NX[b]; xi++) printf " %s = %s |", XKEY[b], XS[b, xi]; printf "\n"
        printf "|---|"; for (xi = 1; xi <= NX[b]; xi++) printf "---|"; printf "\n"
        for (ci = 1; ci <= NC[b]; ci++) {
            c = CURV[b, ci]
            if (!HAS[b, "default", c]) continue
            printf "| %s |", c
            for (xi = 1; xi <= NX[b]; xi++) {
                x = XS[b, xi]
                for (r = 1; r <= n; r++) D[r] = V[b, "default", c, x, r]
                stats(n)
                printf " %.0f ± %.0f%s |", M, H, (SAT[b, "default", c, x] * 2 > n ? " SAT" : "")
            }
            printf "\n"
        }
        # The order under the defaults at each x: "<" where the paired CI of
        # the difference of two neighbours excludes 0, else "~(xK)" with K the
        # factor of replications (or jobs) that would shrink the interval
        # below the difference.
        printf "\nOrder under the defaults (`<`: paired 95%% CI of the difference excludes 0; `~(xK)`: it does not, and about K times the replications would be needed):\n\n"
        for (xi = 1; xi <= NX[b]; xi++) {
            x = XS[b, xi]; k = 0
            for (ci = 1; ci <= NC[b]; ci++) {
                c = CURV[b, ci]
                if (!HAS[b, "default", c]) continue
                for (r = 1; r <= n; r++) D[r] = V[b, "default", c, x, r]
                stats(n); ord[++k] = c; om[k] = M
            }
            for (i = 2; i <= k; i++) for (j = i; j > 1 && om[j] < om[j - 1]; j--) {
                t = om[j]; om[j] = om[j - 1]; om[j - 1] = t
                t = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = t
            }
            line = ord[1]
            for (i = 2; i <= k; i++) {
                for (r = 1; r <= n; r++) D[r] = V[b, "default", ord[i], x, r] - V[b, "default", ord[i - 1], x, r]
                stats(n)
                if (M - H > 0) line = line " < " ord[i]
                else line = line sprintf(" ~(x%.0f) %s", M > 0 ? (H / M) ^ 2 + 0.5 : 999, ord[i])
            }
            printf "- %s = %s: %s\n", XKEY[b], x, line
        }
        printf "\n| choice | policy | shift of the mean, %% (per x) | x where the paired CI excludes 0 | order changes (firm / all) |\n|---|---|---|---|---|\n"
        for (li = 1; li <= NL[b]; li++) {
            l = LABS[b, li]
            if (l == "default") continue
            # order changes at each x over the default policies
            flips = ""; nfirm = 0; nall = 0
            for (xi = 1; xi <= NX[b]; xi++) {
                x = XS[b, xi]
                for (p = 1; p <= NC[b]; p++) for (q = p + 1; q <= NC[b]; q++) {
                    P = CURV[b, p]; Q = CURV[b, q]
                    if (!HAS[b, "default", P] || !HAS[b, "default", Q]) continue
                    if (!HAS[b, l, P] && !HAS[b, l, Q]) continue
                    for (r = 1; r <= n; r++) D[r] = V[b, "default", P, x, r] - V[b, "default", Q, x, r]
                    stats(n); d0 = M; h0 = H
                    for (r = 1; r <= n; r++) D[r] = val(b, l, P, x, r) - val(b, l, Q, x, r)
                    stats(n); d1 = M; h1 = H
                    if (d0 * d1 >= 0) continue
                    firm = (d0 > 0 ? d0 - h0 > 0 : d0 + h0 < 0) && (d1 > 0 ? d1 - h1 > 0 : d1 + h1 < 0)
                    nall++; nfirm += firm
                    if (firm) flips = flips sprintf("%s%s/%s at %s", flips == "" ? "" : "; ", P, Q, x)
                }
            }
            for (ci = 1; ci <= NC[b]; ci++) {
                c = CURV[b, ci]
                if (!HAS[b, l, c] || !HAS[b, "default", c]) continue
                shifts = ""; sig = ""
                for (xi = 1; xi <= NX[b]; xi++) {
                    x = XS[b, xi]
                    for (r = 1; r <= n; r++) D[r] = V[b, "default", c, x, r]
                    stats(n); m0 = M; hd = H
                    for (r = 1; r <= n; r++) D[r] = V[b, l, c, x, r]
                    stats(n); m1 = M; ha = H
                    for (r = 1; r <= n; r++) D[r] = V[b, l, c, x, r] - V[b, "default", c, x, r]
                    stats(n)
                    pct = m0 > 0 ? 100 * M / m0 : 0
                    shifts = shifts sprintf("%s%+.0f", xi > 1 ? ", " : "", pct)
                    if (M - H > 0 || M + H < 0) sig = sig (sig == "" ? "" : ", ") x
                    printf "%s,%s,%s,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.3f,%d,%d\n", l, b, c, x, m0, hd, m1, ha, M, H, pct, SAT[b, "default", c, x], SAT[b, l, c, x] > detail
                }
                printf "| %s | %s | %s | %s | %s |\n", l, c, shifts, sig == "" ? "none" : sig, !printed[b, l] ? sprintf("%d / %d%s", nfirm, nall, flips == "" ? "" : ": " flips) : ""
                printed[b, l] = 1
            }
        }
    }
}
' "$labels" "${files[@]}"
