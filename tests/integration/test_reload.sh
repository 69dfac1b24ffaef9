#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test_reload.sh BUILD_DIR - SIGHUP reads [auth]'s users, [accounts] and
# [quota] again without a restart (docs/operations.md), all or nothing:
#   - a token taken out of the tokens file stops working, a new one works,
#     a user added is served;
#   - a [quota USER] section added holds that user to it;
#   - an [accounts] entry added lets that user's offers with a job in (as
#     root, accordd starts no job of a user without an account);
#   - a file with an error (a bad value in the configuration, a bad line in
#     the tokens file, an account that does not exist) changes nothing, and
#     the log says why, naming the file and line;
#   - accordd keeps serving throughout (the same process).
# Runs accordd as root (for the account switch); about 10 s.
set -u
BUILD=$(cd "${1:?usage: test_reload.sh BUILD_DIR}" && pwd)
T=$(mktemp -d /tmp/accord-reload-XXXXXX)
PID=
fail() {
    echo "FAIL: $*" >&2
    tail -30 "$T/a.log" >&2 2>/dev/null
    exit 1
}
cleanup() {
    [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT

A1=alice-token-0123456789abcdef
A2=alice-token-renewed-0123456789
B1=bob-token-0123456789abcdef
R1=root-token-0123456789abcdef
umask 077 # the tokens file is its owner's alone
printf 'alice %s\nroot %s admin\n' "$A1" "$R1" >"$T/tokens"

# config QUOTA_BOB ACCOUNTS [AUTH]: the configuration file, written in
# place (AUTH given: instead of the [auth] section).
config() {
    cat >"$T/accord.ini.new" <<CONF
[server]
listen = 127.0.0.1:0

[database]
path = $T/accord.db

[negotiation]
lead_time = PT0S

${3-[auth]
tokens = $T/tokens}

[launch]
enabled = yes
directory = $T/jobs

[quota]
max_agreements = 10
$1
$2

[site sa]
adapter = sim-batch
nodes = 16

[site sb]
adapter = sim-batch
nodes = 16
CONF
    mv "$T/accord.ini.new" "$T/accord.ini"
}
config "" ""
mkdir -p "$T/jobs"
"$BUILD/accordd" --config "$T/accord.ini" --log-level info >"$T/a.log" 2>&1 &
PID=$!
B=
for _ in $(seq 100); do
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$T/a.log")
    [ -n "$port" ] && B=http://127.0.0.1:$port && break
    sleep 0.1
done
[ -n "$B" ] || fail "accordd did not start"

# offer WHO [launch]: an offer of WHO's, in two hours (so that its job, if it
# has one, does not start and end the agreement during the test).
offer() {
    local job=
    local style=
    if [ "${2:-}" = launch ]; then
        job="<co:Executable>/bin/true</co:Executable>"
        style='<wsag:ServiceDescriptionTerm wsag:Name="l" wsag:ServiceName="m"><co:Launch style="metampich"/></wsag:ServiceDescriptionTerm>'
    fi
    cat <<XML
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement" xmlns:co="urn:accord:coalloc:1"><wsag:Name>r</wsag:Name><wsag:Context><wsag:AgreementInitiator>$1</wsag:AgreementInitiator><wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context><wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name="s" wsag:ServiceName="m"><co:Schedule><co:EarliestStart>$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)</co:EarliestStart><co:Duration>PT1H</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name="a" wsag:ServiceName="m"><co:Component><co:Site>sa</co:Site><co:Nodes>1</co:Nodes>$job</co:Component></wsag:ServiceDescriptionTerm>$style</wsag:All></wsag:Terms></wsag:AgreementOffer>
XML
}
# status TOKEN METHOD PATH [BODY]: the HTTP status (the body into $T/out).
status() {
    local data=()
    [ $# -ge 4 ] && data=(-H 'Content-Type: application/xml' --data-binary "$4")
    curl -s -o "$T/out" -w '%{http_code}' -m 30 -X "$2" -H "Authorization: Bearer $1" \
        "${data[@]}" "$B$3"
}
expect() { # expect WANT TOKEN METHOD PATH [BODY]
    local want=$1 got
    shift
    got=$(status "$@")
    [ "$got" = "$want" ] || fail "$2 $3 with ${1:0:8}...: $got, want $want: $(head -c 400 "$T/out")"
}
# hup WORDS: SIGHUP; the log's first SIGHUP line about the configuration
# after it must hold WORDS.
hup() {
    local before
    before=$(grep -c 'SIGHUP: \(read \|.*stay as they were\)' "$T/a.log")
    kill -HUP "$PID" || fail "accordd is gone"
    for _ in $(seq 100); do
        if [ "$(grep -c 'SIGHUP: \(read \|.*stay as they were\)' "$T/a.log")" -gt "$before" ]; then
            grep 'SIGHUP: \(read \|.*stay as they were\)' "$T/a.log" | tail -n +$((before + 1)) |
                head -1 | grep -q "$1" && return 0
            fail "after SIGHUP the log does not say: $1"
        fi
        sleep 0.1
    done
    fail "no SIGHUP line in the log"
}

expect 201 "$A1" POST /agreements "$(offer alice)"
expect 401 "$B1" GET /sites
# As root, with no account for bob's jobs, an offer with a job is refused.
expect 403 "$R1" POST /agreements "$(offer bob launch)"
grep -q "no account is configured for the jobs of bob" "$T/out" || fail "why: $(cat "$T/out")"

# New tokens: alice's old one out, a new one in, bob added.
printf 'alice %s\nbob %s\nroot %s admin\n' "$A2" "$B1" "$R1" >"$T/tokens"
hup "read $T/accord.ini again: 3 users of \[auth\], 0 \[accounts\], 0 \[quota USER\] sections, \[launch\] account none"
expect 401 "$A1" GET /sites
expect 200 "$A2" GET /sites
expect 200 "$B1" GET /sites

# A quota for bob, and an account for his jobs.
config "[quota bob]
max_agreements = 1" "[accounts]
bob = nobody"
hup "1 \[accounts\], 1 \[quota USER\]"
expect 201 "$B1" POST /agreements "$(offer bob launch)"
expect 403 "$B1" POST /agreements "$(offer bob)"
grep -q "quota bob\] max_agreements = 1" "$T/out" || fail "why: $(cat "$T/out")"

# Files with an error change nothing: a bad value, a bad tokens line, an
# account that does not exist.
config "[quota bob]
max_agreements = lots" ""
hup "accord.ini line 2[0-9]: \[quota bob\] max_agreements: .lots.*stay as they were"
expect 403 "$B1" POST /agreements "$(offer bob)" # still [quota bob]'s 1
config "[quota bob]
max_agreements = 1" "[accounts]
bob = no-such-account-here"
hup "no-such-account-here.*stay as they were"
printf 'alice %s\nbob\n' "$A1" >"$T/tokens"
config "[quota bob]
max_agreements = 1" "[accounts]
bob = nobody"
hup "tokens.*stay as they were"
# Dropping [auth] would count quotas per address instead of per user: a
# restart's matter.
config "" "" ""
hup "no longer has \[auth\]: that takes a restart.*stay as they were"
config "[quota bob]
max_agreements = 1" "[accounts]
bob = nobody"
expect 401 "$A1" GET /sites # the bad file's alice token did not come in
expect 200 "$A2" GET /sites
expect 200 "$B1" GET /sites
kill -0 "$PID" 2>/dev/null || fail "accordd is gone"
echo "test_reload: ok"
