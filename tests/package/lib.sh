# SPDX-License-Identifier: Apache-2.0
# lib.sh - the helpers of the package test (sourced by test_package.sh):
# checks that show what failed, the cached Debian 12 systems it unpacks into
# chroots, and the cleanup that unmounts and removes them however it ends.
#
# The caller sets SRC (the source tree) and WORK (its temporary directory)
# and sources tests/support/checks.sh first.  Caches, in ACCORD_TEST_CACHE
# (default /var/cache/accord-test), each rebuilt when a week old:
#   bookworm-minbase.tar          debootstrap --variant=minbase, package lists
#   bookworm-minbase-systemd.tar  that and systemd (installs: systemd-analyze)
#   bookworm-build-HASH.tar       that minbase, build-essential and the
#                                 Build-Depends whose text hashes to HASH
# Mirror: ACCORD_TEST_MIRROR (default http://deb.debian.org/debian).
CACHE=${ACCORD_TEST_CACHE:-/var/cache/accord-test}
MIRROR=${ACCORD_TEST_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
T0=$(date +%s)
# The chroot the helpers below work in (in_root); the test sets it.
ROOT=""
# Processes the cleanup kills if they still run (daemons, listeners, lintian).
PIDS=()

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

# not COMMAND...: true when COMMAND fails (for expect, which runs a command).
not() { ! "$@"; }

# apt-get in the chroot, never asking; dpkg does not sync each file (the
# chroot is thrown away; under load that saves half the install's time).
apt_root() {
    in_root env DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends \
        -o Dpkg::Options::=--force-unsafe-io "$@"
}

# Everything mounted under the temporary directory, deepest first.
mounts_under_work() { awk -v r="$WORK" 'index($2, r "/") == 1 { print $2 }' /proc/mounts | sort -r; }

cleanup() {
    local p m
    # Only those still running as this shell's children: a pid that ended
    # may have been given to another process since.
    for p in "${PIDS[@]}"; do
        if [ "$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')" = "$$" ]; then
            kill -KILL "$p" 2>/dev/null
            wait "$p" 2>/dev/null
        fi
    done
    for m in $(mounts_under_work); do
        umount "$m" 2>/dev/null || umount -l "$m"
    done
    if [ -n "$(mounts_under_work)" ]; then
        echo "test_package: still mounted under $WORK, not removing it"
    elif [ "${ACCORD_KEEP_TMP:-}" = 1 ]; then
        echo "test_package: kept $WORK"
    else
        rm -rf "$WORK"
    fi
}

# fresh TARBALL: true when the cached TARBALL exists and is under a week old.
fresh() { [ -f "$1" ] && [ -z "$(find "$1" -mtime +7)" ]; }

# cache_root TARBALL: tar the chroot $ROOT into TARBALL (atomically: a test
# running beside this one sees the old file or the new one).
cache_root() {
    in_root apt-get clean
    tar -C "$ROOT" -cf "$1.tmp.$$" . && mv "$1.tmp.$$" "$1" ||
        { rm -f "$1.tmp.$$"; fatal "caching the system in $1"; }
}

# The tarball functions below set TAR to the cached file's path (never
# run them in $(...): fatal must end the test, and ok must count).
TAR=""

# minbase_tarball: the cached debootstrapped system, made first if missing
# or stale (in $WORK/debootstrap, removed afterwards).
minbase_tarball() {
    local t=$CACHE/$SUITE-minbase.tar
    if ! fresh "$t"; then
        ROOT=$WORK/debootstrap
        mkdir -p "$ROOT" "$CACHE"
        debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
            { tail -n 20 "$WORK/debootstrap.log"; fatal "debootstrap --variant=minbase $SUITE"; }
        cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
        # The package lists travel with the cache (stale ones are refreshed
        # when an install fails).
        in_root apt-get -q update >>"$WORK/debootstrap.log" 2>&1 || fatal "apt-get update in the chroot"
        cache_root "$t"
        rm -rf "$ROOT"
        ok "debootstrap --variant=minbase $SUITE, cached in $t"
    fi
    TAR=$t
}

# The apt archive of a run, $WORK/archives, mounted into each chroot: each
# .deb is fetched once.  It starts from the copy the last run kept in
# $CACHE/archives and leaves its own there (copies: runs beside each other
# never share apt's lock).
archive_load() {
    mkdir -p "$WORK/archives/partial" "$CACHE/archives"
    find "$CACHE/archives" -maxdepth 1 -name '*.deb' -exec cp -t "$WORK/archives/" {} +
}
archive_save() {
    local d to
    for d in "$WORK"/archives/*.deb; do
        to=$CACHE/archives/${d##*/}
        [ -e "$to" ] && continue
        if ! { cp "$d" "$to.tmp.$$" && mv "$to.tmp.$$" "$to"; }; then
            rm -f "$to.tmp.$$"
        fi
    done
    # Versions the mirror no longer has are dropped when a week old.
    find "$CACHE/archives" -maxdepth 1 -name '*.deb' -mtime +7 -delete
}

# unpack_root DIR TARBALL [ARCHIVE]: DIR becomes $ROOT, with /proc, /dev
# and an apt archive mounted: the run's (above), or the directory ARCHIVE
# (making a cached system: its .debs are not kept).
unpack_root() {
    ROOT=$1
    local archive=${3:-$WORK/archives}
    if [ -n "${3:-}" ]; then
        mkdir -p "$archive/partial"
    elif [ ! -d "$archive" ]; then
        archive_load
    fi
    mkdir -p "$ROOT"
    tar -C "$ROOT" -xf "$2" || fatal "unpacking $2"
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
    mount -t proc proc "$ROOT/proc" || fatal "mounting /proc in $ROOT"
    mount --bind /dev "$ROOT/dev" || fatal "mounting /dev in $ROOT"
    mount --bind "$archive" "$ROOT/var/cache/apt/archives" || fatal "mounting the apt archive in $ROOT"
}

# apt_install LOG ARGS...: apt-get install in $ROOT; when it fails, the
# lists may be older than the mirror's packages: refresh them, try again.
apt_install() {
    local log=$1
    shift
    apt_root install "$@" >>"$log" 2>&1 && return 0
    in_root apt-get -q update >>"$log" 2>&1
    apt_root install "$@" >>"$log" 2>&1 || { tail -n 30 "$log"; return 1; }
}

# install_tarball: the cached minbase with systemd, for the installs.
install_tarball() {
    local t=$CACHE/$SUITE-minbase-systemd.tar
    if ! fresh "$t"; then
        minbase_tarball
        unpack_root "$WORK/make-install-root" "$TAR" "$WORK/archives-make"
        apt_install "$WORK/apt.log" systemd || fatal "apt-get install systemd in the chroot"
        umount "$ROOT/var/cache/apt/archives" "$ROOT/dev" "$ROOT/proc"
        cache_root "$t"
        rm -rf "$ROOT"
        ok "minbase and systemd, cached in $t"
    fi
    TAR=$t
}

# build_depends CONTROL: the Build-Depends field of the source paragraph,
# on one line.
build_depends() {
    awk '/^$/ { exit } /^Build-Depends:/ { on = 1; sub(/^Build-Depends:/, ""); print; next }
         on && /^[ \t]/ { print; next } { on = 0 }' "$1" | tr -s ' \t\n' ' ' | sed 's/^ //; s/ $//'
}

# build_tarball CONTROL: the cached build system for CONTROL's Build-Depends:
# the minbase, build-essential (which Debian's policy leaves out of
# Build-Depends) and what apt-get satisfy installs for the field, nothing
# else.  Its name carries a hash of the field, so a changed field gets a
# system of its own (older ones are removed).
build_tarball() {
    local deps hash t
    deps=$(build_depends "$1")
    [ -n "$deps" ] || fatal "no Build-Depends in $1"
    hash=$(printf '%s' "$deps" | sha256sum | cut -c1-12)
    t=$CACHE/$SUITE-build-$hash.tar
    if ! fresh "$t"; then
        minbase_tarball
        unpack_root "$WORK/make-build-root" "$TAR" "$WORK/archives-make"
        apt_install "$WORK/apt.log" build-essential ||
            fatal "apt-get install build-essential in the build chroot"
        apt_root satisfy "$deps" >>"$WORK/apt.log" 2>&1 || {
            tail -n 30 "$WORK/apt.log"
            fatal "apt-get satisfy of the Build-Depends in the build chroot"
        }
        umount "$ROOT/var/cache/apt/archives" "$ROOT/dev" "$ROOT/proc"
        cache_root "$t"
        rm -rf "$ROOT"
        find "$CACHE" -maxdepth 1 -name "$SUITE-build-*.tar" ! -name "$(basename "$t")" -delete
        ok "build-essential and the Build-Depends alone, cached in $t"
    fi
    TAR=$t
}

# build_in_root DIR OUT: dpkg-buildpackage -b in the chroot $ROOT, on the
# source tree DIR (a path inside it), as an unprivileged user
# (Rules-Requires-Root: no) without network; the results go to OUT.
build_in_root() {
    local dir=$1 out=$2 log
    log=$WORK/build-$(basename "$dir").log
    chown -R 65534:65534 "$ROOT$(dirname "$dir")"
    if ! unshare --net -- chroot "$ROOT" setpriv --reuid=65534 --regid=65534 --clear-groups \
        env HOME=/nonexistent DEB_BUILD_OPTIONS=parallel=2 \
        sh -c 'cd "$1" && exec dpkg-buildpackage -b -us -uc' sh "$dir" >"$log" 2>&1; then
        tail -n 40 "$log"
        return 1
    fi
    mkdir -p "$out"
    cp "$ROOT$(dirname "$dir")"/*.deb "$ROOT$(dirname "$dir")"/*.changes \
        "$ROOT$(dirname "$dir")"/*.buildinfo "$out/"
}

# chroot_processes: the processes whose root is the chroot $ROOT.
chroot_processes() {
    local p
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && echo "${p#/proc/} $(tr '\0' ' ' <"$p/cmdline")"
    done
    return 0
}
