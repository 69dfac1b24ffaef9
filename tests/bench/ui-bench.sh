#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ui-bench.sh - how long the web page (/ui/) takes to show N agreements in
# its window, in chromium: a Release accordd on the embedded testbed (no
# [auth]) is filled with N one-node, one-hour agreements spread over two
# weeks through the API (several clients at once), then the page is opened
# RUNS times with a two-week window; it prints the medians of the page's own
# performance measures: "timeline" (asking for the agreements page by page
# and the previews, then drawing) and "timeline-draw" (drawing alone).
#
#   tests/bench/ui-bench.sh [N, default 10000] [RUNS, default 5] [BUILD, default build-release]
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
N=${1:-10000}
RUNS=${2:-5}
BUILD=${3:-build-release}
[ -f "$BUILD/CMakeCache.txt" ] || cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j 2 --target accordd >/dev/null
BUILD=$(cd "$BUILD" && pwd)
NODE_DIR=$BUILD/browser-node
if ! cmp -s tests/browser/package-lock.json "$NODE_DIR/package-lock.json" ||
    [ ! -d "$NODE_DIR/node_modules/playwright-core" ]; then
    mkdir -p "$NODE_DIR"
    cp tests/browser/package.json tests/browser/package-lock.json "$NODE_DIR/"
    (cd "$NODE_DIR" && npm ci --no-audit --no-fund --prefer-offline >/dev/null)
fi

TMP=$(mktemp -d)
PID=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
"$BUILD/accordd" --print-config >"$TMP/accord.ini"
# One user's many agreements: no quota in the way (the shares of one address
# and the node-hours are printed with their values: lifted too).
sed -i -e 's/^max_agreements = .*/max_agreements = 1000000/' \
    -e 's/^max_agreements_per_address = .*/max_agreements_per_address = unlimited/' \
    -e 's/^max_node_hours = .*/max_node_hours = unlimited/' \
    -e 's/^max_mbit_hours = .*/max_mbit_hours = unlimited/' "$TMP/accord.ini"
(cd "$TMP" && exec "$BUILD/accordd" --config accord.ini --listen 127.0.0.1:0 \
    --log-level warn >"$TMP/out" 2>"$TMP/log") &
PID=$!
URL=
for _ in $(seq 100); do
    URL=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$TMP/out")
    [ -n "$URL" ] && break
    sleep 0.1
done
[ -n "$URL" ] || { cat "$TMP/log"; exit 1; }

# offer SITE EARLIEST: one node of SITE for an hour from EARLIEST on.
cat >"$TMP/offer.sh" <<'SH'
#!/bin/sh
curl -s -o /dev/null -w '%{http_code}\n' -X POST -H 'Content-Type: application/xml' \
  "$URL/agreements" --data-binary @- <<XML
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement" xmlns:co="urn:accord:coalloc:1">
<wsag:Name>bench-$3</wsag:Name><wsag:Context><wsag:AgreementInitiator>bench</wsag:AgreementInitiator>
<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context><wsag:Terms><wsag:All>
<wsag:ServiceDescriptionTerm wsag:Name="schedule" wsag:ServiceName="metajob"><co:Schedule>
<co:EarliestStart>$2</co:EarliestStart><co:Duration>PT1H</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>
<wsag:ServiceDescriptionTerm wsag:Name="c" wsag:ServiceName="metajob"><co:Component><co:Site>$1</co:Site>
<co:Nodes>1</co:Nodes></co:Component></wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>
XML
SH
chmod +x "$TMP/offer.sh"
now=$(date +%s)
start=$(date +%s.%N)
for i in $(seq "$N"); do
    case $((i % 7)) in 0 | 1 | 2 | 3) site=caesar ;; 4 | 5) site=fzj-xd1 ;; *) site=fh-brs ;; esac
    at=$(date -u -d "@$((now + 3600 + (i * 7919 % 1100) * 1080))" +%Y-%m-%dT%H:%M:%SZ)
    echo "$site $at $i"
done | URL=$URL xargs -P 6 -n 3 "$TMP/offer.sh" >"$TMP/codes"
end=$(date +%s.%N)
echo "filled: $(grep -c '^201$' "$TMP/codes") of $N agreements booked (201) in" \
    "$(echo "$end - $start" | bc) s; other answers: $(grep -v '^201$' "$TMP/codes" | sort | uniq -c | tr '\n' ' ')"

mkdir -p "$TMP/profile"
(cd "$TMP" && NODE_DIR=$NODE_DIR ACCORD_URL=$URL RUNS=$RUNS PROFILE=$TMP/profile \
    CHROMIUM=${CHROMIUM:-/usr/bin/chromium} node "$SRC/tests/bench/ui-bench.mjs")
