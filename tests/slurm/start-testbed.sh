#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# start-testbed.sh - bring up one or more small, real Slurm 22.05 clusters on
# localhost for Accord's integration tests (Debian 12, root, no systemd).
# Adapted from the measured lab example (shared/lab/slurm); ctest runs it as a
# fixture (tests/CMakeLists.txt), and stop-testbed.sh takes it down again.
#
# Each cluster = 1 slurmctld + one slurmd per node (slurmd -N NODE, all on
# 127.0.0.1, one TCP port per node).  All clusters share one private munged
# (own key, own socket), so nothing under /etc or /run is used or changed.
#
# Usage:  start-testbed.sh                  (defaults below)
# Env:    SLURM_TESTBED_DIR       state/log/config root  [/tmp/slurm-testbed]
#         SLURM_TESTBED_CLUSTERS  "name:nodes ..."       ["sitea:8 siteb:16"]
#         SLURM_TESTBED_PORT_BASE first port             [16800]
#               cluster k (0-based) uses PORT_BASE+100k for slurmctld and
#               PORT_BASE+100k+1 ... +N for its N slurmd (N <= 99)
#         SLURM_TESTBED_NO_INSTALL=1  never call apt-get
#         SLURM_TESTBED_MOUNTS    the mount table to check for cgroups [/proc/mounts]
# Output: $SLURM_TESTBED_DIR/env.sh exports SLURM_CONF_<NAME>=<slurm.conf>
#         (use: SLURM_CONF=$SLURM_CONF_SITEA scontrol ...), SLURM_TESTBED_DIR
#         and SLURM_TESTBED_CLUSTERS.  Exit 0 only when every node is idle.
set -euo pipefail

DIR=${SLURM_TESTBED_DIR:-/tmp/slurm-testbed}
CLUSTERS=${SLURM_TESTBED_CLUSTERS:-"sitea:8 siteb:16"}
PORT_BASE=${SLURM_TESTBED_PORT_BASE:-16800}
READY_TIMEOUT=${SLURM_TESTBED_READY_TIMEOUT:-60}
export TZ=UTC                        # deterministic time parsing/printing

log() { printf '[testbed %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
T0=$(date +%s%N)
elapsed() { echo "$(( ($(date +%s%N) - T0) / 1000000 )) ms"; }

[ "$(id -u)" = 0 ] || die "must run as root (slurmd and munged run as root here)"

# ---------------------------------------------------------------- 1. install
need_install=0
for b in slurmctld slurmd scontrol sbatch squeue sinfo munged mungekey; do
    command -v "$b" >/dev/null 2>&1 || need_install=1
done
if [ "$need_install" = 1 ]; then
    [ "${SLURM_TESTBED_NO_INSTALL:-0}" = 1 ] && die "Slurm/munge not installed"
    log "installing slurm-wlm munge (apt)"
    export DEBIAN_FRONTEND=noninteractive
    APT=(apt-get -o DPkg::Lock::Timeout=600 -q -y)
    # policy-rc.d keeps the packages' own init scripts from starting daemons
    # with the default /etc/slurm config (harmless without systemd anyway).
    if ! "${APT[@]}" install slurm-wlm munge >"$DIR.apt.log" 2>&1; then
        "${APT[@]}" update >>"$DIR.apt.log" 2>&1 || true
        "${APT[@]}" install slurm-wlm munge >>"$DIR.apt.log" 2>&1 \
            || { tail -20 "$DIR.apt.log" >&2; die "apt-get install failed"; }
    fi
    log "installed after $(elapsed)"
fi

# ----------------------------------------------------------- 1b. cgroups
# slurmd 22.05 loads its cgroup plugin whatever the configuration says, and
# without a cgroup file system under /sys/fs/cgroup it stops at once with
# "Unable to initialize cgroup plugin" (in its log only).  Say so up front.
cgroup_mounted() {
    awk '$2 ~ /^\/sys\/fs\/cgroup(\/|$)/ && ($3 == "cgroup" || $3 == "cgroup2") { found = 1 }
         END { exit !found }' "${SLURM_TESTBED_MOUNTS:-/proc/mounts}"
}
cgroup_mounted || die "/sys/fs/cgroup is not mounted (no cgroup or cgroup2 file system under it):" \
    "slurmd needs it ('Unable to initialize cgroup plugin').  Mount it" \
    "(mount -t cgroup2 none /sys/fs/cgroup), or give the container the host's cgroups" \
    "(docker run --privileged, or -v /sys/fs/cgroup:/sys/fs/cgroup:rw --cgroupns=host)."

# ------------------------------------------------- 2. refuse to clobber a run
if [ -d "$DIR" ]; then
    for f in "$DIR"/munge/munged.pid "$DIR"/*/run/*.pid; do
        [ -f "$f" ] || continue
        p=$(cat "$f" 2>/dev/null || true)
        # alive, not a zombie, and carrying our marker (PIDs may be reused)
        if [ -n "$p" ] && [ -d "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null \
           && grep -qzxF "SLURM_TESTBED_DAEMON_OF=$DIR" "/proc/$p/environ" 2>/dev/null; then
            die "testbed in $DIR still running (pid $p from $f); run stop-testbed.sh first"
        fi
    done
    rm -rf "$DIR"
fi
mkdir -p "$DIR"
chmod 755 "$DIR"

# ---------------------------------------------------------------- 3. ports
port_busy() { [ -n "$(ss -Htln "sport = :$1" 2>/dev/null)" ]; }
k=0
for spec in $CLUSTERS; do
    n=${spec#*:}
    [ "$n" -ge 1 ] && [ "$n" -le 99 ] || die "bad node count in '$spec'"
    base=$((PORT_BASE + 100 * k))
    for p in $(seq "$base" $((base + n))); do
        port_busy "$p" && die "port $p already in use (set SLURM_TESTBED_PORT_BASE)"
    done
    k=$((k + 1))
done

# ---------------------------------------------------------------- 4. munge
M=$DIR/munge
mkdir -p "$M/key"
chmod 755 "$M"; chmod 700 "$M/key"          # munged insists on these modes
mungekey -c -k "$M/key/munge.key" >/dev/null 2>&1 \
    || dd if=/dev/urandom of="$M/key/munge.key" bs=1024 count=1 status=none
chmod 600 "$M/key/munge.key"
SLURM_TESTBED_DAEMON_OF=$DIR munged --socket="$M/munge.sock" \
    --key-file="$M/key/munge.key" --pid-file="$M/munged.pid" \
    --log-file="$M/munged.log" --seed-file="$M/key/munged.seed" \
    </dev/null >/dev/null 2>&1 || { cat "$M/munged.log" >&2; die "munged failed"; }
munge -S "$M/munge.sock" -n </dev/null | unmunge -S "$M/munge.sock" >/dev/null \
    || die "munge self-test failed"
log "munged up (pid $(cat "$M/munged.pid")) after $(elapsed)"

# ------------------------------------------------------- 5. clusters: config
ENVF=$DIR/env.sh
{
    echo "# generated by tests/slurm/start-testbed.sh"
    echo "export SLURM_TESTBED_DIR='$DIR'"
    echo "export SLURM_TESTBED_CLUSTERS='$CLUSTERS'"
} >"$ENVF"

k=0
for spec in $CLUSTERS; do
    name=${spec%%:*}; n=${spec#*:}
    base=$((PORT_BASE + 100 * k))
    C=$DIR/$name
    mkdir -p "$C"/{state,spool,log,run}
    last=$(printf '%02d' "$n")
    cat >"$C/slurm.conf" <<EOF
# generated by tests/slurm/start-testbed.sh: cluster $name, $n nodes
ClusterName=$name
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$M/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$C/state
SlurmdSpoolDir=$C/spool/%n
SlurmctldPidFile=$C/run/slurmctld.pid
SlurmdPidFile=$C/run/slurmd-%n.pid
SlurmctldLogFile=$C/log/slurmctld.log
SlurmdLogFile=$C/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
# backfill every 5 s so "squeue --start" estimates appear quickly; plan 7 days
SchedulerParameters=bf_interval=5,bf_window=10080,bf_resolution=60
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=300
# one CPU per node: every job that gets a node gets all of it
NodeName=${name}-n[01-$last] NodeAddr=127.0.0.1 Port=[$((base + 1))-$((base + n))] CPUs=1 RealMemory=100 State=UNKNOWN
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    upper=$(echo "$name" | tr 'a-z-' 'A-Z_')
    echo "export SLURM_CONF_$upper='$C/slurm.conf'" >>"$ENVF"
    k=$((k + 1))
done

# ------------------------------------------------------- 6. clusters: start
for spec in $CLUSTERS; do
    name=${spec%%:*}; n=${spec#*:}
    C=$DIR/$name
    export SLURM_CONF=$C/slurm.conf
    SLURM_TESTBED_DAEMON_OF=$DIR slurmctld -f "$SLURM_CONF" </dev/null >>"$C/log/start.log" 2>&1 \
        || { tail -20 "$C/log/slurmctld.log" >&2; die "slurmctld ($name) failed"; }
    for i in $(seq -w 1 "$n"); do
        node=$name-n$(printf '%02d' "$((10#$i))")
        mkdir -p "$C/spool/$node"
        SLURM_TESTBED_DAEMON_OF=$DIR slurmd -f "$SLURM_CONF" -N "$node" \
            </dev/null >>"$C/log/start.log" 2>&1 \
            || { tail -20 "$C/log/slurmd-$node.log" >&2; die "slurmd $node failed"; }
    done
done

# ------------------------------------------------ 7. wait until all are idle
for spec in $CLUSTERS; do
    name=${spec%%:*}; n=${spec#*:}
    export SLURM_CONF=$DIR/$name/slurm.conf
    deadline=$(( $(date +%s) + READY_TIMEOUT ))
    while :; do
        idle=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2=="idle"' | wc -l || true)
        [ "$idle" -eq "$n" ] && break
        if [ "$(date +%s)" -ge "$deadline" ]; then
            sinfo -N >&2 || true
            tail -20 "$DIR/$name/log/slurmctld.log" >&2
            die "cluster $name: only $idle/$n nodes idle after ${READY_TIMEOUT}s"
        fi
        sleep 0.2
    done
    log "cluster $name: $n nodes idle (ctld pid $(cat "$DIR/$name/run/slurmctld.pid"), conf $SLURM_CONF)"
done
log "testbed ready after $(elapsed); source $ENVF"
