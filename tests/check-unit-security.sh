#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# check-unit-security.sh - systemd-analyze security --offline rates the
# package's units at most 2.0 ("OK"): accordd.service, accord-site.service,
# and accordd.service with the launch drop-in (debian/examples/accordd-
# launch.conf: root with no capability, its jobs in units of their own;
# docs/launch.md).  Found by name under debian/, whatever the package calls
# them.  Needs systemd-analyze (systemd 252 or later), not root.
#
# Usage: tests/check-unit-security.sh [SOURCE_DIR]   exit 0: all at most 2.0
set -u
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
command -v systemd-analyze >/dev/null || { echo "check-unit-security: no systemd-analyze"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0

# rate NAME FILE...: the files joined as one unit NAME.service (a drop-in's
# lines come after the unit's and win), rated offline.
rate() {
    local name=$1 score
    shift
    cat "$@" | sed '/^\[Install\]/,/^\[Service\]/{/^\[Service\]/!d}' >"$tmp/$name.service"
    score=$(cd "$tmp" && systemd-analyze security --offline=yes --no-pager "$name.service" 2>&1 |
        sed -n "s/.*Overall exposure level for $name.service: \([0-9.]*\).*/\1/p")
    if [ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s + 0 <= 2.0) }'; then
        echo "ok: $name: exposure $score"
    else
        echo "FAIL: $name: exposure ${score:-unknown}, more than 2.0"
        (cd "$tmp" && systemd-analyze security --offline=yes --no-pager "$name.service" 2>&1 |
            grep -v '✓' | tail -n 30)
        status=1
    fi
}

accordd=$(ls "$src"/debian/*accordd.service 2>/dev/null | head -1)
site=$(ls "$src"/debian/*accord-site.service 2>/dev/null | head -1)
[ -n "$accordd" ] && [ -n "$site" ] || { echo "FAIL: the units are not in $src/debian"; exit 1; }
rate accordd "$accordd"
rate accord-site "$site"
rate accordd-launch "$accordd" "$src/debian/examples/accordd-launch.conf"
exit $status
