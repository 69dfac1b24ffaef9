#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The web page signs in with OpenID Connect (docs/ui.md): a real OpenID
# provider (tests/oidc: oidc-provider from npm on loopback HTTPS, keys and
# certificate made for the run), accordd with [ui] oidc_issuer naming it and
# the provider's public client accord-ui, and Debian's chromium driven by
# playwright-core (tests/browser/oidc.test.mjs): sign in through the
# provider's login page, book an offer with the token, see it, sign out.
#
#   tests/browser/test_ui_oidc.sh BUILD_DIR
#
# accordd takes the provider's tokens ([issuer test], every subject its own
# user) and a static token ([auth] tokens: dave's, pasted into the page).
set -u
BUILD=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd) || exit 1
HERE=$(cd "$(dirname "$0")" && pwd)
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
for need in node npm curl openssl "$CHROMIUM"; do
    command -v "$need" >/dev/null || { echo "FAIL: $need is not installed (quickstart.sh test installs it)"; exit 1; }
done
# shellcheck source=tests/oidc/oidc.sh
. "$HERE/../oidc/oidc.sh"

TMP=$(mktemp -d) || exit 1
PID=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    oidc_stop
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

NODE_DIR=$BUILD/browser-node
. "$HERE/node.sh"
browser_node "$HERE" "$NODE_DIR" "$TMP" || exit 1

oidc_start "$BUILD" "$TMP" || { echo "FAIL: the OpenID provider did not start"; exit 1; }

SCOPE="openid compute.read compute.create compute.modify compute.cancel"
STATIC=dave-token-0123456789abcdef
(umask 077 && printf 'dave %s\n' "$STATIC" >"$TMP/tokens")
"$BUILD/accordd" --print-config >"$TMP/accord.ini" || exit 1
cat >>"$TMP/accord.ini" <<CONF

[auth]
tokens = $TMP/tokens

[issuer test]
url = $OIDC_ISSUER
audience = https://accord.example
ca_file = $OIDC_CA
map = * %u

[ui]
oidc_issuer = $OIDC_ISSUER
oidc_client_id = accord-ui
oidc_scope = $SCOPE
CONF
(cd "$TMP" && exec "$BUILD/accordd" --config accord.ini --listen 127.0.0.1:0 \
    >"$TMP/accordd.out" 2>"$TMP/accordd.log") &
PID=$!
URL=
for _ in $(seq 100); do
    URL=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$TMP/accordd.out")
    [ -n "$URL" ] && break
    sleep 0.1
done
[ -n "$URL" ] || { cat "$TMP/accordd.log"; echo "FAIL: accordd did not start"; exit 1; }

mkdir -p "$TMP/profile"
SHOTS=${ACCORD_UI_SHOTS:-$BUILD/ui-screenshots}
mkdir -p "$SHOTS"
rc=0
(cd "$TMP" && NODE_DIR=$NODE_DIR ACCORD_URL=$URL CHROMIUM=$CHROMIUM PROFILE=$TMP/profile \
    SHOTS=$(cd "$SHOTS" && pwd) OIDC_ISSUER=$OIDC_ISSUER OIDC_SCOPE=$SCOPE STATIC=$STATIC \
    node "$HERE/oidc.test.mjs") || rc=1
kill "$PID" 2>/dev/null
wait "$PID" 2>/dev/null
PID=
if grep -q "AddressSanitizer\|LeakSanitizer\|runtime error:" "$TMP/accordd.log"; then
    echo "FAIL: a sanitizer report in accordd's log"
    rc=1
fi
if [ $rc != 0 ]; then
    echo "--- accordd's log"
    tail -30 "$TMP/accordd.log"
    echo "--- the provider's log"
    tail -30 "$TMP/oidc.log"
fi
exit $rc
