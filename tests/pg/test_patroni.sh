#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test_patroni.sh BUILD_DIR - several accordd ride through what Patroni does
# to a highly available PostgreSQL: a three-member etcd and a Patroni
# cluster of two PostgreSQL 15 nodes (tests/pg/patroni.sh, Debian's
# etcd-server and patroni), two accordd on the multi-host URL with
# target_session_attrs=read-write, 16 clients sending offers all along.
# Meanwhile, one after the other, once the cluster has a synchronous
# standby again:
#   1. a planned switchover (patronictl switchover);
#   2. the primary's postmaster killed (kill -9): Patroni, still holding the
#      leader key, starts it again in place;
#   3. the primary's node lost (its Patroni and its postmaster killed): the
#      leader key expires after the TTL and the standby is promoted.
# Every answer is a 2xx, a 409 or a 503 with Retry-After (a client retries
# a 503 with its Idempotency-Key); nothing acknowledged is lost, nothing is
# booked twice, the instances serve again without a restart.  The outage
# each client saw in each event (the longest time between two of its usable
# answers) is printed; the goals (under 5 s for the switchover, under 15 s
# for the killed postmaster) are the benchmark's to judge, not this test's.
#
# Root (everything runs as nobody); about three minutes.  KEEP=DIR: the
# instances' and Patroni's logs are copied there at the end.
set -u
BUILD=${1:?usage: test_patroni.sh BUILD_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
LEASE=8
CLIENTS=${CLIENTS:-16}
T=$(mktemp -d /tmp/accord-patroni-XXXXXX)
chmod 755 "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }
for need in patroni patronictl etcd etcdctl psql; do
    command -v "$need" >/dev/null || fail "$need is not installed (quickstart.sh test installs it)"
done
. "$HERE/instances.sh"
. "$HERE/patroni.sh"
cleanup() {
    touch "$T/stop"
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    for p in "${LOAD[@]}"; do kill "$p" 2>/dev/null; done
    wait "${PIDS[@]}" 2>/dev/null
    [ -n "${KEEP:-}" ] && { cp "$T"/a?.log "$KEEP"/; for n in 1 2; do cp "$T/pg$n/patroni.log" "$KEEP/pg$n-patroni.log"; done; } 2>/dev/null
    patroni_stop
    rm -rf "$T"
}
trap cleanup EXIT
LOAD=()

patroni_up
URL="postgresql:///accord?host=127.0.0.1,127.0.0.1&port=15531,15532&user=accord&target_session_attrs=read-write&connect_timeout=2"
q() { psql "$URL" -At -c "$1"; }

pg_signing_pair
pg_ini_head "$URL" "$LEASE" >"$T/accord.ini"
cat >>"$T/accord.ini" <<CONF
[negotiation]
horizon = P30D
lead_time = PT5S

[quota]
max_agreements = 1000000

CONF
pg_sites >>"$T/accord.ini"
pg_start 1
for _ in $(seq 100); do grep -q " leads" "$T/a1.log" && break; sleep 0.1; done
grep -q " leads" "$T/a1.log" || fail "instance 1 does not lead"
pg_start 2

# Client C: offers C, C+16, ... to instance (C mod 2)+1 until $T/stop; a
# 503 is retried with the same Idempotency-Key after its Retry-After (at
# most a second here), for up to 90 s.  Each answer is a line of $T/tC:
# the time it came (s.ns) and its code; the last code of offer i is $T/ci.
client() {
    local c=$1 i=$1 n=$(($1 % 2 + 1)) code t0
    while [ ! -e "$T/stop" ]; do
        pg_offer "o$i" "u$((i % 8))" 1 1 10 >"$T/o$c.xml"
        t0=$(date +%s)
        while :; do
            code=$(curl -s -D "$T/h$c" -o "$T/r$i" -w '%{http_code}' -m 60 \
                -H 'Content-Type: application/xml' -H "Idempotency-Key: k$i" \
                --data-binary "@$T/o$c.xml" "http://127.0.0.1:$(cat "$T/port$n")/agreements")
            echo "$(date +%s.%N) $code" >>"$T/t$c"
            [ "$code" = 503 ] || break
            grep -qi '^Retry-After:' "$T/h$c" || echo "0 503-without-retry-after" >>"$T/t$c"
            [ $(($(date +%s) - t0)) -lt 90 ] || break
            sleep 0.5
        done
        echo "$code" >"$T/c$i"
        i=$((i + CLIENTS))
    done
}
for c in $(seq 0 $((CLIENTS - 1))); do
    client "$c" &
    LOAD+=($!)
done
answers() { cat "$T"/t* 2>/dev/null | wc -l; }
until=$((SECONDS + 60))
while [ "$SECONDS" -lt "$until" ]; do [ "$(answers)" -ge 200 ] && break; sleep 0.1; done
[ "$(answers)" -ge 200 ] || fail "the clients got $(answers) answers in a minute"

# mark NAME: the time an event starts, into $T/event.NAME.
mark() {
    date +%s.%N >"$T/event.$1"
    echo "$(date +%T) $1 (pg$leader leads; $(answers) answers so far)"
}
# steady WHAT: the cluster is whole again after WHAT (a leader, a
# synchronous standby streaming from it, a write through accordd's URL
# taken), then 5 s of load on it, so that the next event starts from it.
steady() {
    local until=$((SECONDS + 120))
    while [ "$SECONDS" -lt "$until" ]; do
        patroni_healthy && q "SELECT txid_current()" >/dev/null 2>&1 && break
        sleep 0.5
    done
    patroni_healthy || { patronictl_ list; tail -n 5 "$T"/pg?/patroni.log; fail "not whole again after $1"; }
    echo "$(date +%T) whole again after $1"
    sleep 5
}

leader=$(patroni_leader) || fail "no leader"
mark switchover
patronictl_ switchover --leader "pg$leader" --candidate "pg$((3 - leader))" --force >"$T/switchover.out" 2>&1 ||
    { cat "$T/switchover.out"; fail "patronictl switchover"; }
# Where the commits wait meanwhile: with two nodes in synchronous mode, the
# new primary's commits wait for the old one to stream again as its standby
# (wait event SyncRep) or for Patroni to give synchronous replication up.
syncrep=0
for _ in $(seq 20); do
    n=$(psql "postgresql://accord@127.0.0.1:1553$((3 - leader))/postgres" -At -c \
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'" 2>/dev/null)
    [ "${n:-0}" -gt "$syncrep" ] && syncrep=$n
    sleep 0.5
done
echo "after the switchover: at most $syncrep commits waited at once for the standby (SyncRep)"
steady switchover
[ "$(patroni_leader)" = $((3 - leader)) ] || fail "the switchover did not move the leader"

leader=$(patroni_leader)
postmaster=$(head -1 "$T/pg$leader/data/postmaster.pid")
mark postmaster
kill -9 "$postmaster" || fail "cannot kill the postmaster"
# Patroni sees it within its loop (10 s) and starts another: until then its
# answers are of before
until=$((SECONDS + 60))
while [ "$SECONDS" -lt "$until" ]; do
    [ "$(head -1 "$T/pg$leader/data/postmaster.pid" 2>/dev/null)" != "$postmaster" ] &&
        ! kill -0 "$postmaster" 2>/dev/null && [ -s "$T/pg$leader/data/postmaster.pid" ] && break
    [ "$(patroni_leader)" = $((3 - leader)) ] && break
    sleep 0.1
done
steady "the killed postmaster"

leader=$(patroni_leader)
postmaster=$(head -1 "$T/pg$leader/data/postmaster.pid")
mark node
kill -9 "${PATRONI_PIDS[$leader]}" "$postmaster" || fail "cannot kill pg$leader's Patroni and postmaster"
wait "${PATRONI_PIDS[$leader]}" 2>/dev/null
until=$((SECONDS + 90))
while [ "$SECONDS" -lt "$until" ]; do [ "$(patroni_leader)" = $((3 - leader)) ] && break; sleep 0.2; done
[ "$(patroni_leader)" = $((3 - leader)) ] || fail "the standby was not promoted after the node was lost"
patroni_start "$leader" # it comes back as a standby of the new leader
steady "the lost node"
touch "$T/stop"
wait "${LOAD[@]}"
LOAD=()
patronictl_ list

# The outage each client saw in event E: the longest time between two of its
# usable answers (2xx or 409) from E's start to the next event's (each event
# starts once the one before is over: steady).
outage() {
    local from to c
    from=$(cat "$T/event.$1") to=$(cat "$T/event.$2" 2>/dev/null || echo 9999999999)
    for c in $(seq 0 $((CLIENTS - 1))); do
        awk -v from="$from" -v to="$to" -v c="$c" '
            $2 ~ /^(2..|409)$/ { if ($1 < from) last = $1; else if ($1 <= to) {
                                 if (last && $1 - last > worst) worst = $1 - last; last = $1 } }
            END { printf "%.1f\n", worst }' "$T/t$c"
    done | sort -n | awk -v e="$1" '{ v[NR] = $1 }
        END { printf "outage in the %s (s, per client): median %s, max %s; all: ", e, v[int((NR + 1) / 2)], v[NR];
              for (i = 1; i <= NR; i++) printf "%s ", v[i]; print "" }'
}
echo "$(outage switchover postmaster)"
echo "$(outage postmaster node)"
echo "$(outage node stop)"

all=$(cut -d' ' -f2 "$T"/t* | sort | uniq -c | tr '\n' ' ')
echo "every answer: $all"
bad=$(cut -d' ' -f2 "$T"/t* | grep -cv -E '^(2[0-9][0-9]|409|429|503)$')
if [ "$bad" != 0 ]; then
    for f in "$T"/c*; do
        grep -qv -E '^(2[0-9][0-9]|409|429|503)$' "$f" && { echo "answer $(cat "$f"):"; head -c 2000 "$T/r${f##*/c}"; echo; }
    done
    fail "answers neither 2xx, 409 nor a retryable 503: $all"
fi
for c in "$T"/c*; do
    grep -qx 409 "$c" || continue
    r=$T/r${c##*/c}
    grep -q -E 'NoCommonSlot|ResourceBusy' "$r" || fail "a 409 that is not for want of room: $(head -c 600 "$r")"
done
left=$(cat "$T"/c* | grep -c 503)
[ "$left" = 0 ] || fail "$left offers still got 503 after 90 s: the instances did not reconnect"
judged=$(grep -h -E "of instances that stopped" "$T"/a?.log | head -3)
[ -z "$judged" ] || fail "a live instance was taken for dead: $judged"

pg_check_kept "$URL"
for n in 1 2; do
    pg_offer "new$n" u 1 1 10 >"$T/new.xml"
    code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/xml' \
        --data-binary "@$T/new.xml" "http://127.0.0.1:$(cat "$T/port$n")/agreements")
    case $code in 2?? | 409) ;; *) fail "instance $n answers $code after the failovers" ;; esac
done
echo "PASS"
