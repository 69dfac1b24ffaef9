#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test_site_token.sh BUILD - a site that wants the user's own token (issue 33
# item 2, identity = token): a real OpenID provider (tests/oidc), an
# accord-site "gamma" over sim-batch that checks forwarded tokens against it
# ([issuer idp], audience https://gamma.example) and maps their issuer and
# subject with its mapfile, and an accordd that trusts the same provider
# (audience https://accord.example) and reaches gamma through the remote
# adapter with forward_token = https://gamma.example, all on 127.0.0.1.
#
#   - alice's token by the authorization code flow names both audiences: it
#     is forwarded, gamma checks it and books for her account (acc-st-alice);
#   - a client-credentials token names accordd only: accordd does not
#     forward it, and gamma refuses naming itself;
#   - sent to gamma directly (accordd's client certificate): a token for
#     another audience, a forged one (another key) and one of an issuer gamma
#     does not trust are refused with 403 naming gamma and why, never
#     echoing the token; the broker's word (a user name) counts for nothing;
#   - the provider stopped: alice's token still verifies with the cached
#     keys, a token with an unknown kid is 503 with Retry-After.
# The local account is made here and removed afterwards, failed or not.
# Root only (useradd); node and npm (tests/oidc).
set -Eeuo pipefail

BUILD=$(cd "${1:?usage: $0 BUILD}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "test_site_token: needs root (useradd)"; exit 77; }
# shellcheck source=../oidc/oidc.sh
. "$(dirname "$0")/../oidc/oidc.sh"
TMP=$(mktemp -d /tmp/accord-site-token.XXXXXX)
ACCOUNT=acc-st-alice
PIDS=()

cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    oidc_stop
    if getent passwd "$ACCOUNT" >/dev/null; then userdel "$ACCOUNT" 2>/dev/null || true; fi
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

getent passwd "$ACCOUNT" >/dev/null || useradd --system --no-create-home --shell /usr/sbin/nologin "$ACCOUNT"
"$SRC/tests/support/mkcerts.sh" "$TMP/certs" >/dev/null
C=$TMP/certs

oidc_start "$BUILD" "$TMP" --audience https://accord.example --also-audience https://gamma.example ||
    fail "the OpenID provider did not start"

# ---------------------------------------------------------------- the site
cat >"$TMP/gamma.map" <<'EOF'
# gamma: the token's issuer and subject; the user line is the broker's
# word, which identity = token never takes
token /,alice$/ acc-st-alice
user alice acc-st-alice
EOF
cat >"$TMP/gamma.ini" <<EOF
[daemon]
name = gamma
listen = 127.0.0.1:0
database = $TMP/gamma.db
certificate = $C/site-alpha.crt
key = $C/site-alpha.key
client_ca = $C/ca.crt
mapfile = $TMP/gamma.map
identity = token

[issuer idp]
url = $OIDC_ISSUER
audience = https://gamma.example
ca_file = $OIDC_CA
jwks_refresh = 1

[peer accord-main]
subject = CN=accord-main

[site gamma]
adapter = sim-batch
nodes = 4
hosts = gamma-n[1-4]
EOF
"$BUILD/accord-site" --config "$TMP/gamma.ini" --check-config >/dev/null 2>&1 || fail "--check-config gamma"
# --check-config checks the [issuer] sections too
sed 's|^audience = https://gamma.example$||' "$TMP/gamma.ini" >"$TMP/bad.ini"
out=$("$BUILD/accord-site" --config "$TMP/bad.ini" --check-config 2>&1) && fail "an issuer without audience passed"
echo "$out" | grep -q 'issuer idp.*needs audience' || fail "--check-config: $out"
sed 's|^url = https://127.*|url = http://127.0.0.1:9/|' "$TMP/gamma.ini" >"$TMP/bad.ini"
out=$("$BUILD/accord-site" --config "$TMP/bad.ini" --check-config 2>&1) && fail "an http:// issuer passed"
echo "$out" | grep -q 'url must be the issuer' || fail "--check-config: $out"
sed '/^\[issuer idp\]/,/^jwks_refresh/d' "$TMP/gamma.ini" >"$TMP/bad.ini"
out=$("$BUILD/accord-site" --config "$TMP/bad.ini" --check-config 2>&1) && fail "identity = token without an issuer passed"
echo "$out" | grep -q 'token needs an \[issuer NAME\]' || fail "--check-config: $out"
echo "ok: --check-config checks the site's [issuer] sections"

"$BUILD/accord-site" --config "$TMP/gamma.ini" </dev/null >"$TMP/gamma.log" 2>&1 &
PIDS+=($!)
PORT=
for _ in $(seq 100); do
    PORT=$(sed -n 's/.*on https:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$TMP/gamma.log" | head -n 1)
    [ -n "$PORT" ] && break
    sleep 0.1
done
[ -n "$PORT" ] || fail "gamma did not come up"

# ------------------------------------------------------------------ accordd
cat >"$TMP/accordd.ini" <<EOF
[negotiation]
lead_time = PT1S
adapter_timeout = PT8S

[issuer idp]
url = $OIDC_ISSUER
audience = https://accord.example
ca_file = $OIDC_CA

[site gamma]
adapter = remote
nodes = 4
hosts = gamma-n[1-4]
url = https://127.0.0.1:$PORT
ca = $C/ca.crt
certificate = $C/accord.crt
key = $C/accord.key
forward_token = https://gamma.example
EOF
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

offer() { # INITIATOR
    cat <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement"
                     xmlns:co="urn:accord:coalloc:1">
  <wsag:Name>token-$1</wsag:Name>
  <wsag:Context>
    <wsag:AgreementInitiator>$1</wsag:AgreementInitiator>
    <wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider>
  </wsag:Context>
  <wsag:Terms>
    <wsag:All>
      <wsag:ServiceDescriptionTerm wsag:Name="schedule" wsag:ServiceName="metajob">
        <co:Schedule><co:Duration>PT30M</co:Duration></co:Schedule>
      </wsag:ServiceDescriptionTerm>
      <wsag:ServiceDescriptionTerm wsag:Name="c-gamma" wsag:ServiceName="metajob">
        <co:Component><co:Site>gamma</co:Site><co:Nodes>1</co:Nodes></co:Component>
      </wsag:ServiceDescriptionTerm>
    </wsag:All>
  </wsag:Terms>
</wsag:AgreementOffer>
EOF
}

submit() { # USER TOKEN -> body in $TMP/USER.out, status printed
    offer "$1" >"$TMP/$1.xml"
    curl -s -o "$TMP/$1.out" -w '%{http_code}' -X POST -H 'Content-Type: application/xml' \
        -H "Authorization: Bearer $2" --data-binary @"$TMP/$1.xml" "$URL/agreements"
}

accounts() {
    sqlite3 "$TMP/gamma.db" "SELECT account FROM site_bookings WHERE state = 'reserved' ORDER BY account"
}

aud() { # TOKEN: its "aud", as JSON
    local p
    p=$(printf '%s' "$1" | cut -d. -f2 | tr '_-' '/+')
    while [ $((${#p} % 4)) != 0 ]; do p+='='; done
    printf '%s' "$p" | base64 -d | sed -n 's/.*"aud":\(\[[^]]*\]\|"[^"]*"\).*/\1/p'
}

# alice's own token names accordd and gamma: forwarded, checked, booked
ALICE=$(oidc_user_token alice) || fail "no token for alice"
[ "$(aud "$ALICE")" = '["https://accord.example","https://gamma.example"]' ] ||
    fail "alice's token's aud: $(aud "$ALICE")"
code=$(submit alice "$ALICE")
[ "$code" = 201 ] || fail "alice's offer: HTTP $code: $(cat "$TMP/alice.out")"
grep -q 'Observed' "$TMP/alice.out" || fail "alice's agreement is not Observed: $(cat "$TMP/alice.out")"
[ "$(accounts)" = "$ACCOUNT" ] || fail "gamma booked for '$(accounts)', not $ACCOUNT"
echo "ok: alice's own token, forwarded to gamma, books for her account there"

# a token for accordd only: not forwarded, and gamma refuses naming itself (403,
# the site's refusal of the user)
CC=$(oidc_token accord-cc) || fail "no client-credentials token"
[ "$(aud "$CC")" = '"https://accord.example"' ] || fail "the cc token's aud: $(aud "$CC")"
code=$(submit accord-cc "$CC")
[ "$code" = 403 ] || fail "accord-cc's offer: HTTP $code: $(cat "$TMP/accord-cc.out")"
grep -q "site gamma: identity = token: this site wants the user's own token, and the request carries none" \
    "$TMP/accord-cc.out" || fail "gamma's refusal: $(cat "$TMP/accord-cc.out")"
grep -qF "$CC" "$TMP/accord-cc.out" && fail "the refusal holds the token"
[ "$(accounts)" = "$ACCOUNT" ] || fail "gamma booked for '$(accounts)'"
echo "ok: a token whose audience does not name gamma is not forwarded, and gamma refuses"

# ------------------------------------------- straight to gamma, as the broker
preview() { # TOKEN [USER] -> status; body in $TMP/preview.out, headers in $TMP/preview.hdr
    local from until
    from=$(date -u -d '+1 hour' +%Y-%m-%dT%H:00:00Z)
    until=$(date -u -d '+1 day' +%Y-%m-%dT%H:00:00Z)
    cat >"$TMP/preview.xml" <<EOF
<Preview xmlns="urn:accord:site:1">
  <Resource kind="nodes" name="gamma" amount="1"/>
  <From>$from</From>
  <Until>$until</Until>
  <Duration>PT30M</Duration>
  <Identity user="${2:-alice}"><Token>$1</Token></Identity>
</Preview>
EOF
    curl -s -o "$TMP/preview.out" -D "$TMP/preview.hdr" -w '%{http_code}' --cacert "$C/ca.crt" \
        --cert "$C/accord.crt" --key "$C/accord.key" -X POST -H 'Content-Type: application/xml' \
        --data-binary @"$TMP/preview.xml" "https://127.0.0.1:$PORT/v1/preview"
}
refused() { # WHAT TOKEN PATTERN
    local code
    code=$(preview "$2")
    [ "$code" = 403 ] || fail "$1: HTTP $code: $(cat "$TMP/preview.out")"
    grep -q "site gamma: the user's token is refused: $3" "$TMP/preview.out" ||
        fail "$1: $(cat "$TMP/preview.out")"
    grep -qF "$2" "$TMP/preview.out" && fail "$1: the refusal holds the token"
    return 0
}
code=$(preview "$ALICE")
[ "$code" = 200 ] || fail "alice's token straight to gamma: HTTP $code: $(cat "$TMP/preview.out")"
refused "a token for accordd only" "$CC" "wrong audience: the token is for https://accord.example, not for https://gamma.example"
refused "a forged token (another key)" "$(oidc_forge otherkey "$ALICE")" ".*signature"
refused "alg none" "$(oidc_forge none "$ALICE")" ".*"
refused "an issuer gamma does not trust" \
    "$(oidc_forge claims "$ALICE" '{"iss":"https://idp.example.org/"}')" ".*not one this site trusts"
# the broker's word for a user the mapfile would map counts for nothing
code=$(preview "not-a-token" alice)
[ "$code" = 403 ] || fail "no JWT: HTTP $code: $(cat "$TMP/preview.out")"
grep -q "site gamma: the user's token is refused" "$TMP/preview.out" || fail "no JWT: $(cat "$TMP/preview.out")"
echo "ok: gamma refuses foreign-audience, forged, alg-none and untrusted-issuer tokens, naming itself and why"

# the provider down: cached keys verify; an unknown kid is 503 with Retry-After
oidc_stop
code=$(preview "$ALICE")
[ "$code" = 200 ] || fail "alice's token, provider down: HTTP $code: $(cat "$TMP/preview.out")"
sleep 1.1 # past jwks_refresh: gamma may ask the provider again, and cannot
code=$(preview "$(oidc_forge newkid "$ALICE")")
[ "$code" = 503 ] || fail "an unknown kid, provider down: HTTP $code: $(cat "$TMP/preview.out")"
grep -qi '^Retry-After: [0-9]' "$TMP/preview.hdr" || fail "no Retry-After: $(cat "$TMP/preview.hdr")"
grep -q 'site gamma' "$TMP/preview.out" || fail "the 503 does not name gamma: $(cat "$TMP/preview.out")"
echo "ok: provider down: cached keys verify, an unknown kid is 503 with Retry-After"
echo PASS
