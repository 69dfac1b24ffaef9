#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# start-testbed.sh - bring up a small, real Grid Engine cluster (Son of Grid
# Engine 8.1.9, Debian 12) for Accord's tests: root, no systemd, nothing
# outside the testbed's own directory and namespaces.
#
# Layout (PREFIX 10.83.0; other testbeds use 10.78 and 10.79):
#   root ns       bridge accsge0 = 10.83.0.1/24, host <cluster>-gw (DIR/bin/on-gw)
#   asg-qm        host <cluster>-qm  10.83.0.10: sge_qmaster, admin and submit
#                 host (the adapter's commands run here, through DIR/bin)
#   asg-n1..nN    hosts <cluster>-n1.. 10.83.0.11..: one sge_execd each
# Each daemon runs in its host's network namespace plus a UTS namespace of its
# own (its host name) and a mount namespace in which DIR/hosts is bind-mounted
# over /etc/hosts: Grid Engine resolves every host name strictly (forward and
# back), and the machine's own /etc/hosts is never changed.
#
# SGE_ROOT is DIR/root (util -> /usr/share/gridengine/util), the cell is
# DIR/root/$CELL with classic (flat file) spooling under DIR/spool; sge_qmaster
# and sge_execd switch to the admin user sgeadmin (the Debian packages' user)
# once started, so DIR/spool belongs to it.  Ports 6444/6445 inside the
# namespaces only.
#
# Usage:  start-testbed.sh            stop with stop-testbed.sh (also on failure)
# Env:    SGE_TESTBED_DIR    [/tmp/sge-testbed]
#         SGE_TESTBED_NAME   cluster name and host prefix [sgea]
#         SGE_TESTBED_HOSTS  exec hosts (1-9) [3]
#         SGE_TESTBED_SLOTS  slots per exec host [2]
#         SGE_TESTBED_NO_INSTALL=1  never call apt-get
# Output: DIR/env.sh exports SGE_ROOT, SGE_CELL, SGE_TESTBED_DIR,
#         SGE_TESTBED_BIN (qrsub, qrstat, qrdel, qstat, qhost, qconf, qsub, qrsh
#         wrappers that run on the qmaster host; on-gw CMD... runs CMD on the
#         gateway host <cluster>-gw, the root network namespace, as a submit
#         and admin host) and SGE_TESTBED_HOSTS_LIST.
set -Eeuo pipefail

DIR=${SGE_TESTBED_DIR:-/tmp/sge-testbed}
NAME=${SGE_TESTBED_NAME:-sgea}
NHOSTS=${SGE_TESTBED_HOSTS:-3}
SLOTS=${SGE_TESTBED_SLOTS:-2}
CELL=accord
BR=accsge0
PREFIX=10.83.0
READY_TIMEOUT=${SGE_TESTBED_READY_TIMEOUT:-60}
HERE=$(cd "$(dirname "$0")" && pwd)
export TZ=UTC

log() { printf '[sge-testbed %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() {
    log "ERROR: $*"
    exit 1
}
T0=$(date +%s%N)
elapsed() { echo "$((($(date +%s%N) - T0) / 1000000)) ms"; }

[ "$(id -u)" = 0 ] || die "must run as root (namespaces; sge_execd starts jobs as their users)"
[[ $NAME =~ ^[a-z][a-z0-9]{0,7}$ ]] || die "bad SGE_TESTBED_NAME '$NAME' (1-8 letters, digits)"
[[ $NHOSTS =~ ^[1-9]$ ]] || die "SGE_TESTBED_HOSTS must be 1-9"
case "$DIR" in /*) ;; *) die "SGE_TESTBED_DIR must be absolute" ;; esac

# ---------------------------------------------------------------- 1. install
need=0
for b in /usr/lib/gridengine/sge_qmaster /usr/lib/gridengine/sge_execd /usr/lib/gridengine/qrsub \
    /usr/lib/gridengine/spoolinit; do
    [ -x "$b" ] || need=1
done
if [ "$need" = 1 ]; then
    [ "${SGE_TESTBED_NO_INSTALL:-0}" = 1 ] && die "Grid Engine is not installed"
    log "installing gridengine-master gridengine-exec gridengine-client (apt)"
    # No debconf cluster: the packages' own /var/lib/gridengine stays unconfigured.
    echo "gridengine-common shared/gridengineconfig boolean false" | debconf-set-selections
    export DEBIAN_FRONTEND=noninteractive
    APT=(apt-get -o DPkg::Lock::Timeout=600 -q -y)
    PKGS=(gridengine-master gridengine-exec gridengine-client gridengine-common)
    if ! "${APT[@]}" install "${PKGS[@]}" >"$DIR.apt.log" 2>&1; then
        "${APT[@]}" update >>"$DIR.apt.log" 2>&1 || true
        "${APT[@]}" install "${PKGS[@]}" >>"$DIR.apt.log" 2>&1 ||
            {
                tail -20 "$DIR.apt.log" >&2
                die "apt-get install failed"
            }
    fi
fi
id sgeadmin >/dev/null 2>&1 || die "user sgeadmin missing (gridengine-common creates it)"
command -v unshare >/dev/null && command -v nsenter >/dev/null || die "util-linux missing"

# ------------------------------------------------- 2. refuse to clobber a run
if [ -e "/sys/class/net/$BR" ]; then
    die "bridge $BR exists: another Grid Engine testbed runs (stop-testbed.sh with its DIR)"
fi
"$HERE/stop-testbed.sh" --purge >/dev/null 2>&1 || true
mkdir -p "$DIR"
chmod 755 "$DIR"
# From here on a failure takes everything down again.
trap 'log "start failed, cleaning up"; "$HERE/stop-testbed.sh" || true' ERR

# ------------------------------------------------------------- 3. the cell
R=$DIR/root
C=$R/$CELL/common
SP=$DIR/spool
mkdir -p "$C" "$SP/qmaster" "$DIR/run" "$DIR/bin" "$DIR/log"
ln -s /usr/share/gridengine/util "$R/util"
QM=$NAME-qm
hosts=()
for i in $(seq 1 "$NHOSTS"); do hosts+=("$NAME-n$i"); done
{
    echo "127.0.0.1 localhost"
    echo "$PREFIX.1 $NAME-gw"
    echo "$PREFIX.10 $QM"
    for i in $(seq 1 "$NHOSTS"); do echo "$PREFIX.$((10 + i)) $NAME-n$i"; done
} >"$DIR/hosts"
echo "$QM" >"$C/act_qmaster"
echo "$NAME" >"$C/cluster_name"
cat >"$C/bootstrap" <<EOF
admin_user              sgeadmin
default_domain          none
ignore_fqdn             true
spooling_method         classic
spooling_lib            libspoolc
spooling_params         $C;$SP/qmaster
binary_path             /usr/lib/gridengine
qmaster_spool_dir       $SP/qmaster
security_mode           none
listener_threads        2
worker_threads          2
scheduler_threads       1
EOF
# The Debian defaults, with our spool, no mail, and advance reservations on.
sed -e "s#^execd_spool_dir .*#execd_spool_dir        $SP/execd#" \
    -e 's#^mailer .*#mailer                 /bin/true#' \
    -e 's#^load_report_time .*#load_report_time       00:00:05#' \
    /usr/share/gridengine/default-configuration >"$DIR/configuration"
echo "max_advance_reservations 100" >>"$DIR/configuration"
export SGE_ROOT=$R SGE_CELL=$CELL SGE_QMASTER_PORT=6444 SGE_EXECD_PORT=6445
# spooldefaults wants absolute paths (a relative one fails without a word)
(
    cd "$DIR"
    /usr/lib/gridengine/spoolinit classic libspoolc "$C;$SP/qmaster" init
    /usr/lib/gridengine/spooldefaults configuration "$DIR/configuration"
    /usr/lib/gridengine/spooldefaults complexes /usr/share/gridengine/util/resources/centry
    /usr/lib/gridengine/spooldefaults usersets /usr/share/gridengine/util/resources/usersets
    /usr/lib/gridengine/spooldefaults managers sgeadmin root
) >"$DIR/log/init.log" 2>&1 || {
    cat "$DIR/log/init.log" >&2
    die "initialising the cell failed"
}
mkdir -p "$SP/execd"
chown -R sgeadmin: "$SP" "$R/$CELL"
cat >"$C/settings.sh" <<EOF
SGE_ROOT=$R; export SGE_ROOT
SGE_CELL=$CELL; export SGE_CELL
SGE_QMASTER_PORT=6444; export SGE_QMASTER_PORT
SGE_EXECD_PORT=6445; export SGE_EXECD_PORT
EOF
log "cell initialised after $(elapsed)"

# ---------------------------------------------------------- 4. the network
# Recorded before created, so that stop-testbed.sh removes half-made ones.
echo "$BR" >"$DIR/bridge"
ip link add "$BR" type bridge
ip link set "$BR" alias "accord-sge-testbed:$DIR"
ip addr add "$PREFIX.1/24" dev "$BR"
ip link set "$BR" up
: >"$DIR/namespaces"
mkns() { # mkns NS IP
    echo "$1" >>"$DIR/namespaces"
    ip netns add "$1"
    ip link add "v$1" type veth peer name eth0 netns "$1"
    ip link set "v$1" alias "accord-sge-testbed:$DIR"
    ip link set "v$1" master "$BR" up
    ip -n "$1" link set lo up
    ip -n "$1" addr add "$2/24" dev eth0
    ip -n "$1" link set eth0 up
    ip -n "$1" route add default via "$PREFIX.1"
}
mkns asg-qm "$PREFIX.10"
for i in $(seq 1 "$NHOSTS"); do mkns "asg-n$i" "$PREFIX.$((10 + i))"; done

# A host: its network namespace, a UTS namespace with its name, a mount
# namespace with DIR/hosts as /etc/hosts.  The daemon carries a marker in its
# environment so that stop-testbed.sh knows it for ours.
on_host() { # on_host NS HOSTNAME CMD...
    local ns=$1 hn=$2
    shift 2
    ip netns exec "$ns" unshare --uts --mount --propagation private -- \
        /bin/sh -c 'hostname "$1" && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"' \
        sh "$hn" "$DIR/hosts" env SGE_TESTBED_DAEMON_OF="$DIR" "$@"
}

# ---------------------------------------------------------- 5. sge_qmaster
on_host asg-qm "$QM" /usr/lib/gridengine/sge_qmaster </dev/null >"$DIR/log/qmaster.out" 2>&1 ||
    {
        cat "$DIR/log/qmaster.out" "$SP/qmaster/messages" >&2 2>/dev/null || true
        die "sge_qmaster failed"
    }
for _ in $(seq 100); do
    [ -s "$SP/qmaster/qmaster.pid" ] && break
    sleep 0.1
done
[ -s "$SP/qmaster/qmaster.pid" ] || die "sge_qmaster wrote no pid file"
qpid=$(cat "$SP/qmaster/qmaster.pid")
echo "$qpid" >"$DIR/run/qmaster.pid"

# The commands, run on the qmaster host (its namespaces) with our cell.
for cmd in qconf qrsub qrstat qrdel qstat qhost qsub qrsh qdel qmod qacct qping; do
    cat >"$DIR/bin/$cmd" <<EOF
#!/bin/sh
# generated by tests/sge/start-testbed.sh: $cmd on $QM
SGE_ROOT=$R SGE_CELL=$CELL SGE_QMASTER_PORT=6444 SGE_EXECD_PORT=6445
export SGE_ROOT SGE_CELL SGE_QMASTER_PORT SGE_EXECD_PORT
exec nsenter -t \$(cat $DIR/run/qmaster.pid) -n -u -m -- /usr/lib/gridengine/$cmd "\$@"
EOF
    chmod 755 "$DIR/bin/$cmd"
done
B=$DIR/bin
for _ in $(seq 100); do
    "$B/qconf" -sh >/dev/null 2>&1 && break
    sleep 0.1
done
"$B/qconf" -sh >/dev/null || die "qmaster does not answer: $(tail -5 "$SP/qmaster/messages" 2>&1)"
log "sge_qmaster up (pid $qpid) after $(elapsed)"

# ------------------------------------------------- 6. hosts, queue and PE
for h in "${hosts[@]}"; do "$B/qconf" -ah "$h" >/dev/null; done
"$B/qconf" -as "$QM" >/dev/null
# The gateway (the root network namespace, 10.83.0.1) submits and administers
# too: a site daemon runs there under DIR/bin/on-gw, its own UTS and mount
# namespaces naming it $NAME-gw with DIR/hosts as /etc/hosts.
"$B/qconf" -as "$NAME-gw" >/dev/null
"$B/qconf" -ah "$NAME-gw" >/dev/null
cat >"$B/on-gw" <<EOF
#!/bin/sh
# generated by tests/sge/start-testbed.sh: CMD... on $NAME-gw (root only)
exec unshare --uts --mount --propagation private -- /bin/sh -c \
    'hostname $NAME-gw && mount --bind $DIR/hosts /etc/hosts && exec "\$@"' on-gw "\$@"
EOF
chmod 755 "$B/on-gw"
cat >"$DIR/pe-mpi" <<EOF
pe_name            mpi
slots              999
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    $SLOTS
control_slaves     TRUE
job_is_first_task  FALSE
urgency_slots      min
accounting_summary FALSE
qsort_args         NONE
EOF
"$B/qconf" -Ap "$DIR/pe-mpi" >/dev/null
cat >"$DIR/hostgroup" <<EOF
group_name @allhosts
hostlist ${hosts[*]}
EOF
"$B/qconf" -Ahgrp "$DIR/hostgroup" >/dev/null
# all.q: every exec host, SLOTS slots each, the mpi PE; jobs must give h_rt
# (so that reservations and running jobs have known ends).
"$B/qconf" -sq | sed -e 's#^hostlist .*#hostlist @allhosts#' \
    -e "s#^slots .*#slots $SLOTS#" -e 's#^pe_list .*#pe_list mpi#' \
    -e 's#^qname .*#qname all.q#' -e 's#^shell .*#shell /bin/sh#' \
    -e 's#^load_thresholds .*#load_thresholds NONE#' >"$DIR/queue" 2>/dev/null ||
    true
"$B/qconf" -Aq "$DIR/queue" >/dev/null
# The scheduler: every 2 s, advance reservations need max_reservation > 0.
"$B/qconf" -ssconf | sed -e 's#^schedule_interval .*#schedule_interval 0:0:2#' \
    -e 's#^max_reservation .*#max_reservation 100#' >"$DIR/sconf"
"$B/qconf" -Msconf "$DIR/sconf" >/dev/null

# ------------------------------------------------------------ 7. sge_execd
for i in $(seq 1 "$NHOSTS"); do
    mkdir -p "$SP/execd/$NAME-n$i"
    chown sgeadmin: "$SP/execd/$NAME-n$i"
    on_host "asg-n$i" "$NAME-n$i" /usr/lib/gridengine/sge_execd </dev/null \
        >"$DIR/log/execd-n$i.out" 2>&1 || die "sge_execd on $NAME-n$i failed: $(cat "$DIR/log/execd-n$i.out")"
done
deadline=$(($(date +%s) + READY_TIMEOUT))
while :; do
    up=$("$B/qhost" 2>/dev/null | awk -v p="$NAME-n" 'index($1, p) == 1 && $4 != "-"' | wc -l || true)
    [ "$up" -eq "$NHOSTS" ] && break
    if [ "$(date +%s)" -ge "$deadline" ]; then
        "$B/qhost" >&2 || true
        die "only $up of $NHOSTS exec hosts report after ${READY_TIMEOUT}s"
    fi
    sleep 0.2
done
{
    echo "# generated by tests/sge/start-testbed.sh"
    echo "export SGE_TESTBED_DIR='$DIR'"
    echo "export SGE_ROOT='$R' SGE_CELL='$CELL'"
    echo "export SGE_TESTBED_BIN='$B'"
    echo "export SGE_TESTBED_HOSTS_LIST='${hosts[*]}'"
} >"$DIR/env.sh"
trap - ERR
log "testbed ready after $(elapsed): $NHOSTS exec hosts; source $DIR/env.sh"
