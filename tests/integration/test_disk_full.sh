#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test_disk_full.sh BUILD_DIR - accordd's SQLite database on a file system
# that fills up while it serves (issue 32).  The database is on a small
# tmpfs of the test's own; an offer and a modify are held up at site sa (a
# reserve that hangs 4 s) when the file system is filled to the last byte,
# so that their last writes fail.  Meanwhile /healthz says degraded (503,
# "writes fail"); once room is made again, without a restart:
#   - /healthz says ok again;
#   - no agreement stays Pending (the negotiation whose end could not be
#     written is Rejected, Interrupted) and none stays marked as being
#     modified: a modify of the same agreement succeeds;
#   - the sites hold nothing but the first agreement's reservations.
# Root (mount); about 30 s.  KEEP=DIR: accordd's log is copied there.
set -u
BUILD=$(cd "${1:?usage: test_disk_full.sh BUILD_DIR}" && pwd)
T=$(mktemp -d /tmp/accord-full-XXXXXX)
PID=
READER=
fail() {
    echo "FAIL: $*" >&2
    tail -30 "$T/a.log" >&2 2>/dev/null
    exit 1
}
cleanup() {
    [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null
    [ -n "$READER" ] && kill -9 "$READER" 2>/dev/null
    wait 2>/dev/null
    [ -n "${KEEP:-}" ] && cp "$T/a.log" "$KEEP"/ 2>/dev/null
    umount "$T/fs" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/fs"
mount -t tmpfs -o size=4m,mode=0755 accord-full "$T/fs" || fail "cannot mount a tmpfs"

cat >"$T/accord.ini" <<CONF
[server]
listen = 127.0.0.1:0
allow_control = yes

[database]
path = $T/fs/accord.db
lease = PT4S
wal_limit = 1048576

[negotiation]
horizon = P3D
lead_time = PT5S
adapter_timeout = PT30S

[site sa]
adapter = sim-batch
nodes = 16
calendar = $T/cal-sa.db

[site sb]
adapter = sim-batch
nodes = 16
calendar = $T/cal-sb.db
CONF
(cd "$T" && exec "$BUILD/accordd" --config "$T/accord.ini") >"$T/a.log" 2>&1 &
PID=$!
B=
for _ in $(seq 100); do
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$T/a.log")
    [ -n "$port" ] && B=http://127.0.0.1:$port && break
    sleep 0.1
done
[ -n "$B" ] || fail "accordd did not start"

offer() {
    cat <<XML
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement" xmlns:co="urn:accord:coalloc:1"><wsag:Name>$1</wsag:Name><wsag:Context><wsag:AgreementInitiator>alice</wsag:AgreementInitiator><wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context><wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name="s" wsag:ServiceName="m"><co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name="a" wsag:ServiceName="m"><co:Component><co:Site>sa</co:Site><co:Nodes>2</co:Nodes></co:Component></wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name="b" wsag:ServiceName="m"><co:Component><co:Site>sb</co:Site><co:Nodes>2</co:Nodes></co:Component></wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>
XML
}
post() { # post PATH FILE OUT: the status
    curl -s -o "$3" -w '%{http_code}' -m 60 -H 'Content-Type: application/xml' \
        --data-binary "@$2" "$B$1"
}
bookings() { curl -s -X POST "$B/adapters/$1/control/bookings" | grep -c . || true; }
pending() { curl -s "$B/agreements?state=Pending" | grep -c 'AgreementId' || true; }
modification() {
    printf '<co:Modification xmlns:co="urn:accord:coalloc:1"><co:End>%s</co:End></co:Modification>\n' \
        "$(date -u -d "+$1 hours" +%Y-%m-%dT%H:%M:%SZ)"
}

offer first >"$T/o1.xml"
[ "$(post /agreements "$T/o1.xml" "$T/ag.xml")" = 201 ] || fail "no agreement: $(cat "$T/ag.xml")"
ID=$(sed -n 's/.*wsag:AgreementId="\([a-z0-9]*\)".*/\1/p' "$T/ag.xml" | head -1)
[ -n "$ID" ] || fail "no agreement id"
offer second >"$T/o2.xml"
modification 2 >"$T/m1.xml"
modification 3 >"$T/m2.xml"

# -------------------------------------------------- the disk fills up
# A reader that keeps its snapshot (as a backup or an operator's sqlite3
# session may): SQLite cannot start its log (-wal) over while it reads, so
# every commit must grow the file, as on a busy server, instead of reusing
# the room of earlier ones.
mkfifo "$T/rd"
sqlite3 "$T/fs/accord.db" <"$T/rd" >/dev/null 2>&1 &
READER=$!
exec 3>"$T/rd"
echo "BEGIN; SELECT count(*) FROM agreement;" >&3
curl -s -f -o /dev/null -X POST \
    "$B/adapters/sa/control/fault?call=reserve&action=hang&seconds=4&count=2" ||
    fail "cannot arm the fault"
(post /agreements "$T/o2.xml" "$T/n.out" >"$T/n.code") &
N=$!
(post "/agreements/$ID/modify" "$T/m1.xml" "$T/m1.out" >"$T/m1.code") &
M=$!
sleep 1.5
# to the last byte (dd stops at ENOSPC); the first file in blocks, then bytes
dd if=/dev/zero of="$T/fs/filler" bs=64k 2>/dev/null
dd if=/dev/zero of="$T/fs/filler2" bs=1 2>/dev/null
wait "$N" "$M"
echo "disk full: the offer answered $(cat "$T/n.code"), the modify $(cat "$T/m1.code")"
case $(cat "$T/n.code") in 5??) ;; *) fail "the offer answered $(cat "$T/n.code") on a full disk" ;; esac
case $(cat "$T/m1.code") in 5??) ;; *) fail "the modify answered $(cat "$T/m1.code") on a full disk" ;; esac
hz=$(curl -s -o "$T/hz" -w '%{http_code}' "$B/healthz")
[ "$hz" = 503 ] && grep -q "writes fail" "$T/hz" ||
    fail "/healthz answers $hz on a full disk: $(cat "$T/hz")"
echo "/healthz: $hz: $(grep -o 'degraded[^<]*' "$T/hz" | head -1)"

# ------------------------------------------------------- room again
rm -f "$T/fs/filler" "$T/fs/filler2"
exec 3>&-
wait "$READER" 2>/dev/null
ok=
for _ in $(seq 40); do
    hz=$(curl -s -o "$T/hz" -w '%{http_code}' "$B/healthz")
    p=$(pending)
    [ "$hz" = 200 ] && [ "$p" = 0 ] && ok=1 && break
    sleep 0.5
done
[ -n "$ok" ] || fail "with room again: /healthz $hz ($(cat "$T/hz")), $p agreement(s) Pending"
code=
for _ in $(seq 20); do
    code=$(post "/agreements/$ID/modify" "$T/m2.xml" "$T/m2.out")
    [ "$code" = 200 ] && break
    sleep 0.5
done
[ "$code" = 200 ] || fail "a modify with room again answers $code: $(cat "$T/m2.out")"
sa=
for _ in $(seq 20); do
    sa=$(bookings sa)
    sb=$(bookings sb)
    [ "$sa" = 1 ] && [ "$sb" = 1 ] && break
    sleep 0.5
done
[ "$sa" = 1 ] && [ "$sb" = 1 ] ||
    fail "the sites hold more than the agreement's: sa $sa, sb $sb: $(curl -s -X POST "$B/adapters/sa/control/bookings")"
echo "room again: /healthz ok, nothing Pending, a modify went through, sa holds $sa, sb $sb"
echo PASS
