#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test_systemd_jobs.sh - meta-jobs in transient units of their own, under a
# real systemd (docs/launch.md, "Jobs in units of their own").  A minimal
# Debian 12 with systemd (the tarball test_package.sh caches) is booted with
# systemd as PID 1 in new PID, mount, cgroup, network, UTS and IPC
# namespaces; the build's accordd runs there as accordd.service from the
# package's unit file with the launch drop-in (debian/examples/accordd-
# launch.conf), and starts jobs through a stand-in mpiexec.  Checked: each
# job runs in accord-job-ID-N.service under accord-jobs.slice as the launch
# account, not in accordd.service; it outlives a restart of accordd, which
# then watches it again and stops it when the agreement is terminated; the
# exit status and output of a job that ends by itself are read back; and
# systemd-analyze security rates accordd.service at most 2.0 there.
# Root only; everything is under one temporary directory, killed, unmounted
# and removed however the test ends.  ctest: test_systemd_jobs (labels
# root;package).
#
#   tests/package/test_systemd_jobs.sh BUILD_DIR
#
# Environment: ACCORD_TEST_CACHE (default /var/cache/accord-test),
# ACCORD_TEST_MIRROR, ACCORD_KEEP_TMP=1 keeps the directory.
set -uo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd) || exit 1
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${ACCORD_TEST_CACHE:-/var/cache/accord-test}
MIRROR=${ACCORD_TEST_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
TARBALL=$CACHE/$SUITE-minbase-systemd.tar
# shellcheck source=../support/checks.sh
. "$SRC/tests/support/checks.sh"

[ "$(id -u)" = 0 ] || { echo "test_systemd_jobs: needs root (namespaces, chroot)"; exit 1; }
for tool in unshare nsenter chroot debootstrap ip; do
    command -v "$tool" >/dev/null ||
        { echo "test_systemd_jobs: $tool missing (./quickstart.sh test installs it)"; exit 1; }
done

WORK=$(mktemp -d /tmp/accord-sdjobs.XXXXXX)
ROOT=$WORK/root
SYSTEMD="" # systemd's pid as seen from here
UNSHARE="" # unshare's (--kill-child: its end ends the namespace)
T0=$(date +%s)

mounts_under() { awk -v r="$ROOT" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/mounts | sort -r; }

cleanup() {
    # Killing PID 1 of the namespace kills everything in it.
    if [ -n "$SYSTEMD" ] && kill -0 "$SYSTEMD" 2>/dev/null; then
        kill -KILL "$SYSTEMD" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$SYSTEMD" 2>/dev/null || break; sleep 0.1; done
    fi
    if [ -n "$UNSHARE" ] && kill -0 "$UNSHARE" 2>/dev/null; then
        kill -KILL "$UNSHARE" 2>/dev/null
        wait "$UNSHARE" 2>/dev/null
    fi
    local m
    for m in $(mounts_under); do
        umount "$m" 2>/dev/null || umount -l "$m"
    done
    if [ -n "$(mounts_under)" ]; then
        echo "test_systemd_jobs: still mounted under $ROOT, not removing $WORK"
    elif [ "${ACCORD_KEEP_TMP:-}" = 1 ]; then
        echo "test_systemd_jobs: kept $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { echo "== $* ($(($(date +%s) - T0)) s)"; }
fatal() {
    bad "$*"
    [ -z "$SYSTEMD" ] || { echo "--- the journal"; in_sys journalctl --no-pager | grep -v kernel | tail -n 40; }
    checks_summary test_systemd_jobs "(stopped early)"
    exit 1
}
# Inside the booted system: its mount, PID, network, UTS and IPC namespaces.
in_sys() { nsenter -t "$SYSTEMD" -m -p -n -u -i -r -w "$@"; }
ctl() { in_sys /opt/accord/accordctl --server http://127.0.0.1:8080 "$@"; }

# ---------------------------------------------------------------- the system
step "a minimal Debian 12 with systemd"
mkdir -p "$ROOT" "$CACHE"
if [ -f "$TARBALL" ] && [ -z "$(find "$TARBALL" -mtime +7)" ]; then
    tar -C "$ROOT" -xf "$TARBALL" || fatal "unpacking $TARBALL"
    ok "the debootstrapped system from $TARBALL"
else
    # As test_package.sh makes it (and caches it for both).
    debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
        { tail -n 20 "$WORK/debootstrap.log"; fatal "debootstrap --variant=minbase $SUITE"; }
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
    chroot "$ROOT" apt-get -q update >"$WORK/apt.log" 2>&1 || fatal "apt-get update in the chroot"
    chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends \
        install systemd >>"$WORK/apt.log" 2>&1 || fatal "apt-get install systemd in the chroot"
    chroot "$ROOT" apt-get clean
    tar -C "$ROOT" -cf "$TARBALL.tmp.$$" . && mv "$TARBALL.tmp.$$" "$TARBALL" ||
        { rm -f "$TARBALL.tmp.$$"; fatal "caching the system in $TARBALL"; }
    ok "debootstrap --variant=minbase $SUITE and systemd, cached in $TARBALL"
fi

# The build's programs with the libraries they use that the minimal system
# lacks (the same Debian release: the host's copies fit).
mkdir -p "$ROOT/opt/accord/lib"
cp "$BUILD/accordd" "$ROOT/usr/sbin/accordd" && cp "$BUILD/accordctl" "$ROOT/opt/accord/" ||
    fatal "copying accordd and accordctl"
for lib in $(ldd "$BUILD/accordd" "$BUILD/accordctl" | awk '/=> \// { print $3 }' | sort -u); do
    case $(basename "$lib") in libc.so.* | ld-linux*) continue ;; esac
    cp -L "$lib" "$ROOT/opt/accord/lib/"
done
chroot "$ROOT" sh -c 'echo /opt/accord/lib > /etc/ld.so.conf.d/accord-test.conf && ldconfig' ||
    fatal "ldconfig in the chroot"
expect "accordd runs in the minimal system" chroot "$ROOT" /usr/sbin/accordd --version

# The package's unit, its user, the launch drop-in and a configuration
# that launches jobs as accordjob with a stand-in for mpiexec.
cp "$SRC/debian/accordd.service" "$ROOT/lib/systemd/system/accordd.service"
mkdir -p "$ROOT/etc/systemd/system/accordd.service.d" "$ROOT/etc/accord"
cp "$SRC/debian/examples/accordd-launch.conf" "$ROOT/etc/systemd/system/accordd.service.d/launch.conf"
chroot "$ROOT" sh -c 'useradd --system --no-create-home --home-dir /nonexistent accord &&
    useradd --system --no-create-home --home-dir /nonexistent accordjob' ||
    fatal "creating the users accord and accordjob"
"$BUILD/accordd" --print-config | sed 's/^listen = .*/listen = 127.0.0.1:8080/' \
    >"$ROOT/etc/accord/accord.conf"
cat >>"$ROOT/etc/accord/accord.conf" <<'EOF'
[launch]
account = accordjob
mpiexec = /usr/local/bin/fake-mpiexec
grace = PT3S
EOF
# It says who and where it is, leaves its pid, then sleeps while
# /tmp/long-job exists, else ends with status 7.
cat >"$ROOT/usr/local/bin/fake-mpiexec" <<'EOF'
#!/bin/sh
echo "user $(id -un)"
echo "cgroup $(grep '^0::' /proc/self/cgroup)"
echo "$$" > pid
if [ -e /tmp/long-job ]; then
    exec sleep 600
fi
exit 7
EOF
chmod 0755 "$ROOT/usr/local/bin/fake-mpiexec"
# A drop-in for every job unit, by the dash prefix of their names.
mkdir -p "$ROOT/etc/systemd/system/accord-job-.service.d"
printf '[Service]\nNice=7\n' >"$ROOT/etc/systemd/system/accord-job-.service.d/test.conf"
cat >"$ROOT/opt/accord/offer.xml" <<'EOF'
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement"
                     xmlns:co="urn:accord:coalloc:1">
  <wsag:Name>unit-job</wsag:Name>
  <wsag:Context>
    <wsag:AgreementInitiator>test</wsag:AgreementInitiator>
    <wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider>
    <wsag:TemplateName>meta-job</wsag:TemplateName>
  </wsag:Context>
  <wsag:Terms><wsag:All>
    <wsag:ServiceDescriptionTerm wsag:Name="schedule" wsag:ServiceName="metajob">
      <co:Schedule><co:Duration>PT10M</co:Duration></co:Schedule>
    </wsag:ServiceDescriptionTerm>
    <wsag:ServiceDescriptionTerm wsag:Name="one" wsag:ServiceName="metajob">
      <co:Component><co:Site>fh-brs</co:Site><co:Nodes>1</co:Nodes>
        <co:Executable>/bin/true</co:Executable>
      </co:Component>
    </wsag:ServiceDescriptionTerm>
    <wsag:ServiceDescriptionTerm wsag:Name="launch" wsag:ServiceName="metajob">
      <co:Launch style="metampich"/>
    </wsag:ServiceDescriptionTerm>
  </wsag:All></wsag:Terms>
</wsag:AgreementOffer>
EOF

# ---------------------------------------------------------------- boot
step "booting systemd as PID 1 in namespaces"
cat >"$WORK/boot.sh" <<'EOF'
#!/bin/sh
# In the new namespaces: the chroot's file systems, then systemd.
R=$1
ip link set lo up
mount --make-rprivate /
mount --bind "$R" "$R"
mount -t proc proc "$R/proc"
mount -t sysfs sysfs "$R/sys"
mount -t cgroup2 cgroup2 "$R/sys/fs/cgroup"
mount -t tmpfs tmpfs "$R/run"
mount -t tmpfs tmpfs "$R/tmp"
mount --rbind /dev "$R/dev"
# Not the host's console: systemd's console lines go to its log file, and
# no getty is started on it.
mount --bind "$2" "$R/dev/console"
ln -sf /dev/null "$R/etc/systemd/system/console-getty.service"
export container=accord-test
exec chroot "$R" /lib/systemd/systemd --system --log-target=console
EOF
chmod 0755 "$WORK/boot.sh"
unshare --pid --fork --mount --cgroup --net --uts --ipc --kill-child \
    "$WORK/boot.sh" "$ROOT" "$WORK/systemd.log" >"$WORK/systemd.log" 2>&1 &
UNSHARE=$!
for _ in $(seq 100); do
    SYSTEMD=$(pgrep -P "$UNSHARE" -x systemd | head -1)
    [ -n "$SYSTEMD" ] && break
    sleep 0.1
done
[ -n "$SYSTEMD" ] || { tail -n 20 "$WORK/systemd.log"; fatal "systemd did not start"; }
state=
for _ in $(seq 300); do
    state=$(in_sys systemctl is-system-running 2>/dev/null)
    case $state in running | degraded) break ;; esac
    sleep 0.1
done
expect "systemd booted (is-system-running: $state)" \
    sh -c "[ '$state' = running ] || [ '$state' = degraded ]"

# ---------------------------------------------------------------- accordd
step "accordd.service"
in_sys systemctl daemon-reload
if ! in_sys systemctl start accordd.service; then
    in_sys journalctl -u accordd --no-pager | tail -n 30
    fatal "systemctl start accordd"
fi
ok "systemctl start accordd (Type=notify: it said READY=1)"
journal() { in_sys journalctl -u accordd --no-pager; }
expect "it runs as root with no capability at all" \
    grep -q 'running as root (uid 0), capabilities: none' <<<"$(journal)"
expect "it says its jobs run in units of their own" \
    grep -q 'jobs run in transient units of their own' <<<"$(journal)"
main=$(in_sys systemctl show --property=MainPID --value accordd)
expect "root's secrets are hidden from it (/etc/shadow is an inaccessible mount)" \
    in_sys grep -q ' /etc/shadow ' "/proc/$main/mountinfo"
wd=$(in_sys systemctl show --property=WatchdogUSec --value accordd)
expect "its watchdog is on (WatchdogUSec=$wd)" [ "$wd" = 1min ]
score=$(in_sys systemd-analyze security accordd.service 2>&1 | sed -n 's/.*Overall exposure level for accordd.service: \([0-9.]*\).*/\1/p')
expect "systemd-analyze security rates accordd.service (with the launch drop-in) at most 2.0 (got $score)" \
    awk -v s="$score" 'BEGIN { exit !(s != "" && s + 0 <= 2.0) }'

# ------------------------------------------------- a job that runs on
step "a long job: its own unit, through a restart, terminated"
in_sys touch /tmp/long-job
id=$(ctl submit /opt/accord/offer.xml 2>&1 | sed -n 's/^Agreement *\([a-z0-9]*\).*/\1/p' | head -1)
[ -n "$id" ] || fatal "the offer was agreed"
ok "the offer was agreed ($id)"
unit=
for _ in $(seq 300); do
    unit=$(in_sys systemctl list-units --plain --no-legend "accord-job-$id-*" | awk '{ print $1 }' | head -1)
    [ -n "$unit" ] && [ -s "$ROOT/var/lib/accord/accord-jobs/$id/pid" ] && break
    sleep 0.1
done
expect "the job runs in a unit of its own ($unit)" [ -n "$unit" ]
cg=$(in_sys systemctl show --property=ControlGroup --value "$unit")
# (systemd nests a slice by the dashes of its name: accord.slice holds it)
expect "in accord-jobs.slice ($cg)" [ "$cg" = "/accord.slice/accord-jobs.slice/$unit" ]
expect "the drop-in accord-job-.service.d applies to it" \
    [ "$(in_sys systemctl show --property=Nice --value "$unit")" = 7 ]
expect "the unit runs as accordjob" \
    [ "$(in_sys systemctl show --property=User --value "$unit")" = accordjob ]
pid=$(cat "$ROOT/var/lib/accord/accord-jobs/$id/pid" 2>/dev/null)
jobcg=$(in_sys cat "/proc/$pid/cgroup" 2>/dev/null | sed -n 's/^0:://p')
expect "mpiexec's own /proc/PID/cgroup names that unit ($jobcg)" [ "$jobcg" = "/accord.slice/accord-jobs.slice/$unit" ]
expect "and it runs as accordjob" \
    [ "$(in_sys stat -c %U "/proc/$pid" 2>/dev/null)" = accordjob ]
procs=$(in_sys cat /sys/fs/cgroup/system.slice/accordd.service/cgroup.procs | wc -l)
expect "accordd.service holds accordd alone ($procs process)" [ "$procs" = 1 ]
expect "the job's directory was given to accordjob" \
    [ "$(in_sys stat -c %U "/var/lib/accord/accord-jobs/$id")" = accordjob ]
state=$(ctl launch "$id" --json 2>/dev/null | sed -n 's/.*"state": *"\([^"]*\)".*/\1/p' | head -1)
expect "accordctl launch says running ($state)" [ "$state" = running ]

in_sys systemctl restart accordd.service || fatal "systemctl restart accordd"
expect "the job outlived the restart (KillMode=mixed leaves other units alone)" \
    in_sys systemctl is-active --quiet "$unit"
expect "the new accordd found its unit" \
    grep -q "agreement $id: its job runs in $unit" <<<"$(journal)"

ctl terminate "$id" >/dev/null 2>&1
for _ in $(seq 150); do
    in_sys systemctl is-active --quiet "$unit" || break
    sleep 0.1
done
expect "terminating the agreement stopped the unit" \
    test "$(in_sys systemctl is-active "$unit")" != active
expect "and its process" in_sys test ! -e "/proc/$pid"
for _ in $(seq 100); do
    state=$(ctl launch "$id" --json 2>/dev/null | sed -n 's/.*"state": *"\([^"]*\)".*/\1/p' | head -1)
    [ "$state" = running ] || break
    sleep 0.1
done
expect "the job is terminated ($state)" [ "$state" = terminated ]

# ------------------------------------------------- a job that ends itself
step "a short job: exit status and output read back"
in_sys rm -f /tmp/long-job
id=$(ctl submit /opt/accord/offer.xml 2>&1 | sed -n 's/^Agreement *\([a-z0-9]*\).*/\1/p' | head -1)
[ -n "$id" ] || fatal "the second offer was agreed"
for _ in $(seq 300); do
    state=$(ctl launch "$id" --json 2>/dev/null | sed -n 's/.*"state": *"\([^"]*\)".*/\1/p' | head -1)
    case $state in exited | failed | lost | stopped | terminated) break ;; esac
    sleep 0.2
done
json=$(ctl launch "$id" --json 2>/dev/null)
expect "the job exited ($state)" [ "$state" = exited ]
expect "with its exit status 7" grep -q '"exitStatus": *7' <<<"$json"
out=$(ctl launch "$id" --output 2>/dev/null)
expect "its output was read back: it ran as accordjob" grep -q "user accordjob" <<<"$out"
expect "in its own unit" grep -q "cgroup 0::/accord.slice/accord-jobs.slice/accord-job-$id-[0-9]*.service" <<<"$out"
expect "no job unit is left" \
    [ -z "$(in_sys systemctl list-units --all --plain --no-legend 'accord-job-*')" ]

if [ "$failures" != 0 ]; then
    echo "--- accordd's journal"
    in_sys journalctl -u accordd --no-pager | tail -n 40
fi
checks_summary test_systemd_jobs
