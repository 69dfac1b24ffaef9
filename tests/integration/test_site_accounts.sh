#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test_site_accounts.sh BUILD - each user's own account at each site (issue 33
# item 2), on two accord-site daemons over sim-batch and an accordd that
# reaches both through the remote adapter over mutual TLS, all on 127.0.0.1.
#
#   alpha's mapfile: alice -> acc-sa-alice1, bob -> acc-sa-bob1
#   beta's mapfile:  alice -> acc-sa-alice2 (bob: no line)
#   gamma:           identity = token (it wants the user's own token)
#
# alice's offer for both sites is booked, and each site's journal names her
# account there; bob's offer, and his quote, are refused with 403 naming beta
# (that site's refusal of the user, not a server fault), and neither site
# holds a booking for him; once beta maps him (SIGHUP) his offer is booked,
# and once it drops him again a change of his agreement is refused with 403
# naming beta, the agreement unchanged; gamma refuses alice's offer for want
# of her own token.
# The local accounts are made here and removed afterwards,
# failed or not.  Root only (useradd).
set -Eeuo pipefail

BUILD=$(cd "${1:?usage: $0 BUILD}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "test_site_accounts: needs root (useradd)"; exit 77; }
TMP=$(mktemp -d /tmp/accord-site-accounts.XXXXXX)
USERS=(acc-sa-alice1 acc-sa-alice2 acc-sa-bob1 acc-sa-bob2)
PIDS=()

cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    for p in "${USERS[@]}"; do
        if getent passwd "$p" >/dev/null; then userdel "$p" 2>/dev/null || true; fi
    done
    rm -rf "$TMP"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    local f
    for f in "$TMP"/*.log; do
        echo "--- $f" >&2
        tail -n 15 "$f" >&2
    done
    exit 1
}

for u in "${USERS[@]}"; do
    getent passwd "$u" >/dev/null || useradd --system --no-create-home --shell /usr/sbin/nologin "$u"
done
"$SRC/tests/support/mkcerts.sh" "$TMP/certs" >/dev/null
C=$TMP/certs

# ---------------------------------------------------------------- the sites
cat >"$TMP/alpha.map" <<'EOF'
# alpha: both users, each to an account of their own
user alice acc-sa-alice1
user /^bo+b$/ acc-sa-bob1
EOF
cat >"$TMP/beta.map" <<'EOF'
# beta: alice only
user "alice" acc-sa-alice2
EOF
cp "$TMP/beta.map" "$TMP/gamma.map"

start_site() { # NAME
    local n=$1 port=
    cat >"$TMP/$n.ini" <<EOF
[daemon]
name = $n
listen = 127.0.0.1:0
database = $TMP/$n.db
certificate = $C/site-alpha.crt
key = $C/site-alpha.key
client_ca = $C/ca.crt
mapfile = $TMP/$n.map
identity = ${2:-broker}

[peer accord-main]
subject = CN=accord-main

[site $n]
adapter = sim-batch
nodes = 4
hosts = $n-n[1-4]
EOF
    # identity = token: an issuer never reached (test_site_token.sh has a
    # real one); alice's static token is no JWT, so none reaches the site
    if [ "${2:-broker}" = token ]; then
        printf '\n[issuer idp]\nurl = https://idp.example.org/\naudience = https://%s.example\n' \
            "$n" >>"$TMP/$n.ini"
    fi
    "$BUILD/accord-site" --config "$TMP/$n.ini" --check-config >/dev/null 2>&1 || fail "--check-config $n"
    "$BUILD/accord-site" --config "$TMP/$n.ini" </dev/null >"$TMP/$n.log" 2>&1 &
    PIDS+=($!)
    eval "PID_$n=$!"
    for _ in $(seq 100); do
        port=$(sed -n 's/.*on https:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$TMP/$n.log" | head -n 1)
        [ -n "$port" ] && break
        sleep 0.1
    done
    [ -n "$port" ] || fail "site $n did not come up"
    eval "PORT_$n=$port"
}
start_site alpha
start_site beta
start_site gamma token

# ------------------------------------------------------------------ accordd
printf 'alice %s\nbob %s\n' aliceSecretToken0001 bobSecretToken000001 >"$TMP/tokens"
chmod 600 "$TMP/tokens"
{
    cat <<EOF
[auth]
tokens = $TMP/tokens

[negotiation]
lead_time = PT1S
adapter_timeout = PT8S

EOF
    for n in alpha beta gamma; do
        port=PORT_$n
        cat <<EOF
[site $n]
adapter = remote
nodes = 4
hosts = $n-n[1-4]
url = https://127.0.0.1:${!port}
ca = $C/ca.crt
certificate = $C/accord.crt
key = $C/accord.key
forward_token = https://$n.example

EOF
    done
} >"$TMP/accordd.ini"
"$BUILD/accordd" --config "$TMP/accordd.ini" --db "$TMP/accordd.db" --listen 127.0.0.1:0 \
    </dev/null >"$TMP/accordd.log" 2>&1 &
PIDS+=($!)
URL=
for _ in $(seq 100); do
    URL=$(sed -n 's/.*listening on \(http:\/\/[^ ]*\).*/\1/p' "$TMP/accordd.log" | head -n 1)
    [ -n "$URL" ] && break
    sleep 0.1
done
[ -n "$URL" ] || fail "accordd did not come up"
URL=${URL%/}

offer() { # INITIATOR [SITE...] (default alpha beta)
    local u=$1 s comps=
    shift
    [ $# -gt 0 ] || set -- alpha beta
    for s in "$@"; do
        comps+="<wsag:ServiceDescriptionTerm wsag:Name=\"c-$s\" wsag:ServiceName=\"metajob\">"
        comps+="<co:Component><co:Site>$s</co:Site><co:Nodes>1</co:Nodes></co:Component>"
        comps+="</wsag:ServiceDescriptionTerm>"
    done
    cat <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement"
                     xmlns:co="urn:accord:coalloc:1">
  <wsag:Name>accounts-$u</wsag:Name>
  <wsag:Context>
    <wsag:AgreementInitiator>$u</wsag:AgreementInitiator>
    <wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider>
  </wsag:Context>
  <wsag:Terms>
    <wsag:All>
      <wsag:ServiceDescriptionTerm wsag:Name="schedule" wsag:ServiceName="metajob">
        <co:Schedule><co:Duration>PT30M</co:Duration></co:Schedule>
      </wsag:ServiceDescriptionTerm>
      $comps
    </wsag:All>
  </wsag:Terms>
</wsag:AgreementOffer>
EOF
}

submit() { # USER TOKEN [SITE...] -> body in $TMP/USER.out, status printed
    local u=$1 t=$2
    shift 2
    offer "$u" "$@" >"$TMP/$u.xml"
    set -- "$u" "$t"
    curl -s -o "$TMP/$1.out" -w '%{http_code}' -X POST -H 'Content-Type: application/xml' \
        -H "Authorization: Bearer $2" --data-binary @"$TMP/$1.xml" "$URL/agreements"
}

accounts() { # SITE: the accounts of its reserved bookings, one a line
    sqlite3 "$TMP/$1.db" "SELECT account FROM site_bookings WHERE state = 'reserved' ORDER BY account"
}

# alice: booked at both, for her own account at each
code=$(submit alice aliceSecretToken0001)
[ "$code" = 201 ] || fail "alice's offer: HTTP $code: $(cat "$TMP/alice.out")"
grep -q 'Observed' "$TMP/alice.out" || fail "alice's agreement is not Observed: $(cat "$TMP/alice.out")"
[ "$(accounts alpha)" = acc-sa-alice1 ] || fail "alpha booked for '$(accounts alpha)', not acc-sa-alice1"
[ "$(accounts beta)" = acc-sa-alice2 ] || fail "beta booked for '$(accounts beta)', not acc-sa-alice2"
echo "ok: alice is acc-sa-alice1 at alpha and acc-sa-alice2 at beta"

# bob: mapped at alpha only: refused, naming beta, and nothing booked anywhere
code=$(submit bob bobSecretToken000001)
# the agreement is Rejected: accordd answers 403, that site's refusal of the
# user naming the site (not 502: no server or adapter failed)
[ "$code" = 403 ] || fail "bob's offer: HTTP $code, not 403: $(cat "$TMP/bob.out")"
grep -q 'site beta: no account for user bob' "$TMP/bob.out" ||
    fail "bob's refusal does not name beta: $(cat "$TMP/bob.out")"
grep -q 'Observed' "$TMP/bob.out" && fail "bob's agreement was booked: $(cat "$TMP/bob.out")"
[ "$(accounts alpha)" = acc-sa-alice1 ] || fail "alpha holds more than alice's: '$(accounts alpha)'"
[ "$(accounts beta)" = acc-sa-alice2 ] || fail "beta holds more than alice's: '$(accounts beta)'"
n=$(sqlite3 "$TMP/alpha.db" "SELECT count(*) FROM site_bookings WHERE account = 'acc-sa-bob1' AND state != 'cancelled'")
[ "$n" = 0 ] || fail "alpha holds $n booking(s) for bob"
echo "ok: bob is refused naming beta, and nothing is booked for him at either site"
# A refusal of one user is an answer of a working site: beta is still up.
curl -s -H 'Accept: application/json' -H "Authorization: Bearer aliceSecretToken0001" \
    "$URL/sites" >"$TMP/sites.json"
python3 -c 'import json,sys; s={x["name"]: x for x in json.load(open(sys.argv[1]))["sites"]}; sys.exit(0 if s["beta"]["up"] else 1)' \
    "$TMP/sites.json" || fail "beta is marked down after refusing bob: $(cat "$TMP/sites.json")"
echo "ok: beta is still up after refusing bob"

# a quote (POST /negotiations) previews every site too: the same refusal, a 403
# naming beta, and nothing held
offer bob >"$TMP/bob.xml"
code=$(curl -s -o "$TMP/bob.out" -w '%{http_code}' -X POST -H 'Content-Type: application/xml' \
    -H "Authorization: Bearer bobSecretToken000001" --data-binary @"$TMP/bob.xml" \
    "$URL/negotiations?hold=PT1M")
[ "$code" = 403 ] || fail "bob's quote: HTTP $code, not 403: $(cat "$TMP/bob.out")"
grep -q 'site beta: no account for user bob' "$TMP/bob.out" ||
    fail "bob's quote's refusal does not name beta: $(cat "$TMP/bob.out")"
n=$(sqlite3 "$TMP/alpha.db" "SELECT count(*) FROM site_bookings WHERE account = 'acc-sa-bob1' AND state != 'cancelled'")
[ "$n" = 0 ] || fail "alpha holds $n booking(s) for bob's quote"
echo "ok: bob's quote is refused with 403 naming beta, nothing held"

# beta maps bob too once its mapfile says so and it is told (SIGHUP): his
# offer is then booked for his own account at each site
printf 'user bob acc-sa-bob2\n' >>"$TMP/beta.map"
# shellcheck disable=SC2154 # PID_beta: set by start_site
kill -HUP "$PID_beta"
for _ in $(seq 50); do
    grep -q "reloaded the certificates, 1 peer(s) and the mapfile" "$TMP/beta.log" && break
    sleep 0.1
done
grep -q "reloaded the certificates, 1 peer(s) and the mapfile" "$TMP/beta.log" || fail "beta did not reload"
code=$(submit bob bobSecretToken000001)
[ "$code" = 201 ] || fail "bob's offer after beta's reload: HTTP $code: $(cat "$TMP/bob.out")"
[ "$(accounts alpha | tr '\n' ' ')" = "acc-sa-alice1 acc-sa-bob1 " ] || fail "alpha: '$(accounts alpha)'"
[ "$(accounts beta | tr '\n' ' ')" = "acc-sa-alice2 acc-sa-bob2 " ] || fail "beta: '$(accounts beta)'"
BOB_ID=$(sed -n 's/.*wsag:AgreementId="\([^"]*\)".*/\1/p' "$TMP/bob.out" | head -n 1)
[ -n "$BOB_ID" ] || fail "bob's agreement has no id: $(cat "$TMP/bob.out")"
echo "ok: a mapfile read again on SIGHUP maps bob at beta too"

# beta drops bob again: a change of his agreement (a new end: new reservations
# at both) is refused with 403 naming beta, and his agreement stays as it was
sed -i '/^user bob /d' "$TMP/beta.map"
kill -HUP "$PID_beta"
for _ in $(seq 50); do
    [ "$(grep -c "reloaded the certificates, 1 peer(s) and the mapfile" "$TMP/beta.log")" = 2 ] && break
    sleep 0.1
done
[ "$(grep -c "reloaded the certificates, 1 peer(s) and the mapfile" "$TMP/beta.log")" = 2 ] ||
    fail "beta did not reload a second time"
end=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)
code=$(printf '<co:Modification xmlns:co="urn:accord:coalloc:1"><co:End>%s</co:End></co:Modification>\n' "$end" |
    curl -s -o "$TMP/bob.out" -w '%{http_code}' -X POST -H 'Content-Type: application/xml' \
        -H "Authorization: Bearer bobSecretToken000001" --data-binary @- "$URL/agreements/$BOB_ID/modify")
[ "$code" = 403 ] || fail "bob's change: HTTP $code, not 403: $(cat "$TMP/bob.out")"
grep -q 'site beta: no account for user bob' "$TMP/bob.out" ||
    fail "bob's change's refusal does not name beta: $(cat "$TMP/bob.out")"
state=$(curl -s -H "Authorization: Bearer bobSecretToken000001" "$URL/agreements/$BOB_ID/state")
grep -q '<wsag:State>Observed</wsag:State>' <<<"$state" || fail "bob's agreement after the refused change: $state"
[ "$(accounts alpha | tr '\n' ' ')" = "acc-sa-alice1 acc-sa-bob1 " ] || fail "alpha after the change: '$(accounts alpha)'"
[ "$(accounts beta | tr '\n' ' ')" = "acc-sa-alice2 acc-sa-bob2 " ] || fail "beta after the change: '$(accounts beta)'"
echo "ok: a change beta no longer maps bob for is refused with 403 naming beta, nothing changed"

# gamma wants the user's own token (identity = token): alice's static token is
# not one an issuer signed, so there is none to forward, and gamma refuses
code=$(submit alice aliceSecretToken0001 gamma)
[ "$code" = 403 ] || fail "alice's offer for gamma: HTTP $code, not 403: $(cat "$TMP/alice.out")"
grep -q "site gamma: identity = token: this site wants the user's own token" "$TMP/alice.out" ||
    fail "gamma's refusal: $(cat "$TMP/alice.out")"
[ -z "$(accounts gamma)" ] || fail "gamma booked for '$(accounts gamma)'"
echo "ok: a site that wants the user's own token refuses the broker's word"

# a mapfile that maps to root, or to an account that does not exist, is refused
printf 'user alice root\n' >"$TMP/bad.map"
sed "s|^mapfile = .*|mapfile = $TMP/bad.map|" "$TMP/alpha.ini" >"$TMP/bad.ini"
out=$("$BUILD/accord-site" --config "$TMP/bad.ini" --check-config 2>&1) && fail "a root mapping passed --check-config"
echo "$out" | grep -q 'bad.map:1: root' || fail "--check-config: $out"
printf '# ok\nuser alice acc-sa-nobody-here\n' >"$TMP/bad.map"
out=$("$BUILD/accord-site" --config "$TMP/bad.ini" --check-config 2>&1) && fail "an unknown account passed --check-config"
echo "$out" | grep -q 'bad.map:2' || fail "--check-config: $out"
echo "ok: --check-config refuses root and unknown accounts, with the line"
echo PASS
