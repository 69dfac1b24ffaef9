#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test_pg_outage.sh BUILD_DIR - what a PostgreSQL outage leaves on an
# instance that lives through it (issue 32).  One accordd on a cluster of
# the test's own; an agreement is being modified and a quote's hold booked,
# each held up at site sa (a reserve that hangs 6 s), when PostgreSQL
# stops (immediate) for 8 s.  Both requests fail (a retryable 503), and once
# the database is back, without a restart:
#   - the agreement is no longer marked as being modified: a new modify of
#     it succeeds (not 409), and it kept its version until then;
#   - no quote is left Advisory with reservations (the hold cut short is
#     Rejected);
#   - the sites hold nothing but the agreement's own reservations.
# Then the answer to a modify's COMMIT is lost on its way back (a proxy
# between accordd and PostgreSQL cuts the connection after passing it on):
# the modify is answered 200 with the new version, because the commit was
# made, and the agreement has exactly that one new version.  Last, a second
# instance frozen (SIGSTOP) in the middle of a negotiation for longer than
# the lease: the leader ends that negotiation, and the client is answered
# 503 Interrupted (retry), not 409 Cancelled.
#
# Root (the cluster runs as nobody); about 45 s.  KEEP=DIR: the log is
# copied there at the end.
set -u
BUILD=${1:?usage: test_pg_outage.sh BUILD_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=/usr/lib/postgresql/15/bin
LEASE=8 # a housekeeping pass every 2 s
PORT=15436
T=$(mktemp -d /tmp/accord-pg-out-XXXXXX)
chmod 755 "$T"
export PG_TEST_DIR=$T/pg PG_TEST_PORT=$PORT
. "$(dirname "$0")/instances.sh"
fail() {
    echo "FAIL: $*" >&2
    tail -40 "$T/a1.log" >&2 2>/dev/null
    exit 1
}
PROXY=
cleanup() {
    for p in "${PIDS[@]}" $PROXY; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    [ -n "${KEEP:-}" ] && cp "$T"/a?.log "$KEEP"/ 2>/dev/null
    "$HERE/stop-cluster.sh"
    rm -rf "$T"
}
trap cleanup EXIT
as() { runuser -u nobody -- "$@"; }

"$HERE/start-cluster.sh" >/dev/null || fail "cannot start PostgreSQL"
D=$PG_TEST_DIR
q() { psql "postgresql:///accord?host=$D&port=$PORT&user=accord" -At -c "$1"; }

# accordd reaches PostgreSQL through a proxy of the test's own
# (tests/pg/cut-proxy.py): it passes everything on until told to lose the
# answer of one COMMIT.
python3 "$HERE/cut-proxy.py" "$T/proxy.sock" "$D/.s.PGSQL.$PORT" "$T/cut" 2>"$T/proxy.log" &
PROXY=$!
for _ in $(seq 50); do [ -S "$T/proxy.sock" ] && break; sleep 0.1; done
[ -S "$T/proxy.sock" ] || fail "the proxy did not start"
mkdir -p "$T/ps" && ln -s "$T/proxy.sock" "$T/ps/.s.PGSQL.$PORT"
URL="postgresql:///accord?host=$T/ps&port=$PORT&user=accord&connect_timeout=2"

pg_signing_pair
pg_ini_head "$URL" "$LEASE" "allow_control = yes" >"$T/accord.ini"
cat >>"$T/accord.ini" <<CONF
[negotiation]
horizon = P3D
lead_time = PT5S
adapter_timeout = PT30S

CONF
pg_sites >>"$T/accord.ini"
pg_start 1
B=$(cat "$T/url1")
for _ in $(seq 100); do grep -q " leads" "$T/a1.log" && break; sleep 0.1; done

post() { # post PATH FILE OUT: the status
    curl -s -o "$3" -w '%{http_code}' -m 90 -H 'Content-Type: application/xml' \
        --data-binary "@$2" "$B$1"
}
# what site $1 holds, one reservation a line
bookings() { curl -s -X POST "$B/adapters/$1/control/bookings" | grep -c . || true; }

pg_offer m alice 2 2 100 >"$T/offer.xml"
[ "$(post /agreements "$T/offer.xml" "$T/ag.xml")" = 201 ] || fail "no agreement: $(cat "$T/ag.xml")"
ID=$(sed -n 's/.*wsag:AgreementId="\([a-z0-9]*\)".*/\1/p' "$T/ag.xml" | head -1)
[ -n "$ID" ] || fail "no agreement id in $(head -c 300 "$T/ag.xml")"
end=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)
cat >"$T/mod1.xml" <<XML
<co:Modification xmlns:co="urn:accord:coalloc:1"><co:End>$end</co:End></co:Modification>
XML
echo "agreement $ID; sa holds $(bookings sa), sb $(bookings sb)"

# ------------------------------------------------------------ the outage
curl -s -f -o /dev/null -X POST \
    "$B/adapters/sa/control/fault?call=reserve&action=hang&seconds=6&count=2" ||
    fail "cannot arm the fault"
(post "/agreements/$ID/modify" "$T/mod1.xml" "$T/m1.out" >"$T/m1.code") &
M=$!
sleep 0.5
(post "/negotiations?hold=PT5M" "$T/offer.xml" "$T/h1.out" >"$T/h1.code") &
H=$!
sleep 2
as "$BIN/pg_ctl" -D "$D/data" -m immediate -w stop >/dev/null || fail "cannot stop PostgreSQL"
sleep 8
as "$BIN/pg_ctl" -D "$D/data" -l "$D/log" -w start >/dev/null || fail "cannot start PostgreSQL again"
wait "$M" "$H"
echo "during the outage: modify $(cat "$T/m1.code"), hold $(cat "$T/h1.code")"
case $(cat "$T/m1.code") in 503 | 200) ;; *) fail "modify answered $(cat "$T/m1.code"): $(cat "$T/m1.out")" ;; esac
[ "$(cat "$T/m1.code")" = 503 ] || echo "note: the modify was made before the outage reached it"

# Settled without a restart: a new modify goes through within a few
# housekeeping passes (409 while the mark stays, 503 while the instance
# finds the database again).
end2=$(date -u -d '+3 hours' +%Y-%m-%dT%H:%M:%SZ)
cat >"$T/mod2.xml" <<XML
<co:Modification xmlns:co="urn:accord:coalloc:1"><co:End>$end2</co:End></co:Modification>
XML
code=
for _ in $(seq 30); do
    code=$(post "/agreements/$ID/modify" "$T/mod2.xml" "$T/m2.out")
    [ "$code" = 200 ] && break
    sleep 1
done
[ "$code" = 200 ] || fail "a modify after the outage answers $code: $(cat "$T/m2.out")"
# no hold left half-booked
left=
for _ in $(seq 30); do
    left=$(q "SELECT count(*) FROM quote q WHERE q.state = 'Advisory' AND EXISTS
              (SELECT 1 FROM reservation r WHERE r.agreement_id = q.id)")
    [ "$left" = 0 ] && break
    sleep 1
done
[ "$left" = 0 ] || fail "$left quote(s) still Advisory with reservations"
# the sites hold the agreement's reservations and, if the hold went
# through before the outage reached it, the hold's: nothing else
want=1
[ "$(cat "$T/h1.code")" = 201 ] && grep -q '>Held<' "$T/h1.out" && want=2
sa=
for _ in $(seq 30); do
    sa=$(bookings sa)
    sb=$(bookings sb)
    [ "$sa" = "$want" ] && [ "$sb" = "$want" ] && break
    sleep 1
done
[ "$sa" = "$want" ] && [ "$sb" = "$want" ] ||
    fail "sites hold more than they should: sa $sa, sb $sb (want $want each): $(curl -s -X POST "$B/adapters/sa/control/bookings")"
v=$(q "SELECT version FROM agreement WHERE id = '$ID'")
echo "after the outage: a modify went through (version $v); sa holds $sa, sb $sb; no hold left open"

# --------------------------------------------- a COMMIT's answer lost
before=$v
end3=$(date -u -d '+4 hours' +%Y-%m-%dT%H:%M:%SZ)
cat >"$T/mod3.xml" <<XML
<co:Modification xmlns:co="urn:accord:coalloc:1"><co:End>$end3</co:End></co:Modification>
XML
# the proxy loses the answer of the first COMMIT after the client sent the
# new end (the modification's own write: its change names it)
printf '%s' "end ${end3%Z}" >"$T/cut"
code=$(post "/agreements/$ID/modify" "$T/mod3.xml" "$T/m3.out")
[ -e "$T/cut" ] && fail "the proxy never cut a COMMIT's answer ($(cat "$T/proxy.log"))"
grep -q "the answer to the commit of version $((before + 1)) was lost; it was made" "$T/a1.log" ||
    fail "accordd did not find out about the commit: $(grep -i commit "$T/a1.log" | tail -5)"
[ "$code" = 200 ] || fail "a committed modify answered $code: $(cat "$T/m3.out")"
v=$(q "SELECT version FROM agreement WHERE id = '$ID'")
[ "$v" = $((before + 1)) ] || fail "version $v after one more modify (was $before)"
grep -q "$end3" "$T/m3.out" || fail "the answer does not hold the new end: $(head -c 400 "$T/m3.out")"
echo "a modify whose COMMIT answer was lost: 200, version $before -> $v"

# the same for a new agreement's recording: the first COMMIT after the
# client sent its component's name (the Pending agreement's first write)
# and then the state Observed (its settling write)
pg_offer cutting carol 1 1 10 | sed 's/wsag:Name="a"/wsag:Name="cutmarker7"/; s/<co:Between>a</<co:Between>cutmarker7</' >"$T/o4.xml"
printf 'cutmarker7\nObserved\n' >"$T/cut"
code=$(post /agreements "$T/o4.xml" "$T/n4.out")
[ -e "$T/cut" ] && fail "the proxy never cut the recording's COMMIT ($(cat "$T/proxy.log"))"
grep -q "the answer to its recording was lost; it was made" "$T/a1.log" ||
    fail "accordd did not find out about the recording: $(grep -i 'lost' "$T/a1.log" | tail -5)"
[ "$code" = 201 ] || fail "a recorded agreement answered $code: $(cat "$T/n4.out")"
ID4=$(sed -n 's/.*wsag:AgreementId="\([a-z0-9]*\)".*/\1/p' "$T/n4.out" | head -1)
[ "$(q "SELECT state FROM agreement WHERE id = '$ID4'")" = Observed ] || fail "agreement $ID4 is not Observed"
curl -s -X POST "$B/adapters/sa/control/bookings" | grep -q "acc-$ID4-" ||
    fail "site sa does not hold agreement $ID4's reservation"
echo "an offer whose recording's COMMIT answer was lost: 201, Observed, booked"

# and for the commit of a held quote: the first COMMIT after the state
# Committed (the quote's, in the same write as the agreement's)
pg_offer quoting dave 1 1 10 | sed 's/wsag:Name="a"/wsag:Name="cutmarker8"/; s/<co:Between>a</<co:Between>cutmarker8</' >"$T/o6.xml"
[ "$(post "/negotiations?hold=PT5M" "$T/o6.xml" "$T/q6.out")" = 201 ] || fail "no hold: $(cat "$T/q6.out")"
QID=$(sed -n 's/.*<co:Quote [^>]*co:id="\([a-z0-9]*\)".*/\1/p' "$T/q6.out" | head -1)
[ -n "$QID" ] || fail "no quote id in $(head -c 400 "$T/q6.out")"
printf 'cutmarker8\nCommitted\n' >"$T/cut"
code=$(post "/agreements?quote=$QID" "$T/o6.xml" "$T/n6.out")
[ -e "$T/cut" ] && fail "the proxy never cut the quote commit's COMMIT ($(cat "$T/proxy.log"))"
grep -q "the answer to the commit of quote $QID was lost; it was made" "$T/a1.log" ||
    fail "accordd did not find out about the quote's commit: $(grep -i 'lost' "$T/a1.log" | tail -5)"
[ "$code" = 201 ] || fail "a committed quote answered $code: $(cat "$T/n6.out")"
echo "a held quote whose commit's COMMIT answer was lost: 201"

# ------------------------- a negotiation the leader ended for a dead one
# A second instance negotiates (held up at sb) and is frozen for longer
# than the lease: the leader takes it for dead and ends its negotiation.
# Thawed, it finds its agreement ended: the client is told 503 Interrupted
# (retry), not 409 Cancelled (a terminate it never asked for).
pg_start 2
B2=$(cat "$T/url2")
curl -s -f -o /dev/null -X POST \
    "$B2/adapters/sb/control/fault?call=reserve&action=hang&seconds=3&count=1" ||
    fail "cannot arm the fault at instance 2"
pg_offer frozen bob 1 1 10 >"$T/o5.xml"
(curl -s -o "$T/f.out" -w '%{http_code}' -m 90 -H 'Content-Type: application/xml' \
    --data-binary "@$T/o5.xml" "$B2/agreements" >"$T/f.code") &
F=$!
sleep 1
kill -STOP "${PIDS[2]}"
for _ in $(seq 60); do
    grep -q "recovery: agreement .* was being negotiated; now Rejected" "$T/a1.log" && break
    sleep 0.5
done
kill -CONT "${PIDS[2]}"
wait "$F"
grep -q "recovery: agreement .* was being negotiated; now Rejected" "$T/a1.log" ||
    fail "the leader did not end the frozen instance's negotiation"
[ "$(cat "$T/f.code")" = 503 ] && grep -q 'co:code="Interrupted"' "$T/f.out" ||
    fail "a negotiation the leader ended answers $(cat "$T/f.code"): $(cat "$T/f.out")"
echo "a negotiation the leader ended while its instance was frozen: 503 Interrupted"
echo "PASS"
