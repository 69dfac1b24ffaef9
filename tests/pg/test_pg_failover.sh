#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test_pg_failover.sh BUILD_DIR - PostgreSQL fails over under load (issue
# 20): a primary and a streaming standby of the test's own (synchronous, so
# that a commit is on both), two accordd on the URL that names both with
# target_session_attrs=read-write, 16 clients sending offers; meanwhile the
# primary stops (immediate) and the standby is promoted (pg_ctl promote).
# Every answer is a 2xx, a 409 (no room) or a retryable 503 (with
# Retry-After), a client retries a 503 with its Idempotency-Key; afterwards
# every agreement a client was given is on the new primary (nothing lost),
# no offer has two agreements and no resource is booked beyond its capacity
# (nothing doubled), and the instances serve again without a restart.
# Then an instance frozen through a second outage, longer than the lease,
# and thawed 5 s after the database is back, is not taken for dead.
#
# Root (the clusters run as nobody); about 35 s.  KEEP=DIR: the instances'
# logs and the answers that were errors are copied there at the end.
set -u
BUILD=${1:?usage: test_pg_failover.sh BUILD_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=/usr/lib/postgresql/15/bin
OFFERS=${OFFERS:-300}
LEASE=8 # a beat every 2 s; dead after 6 s unseen
CLIENTS=${CLIENTS:-16}
T=$(mktemp -d /tmp/accord-pg-fo-XXXXXX)
chmod 755 "$T"
export PG_TEST_DIR=$T/pg PG_TEST_PORT=15432
. "$(dirname "$0")/instances.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    [ -n "${KEEP:-}" ] && { cp "$T"/a?.log "$KEEP"/ 2>/dev/null; for f in "$T"/r*; do grep -q -E "StorageFailed|AdapterFailed|co:status=.503" "$f" && cp "$f" "$KEEP"/; done; }
    "$HERE/stop-cluster.sh"
    rm -rf "$T"
}
trap cleanup EXIT
as() { runuser -u nobody -- "$@"; }

"$HERE/start-cluster.sh" >/dev/null || fail "cannot start the primary"
D=$PG_TEST_DIR
as "$BIN/pg_basebackup" -h "$D" -p 15432 -U accord -D "$D/standby" -R -X stream -c fast >/dev/null 2>&1 ||
    fail "pg_basebackup"
echo "port = 15433" >>"$D/standby/postgresql.conf"
as "$BIN/pg_ctl" -D "$D/standby" -l "$D/standby.log" -w -t 60 start >/dev/null ||
    { cat "$D/standby.log"; fail "cannot start the standby"; }
# Synchronous: a commit is acknowledged once the standby has it too.
psql "postgresql:///postgres?host=$D&port=15432&user=accord" -q \
    -c "ALTER SYSTEM SET synchronous_standby_names = '*'" -c "SELECT pg_reload_conf()" >/dev/null
URL="postgresql:///accord?host=$D,$D&port=15432,15433&user=accord&target_session_attrs=read-write&connect_timeout=2"
q() { psql "$URL" -At -c "$1"; }

pg_signing_pair
pg_ini_head "$URL" "$LEASE" "allow_control = yes" >"$T/accord.ini"
cat >>"$T/accord.ini" <<CONF
[negotiation]
horizon = P3D
lead_time = PT5S

[quota]
max_agreements = 100000

CONF
pg_sites >>"$T/accord.ini"
pg_start 1
for _ in $(seq 100); do grep -q " leads" "$T/a1.log" && break; sleep 0.1; done
grep -q " leads" "$T/a1.log" || fail "instance 1 does not lead"
pg_start 2

offer() { pg_offer "o$1" "u$(($1 % 8))" 4 4 300; }
# A client: its offer to instance (i mod 2)+1; a 503 is retried (with the
# same Idempotency-Key) after its Retry-After, for up to a minute.
send() {
    i=$1
    offer "$i" >"$T/o$i.xml"
    n=$((i % 2 + 1))
    for _ in $(seq 60); do
        code=$(curl -s -D "$T/h$i" -o "$T/r$i" -w '%{http_code}' -m 60 \
            -H 'Content-Type: application/xml' -H "Idempotency-Key: k$i" \
            --data-binary "@$T/o$i.xml" "http://127.0.0.1:$(cat "$T/port$n")/agreements")
        echo "$code" >>"$T/all$i"
        [ "$code" = 503 ] || break
        grep -qi '^Retry-After:' "$T/h$i" || echo "503-without-retry-after" >>"$T/all$i"
        sleep 1
    done
    echo "$code" >"$T/c$i"
    rm -f "$T/o$i.xml"
}
export -f offer pg_offer send
export T
seq "$OFFERS" | xargs -P "$CLIENTS" -I{} bash -c 'send {}' &
LOAD=$!
for _ in $(seq 300); do [ "$(ls "$T" | grep -c '^c')" -ge $((OFFERS / 3)) ] && break; sleep 0.1; done
as "$BIN/pg_ctl" -D "$D/data" -m immediate -w stop >/dev/null || fail "cannot stop the primary"
# Longer than the lease: when the database is back, every instance looks
# dead by its row; the new leader must not end the others' work for that.
sleep $((LEASE + 2))
as "$BIN/pg_ctl" -D "$D/standby" -w promote >/dev/null || fail "cannot promote the standby"
echo "failed over after $(ls "$T" | grep -c '^c') answers"
wait "$LOAD"

all=$(cat "$T"/all* | sort | uniq -c | tr '\n' ' ')
echo "every answer: $all"
echo "last answers: $(cat "$T"/c* | sort | uniq -c | tr '\n' ' ')"
bad=$(cat "$T"/all* | grep -cv -E '^(2[0-9][0-9]|409|429|503)$')
if [ "$bad" != 0 ]; then
    for f in "$T"/c*; do # such an answer is not retried: it is the last one
        grep -qv -E '^(2[0-9][0-9]|409|429|503)$' "$f" && { echo "answer $(cat "$f"):"; head -c 2000 "$T/r${f##*/c}"; echo; }
    done
    fail "answers neither 2xx, 409 nor a retryable 503: $all"
fi
grep -q 503 "$T"/all* || echo "note: no client saw the switch"
# A 409 is a refusal for want of room, nothing else (not a negotiation
# ended by another instance that took this one for dead).
for c in "$T"/c*; do
    grep -qx 409 "$c" || continue
    r=$T/r${c##*/c}
    grep -q -E 'NoCommonSlot|ResourceBusy' "$r" || fail "a 409 that is not for want of room: $(head -c 600 "$r")"
done
# No instance died: none may have been taken for dead when the database
# came back (every row was old then).
judged=$(grep -h -E "of instances that stopped" "$T"/a?.log | head -3)
[ -z "$judged" ] || fail "a live instance was taken for dead after the outage: $judged"
left=$(cat "$T"/c* | grep -c 503)
[ "$left" = 0 ] || fail "$left clients still get 503 after a minute: the instances did not reconnect"

# Nothing lost, nothing doubled, on the new primary.
pg_check_kept "$URL"
# And both instances serve a new offer on the new primary.
for n in 1 2; do
    offer 9999$n >"$T/new.xml"
    code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/xml' \
        --data-binary "@$T/new.xml" "http://127.0.0.1:$(cat "$T/port$n")/agreements")
    case $code in 2?? | 409) ;; *) fail "instance $n answers $code after the failover" ;; esac
done

# A live instance is not taken for dead because it could not renew its row
# while the database was away.  Instance 2 is frozen with a negotiation
# under way (a reservation at sa hangs there for 3 s, so that one is),
# PostgreSQL is away for longer than the lease, and 2 is thawed 5 s after
# it is back; it renews its row at once.  The leader (1) reaches the
# database first, within a beat (2 s), when every row is old.  It judges
# nobody until it has reached the database for three quarters of the lease
# plus a beat (8 s; in whole seconds, 7 at least), and 2 renews its row
# meanwhile.  Without that wait, 1's housekeeping (every beat) ends 2's
# negotiation within 4 s, before 2 is thawed.
inst2=$(sed -n 's/.*instance \([a-z0-9]*\) on a shared database.*/\1/p' "$T/a2.log" | head -1)
pending2() { q "SELECT count(*) FROM agreement WHERE state = 'Pending' AND instance = '$inst2'"; }
curl -s -f -o /dev/null -X POST \
    "http://127.0.0.1:$(cat "$T/port2")/adapters/sa/control/fault?call=reserve&action=hang&seconds=3" ||
    fail "cannot arm a hang on instance 2"
pg_offer g u 1 1 10 >"$T/g.xml" # small: the load filled the link for days
curl -s -o "$T/g.out" -w '%{http_code}' -m 60 -H 'Content-Type: application/xml' \
    --data-binary "@$T/g.xml" "http://127.0.0.1:$(cat "$T/port2")/agreements" >"$T/g.code" &
G=$!
for _ in $(seq 250); do [ "$(pending2)" -ge 1 ] && break; sleep 0.02; done
kill -STOP "${PIDS[2]}"
[ "$(pending2)" -ge 1 ] || { kill -CONT "${PIDS[2]}"; wait "$G"; fail "instance 2 was frozen with no negotiation under way: $(cat "$T/g.code") $(head -c 600 "$T/g.out")"; }
as "$BIN/pg_ctl" -D "$D/standby" -m immediate -w stop >/dev/null || fail "cannot stop PostgreSQL"
sleep $((LEASE + 2))
as "$BIN/pg_ctl" -D "$D/standby" -l "$D/standby.log" -w -t 60 start >/dev/null ||
    fail "cannot start PostgreSQL again"
sleep 5
kill -CONT "${PIDS[2]}"
wait "$G"
echo "instance 2 frozen through an outage of $((LEASE + 2)) s with a negotiation under way: $(cat "$T/g.code")"
case $(cat "$T/g.code") in 2?? | 409 | 503) ;; *) fail "its answer: $(cat "$T/g.code") $(head -c 600 "$T/g.out")" ;; esac
judged=$(grep -h -E "of instances that stopped" "$T"/a?.log | head -3)
[ -z "$judged" ] || fail "instance 2 was taken for dead after the outage: $judged"
echo "PASS"
