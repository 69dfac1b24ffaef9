#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The web page (/ui/) in a real browser: a real accordd on the embedded
# testbed with [auth] (alice, bob, an admin), Debian's chromium headless
# driven by playwright-core (tests/browser/ui.test.mjs); and what a page of
# another site can do to a second one as the quick start runs it, loopback
# without [auth] (tests/browser/hostile.test.mjs).  The screenshots of
# each view go to BUILD_DIR/ui-screenshots/ui-*.png, or to $ACCORD_UI_SHOTS:
# the ones in docs/img (README, docs/ui.md) are refreshed with
#
#   ACCORD_UI_SHOTS=docs/img tests/browser/test_ui.sh build
#
#   tests/browser/test_ui.sh BUILD_DIR
#
# playwright-core and axe-core (the accessibility checks, tests/browser/a11y.mjs)
# are installed with `npm ci` from tests/browser/package-lock.json
# into BUILD_DIR/browser-node (never into the source tree); npm's cache is
# used when it has the package.
set -u
BUILD=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd) || exit 1
HERE=$(cd "$(dirname "$0")" && pwd)
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
for need in node npm curl "$CHROMIUM"; do
    command -v "$need" >/dev/null || { echo "FAIL: $need is not installed (quickstart.sh test installs it)"; exit 1; }
done

TMP=$(mktemp -d) || exit 1
PID=
OPEN_PID=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    [ -n "$OPEN_PID" ] && kill "$OPEN_PID" 2>/dev/null && wait "$OPEN_PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# playwright-core and axe-core, pinned by the lock file.
NODE_DIR=$BUILD/browser-node
# shellcheck source=tests/browser/node.sh
. "$HERE/node.sh"
browser_node "$HERE" "$NODE_DIR" "$TMP" || exit 1

# accordd: the embedded testbed with three users.
cat >"$TMP/tokens" <<'EOF'
alice alice-token-0123456789abcdef
bob bob-token-0123456789abcdef0
ops ops-token-0123456789abcdef0 admin
EOF
chmod 600 "$TMP/tokens"
"$BUILD/accordd" --print-config >"$TMP/accord.ini" || exit 1
printf '\n[auth]\ntokens = %s/tokens\n' "$TMP" >>"$TMP/accord.ini"
# listening DIR: the URL accordd (started in DIR, its output in
# DIR/accordd.out) says it listens on, waiting up to 10 s for it.
listening() {
    local url=
    for _ in $(seq 100); do
        url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$1/accordd.out")
        [ -n "$url" ] && break
        sleep 0.1
    done
    [ -n "$url" ] || { cat "$1/accordd.log" >&2; return 1; }
    echo "$url"
}

(cd "$TMP" && exec "$BUILD/accordd" --config accord.ini --listen 127.0.0.1:0 \
    >"$TMP/accordd.out" 2>"$TMP/accordd.log") &
PID=$!
URL=$(listening "$TMP") || { echo "FAIL: accordd did not start"; exit 1; }

# A second accordd as the quick start runs it: loopback, no [auth]; what a
# page of another site can do to it (tests/browser/hostile.test.mjs).
mkdir -p "$TMP/open"
(cd "$TMP/open" && exec "$BUILD/accordd" --listen 127.0.0.1:0 \
    >"$TMP/open/accordd.out" 2>"$TMP/open/accordd.log") &
OPEN_PID=$!
OPEN_URL=$(listening "$TMP/open") || { echo "FAIL: the second accordd did not start"; exit 1; }

SHOTS=${ACCORD_UI_SHOTS:-$BUILD/ui-screenshots}
mkdir -p "$SHOTS" "$TMP/profile"
SHOTS=$(cd "$SHOTS" && pwd)
rc=0
(cd "$TMP" && NODE_DIR=$NODE_DIR ACCORD_URL=$URL CHROMIUM=$CHROMIUM \
    PROFILE=$TMP/profile SHOTS=$SHOTS ALICE=alice-token-0123456789abcdef \
    BOB=bob-token-0123456789abcdef0 OPS=ops-token-0123456789abcdef0 \
    node "$HERE/ui.test.mjs") || rc=1
mkdir -p "$TMP/profile-open"
(cd "$TMP" && NODE_DIR=$NODE_DIR OPEN_URL=$OPEN_URL CHROMIUM=$CHROMIUM \
    PROFILE=$TMP/profile-open DB=$TMP/open/accord.db EVIL=$TMP/evil.xml \
    node "$HERE/hostile.test.mjs") || rc=1
# Under ASan and UBSan (the sanitizer build's run), accordd's log holds
# any report, leaks once it has stopped.
kill "$PID" "$OPEN_PID" 2>/dev/null
wait "$PID" "$OPEN_PID" 2>/dev/null
PID= OPEN_PID=
if grep -q "AddressSanitizer\|LeakSanitizer\|runtime error:" "$TMP/accordd.log" "$TMP/open/accordd.log"; then
    echo "FAIL: a sanitizer report in accordd's log"
    rc=1
fi
if [ $rc != 0 ]; then
    echo "--- accordd's log"
    tail -30 "$TMP/accordd.log"
    echo "--- the second (loopback, no [auth]) accordd's log"
    tail -30 "$TMP/open/accordd.log"
fi
exit $rc
