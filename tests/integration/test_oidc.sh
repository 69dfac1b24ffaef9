#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test_oidc.sh BUILD_DIR - JWT access tokens of a real OpenID provider
# (tests/oidc: oidc-provider from npm on loopback HTTPS, keys made for the
# run) against accordd with two [issuer] sections and a static [auth] user
# (docs/security.md, "Tokens from an identity provider"):
#   - a good token (RS256 and ES256) is served, mapped to its user and
#     quota section (an offer: 201 for that user; one over [quota small]:
#     refused naming it); a static token keeps working;
#   - a wrong audience, an expired token, one signed by another key, one
#     with alg none or HS256, an unknown issuer, a missing scope: each
#     refused with its reason in the body and in WWW-Authenticate, which
#     never hold the token;
#   - a key rotated at the provider (new kid) is taken without a restart,
#     also after SIGHUP; an unknown kid with the provider up: 401;
#   - provider stopped: cached keys still verify, an unknown kid is 503
#     with Retry-After.
# About 20 s (npm ci the first time: longer).
set -u
BUILD=$(cd "${1:?usage: test_oidc.sh BUILD_DIR}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../oidc/oidc.sh
. "$HERE/../oidc/oidc.sh"
T=$(mktemp -d /tmp/accord-oidc-XXXXXX)
PID=
fail() {
    echo "FAIL: $*" >&2
    tail -20 "$T/a.log" >&2 2>/dev/null
    exit 1
}
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    oidc_stop
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

AUD=https://accord.test
oidc_start "$BUILD" "$T" --audience "$AUD" || fail "the OpenID provider did not start"

umask 077
STATIC=carol-token-0123456789abcdef
printf 'carol %s\n' "$STATIC" >"$T/tokens"
cat >"$T/accord.ini" <<CONF
[server]
listen = 127.0.0.1:0

[database]
path = $T/accord.db

[negotiation]
lead_time = PT0S

[auth]
tokens = $T/tokens

[issuer test]
url = $OIDC_ISSUER
audience = $AUD
ca_file = $OIDC_CA
leeway = 0
jwks_refresh = 1
map = group:/accord/accord-cc alice quota=small
map = * %u

# A second issuer, never reached: its tokens are not the first's.
[issuer elsewhere]
url = https://127.0.0.1:9/
audience = $AUD

[quota small]
max_nodes = 40

[site fzj-xd1]
adapter = sim-batch
nodes = 64

[site caesar]
adapter = sim-batch
nodes = 128

[network wan]
adapter = sim-network

[link fzj-xd1_caesar]
sites = fzj-xd1 caesar
capacity = 10000
network = wan
CONF
"$BUILD/accordd" --check-config --config "$T/accord.ini" >"$T/check.out" 2>&1 ||
    { cat "$T/check.out"; fail "--check-config refused the configuration"; }

(cd "$T" && exec "$BUILD/accordd" --config accord.ini >"$T/a.out" 2>"$T/a.log") &
PID=$!
URL=
for _ in $(seq 100); do
    URL=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$T/a.out")
    [ -n "$URL" ] && break
    sleep 0.1
done
[ -n "$URL" ] || fail "accordd did not start"

# The offer of docs/examples/offer-window.xml for alice, small (6 nodes) and
# whole (48 nodes: over [quota small]).
EX=$(cd "$HERE/../.." && pwd)/docs/examples/offer-window.xml
sed -e 's|<co:Nodes>32</co:Nodes>|<co:Nodes>4</co:Nodes>|' \
    -e 's|<co:Nodes>16</co:Nodes>|<co:Nodes>2</co:Nodes>|' "$EX" >"$T/small.xml"
sed -e 's|fh-brs|caesar|g' "$EX" >"$T/big.xml"
sed -i -e 's|fh-brs|caesar|g' "$T/small.xml"

# call METHOD PATH TOKEN [BODY_FILE]: the status; body in $T/body, headers in $T/head.
call() {
    local args=(-s -o "$T/body" -D "$T/head" -w '%{http_code}' -X "$1"
        -H "Authorization: Bearer $3" -H 'Accept: application/json')
    [ -n "${4:-}" ] && args+=(-H 'Content-Type: application/xml' --data-binary "@$4")
    curl "${args[@]}" "$URL$2"
}
# refused NAME STATUS ERROR REASON TOKEN [METHOD PATH BODY]: the answer is STATUS,
# its body and WWW-Authenticate's error_description say REASON, error=ERROR,
# and neither holds the token's signature.
refused() {
    local name=$1 status=$2 error=$3 reason=$4 token=$5
    local got
    got=$(call "${6:-GET}" "${7:-/agreements}" "$token" "${8:-}")
    [ "$got" = "$status" ] || { cat "$T/body"; fail "$name: HTTP $got, not $status"; }
    grep -qF "$reason" "$T/body" || { cat "$T/body"; fail "$name: the body does not say '$reason'"; }
    local www
    www=$(grep -i '^WWW-Authenticate:' "$T/head")
    case "$www" in
    *"error=\"$error\""*"error_description=\""*"$reason"*) ;;
    *) fail "$name: WWW-Authenticate is '$www', not error=$error with '$reason'" ;;
    esac
    local sig=${token##*.}
    if [ ${#sig} -gt 8 ] && grep -qF -- "$sig" "$T/body" "$T/head"; then
        fail "$name: the answer holds the token"
    fi
    echo "ok: $name: $status $reason"
}

# --- good tokens
GOOD=$(oidc_token accord-cc) || fail "no token from the provider"
got=$(call POST /agreements "$GOOD" "$T/small.xml")
[ "$got" = 201 ] || { cat "$T/body"; fail "a good token's offer: HTTP $got, not 201"; }
grep -q '"initiator": *"alice"' "$T/body" || { cat "$T/body"; fail "the agreement is not alice's"; }
echo "ok: a good RS256 token (mapped to alice by its group) books: 201"
got=$(call POST /agreements "$GOOD" "$T/big.xml")
[ "$got" = 403 ] && grep -q 'quota small' "$T/body" ||
    { cat "$T/body"; fail "alice's 48-node offer: HTTP $got, not 403 naming [quota small]"; }
echo "ok: alice is held to [quota small] (her map line's quota=)"
ES=$(oidc_token accord-es "compute.read") || fail "no ES256 token"
echo "${ES%%.*}" | base64 -d 2>/dev/null | grep -q '"alg":"ES256"' || fail "accord-es's token is not ES256"
got=$(call GET /agreements "$ES")
[ "$got" = 200 ] || { cat "$T/body"; fail "an ES256 token: HTTP $got, not 200"; }
grep -q alice "$T/body" && fail "accord-es (its own user by %u) sees alice's agreements"
echo "ok: an ES256 token is its own user (sub by %u), who sees none of alice's"
got=$(call GET /agreements "$STATIC")
[ "$got" = 200 ] || fail "the static token of [auth]: HTTP $got, not 200"
echo "ok: a static token of [auth] still works"

# --- refusals
refused "wrong audience" 401 invalid_token "wrong audience" \
    "$(oidc_token accord-cc "" https://other.test)"
SHORT=$(oidc_token accord-short) || fail "no short-lived token"
sleep 2
refused "expired" 401 invalid_token "the token has expired" "$SHORT"
refused "another key" 401 invalid_token "bad signature" "$(oidc_forge otherkey "$GOOD")"
refused "alg none" 401 invalid_token "alg none" "$(oidc_forge none "$GOOD")"
echo '{"kty":"RSA"}' >"$T/secret"
refused "HS256" 401 invalid_token "algorithm HS256 is not one" "$(oidc_forge hs256 "$GOOD" "$T/secret")"
refused "unknown issuer" 401 invalid_token "unknown issuer" \
    "$(oidc_forge claims "$GOOD" '{"iss":"https://idp.evil.example"}')"
READ=$(oidc_token accord-cc compute.read)
[ "$(call GET /agreements "$READ")" = 200 ] || fail "a compute.read token cannot read"
refused "missing scope" 403 insufficient_scope "missing scope compute.create" "$READ" \
    POST /agreements "$T/small.xml"
grep -qi '^WWW-Authenticate:.*scope="compute.create"' "$T/head" ||
    fail "the insufficient_scope challenge names no scope"
refused "unknown kid, provider up" 401 invalid_token "does not publish" \
    "$(oidc_forge newkid "$GOOD")"

# --- key rotation, without a restart (and across SIGHUP)
kill -HUP "$PID"
sleep 1.2 # jwks_refresh = 1
OLDKID=$(echo "${GOOD%%.*}" | base64 -d 2>/dev/null | sed -n 's/.*"kid":"\([^"]*\)".*/\1/p')
oidc_rotate >/dev/null || fail "the provider did not rotate its keys"
NEW=$(oidc_token accord-cc) || fail "no token after the rotation"
NEWKID=$(echo "${NEW%%.*}" | base64 -d 2>/dev/null | sed -n 's/.*"kid":"\([^"]*\)".*/\1/p')
[ -n "$NEWKID" ] && [ "$NEWKID" != "$OLDKID" ] || fail "the rotation gave no new kid ($OLDKID, $NEWKID)"
got=$(call GET /agreements "$NEW")
[ "$got" = 200 ] || { cat "$T/body"; fail "a token of the rotated key ($NEWKID): HTTP $got"; }
grep -q alice "$T/body" || fail "the rotated key's token is not alice's"
echo "ok: a key rotated at the provider ($OLDKID -> $NEWKID) is taken without a restart"

# --- provider down
oidc_stop
sleep 1.2
got=$(call GET /agreements "$NEW")
[ "$got" = 200 ] || { cat "$T/body"; fail "provider down: a cached key's token: HTTP $got"; }
echo "ok: provider down: the cached keys still verify"
got=$(call GET /agreements "$(oidc_forge newkid "$NEW")")
[ "$got" = 503 ] || { cat "$T/body"; fail "provider down, unknown kid: HTTP $got, not 503"; }
grep -qi '^Retry-After: *[0-9]' "$T/head" || fail "the 503 has no Retry-After"
grep -q "cannot be asked" "$T/body" || { cat "$T/body"; fail "the 503 does not say why"; }
echo "ok: provider down: an unknown kid is 503 with Retry-After"
kill -0 "$PID" || fail "accordd is gone"
echo "PASS"
