#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test_metrics.sh BUILD_DIR - both daemons' /metrics after real traffic
# (issue 35, item 6).  A real accord-site (site alpha, mutual TLS with the
# certificates of tests/support/mkcerts.sh) and a real accordd that books on
# it through the remote adapter, beside a simulated site of its own; accordd
# with [auth] tokens of the three roles.  Traffic: three agreements, a quote,
# a list, a 404 at accordd; a 404 at accord-site.  Then, for each daemon:
#   - `promtool check metrics` (Debian's prometheus package) says nothing
#     and exits 0: no parse error, no lint warning;
#   - no two families share a name as OpenMetrics reads them (a counter's
#     name without its _total: accord_negotiation_seconds_total beside the
#     histogram accord_negotiation_seconds was one), no sample outside a
#     family;
#   - the process figures exist and are plausible (start time within a
#     minute before now, open descriptors > 0, resident memory > 0);
#   - accord_http_request_duration_seconds{route} grew by the requests sent,
#     class by class.
# And the metrics role: its token reads /metrics (200) and gets 403 on GET
# /agreements and POST /admin/backup; a plain user's token gets 403 on
# /metrics.  At accord-site a peer with metrics_only = yes (the monitoring's)
# reads /metrics and gets 403 on every /v1 route, one without it or admin
# = yes gets 403 on /metrics.
# About 10 s; no root needed.  KEEP=DIR: the daemons' logs and the scrapes
# are copied there.
set -u
BUILD=$(cd "${1:?usage: test_metrics.sh BUILD_DIR}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../support/checks.sh
. "$SRC/tests/support/checks.sh"
command -v promtool >/dev/null || {
    echo "FAIL: promtool is missing (Debian package prometheus; quickstart.sh installs it)"
    exit 1
}
T=$(mktemp -d /tmp/accord-metrics-XXXXXX)
APID=
SPID=
cleanup() {
    [ -n "$APID" ] && kill "$APID" 2>/dev/null
    [ -n "$SPID" ] && kill "$SPID" 2>/dev/null
    wait 2>/dev/null
    [ -n "${KEEP:-}" ] && cp "$T"/*.log "$T"/*.prom "$KEEP"/ 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
die() {
    echo "FAIL: $*"
    tail -20 "$T/a.log" "$T/s.log" 2>/dev/null
    exit 1
}

"$SRC/tests/support/mkcerts.sh" "$T/certs" || die "cannot make the certificates"
C=$T/certs

# ------------------------------------------------------------ accord-site
cat >"$T/site.ini" <<CONF
[daemon]
name = alpha
listen = 127.0.0.1:0
database = $T/site.db
certificate = $C/site-alpha.crt
key = $C/site-alpha.key
client_ca = $C/ca.crt

[site alpha]
adapter = sim-batch
nodes = 8

; accordd: books, may not read /metrics
[peer accord-main]
subject = CN=accord-main
connections = 16

; the monitoring's certificate (CN=alice here): reads /metrics, nothing else
[peer monitoring]
subject = CN=alice
metrics_only = yes
CONF
"$BUILD/accord-site" --config "$T/site.ini" >"$T/s.log" 2>&1 &
SPID=$!
SPORT=
for _ in $(seq 100); do
    SPORT=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$T/s.log")
    [ -n "$SPORT" ] && break
    sleep 0.1
done
[ -n "$SPORT" ] || die "accord-site did not start"
S=https://127.0.0.1:$SPORT

# ----------------------------------------------------------------- accordd
printf '%s\n' "root root-token-0123456789 admin" "alice alice-token-0123456789" \
    "prom prom-token-0123456789 metrics" >"$T/tokens"
chmod 600 "$T/tokens"
cat >"$T/accord.ini" <<CONF
[server]
listen = 127.0.0.1:0

[database]
path = $T/accord.db

[auth]
tokens = $T/tokens

[negotiation]
horizon = P3D
lead_time = PT5S

[site alpha]
adapter = remote
nodes = 8
url = $S
ca = $C/ca.crt
certificate = $C/accord.crt
key = $C/accord.key
timeout = 5

[site sb]
adapter = sim-batch
nodes = 16
calendar = $T/cal-sb.db
CONF
(cd "$T" && exec "$BUILD/accordd" --config "$T/accord.ini") >"$T/a.log" 2>&1 &
APID=$!
B=
for _ in $(seq 100); do
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$T/a.log")
    [ -n "$port" ] && B=http://127.0.0.1:$port && break
    sleep 0.1
done
[ -n "$B" ] || die "accordd did not start"

ADMIN='Authorization: Bearer root-token-0123456789'
USER='Authorization: Bearer alice-token-0123456789'
PROM='Authorization: Bearer prom-token-0123456789'
# code HEADER METHOD PATH [OUT]: the status of one request to accordd
code() {
    curl -s -o "${4:-/dev/null}" -w '%{http_code}' -m 30 -H "$1" -X "$2" "$B$3"
}
# scrape_accordd OUT / scrape_site OUT: the /metrics body (admin; the
# metrics_only peer)
scrape_accordd() {
    [ "$(code "$ADMIN" GET /metrics "$1")" = 200 ]
}
site_code() { # site_code CERT PATH [OUT]
    curl -s -o "${3:-/dev/null}" -w '%{http_code}' -m 30 --cacert "$C/ca.crt" \
        --cert "$C/$1.crt" --key "$C/$1.key" "$S$2"
}
scrape_site() {
    [ "$(site_code alice /metrics "$1")" = 200 ]
}
# value FILE SERIES: the value of one series (exact name and labels), or "".
value() {
    awk -v s="$2" '$1 == s { print $2; exit }' "$1"
}
# grew FILE0 FILE1 ROUTE: how much the route class's count grew.
grew() {
    local s="accord_http_request_duration_seconds_count{route=\"$3\"}" a b
    a=$(value "$1" "$s")
    b=$(value "$2" "$s")
    [ -n "$a" ] && [ -n "$b" ] && echo $((b - a))
}
offer() {
    cat <<XML
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement" xmlns:co="urn:accord:coalloc:1"><wsag:Name>$1</wsag:Name><wsag:Context><wsag:AgreementInitiator>alice</wsag:AgreementInitiator><wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context><wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name="s" wsag:ServiceName="m"><co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name="a" wsag:ServiceName="m"><co:Component><co:Site>alpha</co:Site><co:Nodes>2</co:Nodes></co:Component></wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name="b" wsag:ServiceName="m"><co:Component><co:Site>sb</co:Site><co:Nodes>2</co:Nodes></co:Component></wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>
XML
}
post() { # post PATH FILE OUT: the status (alice's token)
    curl -s -o "$3" -w '%{http_code}' -m 60 -H "$USER" -H 'Content-Type: application/xml' \
        --data-binary "@$2" "$B$1"
}

# ---------------------------------------------------------------- traffic
scrape_accordd "$T/a0.prom" || die "accordd's /metrics (admin) does not answer 200"
scrape_site "$T/s0.prom" || die "accord-site's /metrics (admin peer) does not answer 200"
for i in 1 2 3; do
    offer "m$i" >"$T/o$i.xml"
    c=$(post /agreements "$T/o$i.xml" "$T/ag$i.xml")
    expect "agreement $i answers 201 (it is $c)" test "$c" = 201
done
c=$(post /negotiations "$T/o1.xml" "$T/quote.xml")
expect "a quote answers 201 (it is $c)" test "$c" = 201
c=$(code "$USER" GET /agreements)
expect "the list answers 200 (it is $c)" test "$c" = 200
c=$(code "$USER" GET /no/such/path)
expect "a path of no route answers 404 (it is $c)" test "$c" = 404
c=$(site_code alice /v1/no/such/path)
expect "accord-site: a path of no route answers 404 (it is $c)" test "$c" = 404
# A request is counted once its answer has gone out, a moment after the
# client has it: scrape again (at most 5 s) until the last ones are in.
# AX, SX: the scrapes made before the last one, each counted as metrics.
AX=0 SX=0
while :; do
    scrape_accordd "$T/a1.prom" || die "accordd's /metrics does not answer 200 after the traffic"
    [ "$(grew "$T/a0.prom" "$T/a1.prom" other)" = 1 ] &&
        [ "$(grew "$T/a0.prom" "$T/a1.prom" agreements)" = 4 ] &&
        [ "$(grew "$T/a0.prom" "$T/a1.prom" negotiations)" = 1 ] && break
    [ $AX -lt 50 ] || break
    AX=$((AX + 1))
    sleep 0.1
done
while :; do
    scrape_site "$T/s1.prom" || die "accord-site's /metrics does not answer 200 after the traffic"
    [ "$(grew "$T/s0.prom" "$T/s1.prom" other)" = 1 ] && break
    [ $SX -lt 50 ] || break
    SX=$((SX + 1))
    sleep 0.1
done

# --------------------------------------------------- the format, per daemon
# families FILE: "TYPE NAME" per family as OpenMetrics names it (a counter
# without _total), then any sample whose family was not declared.
check_families() {
    awk '
        /^# TYPE / {
            name = $3; type = $4
            fam = name
            if (type == "counter") sub(/_total$/, "", fam)
            if (fam in seen) { print "two families named " fam ": " seen[fam] " and " type " " name; bad = 1 }
            seen[fam] = type " " name
            declared[name] = type
            next
        }
        /^#/ || /^$/ { next }
        {
            s = $1; sub(/\{.*/, "", s)
            if (s in declared) next
            base = s
            if (sub(/_(bucket|sum|count)$/, "", base) && (declared[base] == "histogram" || declared[base] == "summary")) next
            print "a sample of no family: " s; bad = 1
        }
        END { exit bad }
    ' "$1"
}
for d in a s; do
    name=accordd
    [ $d = s ] && name=accord-site
    f=$T/$d.promtool
    promtool check metrics <"$T/${d}1.prom" >"$f" 2>&1
    rc=$?
    if [ $rc = 0 ] && [ ! -s "$f" ]; then
        ok "$name: promtool check metrics: no error, no lint warning"
    else
        bad "$name: promtool check metrics exits $rc: $(head -20 "$f")"
    fi
    if out=$(check_families "$T/${d}1.prom"); then
        ok "$name: every family has a name of its own, every sample a family"
    else
        bad "$name: $out"
    fi
    now=$(date +%s)
    start=$(value "$T/${d}1.prom" process_start_time_seconds)
    expect "$name: process_start_time_seconds ($start) is within a minute before now ($now)" \
        awk -v s="${start:-0}" -v n="$now" 'BEGIN { exit !(s > n - 60 && s <= n + 1) }'
    fds=$(value "$T/${d}1.prom" process_open_fds)
    expect "$name: process_open_fds ($fds) > 0" test "${fds:-0}" -gt 0
    rss=$(value "$T/${d}1.prom" process_resident_memory_bytes)
    expect "$name: process_resident_memory_bytes ($rss) > 1 MiB" test "${rss:-0}" -gt 1048576
    cpu=$(value "$T/${d}1.prom" process_cpu_seconds_total)
    expect "$name: process_cpu_seconds_total ($cpu) is a number" \
        awk -v c="${cpu:-x}" 'BEGIN { exit !(c ~ /^[0-9]+(\.[0-9]+)?$/) }'
done
expect "accordd: no accord_negotiation_seconds_total any more" \
    sh -c '! grep -q "^accord_negotiation_seconds_total" "$1"' _ "$T/a1.prom"
expect "accordd: the histogram accord_negotiation_seconds is there" \
    grep -q '^# TYPE accord_negotiation_seconds histogram$' "$T/a1.prom"

# ---------------------------------------------- the histogram, class by class
# accordd: three agreements and the list, the quote, the 404, the first scrape.
for rc in agreements:4 negotiations:1 other:1 sites:0 admin:0; do
    r=${rc%%:*} n=${rc#*:}
    g=$(grew "$T/a0.prom" "$T/a1.prom" "$r")
    expect "accordd: the request histogram of route=\"$r\" grew by $n (it grew by ${g:-nothing})" \
        test "${g:-x}" = "$n"
done
g=$(grew "$T/a0.prom" "$T/a1.prom" metrics)
expect "accordd: route=\"metrics\" grew by the scrapes before the last (1 to $((AX + 1)); it grew by ${g:-nothing})" \
    test "${g:-0}" -ge 1 -a "${g:-0}" -le $((AX + 1))
# Each bucket's count is at most the next one's, +Inf's is the count, and a
# request answered on the loopback is counted with a plausible sum.
expect "accordd: route=\"agreements\": cumulative buckets, +Inf = _count, a sum > 0" \
    awk '
        /^accord_http_request_duration_seconds_bucket\{route="agreements"/ {
            if ($2 < last) exit 1
            last = $2
            if ($1 ~ /le="\+Inf"/) inf = $2
        }
        /^accord_http_request_duration_seconds_sum\{route="agreements"\}/ { sum = $2 }
        /^accord_http_request_duration_seconds_count\{route="agreements"\}/ { count = $2 }
        END { exit !(inf == count && count >= 4 && sum > 0) }
    ' "$T/a1.prom"
# accord-site: accordd's previews and reservations (at least a reserve and
# a query per agreement), the 404, the first scrape.
g=$(grew "$T/s0.prom" "$T/s1.prom" reservations)
expect "accord-site: route=\"reservations\" grew by at least 3 (it grew by ${g:-nothing})" \
    test "${g:-0}" -ge 3
g=$(grew "$T/s0.prom" "$T/s1.prom" preview)
expect "accord-site: route=\"preview\" grew (by ${g:-nothing})" test "${g:-0}" -ge 1
for rc in other:1 jobs:0; do
    r=${rc%%:*} n=${rc#*:}
    g=$(grew "$T/s0.prom" "$T/s1.prom" "$r")
    expect "accord-site: the request histogram of route=\"$r\" grew by $n (it grew by ${g:-nothing})" \
        test "${g:-x}" = "$n"
done
g=$(grew "$T/s0.prom" "$T/s1.prom" metrics)
expect "accord-site: route=\"metrics\" grew by the scrapes before the last (1 to $((SX + 1)); it grew by ${g:-nothing})" \
    test "${g:-0}" -ge 1 -a "${g:-0}" -le $((SX + 1))

# --------------------------------------------------------- the metrics role
c=$(code "$PROM" GET /metrics "$T/prom.prom")
expect "the metrics role reads /metrics (200; it is $c)" test "$c" = 200
expect "... and what it reads is the metrics" grep -q '^process_open_fds ' "$T/prom.prom"
c=$(code "$PROM" GET /agreements "$T/r1")
expect "the metrics role gets 403 on GET /agreements (it is $c)" test "$c" = 403
expect "... saying why" grep -q "metrics role" "$T/r1"
c=$(code "$PROM" POST /admin/backup "$T/r2")
expect "the metrics role gets 403 on POST /admin/backup (it is $c)" test "$c" = 403
c=$(code "$PROM" GET /sites)
expect "the metrics role gets 403 on GET /sites (it is $c)" test "$c" = 403
c=$(code "$USER" GET /metrics)
expect "a user without a role gets 403 on /metrics (it is $c)" test "$c" = 403
c=$(code "Authorization: Bearer nobody-token-0123456789" GET /metrics)
expect "an unknown token gets 401 on /metrics (it is $c)" test "$c" = 401
c=$(site_code accord /metrics "$T/r3")
expect "accord-site: a peer without admin or metrics_only gets 403 on /metrics (it is $c)" \
    test "$c" = 403
c=$(site_code alice /v1/health "$T/r4")
expect "accord-site: the metrics_only peer gets 403 on /v1/health (it is $c)" test "$c" = 403
expect "... saying why" grep -q "metrics_only" "$T/r4"
c=$(curl -s -o /dev/null -w '%{http_code}' -m 30 --cacert "$C/ca.crt" --cert "$C/alice.crt" \
    --key "$C/alice.key" -X PUT -H 'Content-Type: application/xml' --data-binary '<x/>' \
    "$S/v1/reservations/k1")
expect "accord-site: the metrics_only peer gets 403 on a reserve (it is $c)" test "$c" = 403

# Both stop cleanly (SIGTERM), and a sanitizer build reports nothing.
kill -TERM "$APID" "$SPID"
wait "$APID"
a=$?
wait "$SPID"
s=$?
APID= SPID=
expect "accordd and accord-site stop with status 0 on SIGTERM (they give $a and $s)" \
    test "$a:$s" = 0:0
no_sanitizer_reports "$T/a.log" "$T/s.log"

checks_summary test_metrics
