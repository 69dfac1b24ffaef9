#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test_sge_crash.sh - accordd killed with SIGKILL after Grid Engine granted
# its advance reservation but before accordd recorded it (issue 22): at the
# restart the reservation is found by its name (Accord's key) and deleted,
# and the agreement ends Rejected (Interrupted).
#
# accordd runs the sge adapter itself ([site sgea] adapter = sge) on the Grid
# Engine testbed (ctest fixture "sge"), with a bin_dir of wrappers around the
# testbed's commands; while DIR/hang exists, the qrsub wrapper runs the real
# qrsub and then hangs, so accordd never learns the id:
#
#   1. an offer for one host of sgea; qrsub grants AR N named acc-ID-...;
#      accordd waits in reserve; kill -9;
#   2. the restart (qrsub no longer hangs) finds the booking it meant to
#      make, asks Grid Engine for it by name, deletes it: qrstat has no AR of
#      that name, the journal says cancelled, the agreement is Rejected with
#      fault code Interrupted;
#   3. the restarted accordd books on sgea as usual.
#
# Root only.  Never stops the testbed; the daemons, what this test booked and
# the temporary directory go however this ends (trap).
#
#   SGE_TESTBED_DIR=... test_sge_crash.sh BUILD_DIR
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd) || exit 1
T0=$(date +%s)
# shellcheck source=../support/checks.sh
. "$SRC/tests/support/checks.sh"
die() {
    echo "test_sge_crash: $*"
    exit 1
}

[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$BUILD/accordd" ] || die "$BUILD/accordd missing"
command -v curl >/dev/null || die "curl missing (apt-get install -y curl)"
[ -n "${SGE_TESTBED_DIR:-}" ] && [ -r "$SGE_TESTBED_DIR/env.sh" ] ||
    die "SGE_TESTBED_DIR/env.sh missing: run through ctest (fixture sge)"
# shellcheck disable=SC1091
. "$SGE_TESTBED_DIR/env.sh"
export TZ=UTC
"$SGE_TESTBED_BIN/qconf" -sss >/dev/null 2>&1 || die "the Grid Engine qmaster does not answer"

DIR=$(mktemp -d /tmp/accord-sge-crash.XXXXXX)
PID=
cleanup() {
    [ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null
    [ -f "$DIR/qrsub.pid" ] && kill -KILL "$(cat "$DIR/qrsub.pid")" 2>/dev/null
    for r in $("$SGE_TESTBED_BIN/qrstat" -u '*' 2>/dev/null | awk '$2 ~ /^acc-/ {print $2}'); do
        "$SGE_TESTBED_BIN/qrdel" -f "$r" >/dev/null 2>&1
    done
    rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# The wrappers: the testbed's commands; qrsub hangs after it is granted
# while DIR/hang exists.
mkdir -p "$DIR/bin"
for c in qrstat qrdel qstat qconf; do
    printf '#!/bin/sh\nexec %s/%s "$@"\n' "$SGE_TESTBED_BIN" "$c" >"$DIR/bin/$c"
done
cat >"$DIR/bin/qrsub" <<EOF
#!/bin/sh
$SGE_TESTBED_BIN/qrsub "\$@"
rc=\$?
if [ -e $DIR/hang ]; then
    echo \$\$ > $DIR/qrsub.pid
    touch $DIR/granted
    exec sleep 600
fi
exit \$rc
EOF
chmod 755 "$DIR/bin/"*

cat >"$DIR/accordd.ini" <<EOF
[negotiation]
lead_time = PT1S
adapter_timeout = PT300S

[site sgea]
adapter = sge
nodes = 3
hosts = sgea-n[1-3]
sge_root = $SGE_ROOT
cell = $SGE_CELL
pe = mpi
queue = all.q
slots = 2
users = nobody
bin_dir = $DIR/bin
timeout = PT300S
EOF

URL=
start() {
    : >"$DIR/log"
    setsid "$BUILD/accordd" --config "$DIR/accordd.ini" --db "$DIR/accordd.db" \
        --listen 127.0.0.1:0 </dev/null >>"$DIR/log" 2>&1 &
    PID=$!
    URL=
    for _ in $(seq 200); do
        URL=$(sed -n 's/.*listening on \(http:\/\/[^ ]*\).*/\1/p' "$DIR/log" | head -n 1)
        [ -n "$URL" ] && return 0
        sleep 0.1
    done
    tail -n 20 "$DIR/log"
    return 1
}
STATUS_FILE=$DIR/status
api() { # METHOD PATH [BODY]
    local out
    out=$(curl -s --max-time 60 -X "$1" -H 'Content-Type: application/xml' \
        ${3:+--data-binary "$3"} -w '\n%{http_code}' "$URL$2")
    echo "${out##*$'\n'}" >"$STATUS_FILE"
    printf '%s' "${out%$'\n'*}"
}
st() { cat "$STATUS_FILE"; }
utc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
offer() { # NAME AHEAD
    cat <<EOF
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement" xmlns:co="urn:accord:coalloc:1">
<wsag:Name>$1</wsag:Name><wsag:Context><wsag:AgreementInitiator>tester</wsag:AgreementInitiator>
<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context><wsag:Terms><wsag:All>
<wsag:ServiceDescriptionTerm wsag:Name="schedule" wsag:ServiceName="m"><co:Schedule>
<co:EarliestStart>$(utc $(($(date +%s) + $2)))</co:EarliestStart><co:Duration>PT600S</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>
<wsag:ServiceDescriptionTerm wsag:Name="a" wsag:ServiceName="m"><co:Component><co:Site>sgea</co:Site>
<co:Nodes>1</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>
</wsag:All></wsag:Terms></wsag:AgreementOffer>
EOF
}
agreement_id() { sed -n 's/.*wsag:AgreementId="\([^"]*\)".*/\1/p' <<<"$1" | head -n 1; }
journal() { # AGREEMENT-ID: "key state" lines
    sqlite3 -separator ' ' -cmd '.timeout 5000' "$DIR/accordd.db" \
        "SELECT key, state FROM reservation WHERE agreement_id = '$1' ORDER BY key"
}
ar_named() { # PREFIX: the AR ids whose name starts with it
    "$SGE_TESTBED_BIN/qrstat" -u '*' 2>/dev/null | awk -v p="$1" 'index($2, p) == 1 {print $1}'
}
# (qrstat exits 1 for an unknown id)
ar_gone() { grep -q '<ar_unknown>' <<<"$("$SGE_TESTBED_BIN/qrstat" -ar "$1" -xml 2>/dev/null)"; }
wait_for() { # SECONDS COMMAND...
    local end=$(($(date +%s) + $1))
    shift
    while ! "$@"; do
        [ "$(date +%s)" -lt "$end" ] || return 1
        sleep 0.25
    done
}

# ------------------------------------------------------------ 1. the kill

echo "== 1. Grid Engine grants, accordd is killed before it records"
start || die "accordd did not come up"
touch "$DIR/hang"
reply=$(api POST '/agreements?mode=pending' "$(offer crash 3600)")
ID=$(agreement_id "$reply")
expect "the offer is taken (202, $ID)" test "$(st)" = 202 -a -n "$ID"
expect "qrsub was granted" wait_for 30 test -e "$DIR/granted"
# qrstat's summary shows the first 10 characters of a name: acc-ID...
AR=$(ar_named "acc-${ID:0:6}")
expect "Grid Engine holds AR $AR of the agreement" test -n "$AR"
AR=${AR:-0}
KEY=$("$SGE_TESTBED_BIN/qrstat" -ar "$AR" 2>/dev/null | awk '$1 == "name" {print $2}')
expect "  named after Accord's key ($KEY)" grep -q "^acc-$ID-" <<<"$KEY"
expect "the journal has not recorded it (intent: $(journal "$ID"))" \
    test "$(journal "$ID" | awk '{print $2}')" = intent
kill -KILL "$PID"
wait "$PID" 2>/dev/null
PID=
kill -KILL "$(cat "$DIR/qrsub.pid")" 2>/dev/null
rm -f "$DIR/hang"
ar_held() { ! ar_gone "$1"; }
expect "AR $AR outlives accordd" ar_held "$AR"

# ------------------------------------------------------------ 2. the restart

echo "== 2. the restart finds it by name and deletes it"
start || die "accordd did not come up again"
expect "AR $AR is gone (qrstat -ar $AR)" wait_for 30 ar_gone "$AR"
state() { api GET "/agreements/$ID" | sed -n 's/.*<co:State>\([A-Za-z]*\)<\/co:State>.*/\1/p' | head -n 1; }
doc=$(api GET "/agreements/$ID")
expect "the agreement is Rejected ($(state))" test "$(state)" = Rejected
expect "  with fault code Interrupted" grep -q '<co:FaultCode>Interrupted</co:FaultCode>' <<<"$doc"
cancelled() { [ "$(journal "$ID" | awk '{print $2}')" = cancelled ]; }
expect "the journal says cancelled ($(journal "$ID"))" wait_for 15 cancelled

# ------------------------------------------------------------ 3. as usual

echo "== 3. the restarted accordd books as usual"
reply=$(api POST /agreements "$(offer after 3600)")
ID2=$(agreement_id "$reply")
expect "agreed (201, $ID2)" test "$(st)" = 201 -a -n "$ID2"
AR2=$(ar_named "acc-${ID2:0:6}")
expect "Grid Engine holds its AR ($AR2)" test -n "$AR2"
api POST "/agreements/$ID2/terminate" >/dev/null
expect "terminate deletes it" wait_for 15 ar_gone "${AR2:-0}"
kill -TERM "$PID"
wait "$PID"
expect "accordd stops on SIGTERM with status 0" test $? = 0
PID=
no_sanitizer_reports "$DIR/log"
[ "$failures" = 0 ] || tail -n 30 "$DIR/log"
checks_summary test_sge_crash "in $(($(date +%s) - T0)) s"
