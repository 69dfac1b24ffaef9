#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sites-bed.sh - three accord-site daemons in their own network namespaces and
# an accordd that reaches them through the remote adapter, all over mutual TLS
# (issue 11).  On top of the namespace testbed of tools/netbed.sh:
#
#   site   namespace   listens on          adapters
#   alpha  acc-alpha1  10.79.1.11:8443     sim-batch, 2 nodes alpha-n[1-2]
#   beta   acc-beta1   10.79.2.11:8443     sim-batch, 2 nodes beta-n[1-2]
#   net    acc-gamma1  10.79.3.11:8443     tc (network wan: link alpha-beta on the
#                                          testbed's HTB trees, 200 Mbit/s)
#   accordd in the root namespace (10.79.0.1 on nbw0), HTTPS on 127.0.0.1, with
#   [site alpha], [site beta], [network wan] of adapter = remote and
#   [launch] launcher = manual, control_address = 10.79.0.1.
#
# Usage (root only; BUILD is the build tree with accordd, accord-site, accordctl):
#   ACCORD_BUILD=BUILD sites-bed.sh up        netbed up, certificates, configs, all daemons
#   ACCORD_BUILD=BUILD sites-bed.sh down      stops every daemon, netbed down, removes DIR
#   sites-bed.sh status                       what runs (exit 0: all of it)
#   ACCORD_BUILD=BUILD sites-bed.sh start NAME        NAME: alpha, beta, net or accordd
#   sites-bed.sh stop NAME [SIGNAL]           default TERM; KILL for a crash; exit 3
#                                             when it needed SIGKILL after 5 s
#   sites-bed.sh url                          accordd's base URL
# Environment: SITES_BED_DIR (default /run/accord-sites-bed): certificates in certs/,
#   one directory per daemon (config, database, log, pid; accordd/url);
#   SITES_BED_HTTPS (default yes): accordd's API over HTTPS (server.crt), else HTTP.
# Callers hold /run/lock/accord-netbed.lock (see tools/netbed.sh) from before "up"
# until after "down"; this script does not take it.
set -Eeuo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
NETBED=$SRC/tools/netbed.sh
MKCERTS=$SRC/tests/support/mkcerts.sh
DIR=${SITES_BED_DIR:-/run/accord-sites-bed}
PROG=${0##*/}
readonly SITE_NAMES=(alpha beta net)

die() {
    echo "$PROG: error: $*" >&2
    exit 1
}

site_ns() {
    case $1 in
    alpha) echo acc-alpha1 ;;
    beta) echo acc-beta1 ;;
    net) echo acc-gamma1 ;;
    *) die "no site '$1' (alpha, beta, net)" ;;
    esac
}
site_addr() {
    case $1 in
    alpha) echo 10.79.1.11 ;;
    beta) echo 10.79.2.11 ;;
    net) echo 10.79.3.11 ;;
    esac
}

need_build() {
    BUILD=${ACCORD_BUILD:?set ACCORD_BUILD to the build tree}
    local b
    for b in accordd accord-site accordctl; do
        [ -x "$BUILD/$b" ] || die "$BUILD/$b missing (build it first)"
    done
}

# The pid in FILE when that process still runs the program COMM; "" otherwise.
live_pid() { # FILE COMM
    local pid comm
    [ -r "$1" ] || return 0
    pid=$(cat "$1")
    [[ $pid =~ ^[0-9]+$ ]] || return 0
    comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
    [ "$comm" = "$2" ] && echo "$pid"
    return 0
}

# ------------------------------------------------------------ configs

write_site_common() { # NAME
    local n=$1
    cat <<EOF
[daemon]
name = $n
listen = $(site_addr "$n"):8443
database = $DIR/$n/$n.db
certificate = $DIR/certs/site-$n.crt
key = $DIR/certs/site-$n.key
client_ca = $DIR/certs/ca.crt
job_user = nobody
hydra_pmi_proxy = $(command -v hydra_pmi_proxy || echo /usr/bin/hydra_pmi_proxy)
control_networks = 10.79.0.0/16
threads = 4
max_connections = 64

; accordd (certificate accord.crt, CN=accord-main), with limits of its own:
; at most 1 node at a site, 150 Mbit/s, 1 h, starting within 1 day
[peer accord-main]
subject = CN=accord-main
max_nodes = 1
max_bandwidth = 150
max_duration = 3600
max_advance = 86400
max_reservations = 64
connections = 16

EOF
}

write_configs() {
    local s k
    k=0
    for s in alpha beta; do
        k=$((k + 1))
        mkdir -p "$DIR/$s"
        {
            write_site_common "$s"
            cat <<EOF
[site $s]
adapter = sim-batch
nodes = 2
hosts = $s-n[1-2]
addresses = 10.79.$k.[11-12]
EOF
        } >"$DIR/$s/site.ini"
    done
    mkdir -p "$DIR/net"
    {
        write_site_common net
        cat <<EOF
[network wan]
adapter = tc
path.alpha-beta.alpha = acc-gw-alpha/up0 acc-wan/to-beta
path.alpha-beta.beta = acc-gw-beta/up0 acc-wan/to-alpha
ceil = rate
quantum = 15140
audit_interval = 2s
activation_grace = 2s
command_timeout = 5s

[link alpha-beta]
sites = alpha beta
capacity = 200
network = wan
EOF
    } >"$DIR/net/site.ini"

    mkdir -p "$DIR/accordd"
    {
        if [ "${SITES_BED_HTTPS:-yes}" = yes ]; then
            cat <<EOF
[server]
certificate = $DIR/certs/server.crt
key = $DIR/certs/server.key

EOF
        fi
        cat <<EOF
[negotiation]
lead_time = PT1S
adapter_timeout = PT8S

[launch]
enabled = yes
; accordd runs as root here: mpiexec runs as nobody (a job never runs as root)
account = nobody
launcher = manual
control_address = 10.79.0.1
control_ports = 50000:50100
proxy_timeout = 30
grace = PT2S
path = $BUILD
env = UCX_TLS=tcp
env = LD_PRELOAD=$BUILD/tests/libucx_finalize_barrier.so

EOF
        k=0
        for s in alpha beta; do
            k=$((k + 1))
            # accordd's own view of the site (its size, host names for the
            # launch, addresses for the link's flows) as at the site.
            cat <<EOF
[site $s]
adapter = remote
nodes = 2
hosts = $s-n[1-2]
addresses = 10.79.$k.[11-12]
url = https://$(site_addr $s):8443
ca = $DIR/certs/ca.crt
certificate = $DIR/certs/accord.crt
key = $DIR/certs/accord.key
timeout = 3
connect_timeout = 2
retries = 1

EOF
        done
        cat <<EOF
[network wan]
adapter = remote
url = https://10.79.3.11:8443
ca = $DIR/certs/ca.crt
certificate = $DIR/certs/accord.crt
key = $DIR/certs/accord.key
timeout = 3
connect_timeout = 2
retries = 1

[link alpha-beta]
sites = alpha beta
capacity = 200
network = wan
EOF
    } >"$DIR/accordd/accordd.ini"
}

# ------------------------------------------------------------ daemons

# Waits up to 15 s until the site answers /v1/health over mTLS.
site_healthy() { # NAME
    local n=$1 i
    for i in $(seq 150); do
        if curl -sf --max-time 2 --cacert "$DIR/certs/ca.crt" --cert "$DIR/certs/accord.crt" \
            --key "$DIR/certs/accord.key" "https://$(site_addr "$n"):8443/v1/health" >/dev/null; then
            return 0
        fi
        [ -n "$(live_pid "$DIR/$n/pid" accord-site)" ] || return 1
        sleep 0.1
    done
    return 1
}

start_site() { # NAME
    local n=$1 ns pid
    need_build
    ns=$(site_ns "$n")
    [ -z "$(live_pid "$DIR/$n/pid" accord-site)" ] || die "site $n already runs"
    # ip netns exec execs accord-site: the pid is the daemon's own.  Its stdin is
    # /dev/null and it holds none of the caller's descriptors (the test's lock).
    setsid ip netns exec "$ns" "$BUILD/accord-site" --config "$DIR/$n/site.ini" \
        </dev/null >>"$DIR/$n/log" 2>&1 9>&- &
    pid=$!
    echo "$pid" >"$DIR/$n/pid"
    sleep 0.05
    if ! site_healthy "$n"; then
        echo "$PROG: site $n did not come up; its log:" >&2
        tail -n 20 "$DIR/$n/log" >&2
        return 1
    fi
}

start_accordd() {
    local pid url i
    need_build
    [ -z "$(live_pid "$DIR/accordd/pid" accordd)" ] || die "accordd already runs"
    : >"$DIR/accordd/log.now"
    setsid "$BUILD/accordd" --config "$DIR/accordd/accordd.ini" --db "$DIR/accordd/accordd.db" \
        --listen 127.0.0.1:0 </dev/null >"$DIR/accordd/log.now" 2>&1 9>&- &
    pid=$!
    echo "$pid" >"$DIR/accordd/pid"
    url=
    for i in $(seq 200); do
        url=$(sed -n 's/.*listening on \(https\{0,1\}:\/\/[^ ]*\).*/\1/p' "$DIR/accordd/log.now" | head -n 1)
        [ -n "$url" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    cat "$DIR/accordd/log.now" >>"$DIR/accordd/log"
    if [ -z "$url" ]; then
        echo "$PROG: accordd did not come up; its log:" >&2
        tail -n 20 "$DIR/accordd/log.now" >&2
        return 1
    fi
    # With [server] certificate the API serves HTTPS (server.crt, SAN 127.0.0.1).
    if [ "${SITES_BED_HTTPS:-yes}" = yes ]; then url="https://${url#*://}"; fi
    echo "$url" >"$DIR/accordd/url"
}

# Stops NAME with SIGNAL, with SIGKILL after 5 s; returns 3 when SIGKILL was
# needed (it did not stop on SIGNAL).
stop_one() { # NAME [SIGNAL]
    local n=$1 sig=${2:-TERM} comm pid i forced=
    comm=accord-site
    [ "$n" = accordd ] && comm=accordd
    pid=$(live_pid "$DIR/$n/pid" "$comm")
    if [ -z "$pid" ]; then
        rm -f "$DIR/$n/pid"
        return 0
    fi
    kill "-$sig" "$pid" 2>/dev/null || true
    for i in $(seq 100); do
        [ -n "$(live_pid "$DIR/$n/pid" "$comm")" ] || break
        if [ "$i" = 50 ] && [ "$sig" != KILL ]; then
            forced=yes
            kill -KILL "$pid" 2>/dev/null
        fi
        sleep 0.1
    done
    # A killed accordd's log lines since its start go to the whole log.
    [ "$n" != accordd ] || [ ! -f "$DIR/accordd/log.now" ] ||
        { cat "$DIR/accordd/log.now" >>"$DIR/accordd/log" && rm -f "$DIR/accordd/log.now"; }
    rm -f "$DIR/$n/pid"
    if [ -n "$forced" ]; then
        echo "$PROG: $n did not stop within 5 s of SIG$sig: killed" >&2
        return 3
    fi
}

up() {
    local s
    need_build
    [ -x "$MKCERTS" ] || die "$MKCERTS missing (branch tls)"
    command -v curl >/dev/null || die "curl missing (apt-get install -y curl)"
    down
    CAP=200mbit "$NETBED" up
    mkdir -p "$DIR/certs"
    chmod 0755 "$DIR"
    "$MKCERTS" "$DIR/certs" >/dev/null
    write_configs
    for s in "${SITE_NAMES[@]}"; do
        start_site "$s"
    done
    start_accordd
    echo "$PROG: up: sites ${SITE_NAMES[*]}, accordd at $(cat "$DIR/accordd/url")" >&2
}

down() {
    local s
    stop_one accordd TERM || true
    for s in "${SITE_NAMES[@]}"; do
        stop_one "$s" TERM || true
    done
    "$NETBED" down
    # The jobs' and proxies' leftovers are killed by netbed down (they ran in the
    # sites' namespaces); the directory goes.
    case $DIR in
    /run/accord-sites-bed | /tmp/*) rm -rf "$DIR" ;;
    *) echo "$PROG: leaving $DIR (not under /tmp or /run/accord-sites-bed)" >&2 ;;
    esac
}

status() {
    local s rc=0 pid
    "$NETBED" status >/dev/null 2>&1 || rc=1
    for s in "${SITE_NAMES[@]}"; do
        pid=$(live_pid "$DIR/$s/pid" accord-site)
        echo "site $s: ${pid:+pid $pid}${pid:-down} in $(site_ns "$s") at https://$(site_addr "$s"):8443"
        [ -n "$pid" ] || rc=1
    done
    pid=$(live_pid "$DIR/accordd/pid" accordd)
    echo "accordd: ${pid:+pid $pid at $(cat "$DIR/accordd/url" 2>/dev/null)}${pid:-down}"
    [ -n "$pid" ] || rc=1
    return "$rc"
}

[ $# -ge 1 ] || die "usage: $PROG up | down | status | start NAME | stop NAME [SIGNAL] | url"
[ "$(id -u)" = 0 ] || die "must run as root (namespaces)"
case $1 in
up) up ;;
down) down ;;
status) status ;;
start)
    [ $# = 2 ] || die "usage: $PROG start alpha|beta|net|accordd"
    if [ "$2" = accordd ]; then start_accordd; else
        site_ns "$2" >/dev/null
        start_site "$2"
    fi
    ;;
stop)
    [ $# -ge 2 ] || die "usage: $PROG stop alpha|beta|net|accordd [SIGNAL]"
    [ "$2" = accordd ] || site_ns "$2" >/dev/null
    stop_one "$2" "${3:-TERM}"
    ;;
url) cat "$DIR/accordd/url" ;;
*) die "unknown command '$1'" ;;
esac
