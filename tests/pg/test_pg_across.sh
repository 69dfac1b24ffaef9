#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test_pg_across.sh BUILD_DIR - requests that cross instances (issue 20):
# three accordd on one PostgreSQL database, L leading, A and C beside it.
#   1. a negotiation held up on A (a hang at its site's reserve), terminated
#      through L: it ends Terminated within the beat and the adapter timeout,
#      nothing stays booked, A lets the hung call go and books again;
#   2. an agreement made on A, modified through L: the same answer on both,
#      the ledgers hold the new booking and not the old;
#   3. the same offer with the same Idempotency-Key at the same moment on A
#      and on C, 20 times: one agreement per key, nothing booked twice;
#   4. a quote held on A committed on C; a hold on C, C killed: the leader
#      releases it when it expires;
#   5. A killed in the middle of a modification: the leader ends it within
#      the lease, the agreement stays at its version with its bookings, the
#      modification's reservations are released;
#   6. GET of an agreement answers the same on every instance.
#
# Needs the cluster of start-cluster.sh (PG_TEST_DIR; ctest fixture "pg").
# Root (the cluster runs as nobody); about 30 s.
set -u
BUILD=${1:?usage: test_pg_across.sh BUILD_DIR}
DIR=${PG_TEST_DIR:?PG_TEST_DIR names the cluster of start-cluster.sh}
BASE=$(cat "$DIR/url") || { echo "no cluster in $DIR" >&2; exit 1; }
LEASE=4     # the beat: 1 s
ATIMEOUT=3  # adapter_timeout
T=$(mktemp -d /tmp/accord-pg-across-XXXXXX)
DB=across_$$
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

psql "$BASE" -q -c "CREATE DATABASE $DB" || fail "cannot make database $DB"
pg_signing_pair
pg_ini_head "$URL" "$LEASE" "allow_control = yes" >"$T/accord.ini"
cat >>"$T/accord.ini" <<CONF
[negotiation]
horizon = P2D
lead_time = PT5S
adapter_timeout = PT${ATIMEOUT}S

CONF
pg_sites >>"$T/accord.ini"

# L first, so that it leads; A and C do not.
L=1 A=2 C=3
pg_start $L
for _ in $(seq 100); do grep -q " leads" "$T/a$L.log" && break; sleep 0.1; done
grep -q " leads" "$T/a$L.log" || fail "instance $L does not lead"
pg_start $A
pg_start $C
u() { cat "$T/url$1"; }
echo "L $(u $L) (leads), A $(u $A), C $(u $C)"

# offer NAME NODES_A NODES_B MBITS
offer() { pg_offer "$1" u "$2" "$3" "$4"; }
# post N PATH FILE [curl options]: the body into $T/body, the status printed
post() {
    local n=$1 path=$2 file=$3
    shift 3
    curl -s -m 30 -o "$T/body" -w '%{http_code}' -H 'Accept: application/json' \
        -H 'Content-Type: application/xml' --data-binary "@$file" "$@" "$(u "$n")$path"
}
get() { curl -s -m 10 -H 'Accept: application/json' "$(u "$1")$2"; }
field() { grep -o "\"$1\":\"\?[^\",]*" | head -1 | sed 's/.*[:"]//'; }
fault() { # fault N SITE CALL: the next CALL at SITE on instance N hangs for 60 s
    curl -s -f -o /dev/null -X POST \
        "$(u "$1")/adapters/$2/control/fault?call=$3&action=hang&seconds=60" ||
        fail "cannot arm a hang on instance $1"
}
elapsed() { echo "$(date +%s.%N) - $1" | bc; }
# What is still open or booked of agreement $1: journal entries not closed,
# ledger bookings of its reservations.
open_of() {
    q "SELECT count(*) FROM reservation WHERE agreement_id = '$1'
       AND state IN ('intent','reserved','unknown','cancel-failed','held')"
}
booked_of() { # keys of $1 in the ledgers: named after it, or its journal's (a quote's)
    for s in sa sb wan; do
        q "SELECT key FROM ledger_$s.booking WHERE key LIKE 'acc-$1-%'
           OR key IN (SELECT key FROM reservation WHERE agreement_id = '$1')"
    done | sort
}
committed_of() {
    q "SELECT key FROM reservation WHERE agreement_id = '$1' AND state = 'committed'" | sort
}
wait_state() { # wait_state N ID STATE SECONDS: polls GET on instance N
    local i
    for i in $(seq $(($4 * 10))); do
        [ "$(get "$1" "/agreements/$2" | field state)" = "$3" ] && return 0
        sleep 0.1
    done
    return 1
}

# ------------------------------------------------- 1. terminate across
offer t1 8 8 300 >"$T/t1.xml"
fault $A sa reserve
post $A /agreements "$T/t1.xml" >"$T/t1.code" &
CLIENT=$!
id=
for _ in $(seq 50); do
    id=$(q "SELECT id FROM agreement WHERE name = 't1'")
    [ -n "$id" ] && [ "$(q "SELECT count(*) FROM reservation WHERE agreement_id = '$id'
        AND resource = 'sa' AND state = 'intent'")" = 1 ] && break
    sleep 0.1
done
[ -n "$id" ] || fail "1: no Pending agreement on A"
t0=$(date +%s.%N)
code=$(post $L "/agreements/$id/terminate" /dev/null)
case $code in 200 | 202) ;; *) fail "1: terminate through L: $code $(cat "$T/body")" ;; esac
echo "1: terminate of $id (negotiating on A) through L: $code $(field state <"$T/body")"
wait_state $L "$id" Terminated $((LEASE + ATIMEOUT + 4)) || fail "1: $id not Terminated: $(get $L "/agreements/$id")"
took=$(elapsed "$t0")
echo "1: Terminated after $took s (beat $((LEASE / 4)) s + adapter_timeout $ATIMEOUT s)"
[ "$(echo "$took <= $LEASE / 4 + $ATIMEOUT + 2" | bc)" = 1 ] || fail "1: ended after $took s"
wait "$CLIENT"
echo "1: A's client got $(cat "$T/t1.code")"
grep -q "terminated through another instance" "$T/a$A.log" || fail "1: A did not stop its negotiation"
for _ in $(seq 30); do [ "$(open_of "$id")" = 0 ] && break; sleep 0.2; done
[ "$(open_of "$id")" = 0 ] || fail "1: journal entries of $id still open"
[ -z "$(booked_of "$id")" ] || fail "1: the ledgers still hold $(booked_of "$id")"
# A let the hung call go: it negotiates again at once, the whole of both
# sites (nothing of t1 left in the way).
offer t1b 16 16 1000 >"$T/t1b.xml"
code=$(post $A /agreements "$T/t1b.xml")
[ "$code" = 201 ] || fail "1: A could not negotiate afterwards: $code $(cat "$T/body")"
id1b=$(field id <"$T/body")
echo "1: A agreed $id1b on the whole sites afterwards"
post $A "/agreements/$id1b/terminate" /dev/null >/dev/null

# ------------------------------------------------- 2. modify across
offer m2 4 4 200 >"$T/m2.xml"
code=$(post $A /agreements "$T/m2.xml")
[ "$code" = 201 ] || fail "2: $code $(cat "$T/body")"
id2=$(field id <"$T/body")
old=$(committed_of "$id2")
cat >"$T/mod2.xml" <<XML
<co:Modification xmlns:co="urn:accord:coalloc:1"><co:Nodes component="a">6</co:Nodes><co:Bandwidth link="l">400</co:Bandwidth></co:Modification>
XML
code=$(post $L "/agreements/$id2/modify" "$T/mod2.xml")
[ "$code" = 200 ] || fail "2: modify through L: $code $(cat "$T/body")"
[ "$(field version <"$T/body")" = 2 ] || fail "2: L answered version $(field version <"$T/body")"
onA=$(get $A "/agreements/$id2")
[ "$(echo "$onA" | field version)" = 2 ] || fail "2: A shows version $(echo "$onA" | field version)"
echo "$onA" | grep -q '"nodes":6' || fail "2: A does not show 6 nodes: $onA"
new=$(committed_of "$id2")
ledger=$(booked_of "$id2")
[ "$new" = "$ledger" ] || fail "2: journal has $(echo $new), ledgers $(echo $ledger)"
[ -z "$(comm -12 <(echo "$old") <(echo "$new"))" ] || fail "2: old bookings kept: $(echo $old)"
[ "$(q "SELECT amount FROM ledger_sa.booking WHERE key LIKE 'acc-$id2-%'")" = 6 ] ||
    fail "2: site sa does not book 6 nodes"
[ "$(q "SELECT amount FROM ledger_wan.booking WHERE key LIKE 'acc-$id2-%'")" = 400 ] ||
    fail "2: the link does not book 400 Mbit/s"
echo "2: $id2 modified through L: version 2 on A, ledgers $(echo $ledger)"

# ------------------------------------------- 2b. two modifies on two instances at once
# Each of 8 agreements gets a new bandwidth through A (60) and another
# through C (70) at the same moment.  Each answer is a new version (200) or
# a refusal because the other is under way or came first (409
# InvalidState); two 200s are two versions one after the other (2 and 3),
# the second made on the first: the agreement then holds its last
# reservations only (three), the bandwidth of version 3.  Never a 5xx or a
# 422.
cat >"$T/mod2b-$A.xml" <<XML
<co:Modification xmlns:co="urn:accord:coalloc:1"><co:Bandwidth link="l">60</co:Bandwidth></co:Modification>
XML
cat >"$T/mod2b-$C.xml" <<XML
<co:Modification xmlns:co="urn:accord:coalloc:1"><co:Bandwidth link="l">70</co:Bandwidth></co:Modification>
XML
# a day ahead: out of the way of the other steps' agreements, none started
later=$(date -u -d '+1 day' +%Y-%m-%dT%H:%M:%SZ)
offer m2b 1 1 50 | sed "s|<co:Schedule>|<co:Schedule><co:EarliestStart>$later</co:EarliestStart>|" >"$T/m2b.xml"
for k in $(seq 8); do
    code=$(post $A /agreements "$T/m2b.xml" -H "Idempotency-Key: m2b-$k")
    [ "$code" = 201 ] || fail "2b: $code $(cat "$T/body")"
    field id <"$T/body" >"$T/m2b-$k.id"
done
curls=()
for k in $(seq 8); do
    id=$(cat "$T/m2b-$k.id")
    for n in $A $C; do
        curl -s -m 30 -o "$T/m2b-$k-$n.out" -w '%{http_code}' -H 'Accept: application/json' \
            -H 'Content-Type: application/xml' --data-binary "@$T/mod2b-$n.xml" \
            "$(u $n)/agreements/$id/modify" >"$T/m2b-$k-$n.code" &
        curls+=($!)
    done
done
wait "${curls[@]}" # not the instances
for k in $(seq 8); do
    id=$(cat "$T/m2b-$k.id")
    a=$(cat "$T/m2b-$k-$A.code") c=$(cat "$T/m2b-$k-$C.code")
    got=$(get $L "/agreements/$id")
    why="$id through A and C at once: $a $c; A: $(cat "$T/m2b-$k-$A.out"); C: $(cat "$T/m2b-$k-$C.out")"
    case "$a $c" in
    "200 409" | "409 200")
        want=2
        grep -q InvalidState "$T/m2b-$k-$([ "$a" = 409 ] && echo $A || echo $C).out" ||
            fail "2b: a 409 that is not InvalidState: $why"
        ;;
    "200 200")
        want=3
        [ "$( (field version <"$T/m2b-$k-$A.out"; field version <"$T/m2b-$k-$C.out") | sort | paste -sd' ')" = "2 3" ] ||
            fail "2b: two 200s that are not versions 2 and 3: $why"
        ;;
    *) fail "2b: $why" ;;
    esac
    [ "$(echo "$got" | field version)" = $want ] || fail "2b: $id at version $(echo "$got" | field version), not $want: $why"
    [ "$(committed_of "$id" | wc -l)" = 3 ] || fail "2b: $id holds $(committed_of "$id" | wc -l) committed reservations, not 3: $why"
done
echo "2b: 8 agreements modified through two instances at once: every 200 a version of its own"

# ------------------------------------------------- 3. Idempotency race
race() { # race K: the same offer and key to A and C at once
    offer "k$1" 1 1 10 >"$T/k$1.xml"
    local p=()
    for n in $A $C; do
        curl -s -m 30 -o "$T/k$1.$n" -w '%{http_code}' -H 'Accept: application/json' \
            -H 'Content-Type: application/xml' -H "Idempotency-Key: race-$1" \
            --data-binary "@$T/k$1.xml" "$(u $n)/agreements" >"$T/k$1.$n.code" &
        p+=($!)
    done
    wait "${p[@]}"
}
RACES=()
for k in $(seq 20); do
    race "$k" &
    RACES+=($!)
done
wait "${RACES[@]}"
for k in $(seq 20); do
    a=$(field id <"$T/k$k.$A") c=$(field id <"$T/k$k.$C")
    [ -n "$a" ] && [ "$a" = "$c" ] ||
        fail "3: key $k: A $(cat "$T/k$k.$A.code") $a, C $(cat "$T/k$k.$C.code") $c"
    [ "$(q "SELECT count(*) FROM agreement WHERE name = 'k$k'")" = 1 ] ||
        fail "3: key $k: $(q "SELECT count(*) FROM agreement WHERE name = 'k$k'") agreements"
    [ "$(booked_of "$a" | wc -l)" = 3 ] || fail "3: key $k: $(booked_of "$a" | wc -l) bookings"
done
echo "3: 20 keys sent to A and C at once: 20 agreements, one each, 3 bookings each" \
    "(answers: $(for f in "$T"/k*.code; do cat "$f"; echo; done | sort | uniq -c | tr -s ' \n' ' '))"

# ------------------------------------------------- 6. GET the same everywhere
for id in "$id" "$id2"; do
    for n in $L $A $C; do
        get $n "/agreements/$id" | grep -o '"\(state\|version\|versions\)":[^,]*' >"$T/g$n"
    done
    cmp -s "$T/g$L" "$T/g$A" && cmp -s "$T/g$L" "$T/g$C" ||
        fail "6: $id differs: $(cat "$T/g$L" "$T/g$A" "$T/g$C" | tr '\n' ' ')"
    echo "6: $id the same on L, A and C: $(tr '\n' ' ' <"$T/g$L")"
done

# ------------------------------------------------- 4. quotes across
offer q4 10 10 500 >"$T/q4.xml"
code=$(post $A "/negotiations?hold=PT1M" "$T/q4.xml")
[ "$code" = 201 ] || fail "4: quote on A: $code $(cat "$T/body")"
qid=$(field id <"$T/body")
[ "$(field state <"$T/body")" = Held ] || fail "4: quote $qid not Held: $(cat "$T/body")"
code=$(post $C "/agreements?quote=$qid" /dev/null)
[ "$code" = 201 ] || fail "4: commit on C: $code $(cat "$T/body")"
id4=$(field id <"$T/body")
[ "$(get $A "/negotiations/$qid" | field state)" = Committed ] || fail "4: quote not Committed on A"
[ "$(committed_of "$id4")" = "$(booked_of "$id4")" ] || fail "4: ledgers and journal differ"
echo "4: quote $qid held on A, committed on C: $id4"
post $L "/agreements/$id4/terminate" /dev/null >/dev/null
# A hold on C, C killed: it expires on the leader, the nodes free again.
offer q4b 16 16 1000 >"$T/q4b.xml"
code=$(post $C "/negotiations?hold=PT3S" "$T/q4b.xml")
[ "$code" = 201 ] || fail "4: hold on C: $code $(cat "$T/body")"
qid2=$(field id <"$T/body")
[ "$(q "SELECT count(*) FROM reservation WHERE agreement_id = '$qid2' AND state = 'held'")" = 3 ] ||
    fail "4: the hold books no 3 reservations"
kill -9 "${PIDS[$C]}"
wait "${PIDS[$C]}" 2>/dev/null
t0=$(date +%s.%N)
for _ in $(seq 100); do [ "$(open_of "$qid2")" = 0 ] && break; sleep 0.1; done
[ "$(open_of "$qid2")" = 0 ] || fail "4: $qid2's hold still open after C died"
echo "4: C killed holding $qid2: released $(elapsed "$t0") s later" \
    "(quote $(get $L "/negotiations/$qid2" | field state))"
[ -z "$(for s in sa sb wan; do q "SELECT key FROM ledger_$s.booking WHERE key LIKE '%$qid2%'"; done)" ] ||
    fail "4: the ledgers still hold $qid2's hold"
code=$(post $L /agreements "$T/q4b.xml")
[ "$code" = 201 ] || fail "4: the whole sites not free again: $code $(cat "$T/body")"
id4b=$(field id <"$T/body")
post $L "/agreements/$id4b/terminate" /dev/null >/dev/null

# ------------------------------------------------- 5. a dead instance's modification
# Three hours after 2b's agreements: sites and link empty then, so that the
# modification has room whatever steps 1 to 4 left booked nearer (else a 409
# without a reservation asked for, now and then).
later5=$(date -u -d '+1 day 3 hours' +%Y-%m-%dT%H:%M:%SZ)
sed "s|<co:Schedule>|<co:Schedule><co:EarliestStart>$later5</co:EarliestStart>|" "$T/m2.xml" >"$T/m5.xml"
code=$(post $A /agreements "$T/m5.xml")
[ "$code" = 201 ] || fail "5: $code $(cat "$T/body")"
id5=$(field id <"$T/body")
old=$(committed_of "$id5")
fault $A sa reserve
curl -s -m 30 -o "$T/mod5.out" -H 'Accept: application/json' -H 'Content-Type: application/xml' \
    --data-binary "@$T/mod2.xml" "$(u $A)/agreements/$id5/modify" &
for _ in $(seq 50); do
    [ "$(q "SELECT count(*) FROM reservation WHERE agreement_id = '$id5' AND state = 'intent'")" -ge 1 ] && break
    sleep 0.1
done
[ "$(q "SELECT modifying FROM agreement WHERE id = '$id5'")" != 0 ] ||
    fail "5: no modification under way: $(cat "$T/mod5.out"; get $A "/agreements/$id5") $(q "SELECT modifying, version FROM agreement WHERE id = '$id5'") $(q "SELECT key, state FROM reservation WHERE agreement_id = '$id5'")"
kill -9 "${PIDS[$A]}"
wait "${PIDS[$A]}" 2>/dev/null
t0=$(date +%s.%N)
for _ in $(seq $((LEASE * 20))); do [ "$(open_of "$id5")" = 0 ] && break; sleep 0.1; done
took=$(elapsed "$t0")
[ "$(open_of "$id5")" = 0 ] || fail "5: the dead modification's reservations still open: " \
    "$(q "SELECT key, state FROM reservation WHERE agreement_id = '$id5'")"
echo "5: A killed while modifying $id5: ended by L after $took s (lease $LEASE s)"
# dead after three quarters of the lease, found at the leader's next beat (a
# quarter), released by the sweep of that pass: the lease, plus this poll and
# a loaded machine's slack
[ "$(echo "$took <= $LEASE + 2" | bc)" = 1 ] || fail "5: ended after $took s, beyond the lease"
[ "$(q "SELECT modifying FROM agreement WHERE id = '$id5'")" = 0 ] || fail "5: still marked"
onL=$(get $L "/agreements/$id5")
[ "$(echo "$onL" | field state)" = Observed ] && [ "$(echo "$onL" | field version)" = 1 ] ||
    fail "5: $id5 is not Observed at version 1: $onL"
[ "$(committed_of "$id5")" = "$old" ] || fail "5: its bookings changed"
[ "$(booked_of "$id5")" = "$old" ] || fail "5: the ledgers hold $(echo $(booked_of "$id5")), not $(echo $old)"
# and it can be modified again
code=$(post $L "/agreements/$id5/modify" "$T/mod2.xml")
[ "$code" = 200 ] || fail "5: modify afterwards: $code $(cat "$T/body")"

# Nothing open at the end, nothing booked beyond what is committed.
for _ in $(seq 30); do
    open=$(q "SELECT count(*) FROM reservation WHERE state IN ('intent','reserved','unknown','cancel-failed')")
    [ "$open" = 0 ] && break
    sleep 0.2
done
[ "$open" = 0 ] || fail "$open reservations left open"
booked=$(for s in sa sb wan; do q "SELECT count(*) FROM ledger_$s.booking"; done | paste -sd+ | bc)
committed=$(q "SELECT count(*) FROM reservation WHERE state = 'committed'")
[ "$booked" = "$committed" ] || fail "the sites hold $booked bookings, the journal $committed"
echo "PASS"
