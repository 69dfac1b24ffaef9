#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test_launch_account.sh - a meta-job never runs as root (needs root).
#
#   1. accordd started as root with the embedded testbed (launching on, no
#      account configured): an offer whose program writes `id -u` into a
#      file is refused with 403 before anything is booked, the answer says
#      why, no agreement is kept and no file appears.
#   2. The same configuration with `[launch] account = nobody`: the offer is
#      agreed, its program runs at the start as nobody (the file it writes
#      says nobody's uid and belongs to nobody), and so does the job's
#      directory.
#
#   tests/integration/test_launch_account.sh BUILD_DIR
# Everything lives in one temporary directory, removed (with the daemon
# stopped) on every exit.
BUILD=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd) || exit 1
. "$(dirname "$0")/../support/checks.sh"
[ "$(id -u)" = 0 ] || { echo "test_launch_account: needs root"; exit 1; }
NOBODY=$(id -u nobody) || exit 1

TMP=$(mktemp -d) || exit 1
PID=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    [ -n "$KEEP" ] || rm -rf "$TMP" # KEEP=1: left for a look
}
trap cleanup EXIT INT TERM
chmod 0755 "$TMP"
mkdir -m 1777 "$TMP/out"

# The program: writes the uid it runs as into a file of its own.
cat >"$TMP/whoami" <<'EOF'
#!/bin/sh
id -u >"$1/uid.$$"
EOF
chmod 0755 "$TMP/whoami"

cat >"$TMP/offer.xml" <<EOF
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement"
                     xmlns:co="urn:accord:coalloc:1">
  <wsag:Name>whoami</wsag:Name>
  <wsag:Context>
    <wsag:AgreementInitiator>alice</wsag:AgreementInitiator>
    <wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider>
    <wsag:TemplateName>meta-job</wsag:TemplateName>
  </wsag:Context>
  <wsag:Terms><wsag:All>
    <wsag:ServiceDescriptionTerm wsag:Name="schedule" wsag:ServiceName="metajob">
      <co:Schedule><co:Duration>PT2M</co:Duration></co:Schedule>
    </wsag:ServiceDescriptionTerm>
    <wsag:ServiceDescriptionTerm wsag:Name="one" wsag:ServiceName="metajob">
      <co:Component><co:Site>fh-brs</co:Site><co:Nodes>1</co:Nodes>
        <co:Executable>$TMP/whoami</co:Executable><co:Argument>$TMP/out</co:Argument>
      </co:Component>
    </wsag:ServiceDescriptionTerm>
    <wsag:ServiceDescriptionTerm wsag:Name="launch" wsag:ServiceName="metajob">
      <co:Launch style="metampich"/>
    </wsag:ServiceDescriptionTerm>
  </wsag:All></wsag:Terms>
</wsag:AgreementOffer>
EOF

# start_accordd NAME [--config FILE]: accordd as root in $TMP/NAME; sets
# PID and URL.
start_accordd() {
    local name=$1
    shift
    mkdir -p "$TMP/$name"
    (cd "$TMP/$name" && exec "$BUILD/accordd" "$@" --listen 127.0.0.1:0 \
        >"$TMP/$name.out" 2>"$TMP/$name.log") &
    PID=$!
    URL=
    for _ in $(seq 100); do
        URL=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$TMP/$name.out")
        [ -n "$URL" ] && return 0
        sleep 0.1
    done
    echo "accordd did not start:"
    cat "$TMP/$name.log"
    return 1
}

stop_accordd() {
    kill "$PID" 2>/dev/null
    wait "$PID" 2>/dev/null
    PID=
}

post() { # FILE: the status on the first line, the body after
    curl -s -o "$TMP/body" -w '%{http_code}\n' -X POST --data-binary @"$1" \
        -H 'Content-Type: application/xml' -H 'Accept: application/json' "$URL/agreements"
}

# 1. root, the embedded testbed, no account: refused, nothing kept
start_accordd root-embedded || exit 1
expect "accordd says whom it runs as and what it may" \
    grep -q "running as root (uid 0), capabilities: " "$TMP/root-embedded.log"
status=$(post "$TMP/offer.xml")
expect "as root without an account the offer is refused with 403 (got $status)" \
    [ "$status" = 403 ]
expect "the answer says a job never runs as root" grep -q "never runs as root" "$TMP/body"
expect "nothing was kept" sh -c "curl -s -H 'Accept: application/json' '$URL/agreements' |
    grep -q '\"total\": *0'"
sleep 7 # past the lead time: a job that had been agreed would have started
expect "no file appeared" [ -z "$(ls -A "$TMP/out")" ]
stop_accordd

# 2. the same with [launch] account = nobody: the program runs as nobody
"$BUILD/accordd" --print-config >"$TMP/nobody.ini"
printf '\n[launch]\naccount = nobody\n' >>"$TMP/nobody.ini"
start_accordd with-account --config "$TMP/nobody.ini" || exit 1
status=$(post "$TMP/offer.xml")
expect "with a launch account the offer is agreed (got $status)" [ "$status" = 201 ]
id=$(sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' "$TMP/body" | head -1)
state=
for _ in $(seq 120); do
    state=$("$BUILD/accordctl" --server "$URL" launch "$id" --json 2>/dev/null |
        sed -n 's/.*"state": *"\([^"]*\)".*/\1/p' | head -1)
    case $state in exited | failed | killed | terminated) break ;; esac
    sleep 0.5
done
expect "the job ran to its end (state $state)" [ "$state" = exited ]
files=$(ls "$TMP/out")
expect "the program wrote its uid" [ -n "$files" ]
expect "it ran as nobody ($NOBODY), never as root" \
    sh -c "[ -n '$files' ] && cd '$TMP/out' && for f in *; do [ \"\$(cat \$f)\" = $NOBODY ] || exit 1; done"
expect "no file of it belongs to root" [ -z "$(find "$TMP/out" -user root -type f)" ]
jobdir=$(find "$TMP/with-account" -maxdepth 2 -type d -name "$id" | head -1)
expect "its directory belongs to nobody" \
    sh -c "[ -n '$jobdir' ] && [ \"\$(stat -c %u '$jobdir')\" = $NOBODY ]"
stop_accordd

checks_summary test_launch_account
