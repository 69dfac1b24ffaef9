#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# stop-testbed.sh - stop what start-testbed.sh started, by PID only.
# A PID is signalled only if it is provably ours: daemons carry the marker
# SLURM_TESTBED_DAEMON_OF=$DIR in their environment (set by the start script);
# slurmstepd (started by our slurmd, empty environment) has its cwd in $DIR.
# Usage: stop-testbed.sh [--purge]     (--purge also deletes the dir)
# Env:   SLURM_TESTBED_DIR [/tmp/slurm-testbed]
set -uo pipefail
DIR=${SLURM_TESTBED_DIR:-/tmp/slurm-testbed}
log() { printf '[testbed-stop] %s\n' "$*" >&2; }
[ -d "$DIR" ] || { log "nothing to stop ($DIR absent)"; exit 0; }

alive() {   # exists and is not a zombie
    [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}
marked() {  # started by our start script for this $DIR
    grep -qzxF "SLURM_TESTBED_DAEMON_OF=$DIR" "/proc/$1/environ" 2>/dev/null
}
stop_pids() {   # stop_pids SECONDS PID...: TERM, wait up to SECONDS, then KILL
    local p any n=$(( $1 * 5 )); shift
    for p in "$@"; do alive "$p" && kill -TERM "$p" 2>/dev/null; done
    for _ in $(seq "$n"); do
        any=0
        for p in "$@"; do alive "$p" && any=1; done
        [ "$any" = 0 ] && return 0
        sleep 0.2
    done
    for p in "$@"; do alive "$p" && { log "SIGKILL $p"; kill -KILL "$p" 2>/dev/null; }; done
    return 0
}
ours_from_pidfile() {   # print PID from pid file only if alive and marked
    local p
    [ -f "$1" ] || return 0
    p=$(cat "$1" 2>/dev/null) || return 0
    [ -n "$p" ] && alive "$p" && marked "$p" && echo "$p"
    return 0
}

for C in "$DIR"/*/; do
    C=${C%/}
    [ -f "$C/slurm.conf" ] || continue
    export SLURM_CONF=$C/slurm.conf
    ctld=$(ours_from_pidfile "$C/run/slurmctld.pid")
    # 1. cancel jobs while the controller still runs, so job processes die too
    if [ -n "$ctld" ]; then
        jobs=$(timeout 10 squeue -h -o %A 2>/dev/null || true)
        if [ -n "$jobs" ]; then
            timeout 10 scancel $jobs 2>/dev/null || true
            for _ in $(seq 50); do
                [ -z "$(timeout 5 squeue -h -t R,CG -o %A 2>/dev/null)" ] && break
                sleep 0.2
            done
        fi
    fi
    # 2. slurmd's, then slurmctld (its slurmscriptd child exits with it)
    pids=()
    for f in "$C"/run/slurmd-*.pid; do
        p=$(ours_from_pidfile "$f"); [ -n "$p" ] && pids+=("$p")
    done
    [ ${#pids[@]} -gt 0 ] && stop_pids 10 "${pids[@]}"
    [ -n "$ctld" ] && stop_pids 10 "$ctld"
    log "stopped cluster $(basename "$C")"
done

# 3. leftovers: marked daemons whose pid file was lost, and slurmstepd
#    processes of our slurmd (cwd inside $DIR) plus all their descendants.
#    Never this script or its ancestors.
anc=" "; a=$$
while [ -n "$a" ] && [ "$a" != 0 ]; do
    anc+="$a "; a=$(awk '/^PPid:/{print $2}' "/proc/$a/status" 2>/dev/null)
done
roots=()
for d in /proc/[0-9]*; do
    p=${d#/proc/}
    case "$anc" in *" $p "*) continue ;; esac
    alive "$p" || continue
    comm=$(cat "$d/comm" 2>/dev/null) || continue
    if [ "$comm" = munged ]; then continue; fi           # stopped last, below
    if marked "$p"; then roots+=("$p"); continue; fi
    if [ "$comm" = slurmstepd ]; then
        cwd=$(readlink "$d/cwd" 2>/dev/null) || continue
        case "$cwd/" in "$DIR"/*) roots+=("$p") ;; esac
    fi
done
if [ ${#roots[@]} -gt 0 ]; then
    # add descendants (job processes under a slurmstepd)
    all=" ${roots[*]} "; changed=1
    while [ "$changed" = 1 ]; do
        changed=0
        for d in /proc/[0-9]*; do
            p=${d#/proc/}
            case "$all" in *" $p "*) continue ;; esac
            pp=$(awk '/^PPid:/{print $2}' "$d/status" 2>/dev/null)
            case "$all" in *" $pp "*) all+="$p "; changed=1 ;; esac
        done
    done
    log "stopping leftovers:$all"
    stop_pids 2 $all     # slurmstepd ignores SIGTERM
fi

# 4. munged
m=$(ours_from_pidfile "$DIR/munge/munged.pid")
[ -n "$m" ] && stop_pids 10 "$m"
rm -f "$DIR"/munge/munged.pid "$DIR"/*/run/*.pid
log "munged stopped"

[ "${1:-}" = "--purge" ] && { rm -rf "$DIR" "$DIR.apt.log"; log "removed $DIR"; }
exit 0
