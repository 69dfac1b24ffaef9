#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test_pg_instances.sh BUILD_DIR - three accordd on one PostgreSQL database
# (issue 20): 64 clients spread over them send 1,000 offers that compete for
# the same nodes and the same link; the leader is killed (kill -9) under
# that load.  Then: every answer was an agreement, a clear refusal (409) or a
# retryable 429 or 503; the dead instance's negotiations were ended by another
# within the lease; nothing is booked twice (the peak of every resource,
# from the store's journal and from the simulated sites' ledgers, within
# its capacity); no reservation is left open or orphaned.
#
# Needs the cluster of start-cluster.sh (PG_TEST_DIR; ctest fixture "pg").
# Root (the cluster runs as nobody); about a minute.
set -u
BUILD=${1:?usage: test_pg_instances.sh BUILD_DIR}
DIR=${PG_TEST_DIR:?PG_TEST_DIR names the cluster of start-cluster.sh}
BASE=$(cat "$DIR/url") || { echo "no cluster in $DIR" >&2; exit 1; }
OFFERS=${OFFERS:-1000}
CLIENTS=${CLIENTS:-64}
LEASE=6
T=$(mktemp -d /tmp/accord-pg-inst-XXXXXX)
DB=inst_$$
URL=$(echo "$BASE" | sed "s|/accord?|/$DB?|")
. "$(dirname "$0")/instances.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    psql "$BASE" -q -c "DROP DATABASE IF EXISTS $DB" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
q() { psql "$URL" -At -c "$1"; }

psql "$BASE" -q -c "CREATE DATABASE $DB" || fail "cannot make database $DB"
pg_signing_pair
pg_ini_head "$URL" "$LEASE" >"$T/accord.ini"
cat >>"$T/accord.ini" <<CONF
[negotiation]
horizon = P2D
lead_time = PT5S

[quota]
max_agreements = 100000

CONF
pg_sites >>"$T/accord.ini"

pg_start 1
pg_start 2
pg_start 3
for i in $(seq 100); do grep -q " leads" "$T"/a?.log && break; sleep 0.1; done
LEADER=$(grep -l " leads" "$T"/a?.log | head -1 | sed 's|.*/a\([0-9]\)\.log|\1|')
[ -n "$LEADER" ] || fail "no instance leads"
echo "instances on ports $(cat "$T"/port? | tr '\n' ' '); instance $LEADER leads"
# leaders N...: the instances among N... whose /metrics say they lead.
leaders() {
    for n in "$@"; do
        curl -s "http://127.0.0.1:$(cat "$T/port$n")/metrics" | grep -qx 'accord_leader 1' && echo "$n"
    done
}
[ "$(leaders 1 2 3)" = "$LEADER" ] || fail "/metrics: instances $(leaders 1 2 3) lead, not $LEADER alone"

# Offer i: 4 nodes on each site and 300 Mbit/s between them for an hour,
# within the next day: at most 4 at a time fit the nodes, 3 the link.
offer() { pg_offer "o$1" "u$(($1 % 8))" 4 4 300; }
export -f offer pg_offer
export T
# One client's request: to instance (i mod 3)+1; refused connections (the
# killed instance) go to the next one, as a load balancer would send them.
send() {
    i=$1
    offer "$i" >"$T/o$i.xml"
    for k in 0 1 2; do
        n=$(((i + k) % 3 + 1))
        code=$(curl -s -o "$T/r$i" -w '%{http_code}' -m 60 -H 'Content-Type: application/xml' \
            -H "Idempotency-Key: k$i" --data-binary "@$T/o$i.xml" \
            "http://127.0.0.1:$(cat "$T/port$n")/agreements")
        [ "$code" != 000 ] && break
    done
    echo "$code" >"$T/c$i"
    rm -f "$T/o$i.xml"
}
export -f send

t0=$(date +%s.%N)
seq "$OFFERS" | xargs -P "$CLIENTS" -I{} bash -c 'send {}' &
LOAD=$!
# Under load, the leader dies.
for _ in $(seq 300); do [ "$(ls "$T" | grep -c '^c')" -ge $((OFFERS / 4)) ] && break; sleep 0.1; done
kill -9 "${PIDS[$LEADER]}"
killed=$(date +%s.%N)
echo "killed instance $LEADER (the leader) after $(ls "$T" | grep -c '^c') answers"
wait "$LOAD"
t1=$(date +%s.%N)
echo "$OFFERS offers in $(echo "$t1 - $t0" | bc) s"

# Another instance leads, and the dead one's negotiations end, within the lease.
for _ in $(seq $((LEASE * 30))); do
    pending=$(q "SELECT count(*) FROM agreement WHERE state IN ('Pending','PendingAndTerminating')")
    [ "$pending" = 0 ] && break
    sleep 0.1
done
[ "$pending" = 0 ] || fail "$pending agreements still Pending after the lease"
# When another instance took the lead (and with it, in the same pass, ended
# the dead one's negotiations), from its log.
at=$(grep -h " leads" $(ls "$T"/a?.log | grep -v "a$LEADER.log") | head -1 | cut -c1-23)
[ -n "$at" ] || fail "no other instance took the lead"
took=$(echo "$(date -d "$at" +%s.%N) - $killed" | bc)
echo "another instance led $took s after the kill (lease $LEASE s)"
[ "$(echo "$took <= $LEASE" | bc)" = 1 ] || fail "the lead moved after $took s, beyond the lease"
grep -h "instances that stopped" "$T"/a?.log | sed 's/^/  /'
alive=$(seq 3 | grep -vx "$LEADER" | tr '\n' ' ')
[ "$(leaders $alive | wc -l)" = 1 ] || fail "/metrics: instances $(leaders $alive) lead after the kill"

codes=$(cat "$T"/c* | sort | uniq -c | tr '\n' ' ')
echo "answers: $codes"
bad=$(cat "$T"/c* | grep -cv -E '^(2[0-9][0-9]|409|429|503)$')
[ "$bad" = 0 ] || fail "$bad answers neither 2xx, 409 (no room) nor a retryable 429 or 503: $codes"
ok=$(cat "$T"/c* | grep -c -E '^20[01]$')
[ "$ok" -gt 0 ] || fail "no offer was agreed"

# Wait for the leader's sweep to release what the dead one left open.
for _ in $(seq 100); do
    open=$(q "SELECT count(*) FROM reservation WHERE state IN ('intent','reserved','unknown','cancel-failed')")
    [ "$open" = 0 ] && break
    sleep 0.2
done
[ "$open" = 0 ] || fail "$open reservations left open: $(q "SELECT state, count(*) FROM reservation GROUP BY 1")"

# No double booking: the peak of every resource within its capacity, from
# the journal (what accordd holds) and from each ledger (what the sites hold).
peak() { # SQL of a table with resource, amount, start_time, end_time -> resource|peak
    echo "SELECT resource, max(s) FROM (SELECT b1.resource, (SELECT sum(b2.amount) FROM ($1) b2
          WHERE b2.resource = b1.resource AND b2.start_time <= b1.start_time
          AND b2.end_time > b1.start_time) s FROM ($1) b1) x GROUP BY resource ORDER BY 1"
}
journal=$(q "$(peak "SELECT resource, amount, start_time, end_time FROM reservation WHERE state = 'committed'")")
ledgers=$(for s in sa sb wan; do q "$(peak "SELECT resource, amount, start_time, end_time FROM ledger_$s.booking")"; done)
echo "peaks (journal): $(echo $journal)"
echo "peaks (ledgers): $(echo $ledgers)"
for line in $journal $ledgers; do
    res=${line%|*} p=${line#*|}
    case $res in sa | sb) cap=16 ;; sa_sb) cap=1000 ;; *) fail "unknown resource $res" ;; esac
    [ "$p" -le "$cap" ] || fail "$res booked $p of $cap: booked twice"
done
# Every booking the sites hold is an agreement's committed reservation, and
# the other way round: nothing orphaned.
booked=$(for s in sa sb wan; do q "SELECT count(*) FROM ledger_$s.booking"; done | paste -sd+ | bc)
committed=$(q "SELECT count(*) FROM reservation WHERE state = 'committed'")
agreed=$(q "SELECT count(*) FROM agreement WHERE state = 'Observed'")
echo "agreements Observed: $agreed; committed reservations: $committed; site bookings: $booked"
[ "$booked" = "$committed" ] || fail "the sites hold $booked bookings, the journal $committed"
[ "$committed" = $((agreed * 3)) ] || fail "$agreed agreements but $committed reservations"
# GET answers the same on every surviving instance.
for n in 1 2 3; do
    [ "$n" = "$LEADER" ] && continue
    curl -s "http://127.0.0.1:$(cat "$T/port$n")/agreements?state=Observed&limit=1000" |
        grep -o 'co:id="[a-z0-9]*"' | sort -u >"$T/list$n"
    [ "$(wc -l <"$T/list$n")" = "$agreed" ] || fail "instance $n lists $(wc -l <"$T/list$n") of $agreed agreements"
done
lists=$(ls "$T"/list?)
cmp $lists >/dev/null || fail "the instances list different agreements"

# A clean stop (SIGTERM) of the leader lets its lease go: another instance
# leads at its next beat (a quarter of the lease), not once the lease has
# run out (at least three quarters after the last renewal, then a beat).
NEW=$(leaders $alive)
[ -n "$NEW" ] || fail "nobody leads before the clean stop"
other=$(echo $alive | tr ' ' '\n' | grep -vx "$NEW")
t0=$(date +%s.%N)
kill -TERM "${PIDS[$NEW]}"
for _ in $(seq $((LEASE * 20))); do [ "$(leaders $other)" = "$other" ] && break; sleep 0.05; done
took=$(echo "$(date +%s.%N) - $t0" | bc)
wait "${PIDS[$NEW]}" 2>/dev/null
[ "$(leaders $other)" = "$other" ] || fail "instance $other does not lead after $NEW stopped"
grep -q "stops: its lease and its runs go to the other instances" "$T/a$NEW.log" ||
    fail "instance $NEW did not let its lease go: $(tail -5 "$T/a$NEW.log")"
echo "instance $NEW stopped (SIGTERM): $other led $took s later (lease $LEASE s)"
[ "$(echo "$took < $LEASE / 2" | bc)" = 1 ] || fail "the lead moved $took s after a clean stop"
echo "PASS"
