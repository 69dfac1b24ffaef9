# SPDX-License-Identifier: Apache-2.0
# daemons.sh - the package test's daemons (sourced by test_package.sh after
# lib.sh): an installed daemon started in the chroot $ROOT the way its unit
# would start it (its user, its directory, a notification socket), each in
# a network namespace of its own or of another daemon's, so that the
# packaged listen addresses never collide with anything on the machine.

# notify_listener SOCKET LOG: a datagram socket in the chroot that anyone
# may write to, read until STOPPING=1 (or a minute of silence), each
# message one line of LOG.  Sets LPID.
notify_listener() {
    python3 - "$ROOT$1" "$2" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
s.settimeout(60)
with open(sys.argv[2], "w") as log:
    try:
        while True:
            m = s.recv(4096).decode()
            log.write(m.replace("\n", " ") + "\n")
            log.flush()
            if m.startswith("STOPPING=1"):
                break
    except socket.timeout:
        pass
PY
    LPID=$!
    PIDS+=("$LPID")
    local _
    for _ in $(seq 1 50); do [ -S "$ROOT$1" ] && return 0; sleep 0.1; done
    return 1
}

# start_daemon LOG USER DIR NOTIFY COMMAND...: COMMAND in the chroot as USER
# (and its group) in DIR with NOTIFY_SOCKET=NOTIFY; stdout to LOG.out,
# stderr to LOG.err.  In the network namespace of process NETNS_OF when
# that is set, else in a new one with loopback up.  Sets DPID (each exec
# keeps the pid, so it is the daemon's).
start_daemon() {
    local log=$1 user=$2 dir=$3 notify=$4 enter
    shift 4
    if [ -n "${NETNS_OF:-}" ]; then
        enter=(nsenter --net="/proc/$NETNS_OF/ns/net" --)
    else
        enter=(unshare --net -- sh -c 'ip link set lo up && exec "$@"' sh)
    fi
    "${enter[@]}" chroot "$ROOT" setpriv --reuid="$user" --regid="$user" --init-groups \
        env NOTIFY_SOCKET="$notify" sh -c 'cd "$1" && shift && exec "$@"' sh "$dir" "$@" \
        >"$log.out" 2>"$log.err" &
    DPID=$!
    PIDS+=("$DPID")
}

# wait_output LOG PATTERN PID: true once LOG.out has a line matching
# PATTERN (30 s at most, or until PID ends); else shows what it said.
wait_output() {
    local _
    for _ in $(seq 1 150); do
        grep -q "$2" "$1.out" 2>/dev/null && return 0
        kill -0 "$3" 2>/dev/null || break
        sleep 0.2
    done
    grep -q "$2" "$1.out" 2>/dev/null && return 0
    sed 's/^/    | /' "$1.out" "$1.err"
    return 1
}

# in_net PID COMMAND...: COMMAND in the chroot and in PID's network
# namespace (accordctl reaching a daemon's loopback).
in_net() {
    local pid=$1
    shift
    nsenter --net="/proc/$pid/ns/net" chroot "$ROOT" "$@"
}

# stop_daemon PID: SIGTERM, then its exit status (after 30 s: SIGKILL, 137).
stop_daemon() {
    local rc=0 _
    kill -TERM "$1" 2>/dev/null
    for _ in $(seq 1 150); do kill -0 "$1" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$1" 2>/dev/null
    wait "$1" || rc=$?
    return "$rc"
}

# unit_value FILE KEY [INSTANCE]: KEY's value in a unit file, %i replaced
# by INSTANCE.
unit_value() {
    sed -n "s/^$2=//p" "$1" | head -n 1 | sed "s/%i/${3:-}/g"
}

# start_accordd LOG: the installed accordd as its unit starts it (User=,
# WorkingDirectory=, ExecStart= of the installed accordd.service) with the
# notification socket /run/accordd-notify; waits until it serves.
start_accordd() {
    local unit=$ROOT/lib/systemd/system/accordd.service exec
    read -r -a exec <<<"$(unit_value "$unit" ExecStart)"
    start_daemon "$1" "$(unit_value "$unit" User)" "$(unit_value "$unit" WorkingDirectory)" \
        /run/accordd-notify "${exec[@]}"
    wait_output "$1" "listening on http://127.0.0.1:8080" "$DPID"
}

# start_site_instance NAME LOG: instance NAME of the installed template
# accord-site@.service, as systemd would start it: its StateDirectory= made
# and given to its User=, ExecStart= with %i = NAME in its
# WorkingDirectory=; notifications to /run/site-NAME-notify.  Sets DPID.
start_site_instance() {
    local unit=$ROOT/lib/systemd/system/accord-site@.service name=$1 user state exec
    user=$(unit_value "$unit" User "$name")
    state=$(unit_value "$unit" StateDirectory "$name")
    read -r -a exec <<<"$(unit_value "$unit" ExecStart "$name")"
    in_root install -d -o "$user" -g "$user" -m "$(unit_value "$unit" StateDirectoryMode)" "/var/lib/$state"
    start_daemon "$2" "$user" "$(unit_value "$unit" WorkingDirectory "$name")" \
        "/run/site-$name-notify" "${exec[@]}"
}
