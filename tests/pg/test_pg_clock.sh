#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test_pg_clock.sh BUILD_DIR - clock skew is detected, not trusted (issue
# 32): four accordd on one PostgreSQL database, S with its clock an hour
# ahead and B an hour behind (libfaketime, their monotonic clocks left
# alone), N1 and N2 with the machine's.  S starts first and would lead if
# clocks were trusted; B would be taken for dead.
#   1. S and B log and show (/metrics) their offset from the database's
#      clock, refuse to lead, answer a new offer with a 503 (Retry-After)
#      that names the skew, and their /healthz fails; every row is seen by
#      the database's clock (alive, not an hour off);
#   2. N1 leads; the lease expires by the database's clock; an offer to N1
#      is agreed;
#   3. N1 killed (kill -9): N2 leads within the lease (not an hour), S
#      and B never do.
#
# Needs the cluster of start-cluster.sh (PG_TEST_DIR; ctest fixture "pg")
# and libfaketime (Debian: faketime).  Root (the cluster runs as nobody);
# about 15 s.
set -u
BUILD=${1:?usage: test_pg_clock.sh BUILD_DIR}
DIR=${PG_TEST_DIR:?PG_TEST_DIR names the cluster of start-cluster.sh}
BASE=$(cat "$DIR/url") || { echo "no cluster in $DIR" >&2; exit 1; }
LEASE=6 # the beat: 1 s; dead or expired after 4 s (whole seconds: up to 5)
FAKETIME_LIB=${FAKETIME_LIB:-/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1}
T=$(mktemp -d /tmp/accord-pg-clock-XXXXXX)
DB=clock_$$
URL=$(echo "$BASE" | sed "s|/accord?|/$DB?|")
. "$(dirname "$0")/instances.sh"
fail() {
    echo "FAIL: $*" >&2
    for f in "$T"/a?.log; do [ -f "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }; done
    exit 1
}
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    psql "$BASE" -q -c "DROP DATABASE IF EXISTS $DB" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
q() { psql "$URL" -At -c "$1"; }
[ -f "$FAKETIME_LIB" ] || fail "no libfaketime at $FAKETIME_LIB (apt-get install faketime)"

psql "$BASE" -q -c "CREATE DATABASE $DB" || fail "cannot make database $DB"
pg_signing_pair
pg_ini_head "$URL" "$LEASE" >"$T/accord.ini"
# [database] as pg_ini_head writes it, with the clock's bounds
sed -i 's|^\(lease = .*\)$|\1\nclock_warn = PT2S\nclock_refuse = PT30S|' "$T/accord.ini"
cat >>"$T/accord.ini" <<CONF
[negotiation]
horizon = P2D
lead_time = PT5S

CONF
pg_sites >>"$T/accord.ini"

metric() { # N NAME: the value of metric NAME at instance N
    curl -s "http://127.0.0.1:$(cat "$T/port$1")/metrics" | sed -n "s/^$2 //p"
}
S=2 N1=1 N2=3 B=4
# libfaketime comes first in the preload list: an ASan build's accordd is
# told not to insist on coming first itself (it aborts otherwise)
SKEW_ASAN=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
ASAN_OPTIONS=$SKEW_ASAN LD_PRELOAD=$FAKETIME_LIB FAKETIME="+1h" FAKETIME_DONT_FAKE_MONOTONIC=1 pg_start $S
ASAN_OPTIONS=$SKEW_ASAN LD_PRELOAD=$FAKETIME_LIB FAKETIME="-1h" FAKETIME_DONT_FAKE_MONOTONIC=1 pg_start $B
# two beats of S's alone: were its clock trusted, it would lead by now
sleep 2.5
pg_start $N1
for _ in $(seq 100); do grep -q " leads" "$T/a$N1.log" && break; sleep 0.1; done
grep -q " leads" "$T/a$N1.log" || fail "instance N1 does not lead"
pg_start $N2
sleep 1.5

# 1. S and B: offset logged and shown, no lead, offers refused with a 503
# naming the skew.
grep -q "clock: this instance's clock is 3[56][0-9][0-9]\.[0-9]* s ahead of the database's" \
    "$T/a$S.log" || fail "S did not log its offset"
grep -q "clock: this instance's clock is 3[56][0-9][0-9]\.[0-9]* s behind the database's" \
    "$T/a$B.log" || fail "B did not log its offset"
grep -h "clock:" "$T/a$S.log" | head -1 | sed 's/^/  S: /'
off=$(metric $S accord_clock_offset_seconds) offb=$(metric $B accord_clock_offset_seconds)
echo "offsets: S $off s, B $offb s, N1 $(metric $N1 accord_clock_offset_seconds) s, N2 $(metric $N2 accord_clock_offset_seconds) s"
[ "$(echo "$off < -3590 && $off > -3610" | bc)" = 1 ] || fail "S's offset is $off s, not about -3600"
[ "$(echo "$offb > 3590 && $offb < 3610" | bc)" = 1 ] || fail "B's offset is $offb s, not about 3600"
for n in $N1 $N2; do
    o=$(metric $n accord_clock_offset_seconds)
    [ "$(echo "$o < 1 && $o > -1" | bc)" = 1 ] || fail "instance $n's offset is $o s"
    [ "$(metric $n accord_clock_refused)" = 0 ] || fail "instance $n refused"
done
pg_offer o1 u1 2 2 10 >"$T/o1.xml"
for n in $S $B; do
    [ "$(metric $n accord_clock_refused)" = 1 ] || fail "instance $n does not say it refuses"
    [ "$(metric $n accord_leader)" = 0 ] || fail "instance $n leads"
    grep -q " leads: housekeeping" "$T/a$n.log" && fail "instance $n led at some time"
    code=$(curl -s -D "$T/h1" -o "$T/r1" -w '%{http_code}' -H 'Content-Type: application/xml' \
        --data-binary "@$T/o1.xml" "$(cat "$T/url$n")/agreements")
    [ "$code" = 503 ] || fail "an offer to instance $n: $code, not 503: $(cat "$T/r1")"
    grep -q "clock" "$T/r1" || fail "instance $n's 503 does not name the clock: $(cat "$T/r1")"
    grep -qi "^Retry-After:" "$T/h1" || fail "instance $n's 503 has no Retry-After"
    echo "offer to instance $n: $code: $(grep -o "this instance's clock[^<]*" "$T/r1" | head -1)"
    code=$(curl -s -o "$T/hz" -w '%{http_code}' "$(cat "$T/url$n")/healthz")
    [ "$code" = 503 ] || fail "instance $n's /healthz: $code"
done
code=$(curl -s -o /dev/null -w '%{http_code}' "$(cat "$T/url$N2")/healthz")
[ "$code" = 200 ] || fail "N2's /healthz: $code"
# every row is seen by the database's clock: S is alive, not an hour off
skew=$(q "SELECT max(abs(seen - extract(epoch FROM now())))::int FROM instance")
[ "$skew" -le "$LEASE" ] || fail "an instance row is $skew s off the database's clock"
[ "$(q "SELECT count(*) FROM instance")" = 4 ] || fail "not four instance rows"

# 2. N1 leads, its lease by the database's clock; an offer to N1 is agreed.
[ "$(metric $N1 accord_leader)" = 1 ] || fail "N1 does not lead"
[ "$(metric $N2 accord_leader)" = 0 ] || fail "N2 leads too"
left=$(q "SELECT expires - extract(epoch FROM now())::bigint FROM lease WHERE name = 'leader'")
[ "$left" -ge 0 ] && [ "$left" -le "$LEASE" ] || fail "the lease ends in $left s by the database's clock"
code=$(curl -s -o "$T/r2" -w '%{http_code}' -H 'Content-Type: application/xml' \
    --data-binary "@$T/o1.xml" "$(cat "$T/url$N1")/agreements")
[ "$code" = 201 ] || [ "$code" = 200 ] || fail "an offer to N1: $code: $(cat "$T/r2")"

# 3. N1 dies: N2 leads within the lease, S never.
kill -9 "${PIDS[$N1]}"
killed=$(date +%s.%N)
for _ in $(seq $((LEASE * 40))); do [ "$(metric $N2 accord_leader)" = 1 ] && break; sleep 0.05; done
took=$(echo "$(date +%s.%N) - $killed" | bc)
[ "$(metric $N2 accord_leader)" = 1 ] || fail "N2 does not lead $took s after N1 died"
echo "N1 (the leader) killed: N2 led $took s later (lease $LEASE s)"
[ "$(echo "$took <= $LEASE" | bc)" = 1 ] || fail "the lead moved after $took s, beyond the lease"
sleep 1
for n in $S $B; do
    [ "$(metric $n accord_leader)" = 0 ] || fail "instance $n leads"
    grep -q " leads: housekeeping" "$T/a$n.log" && fail "instance $n led at some time"
done
# and no negotiation of B's (alive, an hour behind) was taken for a dead one's
grep -h "instances that stopped" "$T"/a?.log && fail "an instance was taken for dead"
echo "PASS"
