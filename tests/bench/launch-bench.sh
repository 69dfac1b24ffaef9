#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# launch-bench.sh - how promptly accordd starts meta-jobs at their agreed start,
# and how long a small real MPI job takes from start to Complete.
#
#   tests/bench/launch-bench.sh [jobs, default 5]
#
# Builds (RelWithDebInfo, build/), starts accordd with two simulated sites,
# and submits the jobs one after the other, each a 3-component accord-ring
# (5 ranks, fork launcher) starting 3 s ahead.  Prints per job the delay from
# the agreed start (a whole second) to "job started" in accordd's log, and
# from there to the agreement's Complete as seen by polling.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-5}
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target accordd accordctl accord_ring >/dev/null
dir=$(mktemp -d /tmp/accord-launch-bench-XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
cat >"$dir/bench.ini" <<EOF
[negotiation]
lead_time = PT1S
[launch]
enabled = yes
directory = $dir/jobs
[site alpha]
adapter = sim-batch
nodes = 64
[site beta]
adapter = sim-batch
nodes = 64
[site gamma]
adapter = sim-batch
nodes = 64
EOF
build/accordd --config "$dir/bench.ini" --db "$dir/bench.db" --listen 127.0.0.1:18123 \
    >"$dir/accordd.log" 2>&1 &
pid=$!
for _ in $(seq 50); do grep -q listening "$dir/accordd.log" && break; sleep 0.1; done
url=http://127.0.0.1:18123

echo "machine: $(nproc) cores, $(uname -srm); $(mpiexec.hydra --version | awk '/Version:/ {print "MPICH " $2}')"
for i in $(seq "$N"); do
    start=$(date -u -d "+3 seconds" +%Y-%m-%dT%H:%M:%SZ)
    comp() { echo "<wsag:ServiceDescriptionTerm wsag:Name=\"$1\" wsag:ServiceName=\"m\"><co:Component><co:Site>$2</co:Site><co:Nodes>$3</co:Nodes><co:Executable>accord-ring</co:Executable></co:Component></wsag:ServiceDescriptionTerm>"; }
    offer="<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" xmlns:co=\"urn:accord:coalloc:1\"><wsag:Context><wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context><wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name=\"s\" wsag:ServiceName=\"m\"><co:Schedule><co:EarliestStart>$start</co:EarliestStart><co:Duration>PT1M</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>$(comp a alpha 2)$(comp b beta 2)$(comp c gamma 1)<wsag:ServiceDescriptionTerm wsag:Name=\"l\" wsag:ServiceName=\"m\"><co:Launch style=\"metampich\"/></wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>"
    id=$(curl -s -X POST --data-binary "$offer" -H 'Content-Type: application/xml' "$url/agreements" |
        grep -o 'AgreementId="[^"]*' | head -1 | cut -d'"' -f2)
    [ -n "$id" ] || { echo "offer $i was not agreed" >&2; exit 1; }
    while ! grep -q ': Complete' <<<"$(build/accordctl --server "$url" state "$id")"; do sleep 0.02; done
    done_at=$(date +%s.%N)
    agreed=$(build/accordctl --server "$url" --json show "$id" | grep -o '"start":"[^"]*' | cut -d'"' -f4)
    started=$(grep "agreement $id: job started" "$dir/accordd.log" | cut -c1-23)
    s0=$(date -d "$agreed" +%s.%N)
    s1=$(date -d "${started}Z" +%s.%N)
    awk -v a="$s0" -v b="$s1" -v c="$done_at" -v i="$i" \
        'BEGIN { printf "job %d: started %.0f ms after its agreed start; Complete %.0f ms after that\n", i, (b - a) * 1000, (c - b) * 1000 }'
done
