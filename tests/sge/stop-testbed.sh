#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# stop-testbed.sh - take down what start-testbed.sh started: every process in
# the testbed's network namespaces (sge_qmaster, sge_execd, shepherds and their
# jobs), the namespaces, the veths and the bridge, and only those: the
# namespaces are read from DIR/namespaces, the bridge is removed only when its
# alias names DIR.  Idempotent; safe after a start that failed half-way.
# Usage: stop-testbed.sh [--purge]     (--purge also deletes DIR)
# Env:   SGE_TESTBED_DIR [/tmp/sge-testbed]
set -uo pipefail
DIR=${SGE_TESTBED_DIR:-/tmp/sge-testbed}
BR=accsge0
log() { printf '[sge-testbed-stop] %s\n' "$*" >&2; }
[ -d "$DIR" ] || {
    log "nothing to stop ($DIR absent)"
    exit 0
}

mine=()
if [ -f "$DIR/namespaces" ]; then
    while read -r ns; do
        case "$ns" in asg-*) mine+=("$ns") ;; esac
    done <"$DIR/namespaces"
fi
pids_in() {
    local ns
    for ns in "${mine[@]}"; do
        [ -e "/run/netns/$ns" ] && ip netns pids "$ns" 2>/dev/null
    done
    return 0
}
# Also daemons whose namespace is gone but that carry our marker.
marked() {
    local d
    for d in /proc/[0-9]*; do
        grep -qzxF "SGE_TESTBED_DAEMON_OF=$DIR" "$d/environ" 2>/dev/null && echo "${d#/proc/}"
    done
    return 0
}
kill_all() {
    local pids sig
    for sig in TERM KILL; do
        pids=$( (
            pids_in
            marked
        ) | sort -u)
        [ -n "$pids" ] || return 0
        [ "$sig" = KILL ] && log "SIGKILL $(echo $pids)"
        # shellcheck disable=SC2086
        kill -$sig $pids 2>/dev/null
        for _ in $(seq 30); do
            [ -n "$( (
                pids_in
                marked
            ))" ] || return 0
            sleep 0.1
        done
    done
}
[ ${#mine[@]} -gt 0 ] || [ -n "$(marked)" ] && kill_all
for ns in "${mine[@]}"; do
    [ -e "/run/netns/$ns" ] && ip netns del "$ns"
    for _ in $(seq 50); do
        [ -e "/sys/class/net/v$ns" ] || break
        sleep 0.05
    done
done
if [ -e "/sys/class/net/$BR" ]; then
    alias=$(cat "/sys/class/net/$BR/ifalias" 2>/dev/null || true)
    if [ "$alias" = "accord-sge-testbed:$DIR" ] || { [ -z "$alias" ] && [ -f "$DIR/bridge" ]; }; then
        ip link del "$BR"
    fi
fi
rm -f "$DIR/namespaces" "$DIR/bridge" "$DIR/run/"*.pid
log "stopped ($DIR)"
[ "${1:-}" = "--purge" ] && {
    rm -rf "$DIR" "$DIR.apt.log"
    log "removed $DIR"
}
exit 0
