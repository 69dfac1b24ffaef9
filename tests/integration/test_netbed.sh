#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test_netbed.sh - the namespace testbed (tools/netbed.sh): up and down twice,
# status, ping across sites, the shaped capacity (one flow alone gets 80-105 %
# of CAP, measured with accord-flowgen), and that down leaves nothing behind
# (namespaces, veths, the root route, files, processes).  Root only; brings the
# testbed down again however it ends.  ctest: test_netbed (RESOURCE_LOCK netbed).
#
#   tests/integration/test_netbed.sh PATH/TO/accord-flowgen
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
NETBED=$SRC/tools/netbed.sh
FLOWGEN=${1:?usage: $0 PATH/TO/accord-flowgen}
CAP_MBIT=200
export CAP=${CAP_MBIT}mbit
# shellcheck source=../support/checks.sh
. "$SRC/tests/support/checks.sh"
check() { # DESCRIPTION COMMAND...  (a failure shows what the command said)
    local what=$1 out
    shift
    if out=$("$@" 2>&1); then
        ok "$what"
    else
        bad "$what"
        [ -z "$out" ] || sed 's/^/    | /' <<<"$out" | tail -n 20
    fi
}

[ "$(id -u)" = 0 ] || { echo "test_netbed: needs root"; exit 1; }
command -v ping >/dev/null || { echo "test_netbed: ping missing (apt-get install -y iputils-ping)"; exit 1; }
# One user of the testbed at a time on this machine (its names are fixed): the
# lock every testbed user takes, held until this script exits.
exec 9>/run/lock/accord-netbed.lock
flock -w 900 9 || { echo "test_netbed: the testbed stayed in use (/run/lock/accord-netbed.lock)"; exit 1; }
trap '"$NETBED" down >/dev/null 2>&1' EXIT

NAMESPACES="acc-wan acc-gw-alpha acc-gw-beta acc-gw-gamma acc-alpha1 acc-alpha2 acc-beta1 acc-beta2 acc-gamma1 acc-gamma2"

nothing_left() {
    local ns
    for ns in $NAMESPACES; do
        if [ -e "/run/netns/$ns" ]; then echo "namespace $ns left"; return 1; fi
    done
    if [ -e /sys/class/net/nbw0 ]; then echo "veth nbw0 left"; return 1; fi
    if [ -n "$(ip -4 route show 10.79.0.0/16)" ]; then echo "route left"; return 1; fi
    if [ -e /run/accord-netbed ]; then echo "/run/accord-netbed left"; return 1; fi
    return 0
}

capacity() { # the goodput of one flow alpha-n1 -> beta-n1, alone, in Mbit/s
    local spid out
    ip netns exec acc-beta1 "$FLOWGEN" serve 5301 >/dev/null 2>&1 &
    spid=$!
    sleep 0.3
    out=$(ip netns exec acc-alpha1 "$FLOWGEN" send 10.79.2.11 5301 --seconds 4)
    kill -TERM "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null
    sed -n 's/^RESULT mbit_s=\([0-9.]*\).*/\1/p' <<<"$out"
}

round() { # N
    local r=$1 mbit st
    echo "== round $r"
    check "round $r: up" "$NETBED" up
    if [ "$r" = 1 ]; then
        check "round $r: up again (idempotent, cleans the first)" "$NETBED" up
    fi
    "$NETBED" status >/tmp/netbed-status.$$ 2>&1
    st=$?
    if [ "$st" = 0 ]; then ok "round $r: status says up"; else bad "round $r: status exit $st"; fi
    check "round $r: status lists the shaped uplinks" grep -q "acc-gw-beta/up0: 1:9999 rate 1Mbit ceil 200Mbit; 1:1 rate 200Mbit ceil 200Mbit" /tmp/netbed-status.$$
    rm -f /tmp/netbed-status.$$
    check "round $r: ns-map maps gamma-n2" grep -qx "gamma-n2 acc-gamma2" /run/accord-netbed/ns-map
    check "round $r: ping alpha-n1 -> beta-n1" ip netns exec acc-alpha1 ping -c 1 -W 2 10.79.2.11
    check "round $r: ping beta-n2 -> gamma-n2" ip netns exec acc-beta2 ping -c 1 -W 2 10.79.3.12
    check "round $r: ping root -> alpha-n2" ping -c 1 -W 2 10.79.1.12
    check "round $r: netbed-ssh runs in the host's namespace" \
        sh -c "'$SRC/tools/netbed-ssh' -x gamma-n1 ip -4 addr show dev eth0 | grep -q 10.79.3.11/24"
    check "round $r: tc root tree on acc-wan/to-alpha" \
        sh -c "tc -n acc-wan qdisc show dev to-alpha | grep -q 'htb 1: root.*default 0x9999'"
    mbit=$(capacity)
    if [ -n "$mbit" ] && awk -v m="$mbit" -v c="$CAP_MBIT" 'BEGIN { exit !(m >= 0.80 * c && m <= 1.05 * c) }'; then
        ok "round $r: one flow alone gets $mbit Mbit/s of $CAP_MBIT"
    else
        bad "round $r: one flow alone gets '${mbit:-nothing}' Mbit/s, expected 80-105 % of $CAP_MBIT"
    fi
    # A process left in a namespace must not keep it alive: down kills it.
    ip netns exec acc-gamma2 "$FLOWGEN" serve 5302 >/dev/null 2>&1 &
    local left=$!
    sleep 0.2
    local said
    if said=$("$NETBED" down 2>&1); then ok "round $r: down"; else bad "round $r: down"; fi
    # Every namespace of its own list is recognised (a pipeline "all_ns | grep
    # -q" under pipefail once skipped one at random: SIGPIPE made it fail).
    if grep -q "skipping" <<<"$said"; then
        bad "round $r: down skipped part of its own list"
        sed 's/^/    | /' <<<"$said"
    else
        ok "round $r: down recognised every namespace it made"
    fi
    sleep 0.1
    if kill -0 "$left" 2>/dev/null; then
        bad "round $r: down left a process running in acc-gamma2"
        kill -KILL "$left" 2>/dev/null
    else
        ok "round $r: down ended the process left in acc-gamma2"
    fi
    wait "$left" 2>/dev/null
    check "round $r: down leaves nothing behind" nothing_left
    "$NETBED" status >/dev/null 2>&1
    st=$?
    if [ "$st" = 3 ]; then ok "round $r: status says down"; else bad "round $r: status after down: exit $st"; fi
    check "round $r: down again (idempotent)" "$NETBED" down
}

round 1
round 2
check "a bad CAP is refused and changes nothing" sh -c "! CAP=fast '$NETBED' up && [ ! -e /run/netns/acc-wan ]"
checks_summary test_netbed
