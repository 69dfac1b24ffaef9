#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# netns-sites.sh - emulate several sites (clusters) on one Linux host, one
# network namespace per site, for Accord's real-MPI launch tests.  Adapted from
# the measured lab example (shared/lab/mpi/sites.sh).
#
# Usage:  netns-sites.sh up DIR SITE...    e.g.  up /tmp/nstest sitea siteb sitec
#         netns-sites.sh down DIR
#
# Layout (PREFIX 10.78.0; the lab used 10.77.0, so both can coexist):
#   root ns     bridge accbr0 = 10.78.0.1/24  (mpiexec runs here: -localhost 10.78.0.1)
#   acc-<site>  eth0 = 10.78.0.11/24, .12, ... in the order the sites are given;
#               default route via 10.78.0.1; its peer in the root ns is the
#               bridge port acv-<site> (byte counters: /sys/class/net/acv-<site>/statistics)
#
# Files written under DIR:
#   ns-map      "<host> <netns>" for <site>-n1 .. <site>-n4, the names Accord gives
#               the hosts of a site configured with "hosts = <site>-n[1-4]"; read
#               by tests/mpi/nsssh (NSSSH_MAP=DIR/ns-map).  Names are NOT put in
#               /etc/hosts: Hydra needs no name resolution when -localhost is given.
#   namespaces  the namespaces this script created for DIR, one a line.  Each is
#               recorded BEFORE it is created, so "down DIR" also removes the
#               leftovers of a run that crashed half-way, and never touches a
#               namespace it did not create.
#   bridge      present while this DIR owns the bridge (recorded the same way).
# The bridge and every veth carry the alias "accord-netns-sites:DIR" (ip -d link
# shows it), so a second run can tell whose they are.
#
# "up" first runs "down DIR" (leftovers of an earlier crashed run with the same
# DIR), and refuses to start when another DIR's sites are still up.  "down" is
# idempotent: with nothing to remove it exits 0.
set -Eeuo pipefail # -E: the ERR trap of up() also fires inside functions

readonly BR=accbr0
readonly PREFIX=10.78.0
readonly FIRST_HOST=11   # site k (0-based) gets $PREFIX.$((FIRST_HOST + k))
readonly NODES_PER_SITE=4

PROG=${0##*/}
die() { echo "$PROG: error: $*" >&2; exit 1; }
usage() {
    echo "usage: $PROG up DIR SITE... | $PROG down DIR" >&2
    exit 2
}

[ "$(id -u)" = 0 ] || die "must run as root (creates network namespaces, veths and a bridge)"
command -v ip >/dev/null 2>&1 || die "'ip' not found: install iproute2 (apt-get install -y iproute2)"

# Absolute DIR, so that the alias written by "up" matches the one "down" compares.
absdir() {
    case "$1" in
    /*) printf '%s\n' "${1%/}" ;;
    *) printf '%s/%s\n' "$(pwd)" "${1%/}" ;;
    esac
}

alias_of() { cat "/sys/class/net/$1/ifalias" 2>/dev/null || true; }

owner_of() { # owner_of LINK: the DIR named in the link's alias, empty if none / not ours
    local alias
    alias=$(alias_of "$1")
    case "$alias" in
    accord-netns-sites:*) printf '%s\n' "${alias#accord-netns-sites:}" ;;
    esac
}

ns_exists() { [ -e "/run/netns/$1" ]; }

pids_in() { # pids_in NS...: the PIDs of all processes in those namespaces
    local ns
    for ns in "$@"; do
        ns_exists "$ns" && ip netns pids "$ns" 2>/dev/null
    done
    return 0
}

# TERM every process left in the namespaces, wait up to 2 s, then KILL the rest.
# "ip netns del" only unmounts the name: a namespace still used by a process
# (an orphaned MPI rank or hydra_pmi_proxy, which spins at 100 % CPU once its
# mpiexec is gone) would live on, keep its veth and hold its address.
# All namespaces at once, so the grace period is paid once, not per site.
kill_ns_pids() {
    local pids
    pids=$(pids_in "$@")
    [ -n "$pids" ] || return 0
    echo "$PROG: killing processes left in $*: ${pids//$'\n'/ }" >&2
    # shellcheck disable=SC2086 # split the PID list on purpose
    kill -TERM $pids 2>/dev/null || true
    for _ in $(seq 20); do
        pids=$(pids_in "$@")
        [ -n "$pids" ] || return 0
        sleep 0.1
    done
    echo "$PROG: still alive after SIGTERM, sending SIGKILL: ${pids//$'\n'/ }" >&2
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    for _ in $(seq 20); do
        [ -n "$(pids_in "$@")" ] || return 0
        sleep 0.1
    done
    echo "$PROG: warning: processes still alive after SIGKILL in $*" >&2
}

down() {
    local dir=$1 ns veth
    local -a mine=()
    if [ -f "$dir/namespaces" ]; then
        while read -r ns; do
            case "$ns" in
            "") ;;
            acc-*) mine+=("$ns") ;;
            *) echo "$PROG: skipping odd entry '$ns' in $dir/namespaces" >&2 ;;
            esac
        done <"$dir/namespaces"
    fi
    if [ ${#mine[@]} -gt 0 ]; then
        kill_ns_pids "${mine[@]}"
        for ns in "${mine[@]}"; do
            if ns_exists "$ns"; then
                ip netns del "$ns"
            fi
        done
        # The kernel dismantles a deleted namespace asynchronously: its veth pair
        # disappears some milliseconds after "ip netns del".  Wait for that, or an
        # "up" right after this could find acv-<site> still there (seen in crash tests).
        for ns in "${mine[@]}"; do
            veth=acv-${ns#acc-}
            for _ in $(seq 50); do
                [ -e "/sys/class/net/$veth" ] || break
                sleep 0.05
            done
            if [ -e "/sys/class/net/$veth" ] && [ "$(owner_of "$veth")" = "$dir" ]; then
                ip link del "$veth" 2>/dev/null || [ ! -e "/sys/class/net/$veth" ]
            fi
        done
    fi
    # Ours: it carries our alias, or it has none and we had recorded it (a crash
    # between "ip link add" and "ip link set alias": the kernel ignores an alias
    # given to "ip link add").
    if [ -e "/sys/class/net/$BR" ]; then
        if [ "$(owner_of "$BR")" = "$dir" ] ||
            { [ -z "$(alias_of "$BR")" ] && [ -f "$dir/bridge" ]; }; then
            ip link del "$BR"
        fi
    fi
    rm -f "$dir/ns-map" "$dir/ns-map.tmp" "$dir/namespaces" "$dir/bridge"
}

check_site() {
    # <site>-nK must be a host name; acv-<site> must fit IFNAMSIZ (15 characters).
    [[ $1 =~ ^[a-z0-9][a-z0-9-]{0,10}$ ]] ||
        die "bad site name '$1' (1-11 characters: lower-case letters, digits, '-')"
}

up() {
    local dir=$1 i site ns veth ip owner
    shift
    [ $# -ge 1 ] || usage
    [ $# -le $((254 - FIRST_HOST + 1)) ] || die "too many sites ($#)"
    for site in "$@"; do check_site "$site"; done
    [ "$(printf '%s\n' "$@" | sort | uniq -d)" = "" ] || die "a site name is given twice"

    mkdir -p "$dir"
    down "$dir" # leftovers of an earlier run with this DIR

    if [ -e "/sys/class/net/$BR" ]; then
        owner=$(owner_of "$BR")
        die "bridge $BR already exists (owner: ${owner:-not this script});" \
            "run '$PROG down ${owner:-DIR}' or 'ip link del $BR'"
    fi
    for site in "$@"; do
        ! ns_exists "acc-$site" || die "namespace acc-$site already exists, not created for $dir;" \
            "remove it ('ip netns del acc-$site') or use another site name"
        [ ! -e "/sys/class/net/acv-$site" ] || die "link acv-$site already exists"
    done

    # From here on a failure leaves a partial setup that "down DIR" removes.
    trap 'echo "$PROG: up failed, cleaning up" >&2; down "$dir"' ERR

    echo "$BR" >"$dir/bridge" # recorded first, like the namespaces
    ip link add "$BR" type bridge
    ip link set "$BR" alias "accord-netns-sites:$dir"
    ip addr add "$PREFIX.1/24" dev "$BR"
    ip link set "$BR" up

    : >"$dir/namespaces"
    : >"$dir/ns-map.tmp"
    i=0
    for site in "$@"; do
        ns=acc-$site
        veth=acv-$site
        ip=$PREFIX.$((FIRST_HOST + i))
        echo "$ns" >>"$dir/namespaces" # record first: see the header
        ip netns add "$ns"
        ip link add "$veth" type veth peer name eth0 netns "$ns"
        ip link set "$veth" alias "accord-netns-sites:$dir"
        ip link set "$veth" master "$BR" up
        ip -n "$ns" link set lo up
        ip -n "$ns" addr add "$ip/24" dev eth0
        ip -n "$ns" link set eth0 up
        ip -n "$ns" route add default via "$PREFIX.1"
        for ((k = 1; k <= NODES_PER_SITE; k++)); do
            echo "$site-n$k $ns" >>"$dir/ns-map.tmp"
        done
        echo "$PROG: $ns  $ip  hosts $site-n1..$site-n$NODES_PER_SITE  veth $veth" >&2
        i=$((i + 1))
    done
    # Publish the map only when every site is up: a reader never sees half of it.
    mv "$dir/ns-map.tmp" "$dir/ns-map"
    trap - ERR
}

case "${1:-}" in
up)
    [ $# -ge 3 ] || usage
    up "$(absdir "$2")" "${@:3}"
    ;;
down)
    [ $# -eq 2 ] || usage
    down "$(absdir "$2")"
    ;;
*) usage ;;
esac
