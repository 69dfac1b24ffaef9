#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test_package.sh - the Debian packages end to end (docs/packaging.md):
#  1. built with dpkg-buildpackage in a clean Debian 12 chroot that holds
#     build-essential and the Build-Depends of debian/control alone, as an
#     unprivileged user without network, then checked with lintian (no
#     error, no warning but those overridden with a reason) and
#     systemd-analyze verify;
#  2. installed with apt into a minimal Debian 12: accord-client alone
#     starts nothing and pulls no daemon; accordd serves an offer through
#     the installed accordctl as its own user; two instances of the template
#     accord-site@.service serve two sites side by side; all purged without
#     a trace;
#  3. an upgrade from the single package accord 0.1.0 (built from the commit
#     OLD_COMMIT of this tree's history, cached) keeps the edited
#     configuration and the state database, and moves the conffiles to
#     accordd and accord-site.
# Root only.  Everything it makes is under one temporary directory,
# unmounted and removed however the test ends; the Debian systems are cached
# as tarballs (tests/package/lib.sh).  ctest: test_package (labels
# root;package).
#
#   tests/package/test_package.sh
#
# Environment: ACCORD_TEST_CACHE (default /var/cache/accord-test),
# ACCORD_TEST_MIRROR (default http://deb.debian.org/debian),
# ACCORD_KEEP_TMP=1 keeps the directory; ACCORD_TEST_DEBS=DIR takes the
# packages from DIR instead of building them (to work on the later steps:
# the test then fails).
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
# The last commit that built the single package accord (0.1.0).
OLD_COMMIT=2563eeebb6d368c21fe5cd888983fe364c3dba98
OLD_VERSION=0.1.0
# shellcheck source=../support/checks.sh
. "$SRC/tests/support/checks.sh"

[ "$(id -u)" = 0 ] || { echo "test_package: needs root (debootstrap, chroot)"; exit 1; }
for tool in dpkg-deb lintian debootstrap unshare nsenter setpriv ip python3 openssl git; do
    command -v "$tool" >/dev/null ||
        { echo "test_package: $tool missing (./quickstart.sh test installs it)"; exit 1; }
done

WORK=$(mktemp -d /tmp/accord-package.XXXXXX)
# shellcheck source=lib.sh
. "$SRC/tests/package/lib.sh"
# shellcheck source=daemons.sh
. "$SRC/tests/package/daemons.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM
PARTS=(accord-client accordd accord-site accord-sim)

# ---------------------------------------------------------------- build
step "a Debian 12 with build-essential and the Build-Depends alone"
build_tarball "$SRC/debian/control"
unpack_root "$WORK/build" "$TAR"
ok "the build system from $TAR"

# tree_copy DIR: the tree into DIR without its build directories, VCS data
# or an earlier package build's leftovers.
tree_copy() {
    mkdir -p "$1" &&
        tar -C "$SRC" --exclude=./.git --exclude='./build*' --exclude=./debian/.debhelper \
            --exclude=./debian/tmp --exclude=./debian/files \
            "${PARTS[@]/#/--exclude=./debian/}" --exclude=./debian/accord \
            --exclude=./debian/accord-mpi-examples \
            --exclude='./debian/*.substvars' --exclude='./debian/*.debhelper.log' \
            --exclude=./debian/accord-site@.service --exclude='./obj-*' \
            -cf - . | tar -C "$1" -xf -
}
if [ -n "${ACCORD_TEST_DEBS:-}" ]; then
    # For work on the later steps only: the test cannot pass this way.
    mkdir -p "$WORK/debs"
    cp "$ACCORD_TEST_DEBS"/*.deb "$ACCORD_TEST_DEBS"/*.changes "$ACCORD_TEST_DEBS"/*.buildinfo "$WORK/debs/"
    bad "the packages of ACCORD_TEST_DEBS=$ACCORD_TEST_DEBS, not built here"
else
    step "dpkg-buildpackage in it, unprivileged, without network"
    tree_copy "$ROOT/build/accord"
    build_in_root /build/accord "$WORK/debs" || fatal "dpkg-buildpackage -b -us -uc from Build-Depends alone"
    ok "dpkg-buildpackage -b -us -uc from Build-Depends alone"
fi
deb() { ls "$WORK/debs/$1"_*.deb; }

# The single package of before the split, built once from its commit in
# the same system and cached.  A clone without that commit (a shallow one)
# builds it from this tree with the packaging of then
# (tests/package/accord-0.1.0-debian.tar.gz, that commit's debian/): the
# same package, but for the programs in it, which upgrade.sh does not
# compare (the database's migrations are the same).
OLD_DEB=$CACHE/accord_${OLD_VERSION}_${OLD_COMMIT:0:12}.deb
OLD_TAR=$SRC/tests/package/accord-$OLD_VERSION-debian.tar.gz
if [ ! -f "$OLD_DEB" ] && ! git -C "$SRC" cat-file -e "$OLD_COMMIT^{commit}" 2>/dev/null; then
    OLD_DEB=$CACHE/accord_${OLD_VERSION}_tree-$(sha256sum "$OLD_TAR" | cut -c1-12).deb
fi
if [ ! -f "$OLD_DEB" ]; then
    step "the single package accord $OLD_VERSION"
    mkdir -p "$ROOT/build-old/accord"
    if git -C "$SRC" cat-file -e "$OLD_COMMIT^{commit}" 2>/dev/null; then
        from="commit $OLD_COMMIT"
        git -C "$SRC" archive "$OLD_COMMIT" | tar -C "$ROOT/build-old/accord" -xf - ||
            fatal "git archive $OLD_COMMIT"
    else
        from="this tree with $OLD_TAR (commit $OLD_COMMIT is not in this clone's history)"
        tree_copy "$ROOT/build-old/accord" && rm -rf "$ROOT/build-old/accord/debian" &&
            tar -C "$ROOT/build-old/accord" -xzf "$OLD_TAR" || fatal "the tree of $from"
    fi
    build_in_root /build-old/accord "$WORK/old" || fatal "building accord $OLD_VERSION from $from"
    cp "$WORK/old/accord_${OLD_VERSION}_"*.deb "$OLD_DEB.tmp.$$" && mv "$OLD_DEB.tmp.$$" "$OLD_DEB" ||
        { rm -f "$OLD_DEB.tmp.$$"; fatal "caching $OLD_DEB"; }
    ok "accord $OLD_VERSION built from $from, cached in $OLD_DEB"
fi

# ---------------------------------------------------------------- contents
step "what each package holds"
# holds PACKAGE PATH...: the package has each path (and so nothing else
# claims it).
holds() {
    local p=$1 c f
    shift
    c=$(dpkg-deb -c "$(deb "$p")" | awk '{ print $6 }')
    for f in "$@"; do
        expect "$p holds $f" grep -qx "./$f" <<<"$c"
    done
}
lacks() { # lacks PACKAGE REGEX: no path of the package matches
    expect "$1 holds nothing under $2" test -z "$(dpkg-deb -c "$(deb "$1")" | awk '{ print $6 }' | grep -E "$2")"
}
conffiles() { dpkg-deb -I "$(deb "$1")" conffiles 2>/dev/null | sort | tr '\n' ' '; }
field() { dpkg-deb -f "$(deb "$1")" "$2"; }
for p in "${PARTS[@]}" accord accord-mpi-examples; do
    check "$p is built" deb "$p"
done
holds accord-client usr/bin/accordctl usr/share/man/man1/accordctl.1.gz \
    usr/share/doc/accord-client/examples/offer.xml
lacks accord-client '^\./(etc|lib/systemd|usr/sbin)/'
holds accordd usr/sbin/accordd etc/accord/accord.conf lib/systemd/system/accordd.service \
    usr/share/man/man8/accordd.8.gz usr/share/man/man5/accord.conf.5.gz \
    usr/share/doc/accordd/examples/accordd-tc.conf
holds accord-site usr/sbin/accord-site etc/accord-site/accord-site.conf \
    lib/systemd/system/accord-site.service lib/systemd/system/accord-site@.service \
    usr/share/man/man8/accord-site.8.gz usr/share/doc/accord-site/examples/accord-site-jobs.conf
holds accord-sim usr/bin/accord-sim usr/bin/accord-flowgen usr/share/man/man1/accord-sim.1.gz
holds accord-mpi-examples usr/bin/accord-ring usr/bin/accord-metatrace
lacks accord '^\./(etc|lib|usr/s?bin)/'
expect "accord-client has no conffile" test -z "$(conffiles accord-client)"
expect "accordd's conffile is /etc/accord/accord.conf" test "$(conffiles accordd)" = "/etc/accord/accord.conf "
expect "accord-site's conffile is /etc/accord-site/accord-site.conf" \
    test "$(conffiles accord-site)" = "/etc/accord-site/accord-site.conf "
expect "accord-client depends on no daemon" \
    test -z "$(field accord-client Depends | grep -E 'accordd|accord-site')"
for p in "${PARTS[@]}"; do
    expect "accord depends on $p" grep -q "$p (>= " <<<"$(field accord Depends)"
    expect "$p breaks and replaces accord (<< $(field accord Version)~)" test \
        "$(field "$p" Breaks)|$(field "$p" Replaces)" = \
        "accord (<< $(field accord Version)~)|accord (<< $(field accord Version)~)"
done
# The template differs from accord-site.service in the instance's lines only.
t_diff=$(diff <(dpkg-deb --fsys-tarfile "$(deb accord-site)" | tar -xOf - ./lib/systemd/system/accord-site.service | grep -v '^#') \
    <(dpkg-deb --fsys-tarfile "$(deb accord-site)" | tar -xOf - ./lib/systemd/system/accord-site@.service | grep -v '^#') |
    grep '^>' | sed 's/^> //' | sort | tr '\n' '|')
expect "accord-site@.service is accord-site.service with %i in four lines" test "$t_diff" = \
    "Description=Accord site daemon (the adapter protocol over mutual TLS), site %i|ExecStart=/usr/sbin/accord-site --config /etc/accord-site/%i.conf|StateDirectory=accord-site/%i|WorkingDirectory=/var/lib/accord-site/%i|"

# ---------------------------------------------------------------- lintian
# It takes about a minute: it runs while the packages are installed below.
step "lintian (in the background)"
CHANGES=$(ls "$WORK"/debs/accord_*.changes)
lintian --fail-on error,warning --allow-root --tag-display-limit 0 "$CHANGES" >"$WORK/lintian.log" 2>&1 &
LINTIAN=$!
PIDS+=("$LINTIAN")

# ---------------------------------------------------------------- install
step "a minimal Debian 12 with systemd: accord-client alone"
install_tarball
unpack_root "$WORK/root" "$TAR"
for p in "${PARTS[@]}"; do cp "$(deb "$p")" "$ROOT/tmp/"; done
cp "$SRC/docs/examples/offer.xml" "$ROOT/tmp/offer.xml"
indeb() { echo "/tmp/$(basename "$(deb "$1")")"; }
installed() { [ "$(in_root dpkg-query -W -f '${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }
# Units, enablement links and init scripts: none may come with the client.
units() { (cd "$ROOT" && find etc/systemd lib/systemd/system etc/init.d 2>/dev/null | sort); }
units_before=$(units)
apt_install "$WORK/install.log" "$(indeb accord-client)" || fatal "apt-get install accord-client"
ok "apt-get install ./$(basename "$(deb accord-client)") (dependencies from the mirror)"
check "accordctl runs" in_root accordctl --version
for p in accordd accord-site accord-sim accord; do
    expect "accord-client pulled no $p" not installed "$p"
done
expect "no system user accord" not in_root getent passwd accord
expect "no unit and no enablement link appeared" \
    test "$(units)" = "$units_before"
expect "no process runs in the chroot" test -z "$(chroot_processes)"

step "accordd"
apt_install "$WORK/install.log" "$(indeb accordd)" || fatal "apt-get install accordd"
ok "apt-get install ./$(basename "$(deb accordd)")"
check "the system user accord exists" in_root getent passwd accord
expect "accordd made no user accord-site" not in_root getent passwd accord-site
check "/var/lib/accord belongs to accord" test "$(in_root stat -c %U:%a /var/lib/accord)" = accord:750
check "accordd.service is enabled" test -L "$ROOT/etc/systemd/system/multi-user.target.wants/accordd.service"
# The unit as installed, with the files it names in place (its manual page
# comes with docs/man/; man is not in the chroot).
check "systemd-analyze verify accordd.service" \
    in_root systemd-analyze verify --man=no /lib/systemd/system/accordd.service

NOTIFY_LOG=$WORK/notify.log
notify_listener /run/accordd-notify "$NOTIFY_LOG" || fatal "the notification socket"
LISTENER=$LPID
NETNS_OF="" start_accordd "$WORK/accordd" || fatal "accordd serves 127.0.0.1:8080"
ok "accordd serves 127.0.0.1:8080 (started as accordd.service starts it)"
PID=$DPID
check "accordd runs as accord" test "$(stat -c %u "/proc/$PID")" = "$(in_root id -u accord)"
check "accordd's group is accord" \
    test "$(awk '/^Gid:/ { print $2 }' "/proc/$PID/status")" = "$(in_root id -g accord)"
out=$(in_net "$PID" accordctl submit /tmp/offer.xml 2>&1)
sed 's/^/    | /' <<<"$out"
id=$(awk '$1 == "Agreement" { print $2; exit }' <<<"$out")
expect "accordctl submit: an agreement" test -n "$id"
expect "the agreement is agreed (Observed)" grep -q "^State *Observed" <<<"$(in_net "$PID" accordctl show "$id" 2>&1)"
check "/var/lib/accord/accord.db belongs to accord" \
    test "$(in_root stat -c %U /var/lib/accord/accord.db)" = accord
# SIGHUP: a reload (nothing to reread on plain HTTP), then ready again.
kill -HUP "$PID"
for _ in $(seq 1 50); do [ "$(grep -c '^READY=1' "$NOTIFY_LOG")" -ge 2 ] && break; sleep 0.1; done
rc=0
stop_daemon "$PID" || rc=$?
expect "accordd stops on SIGTERM with status 0" test "$rc" = 0
wait "$LISTENER"
# The states, in order; besides them only more time while the migrations
# run (EXTEND_TIMEOUT_USEC, before READY) and keep-alives.
notified=$(grep -v '^EXTEND_TIMEOUT_USEC=[0-9]*$\|^WATCHDOG=1$' "$NOTIFY_LOG" |
    sed 's/MONOTONIC_USEC=[0-9]*/MONOTONIC_USEC=T/' | paste -sd'|' -)
echo "    | $notified"
expect "accordd told the manager: ready, reloading, ready, stopping" \
    test "$notified" = "READY=1|RELOADING=1 MONOTONIC_USEC=T|READY=1|STOPPING=1"
expect "accordd asked for more time to start while it migrated its new database" \
    test "$(head -n 1 "$NOTIFY_LOG" | cut -d= -f1)" = EXTEND_TIMEOUT_USEC

# shellcheck source=site.sh
. "$SRC/tests/package/site.sh"

step "accord-sim"
apt_install "$WORK/install.log" "$(indeb accord-sim)" || fatal "apt-get install accord-sim"
ok "apt-get install ./$(basename "$(deb accord-sim)")"
check "accord-sim runs" in_root accord-sim --version
check "accord-flowgen runs" in_root accord-flowgen --version

step "apt-get purge"
check "apt-get purge ${PARTS[*]}" apt_root purge "${PARTS[@]}"
for f in /etc/accord /etc/accord-site/accord-site.conf /usr/sbin/accordd /usr/sbin/accord-site /usr/bin/accordctl \
    /usr/bin/accord-sim /var/lib/accord /var/lib/accord-site /lib/systemd/system/accordd.service \
    /lib/systemd/system/accord-site@.service /etc/systemd/system/multi-user.target.wants/accordd.service; do
    expect "nothing left: $f" test ! -e "$ROOT$f"
done
for p in "${PARTS[@]}"; do
    check "dpkg -L $p lists nothing" test -z "$(in_root dpkg -L "$p" 2>/dev/null)"
done
check "the system users stay (Debian's policy)" in_root getent passwd accord accord-site
# dpkg removes its own files only: the instances' configurations are the
# administrator's.
check "/etc/accord-site/alpha.conf stays (the administrator's)" test -f "$ROOT/etc/accord-site/alpha.conf"

# shellcheck source=upgrade.sh
. "$SRC/tests/package/upgrade.sh"

archive_save

step "lintian's verdict"
if wait "$LINTIAN"; then
    ok "lintian reports no error and no warning (the overrides say why)"
else
    bad "lintian reports errors or warnings"
fi
sed 's/^/    | /' "$WORK/lintian.log"

step "done"
checks_summary test_package "in $(($(date +%s) - T0)) s"
