#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test_package.sh - the Debian package end to end (docs/packaging.md): built
# with dpkg-buildpackage from a copy of the tree, checked with lintian and
# systemd-analyze verify, installed with apt into a minimal Debian 12 made by
# debootstrap, accordd started from the installed files as its own user, an
# offer agreed through the installed accordctl, then purged without a trace.
# Root only.  Everything it makes is under one temporary directory, unmounted
# and removed however the test ends; the debootstrapped system is cached as a
# tarball (ACCORD_TEST_CACHE, default /var/cache/accord-test; rebuilt when a
# week old).  ctest: test_package (labels root;package).
#
#   tests/package/test_package.sh
#
# Environment: ACCORD_TEST_CACHE, ACCORD_TEST_MIRROR (default
# http://deb.debian.org/debian), ACCORD_KEEP_TMP=1 keeps the directory.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${ACCORD_TEST_CACHE:-/var/cache/accord-test}
MIRROR=${ACCORD_TEST_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
# minbase and systemd (for systemd-analyze verify on the installed units;
# it is not running there: nothing is started by the package's scripts).
TARBALL=$CACHE/$SUITE-minbase-systemd.tar
# shellcheck source=../support/checks.sh
. "$SRC/tests/support/checks.sh"

[ "$(id -u)" = 0 ] || { echo "test_package: needs root (debootstrap, chroot)"; exit 1; }
for tool in dpkg-buildpackage dh lintian debootstrap unshare nsenter ip python3; do
    command -v "$tool" >/dev/null ||
        { echo "test_package: $tool missing (./quickstart.sh test installs it)"; exit 1; }
done

WORK=$(mktemp -d /tmp/accord-package.XXXXXX)
ROOT=$WORK/root
PID=""
LISTENER=""
T0=$(date +%s)

# Everything mounted under the chroot, deepest first.
mounts_under() { awk -v r="$ROOT" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/mounts | sort -r; }

cleanup() {
    if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
        kill -KILL "$PID" 2>/dev/null
        wait "$PID" 2>/dev/null
    fi
    [ -z "$LISTENER" ] || kill "$LISTENER" 2>/dev/null
    local m
    for m in $(mounts_under); do
        umount "$m" 2>/dev/null || umount -l "$m"
    done
    if [ -n "$(mounts_under)" ]; then
        echo "test_package: still mounted under $ROOT, not removing $WORK"
    elif [ "${ACCORD_KEEP_TMP:-}" = 1 ]; then
        echo "test_package: kept $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { echo "== $* ($(($(date +%s) - T0)) s)"; }

# check DESCRIPTION COMMAND...: a failure shows what the command said.
check() {
    local what=$1 out
    shift
    if out=$("$@" 2>&1); then
        ok "$what"
    else
        bad "$what"
        [ -z "$out" ] || sed 's/^/    | /' <<<"$out" | tail -n 30
    fi
}

# A failure that makes the rest meaningless ends the test here.
fatal() {
    bad "$*"
    checks_summary test_package "(stopped early)"
    exit 1
}

in_root() { chroot "$ROOT" "$@"; }

# ---------------------------------------------------------------- build
step "building the package from a copy of the tree"
mkdir -p "$WORK/src"
# The tree without its build directories, VCS data or an earlier package
# build's leftovers.
tar -C "$SRC" --exclude=./.git --exclude='./build*' --exclude=./debian/.debhelper \
    --exclude=./debian/tmp --exclude=./debian/accord --exclude=./debian/accord-mpi-examples \
    --exclude=./debian/files --exclude='./debian/*.substvars' --exclude='./debian/*.debhelper.log' \
    -cf - . | tar -C "$WORK/src" -xf -
if ! (cd "$WORK/src" && DEB_BUILD_OPTIONS=parallel=2 dpkg-buildpackage -b -us -uc) \
    >"$WORK/build.log" 2>&1; then
    tail -n 40 "$WORK/build.log"
    fatal "dpkg-buildpackage -b -us -uc"
fi
ok "dpkg-buildpackage -b -us -uc"
DEB=$(ls "$WORK"/accord_*.deb)
CHANGES=$(ls "$WORK"/accord_*.changes)
check "accord-mpi-examples is built beside accord" ls "$WORK"/accord-mpi-examples_*.deb
contents=$(dpkg-deb -c "$DEB" | awk '{ print $6 }')
for f in ./usr/sbin/accordd ./usr/sbin/accord-site ./usr/bin/accordctl ./usr/bin/accord-sim \
    ./usr/bin/accord-flowgen ./etc/accord/accord.conf ./etc/accord-site/accord-site.conf \
    ./lib/systemd/system/accordd.service ./lib/systemd/system/accord-site.service; do
    expect "the package holds $f" grep -qx "$f" <<<"$contents"
done
conffiles=$(dpkg-deb -I "$DEB" conffiles)
expect "accord.conf and accord-site.conf are conffiles" \
    test "$(sort <<<"$conffiles" | tr '\n' ' ')" = \
    "/etc/accord-site/accord-site.conf /etc/accord/accord.conf "

# ---------------------------------------------------------------- lintian
step "lintian"
if lintian --fail-on error --allow-root --tag-display-limit 0 "$CHANGES" >"$WORK/lintian.log" 2>&1; then
    ok "lintian reports no error"
else
    bad "lintian reports errors"
fi
sed 's/^/    | /' "$WORK/lintian.log"

# ---------------------------------------------------------------- chroot
step "a minimal Debian 12"
mkdir -p "$ROOT" "$CACHE"
if [ -f "$TARBALL" ] && [ -z "$(find "$TARBALL" -mtime +7)" ]; then
    tar -C "$ROOT" -xf "$TARBALL" || fatal "unpacking $TARBALL"
    ok "the debootstrapped system from $TARBALL"
else
    if ! debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1; then
        tail -n 20 "$WORK/debootstrap.log"
        fatal "debootstrap --variant=minbase $SUITE"
    fi
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
    # The package lists travel with the cache (a stale one is refreshed below).
    in_root apt-get -q update >"$WORK/apt.log" 2>&1 || fatal "apt-get update in the chroot"
    in_root env DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends \
        install systemd >>"$WORK/apt.log" 2>&1 || fatal "apt-get install systemd in the chroot"
    in_root apt-get clean
    tar -C "$ROOT" -cf "$TARBALL.tmp.$$" . && mv "$TARBALL.tmp.$$" "$TARBALL" ||
        { rm -f "$TARBALL.tmp.$$"; fatal "caching the system in $TARBALL"; }
    ok "debootstrap --variant=minbase $SUITE and systemd, cached in $TARBALL"
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
mount -t proc proc "$ROOT/proc" || fatal "mounting /proc in the chroot"
mount --bind /dev "$ROOT/dev" || fatal "mounting /dev in the chroot"

# ---------------------------------------------------------------- install
step "apt-get install"
cp "$DEB" "$ROOT/tmp/"
cp "$SRC/docs/examples/offer.xml" "$ROOT/tmp/offer.xml"
install_deb() {
    in_root env DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends \
        install "/tmp/$(basename "$DEB")"
}
if ! install_deb >"$WORK/install.log" 2>&1; then
    # Lists older than the mirror's packages: refresh them and try again.
    in_root apt-get -q update >>"$WORK/install.log" 2>&1
    install_deb >>"$WORK/install.log" 2>&1 || { tail -n 30 "$WORK/install.log"; fatal "apt-get install accord"; }
fi
ok "apt-get install ./$(basename "$DEB") (dependencies from the mirror)"
for u in accord accord-site; do
    check "the system user $u exists" in_root getent passwd "$u"
done
check "/var/lib/accord belongs to accord" test "$(in_root stat -c %U:%a /var/lib/accord)" = accord:750
check "accordd.service is enabled" test -L "$ROOT/etc/systemd/system/multi-user.target.wants/accordd.service"
check "accord-site.service is not enabled" test ! -e "$ROOT/etc/systemd/system/multi-user.target.wants/accord-site.service"

# The units as installed, with the files they name in place (their manual
# pages come with docs/man/; man is not in the chroot).
for unit in accordd accord-site; do
    check "systemd-analyze verify $unit.service" \
        in_root systemd-analyze verify --man=no "/lib/systemd/system/$unit.service"
done

# ---------------------------------------------------------------- run
step "accordd as the user accord"
# A network namespace of its own, so that the packaged listen address
# (127.0.0.1:8080) is free whatever runs on this machine; each exec keeps
# the pid, so $PID is accordd's.
# What it tells a service manager: a datagram socket in the chroot that
# anyone may write to, read by a listener that stops at STOPPING=1.
NOTIFY_LOG=$WORK/notify.log
python3 - "$ROOT/run/accord-notify" "$NOTIFY_LOG" <<'PY' &
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
LISTENER=$!
for _ in $(seq 1 50); do [ -S "$ROOT/run/accord-notify" ] && break; sleep 0.1; done
unshare --net -- sh -c 'ip link set lo up && exec "$@"' sh \
    chroot "$ROOT" setpriv --reuid=accord --regid=accord --init-groups \
    env NOTIFY_SOCKET=/run/accord-notify \
    sh -c 'cd /var/lib/accord && exec /usr/sbin/accordd --config /etc/accord/accord.conf' \
    >"$WORK/accordd.out" 2>"$WORK/accordd.err" &
PID=$!
in_net() { nsenter --net="/proc/$PID/ns/net" chroot "$ROOT" "$@"; }
for _ in $(seq 1 150); do
    grep -q "listening on" "$WORK/accordd.out" 2>/dev/null && break
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.2
done
grep -q "listening on http://127.0.0.1:8080" "$WORK/accordd.out" ||
    { sed 's/^/    | /' "$WORK/accordd.out" "$WORK/accordd.err"; fatal "accordd serves 127.0.0.1:8080"; }
ok "accordd serves 127.0.0.1:8080"
check "accordd runs as accord" test "$(stat -c %u "/proc/$PID")" = "$(in_root id -u accord)"
check "accordd's group is accord" \
    test "$(awk '/^Gid:/ { print $2 }' "/proc/$PID/status")" = "$(in_root id -g accord)"
out=$(in_net /usr/bin/accordctl submit /tmp/offer.xml 2>&1)
echo "$out" | sed 's/^/    | /'
id=$(awk '$1 == "Agreement" { print $2; exit }' <<<"$out")
expect "accordctl submit: an agreement" test -n "$id"
state=$(in_net /usr/bin/accordctl show "$id" 2>&1)
expect "the agreement is agreed (Observed)" grep -q "^State *Observed" <<<"$state"
check "/var/lib/accord/accord.db belongs to accord" \
    test "$(in_root stat -c %U /var/lib/accord/accord.db)" = accord
# SIGHUP: a reload (nothing to reread on plain HTTP), then ready again.
kill -HUP "$PID"
for _ in $(seq 1 50); do [ "$(grep -c '^READY=1' "$NOTIFY_LOG")" -ge 2 ] && break; sleep 0.1; done
kill -TERM "$PID"
rc=0
wait "$PID" || rc=$?
PID=""
expect "accordd stops on SIGTERM with status 0" test "$rc" = 0
wait "$LISTENER"
notified=$(sed 's/MONOTONIC_USEC=[0-9]*/MONOTONIC_USEC=T/' "$NOTIFY_LOG" | paste -sd'|' -)
LISTENER=""
echo "    | $notified"
expect "accordd told the manager: ready, reloading, ready, stopping" \
    test "$notified" = "READY=1|RELOADING=1 MONOTONIC_USEC=T|READY=1|STOPPING=1"

# ---------------------------------------------------------------- purge
step "apt-get purge"
check "apt-get purge accord" in_root env DEBIAN_FRONTEND=noninteractive apt-get -q -y purge accord
for f in /etc/accord /etc/accord-site /usr/sbin/accordd /usr/sbin/accord-site /usr/bin/accordctl \
    /var/lib/accord /var/lib/accord-site /lib/systemd/system/accordd.service \
    /etc/systemd/system/multi-user.target.wants/accordd.service; do
    expect "nothing left: $f" test ! -e "$ROOT$f"
done
check "dpkg -L accord lists nothing" test -z "$(in_root dpkg -L accord 2>/dev/null)"
check "the system users stay (Debian's policy)" in_root getent passwd accord accord-site

step "done"
checks_summary test_package "in $(($(date +%s) - T0)) s"
