#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# compare.sh - the main benchmarks on two builds side by side, in one run.
#
#   tests/bench/compare.sh BASE [ROUNDS, default 3] [AGREEMENTS, default 3000]
#
# Builds BASE (any commit, branch or tag) and the working tree as Release,
# then runs each benchmark ROUNDS times on both, alternately (which build
# goes first alternates too), so that both see the same machine: the real
# accordd under HTTP load (accord_server_bench of the working tree against
# each build's accordd: POST/s while AGREEMENTS fill the database, CPU, RSS
# and bytes per agreement, GET/s and one GET's median as XML, JSON and
# /healthz), the service path's latency (accord_bench of each build) and the
# remote path (accord_remote_bench of each build: three accord-site daemons
# over mutual TLS).  Prints each figure's median for BASE and for the
# working tree and their ratio (HEAD / BASE).  Uncommitted changes are
# measured as they are: that is what a change's closing note quotes.
#
# BASE's sources are exported (git archive) into $COMPARE_DIR/SHA (default
# /tmp/accord-compare) and built there; a second run reuses that build.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] || { echo "usage: $0 BASE [ROUNDS] [AGREEMENTS]" >&2; exit 2; }
base_rev=$1
rounds=${2:-3}
agreements=${3:-3000}
sha=$(git rev-parse --verify --quiet "$base_rev^{commit}") ||
    { echo "compare.sh: $base_rev is not a commit" >&2; exit 2; }
cdir=${COMPARE_DIR:-/tmp/accord-compare}
base_src=$cdir/$sha
jobs=${JOBS:-$(nproc)}
targets=(accordd accord-site accord_server_bench accord_bench accord_remote_bench)

log() { printf '[compare] %s\n' "$*" >&2; }

build_release() { # build_release SRC
    cmake -S "$1" -B "$1/build-bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$1/build-bench" -j "$jobs" --target "${targets[@]}" >/dev/null
}

if [ ! -f "$base_src/CMakeLists.txt" ]; then
    log "exporting $base_rev ($sha) into $base_src"
    rm -rf "$base_src"
    mkdir -p "$base_src"
    git archive "$sha" | tar -x -C "$base_src"
fi
log "building $base_rev (Release)"
build_release "$base_src"
log "building the working tree (Release)"
build_release "$PWD"

out=$(mktemp -d /tmp/accord-compare-out-XXXXXX)
trap 'rm -rf "$out"' EXIT

# Each run appends "figure NAME VALUE" lines to $out/WHICH.
server() { # server WHICH DIR
    ACCORD_BENCH_ACCORDD="$2/build-bench/accordd" \
        "$src/build-bench/tests/accord_server_bench" "$agreements" 2 2>/dev/null |
        sed -n 's/^figure \([a-z_]*\) \([0-9.]*\)$/\1 \2/p' >>"$out/$1"
}
service() { # service WHICH DIR
    "$2/build-bench/tests/accord_bench" 1 2>/dev/null |
        sed -n 's/.*service path, synchronous=FULL: median \([0-9.]*\) us.*/service_path_full_us \1/p
                s/.*service path, synchronous=NORMAL: median \([0-9.]*\) us.*/service_path_normal_us \1/p' \
            >>"$out/$1"
}
remote() { # remote WHICH DIR
    "$2/build-bench/tests/accord_remote_bench" 3 300 4 yes 2>/dev/null |
        sed -n 's/^in-process latency .*CPU \([0-9]*\) us per negotiation.*/inproc_cpu_us \1/p
                s/^remote     latency .*CPU \([0-9]*\) us per negotiation.*/remote_cpu_us \1/p
                s/^remote     16 clients for .*: \([0-9]*\) agreements\/s.*/remote_per_s \1/p' \
            >>"$out/$1"
}

# The benchmarks run in $out: whatever they leave in their working directory
# goes with it.
src=$PWD
cd "$out"
[[ $base_src = /* ]] || base_src=$src/$base_src
for ((r = 1; r <= rounds; r++)); do
    log "round $r of $rounds"
    for bench in server service remote; do
        if ((r % 2)); then
            "$bench" base "$base_src"
            "$bench" head "$src"
        else
            "$bench" head "$src"
            "$bench" base "$base_src"
        fi
    done
done

median() { # median FILE NAME
    awk -v k="$2" '$1 == k { print $2 }' "$1" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

echo "machine: $(nproc) cores, $(uname -srm); $rounds rounds, $agreements agreements, medians"
printf '%-24s %14s %14s %8s\n' figure "${base_rev:0:14}" "HEAD" "ratio"
for name in post_per_s post_vs_healthz cpu_ms_per_agreement switches_per_agreement rss_mb db_kb_per_agreement \
    get_xml_per_s get_json_per_s get_healthz_per_s one_get_xml_ms one_get_json_ms \
    one_get_healthz_ms service_path_full_us service_path_normal_us inproc_cpu_us \
    remote_cpu_us remote_per_s; do
    b=$(median "$out/base" "$name")
    h=$(median "$out/head" "$name")
    ratio=$(awk -v b="${b:-0}" -v h="${h:-0}" 'BEGIN { if (b > 0 && h > 0) printf "%.2f", h / b; else print "-" }')
    printf '%-24s %14s %14s %8s\n' "$name" "${b:--}" "${h:--}" "$ratio"
done
