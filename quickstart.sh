#!/usr/bin/env bash
# quickstart.sh - from a fresh Debian 12 machine (as root) to a running Accord.
#
#   ./quickstart.sh run    install what is missing, build, and start accordd on
#                          127.0.0.1:8080 with the embedded simulated testbed
#   ./quickstart.sh test   install what is missing, build (plain and with
#                          ASan+UBSan), and run every test through ctest
#
# Environment: JOBS (parallel build jobs, default: all cores).
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(build-essential cmake pkg-config libmicrohttpd-dev libxml2-dev libsqlite3-dev
          libssl-dev libcurl4-openssl-dev libcunit1-dev libinih-dev libjansson-dev clang-format
          valgrind curl mpich libmpich-dev)
# MPICH starts the agreed meta-jobs (mpiexec.hydra) and builds accord-ring.
# The tests also run real Slurm clusters (tests/slurm/start-testbed.sh) and
# put emulated sites into network namespaces (ip, from iproute2).
TEST_PACKAGES=(slurm-wlm munge iproute2)
JOBS=${JOBS:-$(nproc)}

log() { printf '[quickstart] %s\n' "$*" >&2; }

install_missing() { # install_missing [extra packages...]
    local missing=()
    for p in "${PACKAGES[@]}" "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
            || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    log "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    local apt=("${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 -q -y --no-install-recommends)
    if ! "${apt[@]}" install "${missing[@]}" >/tmp/accord-apt.log 2>&1; then
        "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 -q update >>/tmp/accord-apt.log 2>&1 || true
        "${apt[@]}" install "${missing[@]}" >>/tmp/accord-apt.log 2>&1 \
            || { tail -20 /tmp/accord-apt.log >&2; log "apt-get install failed"; exit 1; }
    fi
}

build() { # build DIR [cmake options...]
    local dir=$1
    shift
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
    cmake --build "$dir" -j "$JOBS"
}

case "${1:-}" in
run)
    install_missing
    build build
    log "starting accordd (Ctrl-C stops it)"
    exec build/accordd "${@:2}"
    ;;
test)
    install_missing "${TEST_PACKAGES[@]}"
    build build
    build build-asan -DACCORD_SANITIZE=ON
    log "tests (plain build, with valgrind on the server tests)"
    (cd build && ctest --output-on-failure -j 2)
    log "tests under AddressSanitizer and UndefinedBehaviorSanitizer"
    (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j 2 -LE valgrind)
    log "all tests passed"
    ;;
*)
    echo "usage: $0 run | test" >&2
    exit 2
    ;;
esac
