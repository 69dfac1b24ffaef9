#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# viola-bench.sh - the VIOLA MetaTrace experiment on the namespace testbed:
# does a bandwidth reservation make a coupled MPI application's communication
# time independent of the other traffic?
#
#   tests/bench/viola-bench.sh [--reduced] [--direct] [--out DIR]
#
# Matrix: reservation {100 %, 50 %, 10 % of the link, none} x background
# {0, 2, 4} competing TCP streams (--reduced: {100 %, none} x {0, 4}, fewer steps).
# Per cell accord-metatrace runs with two components, alpha-n1 and beta-n1
# (10.79.1.11 -> 10.79.2.11, MB megabytes per step after COMPUTE_MS of compute);
# the background streams go to beta-n2, half of them from alpha-n2 (sharing
# both shaped links of the path: alpha's uplink and beta's downlink) and half
# from gamma-n1 (sharing beta's downlink), all started before the job and
# running through it.
#   default   each cell is an Accord meta-job: accordd runs with
#             docs/examples/netbed.conf (paths made absolute), an offer with the
#             link at R Mbit/s (none: no link) is agreed, Accord's tc adapter
#             installs the class at the start and accordd launches the job.
#   --direct  no accordd: the same HTB leaf class (rate = ceil = R, u32 filters
#             for the two hosts, both directions) is installed by this script
#             with tc, and the job is started with mpiexec.hydra directly.
#             For checking the testbed itself.
# Prints per cell the median communication time per step, its spread
# ((max - min) / median) and the communication share of the run time; writes
# DIR/viola.csv and DIR/viola.png (gnuplot; installed with apt-get when
# missing).  DIR defaults to build/viola-bench.
# Environment: CAP_MBIT (link capacity, default 200), STEPS (default 8;
# reduced 4), COMPUTE_MS (default 300), MB (per step, default 4), VIOLA_BUILD
# (use this build tree as it is instead of building build/), KEEP_WORK=1
# (keep the run directory: accordd's log, the jobs' output).
# Root only; brings the testbed up (tools/netbed.sh) and down again.
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
REDUCED=0
DIRECT=0
OUT=$SRC/build/viola-bench
while [ $# -gt 0 ]; do
    case $1 in
    --reduced) REDUCED=1 ;;
    --direct) DIRECT=1 ;;
    --out)
        [ $# -ge 2 ] || { echo "--out needs a directory" >&2; exit 2; }
        OUT=$2
        shift
        ;;
    *) echo "usage: $0 [--reduced] [--direct] [--out DIR]" >&2; exit 2 ;;
    esac
    shift
done
[ "$(id -u)" = 0 ] || { echo "viola-bench: must run as root (network namespaces, tc)" >&2; exit 1; }

CAP_MBIT=${CAP_MBIT:-200}
COMPUTE_MS=${COMPUTE_MS:-300}
MB=${MB:-4}
if [ "$REDUCED" = 1 ]; then
    STEPS=${STEPS:-4}
    RES_LEVELS=(100 none)
    BG_LEVELS=(0 4)
else
    STEPS=${STEPS:-8}
    RES_LEVELS=(100 50 10 none)
    BG_LEVELS=(0 2 4)
fi
[[ $CAP_MBIT =~ ^[1-9][0-9]{0,5}$ && $STEPS =~ ^[1-9][0-9]{0,3}$ && $COMPUTE_MS =~ ^[0-9]{1,6}$ &&
    $MB =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "viola-bench: bad CAP_MBIT/STEPS/COMPUTE_MS/MB" >&2; exit 2; }

if ! command -v gnuplot >/dev/null 2>&1; then
    echo "viola-bench: installing gnuplot-nox for the plot" >&2
    DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends install gnuplot-nox \
        >/dev/null || echo "viola-bench: gnuplot-nox could not be installed; no plot" >&2
fi

if [ -n "${VIOLA_BUILD:-}" ]; then
    B=$VIOLA_BUILD # a build tree made already (ctest's viola_bench_reduced)
else
    cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build build -j 2 --target accordd accordctl accord-flowgen accord_metatrace ucx_shim >/dev/null
    B=$SRC/build
fi
for f in accordd accordctl accord-flowgen accord-metatrace tests/libucx_finalize_barrier.so; do
    [ -e "$B/$f" ] || { echo "viola-bench: $B/$f is missing (build it first)" >&2; exit 1; }
done
SHIM=$B/tests/libucx_finalize_barrier.so
mkdir -p "$OUT"
work=$(mktemp -d /tmp/accord-viola-XXXXXX)
PIDS=()
accordd_pid=
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    [ -n "$accordd_pid" ] && kill -TERM "$accordd_pid" 2>/dev/null
    wait 2>/dev/null || true
    "$SRC/tools/netbed.sh" down || true
    if [ -n "${KEEP_WORK:-}" ]; then echo "viola-bench: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# One user of the testbed at a time on this machine (see tools/netbed.sh).
exec 9>/run/lock/accord-netbed.lock
flock -w 900 9 || { echo "viola-bench: the testbed stayed in use" >&2; exit 1; }
CAP=${CAP_MBIT}mbit "$SRC/tools/netbed.sh" up
A=10.79.1.11 # alpha-n1
BH=10.79.2.11 # beta-n1
SINK=10.79.2.12 # beta-n2: where the background goes
ip netns exec acc-beta2 "$B/accord-flowgen" serve 5201 --max-conns 64 >"$work/sink.log" &
PIDS+=($!)
sleep 0.3

# --- direct mode: the leaf class Accord's tc adapter would install ---
DEVS_AB=("acc-gw-alpha up0" "acc-wan to-beta")  # traffic alpha -> beta leaves through
DEVS_BA=("acc-gw-beta up0" "acc-wan to-alpha")  # traffic beta -> alpha
tc_reserve() { # MBIT
    local d ns dev
    for d in "${DEVS_AB[@]}"; do
        read -r ns dev <<<"$d"
        printf 'class add dev %s parent 1:1 classid 1:10 htb rate %smbit ceil %smbit prio 0 quantum 15140\nfilter add dev %s parent 1: protocol ip prio 10 u32 match ip src %s/32 match ip dst %s/32 flowid 1:10\n' \
            "$dev" "$1" "$1" "$dev" "$A" "$BH" | tc -n "$ns" -batch -
    done
    for d in "${DEVS_BA[@]}"; do
        read -r ns dev <<<"$d"
        printf 'class add dev %s parent 1:1 classid 1:10 htb rate %smbit ceil %smbit prio 0 quantum 15140\nfilter add dev %s parent 1: protocol ip prio 10 u32 match ip src %s/32 match ip dst %s/32 flowid 1:10\n' \
            "$dev" "$1" "$1" "$dev" "$BH" "$A" | tc -n "$ns" -batch -
    done
}
tc_release() {
    local d ns dev
    for d in "${DEVS_AB[@]}" "${DEVS_BA[@]}"; do
        read -r ns dev <<<"$d"
        tc -n "$ns" filter del dev "$dev" parent 1: prio 10 2>/dev/null || true
        tc -n "$ns" class del dev "$dev" classid 1:10 2>/dev/null || true
    done
}
run_direct() { # MBIT|none OUTFILE
    [ "$1" = none ] || tc_reserve "$1"
    local args=(--steps="$STEPS" --compute-ms="$COMPUTE_MS" --mb="$MB")
    local rc=0
    (cd "$work" && timeout 120 mpiexec.hydra -launcher ssh -launcher-exec "$SRC/tools/netbed-ssh" \
        -localhost 10.79.0.1 -genv UCX_TLS tcp -genv LD_PRELOAD "$SHIM" \
        -hosts alpha-n1:1,beta-n1:1 -n 1 "$B/accord-metatrace" "${args[@]}" \
        : -n 1 "$B/accord-metatrace" "${args[@]}") >"$2" 2>&1 || rc=$?
    [ "$1" = none ] || tc_release
    echo "GUARANTEE - classes=$([ "$1" = none ] && echo 0 || echo 1)" >>"$2"
    return "$rc"
}

# --- Accord mode: accordd with the example configuration ---
# Its jobs never run as root: they run as nobody, from copies in $work/bin
# (the build tree may be closed to nobody), and enter the hosts' namespaces
# through a setuid ip that only nobody's group may run (tools/netbed-ssh,
# NETBED_IP); $work goes at the end.
URL=http://127.0.0.1:18179
job_bin() {
    chmod 0711 "$work"
    install -d -m 0755 "$work/bin"
    install -m 0755 "$B/accord-metatrace" "$SHIM" "$SRC/tools/netbed-ssh" "$work/bin/"
    install -m 4750 -o root -g "$(id -g nobody)" "$(command -v ip)" "$work/bin/ip-netns"
}
start_accordd() {
    job_bin
    sed -e "s|^launcher_exec = .*|launcher_exec = $work/bin/netbed-ssh|" \
        -e "s|^env = LD_PRELOAD=.*|env = LD_PRELOAD=$work/bin/${SHIM##*/}|" \
        -e "s|^audit_interval = .*|audit_interval = 1s|" \
        -e "s|^capacity = .*|capacity = $CAP_MBIT|" \
        -e "/^\[launch\]/a directory = $work/jobs\npath = $work/bin\naccount = nobody" \
        "$SRC/docs/examples/netbed.conf" >"$work/accord.conf"
    (cd "$work" && NETBED_IP=$work/bin/ip-netns exec "$B/accordd" --config "$work/accord.conf" \
        --db "$work/accord.db" --listen 127.0.0.1:18179) >"$work/accordd.log" 2>&1 &
    accordd_pid=$!
    for _ in $(seq 100); do grep -q listening "$work/accordd.log" && return 0; sleep 0.1; done
    echo "viola-bench: accordd did not start:" >&2
    tail -20 "$work/accordd.log" >&2
    exit 1
}
offer() { # MBIT|none START
    local arg link=""
    arg="<co:Argument>--steps=$STEPS</co:Argument><co:Argument>--compute-ms=$COMPUTE_MS</co:Argument><co:Argument>--mb=$MB</co:Argument>"
    comp() { echo "<wsag:ServiceDescriptionTerm wsag:Name=\"$1\" wsag:ServiceName=\"metatrace\"><co:Component><co:Site>$2</co:Site><co:Nodes>1</co:Nodes><co:Executable>accord-metatrace</co:Executable>$arg</co:Component></wsag:ServiceDescriptionTerm>"; }
    [ "$1" = none ] || link="<wsag:ServiceDescriptionTerm wsag:Name=\"wan\" wsag:ServiceName=\"metatrace\"><co:Link><co:Between>trace</co:Between><co:And>partrace</co:And><co:Bandwidth unit=\"Mbit/s\">$1</co:Bandwidth></co:Link></wsag:ServiceDescriptionTerm>"
    echo "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>viola-$1</wsag:Name><wsag:Context><wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context><wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" wsag:ServiceName=\"metatrace\"><co:Schedule><co:EarliestStart>$2</co:EarliestStart><co:Duration>PT3M</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>$(comp trace alpha)$(comp partrace beta)$link<wsag:ServiceDescriptionTerm wsag:Name=\"launch\" wsag:ServiceName=\"metatrace\"><co:Launch style=\"metampich\"/></wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>"
}
run_accord() { # MBIT|none OUTFILE
    local start id state
    start=$(date -u -d "+3 seconds" +%Y-%m-%dT%H:%M:%SZ)
    id=$(offer "$1" "$start" | curl -s -X POST --data-binary @- -H 'Content-Type: application/xml' \
        "$URL/agreements" | grep -o 'AgreementId="[^"]*' | head -1 | cut -d'"' -f2) || true
    [ -n "$id" ] || { echo "offer for $1 was not agreed" >"$2"; return 1; }
    # While the job runs: the link's guarantee term as accordd reports it, and
    # whether a reservation class (prio 0 leaf) is in alpha's uplink tree.
    local guarantee=- classes=0 n
    for _ in $(seq 1800); do
        state=$("$B/accordctl" --server "$URL" state "$id" 2>/dev/null) || true
        case $state in
        *": Complete"* | *": Terminated"* | *": Failed"* | *": Interrupted"*) break ;;
        esac
        case $state in
        *"guarantee term"*Fulfilled*) guarantee=Fulfilled ;;
        *"guarantee term"*Violated*) guarantee=Violated && echo "$state" >"$2.state" ;;
        esac
        n=$(tc -n acc-gw-alpha class show dev up0 | grep -c 'prio 0') || true
        [ "$n" -gt "$classes" ] && classes=$n
        sleep 0.1
    done
    cp "$work/jobs/$id/output" "$2" 2>/dev/null || echo "no output for $id" >"$2"
    echo "$state" >>"$2"
    echo "GUARANTEE $guarantee classes=$classes" >>"$2"
    [ -f "$2.state" ] || "$B/accordctl" --server "$URL" state "$id" >"$2.state" 2>&1 || true
}

# --- background ---
BG_PIDS=()
bg_start() { # N streams: half from alpha-n2, half from gamma-n1, to beta-n2
    local n=$1 half=$(($1 / 2))
    [ "$n" -gt 0 ] || return 0
    ip netns exec acc-alpha2 "$B/accord-flowgen" send "$SINK" 5201 --streams "$half" --seconds 600 \
        >"$work/bg-alpha.log" 2>&1 &
    BG_PIDS+=($!)
    ip netns exec acc-gamma1 "$B/accord-flowgen" send "$SINK" 5201 --streams $((n - half)) \
        --seconds 600 >"$work/bg-gamma.log" 2>&1 &
    BG_PIDS+=($!)
    sleep 1 # past TCP slow start
}
bg_stop() {
    local p
    for p in "${BG_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${BG_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    BG_PIDS=()
}

[ "$DIRECT" = 1 ] || start_accordd
mode=$([ "$DIRECT" = 1 ] && echo "direct (tc by hand, mpiexec)" || echo "Accord meta-jobs (accordd, tc adapter)")
echo "VIOLA experiment: $mode; link $CAP_MBIT Mbit/s; $STEPS steps (1 warm-up) of $COMPUTE_MS ms compute + $MB MB alpha -> beta"
echo "machine: $(nproc) cores, $(uname -srm), load $(cut -d' ' -f1-3 /proc/loadavg)"
CSV=$OUT/viola.csv
echo "reservation_pct,reserved_mbit,background_streams,comm_median_s,comm_min_s,comm_max_s,spread,comm_share,run_s,guarantee,leaf_classes" >"$CSV"
printf '%-12s %-10s %14s %8s %11s  %s\n' reservation background "comm/step (s)" spread "comm share" "guarantee (leaf classes seen)"
t0=$(date +%s)
fails=0
for res in "${RES_LEVELS[@]}"; do
    if [ "$res" = none ]; then mbit=none; else mbit=$((CAP_MBIT * res / 100)); fi
    for bg in "${BG_LEVELS[@]}"; do
        out=$work/cell-$res-$bg.out
        bg_start "$bg"
        rc=0
        if [ "$DIRECT" = 1 ]; then run_direct "$mbit" "$out" || rc=$?; else run_accord "$mbit" "$out" || rc=$?; fi
        bg_stop
        line=$(grep '^METATRACE ' "$out" | tail -1 || true)
        label=$([ "$res" = none ] && echo none || echo "$res % ($mbit)")
        if [ -z "$line" ]; then
            printf '%-12s %-10s %s\n' "$label" "$bg" "FAILED (rc $rc): $(tail -3 "$out" | tr '\n' ' ' | cut -c1-200)"
            cp "$out" "$OUT/failed-$res-$bg.out"
            [ -f "$out.state" ] && cp "$out.state" "$OUT/failed-$res-$bg.state"
            fails=$((fails + 1))
            continue
        fi
        val() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
        g=$(sed -n 's/^GUARANTEE \(.*\) classes=\(.*\)/\1 (\2)/p' "$out")
        printf '%-12s %-10s %14s %8s %11s  %s\n' "$label" "$bg" "$(val comm_median_s)" "$(val spread)" "$(val comm_share)" "$g"
        echo "$res,$mbit,$bg,$(val comm_median_s),$(val comm_min_s),$(val comm_max_s),$(val spread),$(val comm_share),$(val run_s),${g%% *},${g##*(}" | tr -d ')' >>"$CSV"
    done
done
echo "matrix took $(($(date +%s) - t0)) s; CSV: $CSV"
if [ -n "$accordd_pid" ]; then # accordd must stop cleanly (and, sanitized, find nothing)
    kill -TERM "$accordd_pid"
    rc=0
    wait "$accordd_pid" || rc=$?
    accordd_pid=
    if [ "$rc" != 0 ] || grep -q 'Sanitizer' "$work/accordd.log"; then
        echo "viola-bench: accordd ended with status $rc:" >&2
        grep -A20 'Sanitizer' "$work/accordd.log" | head -40 >&2
        fails=$((fails + 1))
    fi
fi

series=$(awk -F, 'NR > 1 { print $1 }' "$CSV" | uniq | tr '\n' ' ')
if command -v gnuplot >/dev/null 2>&1 && [ -n "$series" ]; then
    gnuplot <<EOF2 && echo "plot: $OUT/viola.png"
set terminal pngcairo size 800,480 noenhanced
set output "$OUT/viola.png"
set datafile separator ","
set title "MetaTrace-like job on the namespace testbed ($CAP_MBIT Mbit/s link, $MB MB per step)"
set xlabel "competing background streams"
set ylabel "median communication time per step (s)"
set key top left
set logscale y
set xtics (0, 2, 4)
set style data linespoints
set errorbars small
plot for [r in "$series"] "< awk -F, -v r=".r." 'NR > 1 && \$1 == r' $CSV" \
     using 3:4:5:6 with yerrorlines title (r eq "none" ? "no reservation" : r." % reserved")
EOF2
fi
[ "$fails" -eq 0 ] || { echo "viola-bench: $fails cell(s) failed" >&2; exit 1; }
