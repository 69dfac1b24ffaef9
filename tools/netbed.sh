#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# netbed.sh - a testbed with real, shaped links for Accord's tc network adapter:
# three sites (alpha, beta, gamma) of two hosts each, as network namespaces,
# behind one WAN router namespace, with emulated uplinks of capacity CAP.
#
# Usage (root only):
#   tools/netbed.sh up       build it (first removes the leftovers of an earlier run)
#   tools/netbed.sh down     remove exactly what "up" made; kills processes left
#                            in its namespaces; idempotent (nothing to do: exit 0)
#   tools/netbed.sh status   print the layout and the shaping; exit 0 when the whole
#                            testbed is up, 3 when nothing of it exists, 1 when partial
# Environment: CAP  the uplink capacity as a tc rate (default 200mbit; e.g. 100mbit,
#                   1gbit); veth alone runs at about 20 Gbit/s, so nothing would compete
#
# Layout (names and addresses are fixed: configurations and tests use them):
#   root ns    nbw0  10.79.0.1/30 (mpiexec runs here: Hydra -localhost 10.79.0.1);
#              route 10.79.0.0/16 via 10.79.0.2
#   acc-wan    the WAN router: root0 10.79.0.2/30; to-S 10.79.(100+k).1/30 per site
#   acc-gw-S   site S's gateway (alpha k=1, beta k=2, gamma k=3): bridge br0
#              10.79.k.1/24 with ports h1, h2; uplink up0 10.79.(100+k).2/30
#   acc-S1/2   site S's hosts S-n1, S-n2: eth0 10.79.k.11 / 10.79.k.12, via 10.79.k.1
# Shaping: an HTB root tree on acc-gw-S/up0 (traffic leaving S) and on acc-wan/to-S
# (traffic entering S), the tree Accord's tc adapter expects and adds leaves to:
#   qdisc 1: htb default 9999
#   class 1:1    rate CAP ceil CAP                      quantum 15140
#   class 1:9999 rate 1mbit ceil CAP prio 1 (best effort, quantum 15140)
# Files in /run/accord-netbed:
#   ns-map      "HOST NETNS" lines (alpha-n1 acc-alpha1, ...), read by tools/netbed-ssh
#   namespaces  the namespaces made, each recorded BEFORE it is made, so "down"
#               also removes what a crashed "up" left, and nothing else
#   cap         the capacity the uplinks were shaped to
# One testbed per machine: its names are fixed, and "up" first removes whatever
# testbed exists.  Programs that use it (tests, benchmarks) hold the lock
# /run/lock/accord-netbed.lock (flock) from before "up" until after "down", so
# that runs from several build trees wait for each other instead of tearing
# down each other's testbed:
#   exec 9>/run/lock/accord-netbed.lock && flock -w 900 9     (in a script), or
#   flock /run/lock/accord-netbed.lock CMD                    (around a command)
# netbed.sh itself does not take it (it is called inside that lock).
set -Eeuo pipefail

readonly DIR=/run/accord-netbed
readonly SITES=(alpha beta gamma)
readonly BE=9999
readonly QUANTUM=15140
CAP=${CAP:-200mbit}
PROG=${0##*/}

die() {
    echo "$PROG: error: $*" >&2
    exit 1
}
usage() {
    echo "usage: [CAP=200mbit] $PROG up | down | status" >&2
    exit 2
}

ns_exists() { [ -e "/run/netns/$1" ]; }

# Every namespace the testbed consists of, in creation order.
all_ns() {
    local s
    echo acc-wan
    for s in "${SITES[@]}"; do
        echo "acc-gw-$s"
        echo "acc-${s}1"
        echo "acc-${s}2"
    done
}

pids_in() {
    local ns
    for ns in "$@"; do
        ns_exists "$ns" && ip netns pids "$ns" 2>/dev/null
    done
    return 0
}

# TERM what still runs in the namespaces (flowgen, MPI ranks, a hydra_pmi_proxy
# whose mpiexec died spins at 100 % CPU), wait up to 2 s, then KILL.  A namespace
# still used by a process would outlive "ip netns del" with its veths and addresses.
kill_ns_pids() {
    local pids
    pids=$(pids_in "$@")
    [ -n "$pids" ] || return 0
    echo "$PROG: killing processes left in the testbed: ${pids//$'\n'/ }" >&2
    # shellcheck disable=SC2086 # split the PID list on purpose
    kill -TERM $pids 2>/dev/null || true
    for _ in $(seq 20); do
        pids=$(pids_in "$@")
        [ -n "$pids" ] || return 0
        sleep 0.1
    done
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    for _ in $(seq 20); do
        [ -n "$(pids_in "$@")" ] || return 0
        sleep 0.1
    done
    echo "$PROG: warning: processes still alive after SIGKILL" >&2
}

# Waits (up to 20 s) until our nbw0 is gone, deleting it ourselves after 5 s;
# a link of that name that is not ours is left alone.
gone_nbw0() {
    local i
    for i in $(seq 400); do
        [ -e /sys/class/net/nbw0 ] || return 0
        [ "$(cat /sys/class/net/nbw0/ifalias 2>/dev/null)" = accord-netbed ] || return 0
        # it may vanish between the test and the deletion: not an error
        [ "$i" != 100 ] || ip link del nbw0 2>/dev/null || true
        sleep 0.05
    done
    echo "$PROG: warning: nbw0 is still there after 20 s" >&2
}

down() {
    local ns
    local -a mine=()
    if [ -f "$DIR/namespaces" ]; then
        while read -r ns; do
            # Only names of the layout: a corrupted list never deletes anything else.
            if [ -n "$ns" ] && grep -qx -- "$ns" <<<"$(all_ns)"; then
                mine+=("$ns")
            elif [ -n "$ns" ]; then
                echo "$PROG: skipping odd entry '$ns' in $DIR/namespaces" >&2
            fi
        done <"$DIR/namespaces"
    fi
    if [ ${#mine[@]} -gt 0 ]; then
        kill_ns_pids "${mine[@]}"
        for ns in "${mine[@]}"; do
            if ns_exists "$ns"; then
                ip netns del "$ns"
            fi
        done
        # The kernel dismantles a deleted namespace asynchronously; nbw0 (root side
        # of acc-wan's veth) goes with it some milliseconds later, seconds on a busy
        # machine.  Wait, so that an "up" right after this does not find it.
        gone_nbw0
    fi
    rm -f "$DIR/ns-map" "$DIR/ns-map.tmp" "$DIR/namespaces" "$DIR/cap"
    rmdir "$DIR" 2>/dev/null || true
}

# The HTB root tree of one device (design: Accord's tc adapter adds leaves 1:N).
shape() { # NS DEV
    tc -n "$1" qdisc add dev "$2" root handle 1: htb default $BE
    tc -n "$1" class add dev "$2" parent 1: classid 1:1 htb rate "$CAP" ceil "$CAP" quantum $QUANTUM
    tc -n "$1" class add dev "$2" parent 1:1 classid 1:$BE htb rate 1mbit ceil "$CAP" prio 1 \
        quantum $QUANTUM
}

forwarding() { ip netns exec "$1" sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward'; }

new_ns() {
    echo "$1" >>"$DIR/namespaces" # recorded first: see the header
    ip netns add "$1"
    ip -n "$1" link set lo up
}

up() {
    local ns k s gw h
    [[ $CAP =~ ^[1-9][0-9]{0,6}(kbit|mbit|gbit)$ ]] ||
        die "bad CAP '$CAP' (a tc rate such as 200mbit, 50000kbit or 1gbit)"
    mkdir -p "$DIR"
    down # the leftovers of an earlier run
    mkdir -p "$DIR"
    while read -r ns; do
        ! ns_exists "$ns" || die "namespace $ns exists but was not made by $PROG;" \
            "remove it ('ip netns del $ns') first"
    done < <(all_ns)
    gone_nbw0 # one of ours still being dismantled by the kernel
    [ ! -e /sys/class/net/nbw0 ] || die "link nbw0 exists but was not made by $PROG"
    if [ -n "$(ip -4 route show 10.79.0.0/16)" ]; then
        die "the root namespace already has a route for 10.79.0.0/16"
    fi

    # From here a failure leaves a partial testbed that "down" removes.
    trap 'echo "$PROG: up failed, cleaning up" >&2; down' ERR
    : >"$DIR/namespaces"

    new_ns acc-wan
    forwarding acc-wan
    ip link add nbw0 type veth peer name root0 netns acc-wan
    ip link set nbw0 alias accord-netbed
    ip addr add 10.79.0.1/30 dev nbw0
    ip link set nbw0 up
    ip -n acc-wan addr add 10.79.0.2/30 dev root0
    ip -n acc-wan link set root0 up
    ip route add 10.79.0.0/16 via 10.79.0.2 dev nbw0

    : >"$DIR/ns-map.tmp"
    k=0
    for s in "${SITES[@]}"; do
        k=$((k + 1))
        gw=acc-gw-$s
        new_ns "$gw"
        forwarding "$gw"
        ip -n "$gw" link add br0 type bridge
        ip -n "$gw" addr add "10.79.$k.1/24" dev br0
        ip -n "$gw" link set br0 up
        ip -n acc-wan link add "to-$s" type veth peer name up0 netns "$gw"
        ip -n acc-wan addr add "10.79.$((100 + k)).1/30" dev "to-$s"
        ip -n acc-wan link set "to-$s" up
        ip -n "$gw" addr add "10.79.$((100 + k)).2/30" dev up0
        ip -n "$gw" link set up0 up
        ip -n acc-wan route add "10.79.$k.0/24" via "10.79.$((100 + k)).2"
        ip -n "$gw" route add default via "10.79.$((100 + k)).1"
        for h in 1 2; do
            ns=acc-$s$h
            new_ns "$ns"
            ip -n "$gw" link add "h$h" type veth peer name eth0 netns "$ns"
            ip -n "$gw" link set "h$h" master br0 up
            ip -n "$ns" addr add "10.79.$k.$((10 + h))/24" dev eth0
            ip -n "$ns" link set eth0 up
            ip -n "$ns" route add default via "10.79.$k.1"
            echo "$s-n$h $ns" >>"$DIR/ns-map.tmp"
        done
        shape "$gw" up0
        shape acc-wan "to-$s"
    done
    echo "$CAP" >"$DIR/cap"
    # Published last: a reader never sees half a testbed.
    mv "$DIR/ns-map.tmp" "$DIR/ns-map"
    trap - ERR
    echo "$PROG: up: sites ${SITES[*]} (2 hosts each), uplinks $CAP" >&2
}

status() {
    local ns n=0 have=0 s k
    while read -r ns; do
        n=$((n + 1))
        ns_exists "$ns" && have=$((have + 1))
    done < <(all_ns)
    if [ "$have" -eq 0 ] && [ ! -e "$DIR/ns-map" ]; then
        echo "netbed: down"
        return 3
    fi
    echo "netbed: $have of $n namespaces, uplinks $(cat "$DIR/cap" 2>/dev/null || echo '?')"
    ip -br addr show dev nbw0 2>/dev/null || echo "nbw0: missing"
    k=0
    for s in "${SITES[@]}"; do
        k=$((k + 1))
        for ns in "acc-gw-$s" "acc-${s}1" "acc-${s}2"; do
            if ns_exists "$ns"; then
                printf '%-12s %s\n' "$ns" "$(ip -n "$ns" -br -4 addr | awk '$1 != "lo" {printf "%s %s  ", $1, $3}')"
            else
                printf '%-12s missing\n' "$ns"
            fi
        done
        for ns in "acc-gw-$s up0" "acc-wan to-$s"; do
            set -- $ns
            if ns_exists "$1"; then
                printf '  %s/%s: %s\n' "$1" "$2" \
                    "$(tc -n "$1" class show dev "$2" 2>/dev/null | awk '{ for (i = 4; i < NF; i++) { if ($i == "rate") r = $(i + 1); if ($i == "ceil") c = $(i + 1) }
                        printf "%s rate %s ceil %s; ", $3, r, c }')"
            fi
        done
    done
    [ -r "$DIR/ns-map" ] && echo "ns-map: $(tr '\n' ' ' <"$DIR/ns-map")"
    if [ "$have" -eq "$n" ] && [ -r "$DIR/ns-map" ]; then
        return 0
    fi
    return 1
}

[ $# -eq 1 ] || usage
case $1 in
up | down) ;;
status) ;;
*) usage ;;
esac
[ "$(id -u)" = 0 ] || die "must run as root (it makes network namespaces, veths and tc qdiscs)"
command -v ip >/dev/null 2>&1 || die "'ip' not found: apt-get install -y iproute2"
command -v tc >/dev/null 2>&1 || die "'tc' not found: apt-get install -y iproute2"
case $1 in
up) up ;;
down) down ;;
status)
    rc=0
    status || rc=$?
    exit "$rc"
    ;;
esac
