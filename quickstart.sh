#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# quickstart.sh - from a fresh Debian 12 machine (as root) to a running Accord.
#
#   ./quickstart.sh run    install what is missing, build, and start accordd on
#                          127.0.0.1:8080 with the embedded simulated testbed;
#                          started as root, accordd runs as the unprivileged
#                          system account accord (made if missing), with its
#                          database and jobs in /var/lib/accord-quickstart, so
#                          that nothing an offer names runs as root
#   ./quickstart.sh test   install what is missing, build (plain, with
#                          ASan+UBSan, and Release: the benchmarks' build must
#                          compile warning-free too), run every test through
#                          ctest in the first two builds, then each fuzzer for
#                          FUZZ_SECONDS; the last line is one verdict, and the
#                          exit status is non-zero on any failure
#
# Environment: JOBS (parallel build jobs, default: all cores), FUZZ_SECONDS
# (per fuzzer, default 20; 0 skips fuzzing).
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(build-essential cmake pkg-config libmicrohttpd-dev libxml2-dev libsqlite3-dev
          libssl-dev libcurl4-openssl-dev libcunit1-dev libinih-dev libjansson-dev zlib1g-dev clang-format
          libgnutls28-dev valgrind curl mpich libmpich-dev gnuplot-nox libxmlsec1-dev
          libxmlsec1-openssl libpq-dev libcjose-dev)
# cjose verifies the JWT access tokens of trusted issuers (lib/jwt).
# libxmlsec1 (OpenSSL backend) signs the agreements (XML-DSig, lib/dsig).
# GnuTLS: the TLS of libmicrohttpd's servers (lib/tls: certificates reloaded,
# client certificates verified in the handshake).
# MPICH starts the agreed meta-jobs (mpiexec.hydra) and builds accord-ring.
# gnuplot-nox draws accord-sim's plots (examples/sim, docs/simulator.md).
# The tests also run real Slurm clusters (tests/slurm/start-testbed.sh) and
# put emulated sites into network namespaces (ip, from iproute2; ping checks
# the testbed of tools/netbed.sh); the tc adapter's kernel test drives tc
# (iproute2) and sends traffic with ping.
# clang and its runtime (libFuzzer) build the fuzzers (tests/fuzz).
# The signature tests check issued agreements with the real xmlsec1 command.
# The sites test (tests/integration/test_sites_real.sh) reads the daemons'
# journals with the sqlite3 shell.
# The man pages (docs/man) are rendered with man-db's man and groff.
# The package test (tests/package/test_package.sh) builds the Debian packages
# in a debootstrapped Debian 12 from their Build-Depends alone, checks them
# with lintian, installs them into another (with systemd there, for
# systemd-analyze verify on the installed units); its notification listener
# is python3, and it builds the single package of before from git's history.
# The sge adapter's tests start a real Grid Engine cluster (tests/sge).
# libpq: the store on PostgreSQL (lib/sql/sql_pg.c); its tests start
# PostgreSQL 15 clusters of their own (tests/pg).
# prometheus: its promtool checks both daemons' /metrics (test_metrics).
# patroni, etcd-server and etcd-client: test_patroni runs PostgreSQL under
# Patroni with a three-member etcd of its own.
TEST_PACKAGES=(slurm-wlm munge iproute2 iputils-ping clang libclang-rt-dev xmlsec1 sqlite3 faketime
               openssl man-db groff-base debhelper dpkg-dev fakeroot lintian debootstrap
               python3 git chromium gridengine-master gridengine-exec gridengine-client
               gridengine-common postgresql-15 systemd prometheus patroni etcd-server etcd-client
               procps)
# procps: pgrep finds the MPI ranks whose uid test_sites_sge and
# test_launch_batch check from /proc.
# systemd: systemd-analyze rates the units (check_unit_security), and
# test_systemd_jobs boots a Debian 12 with systemd to run jobs in units.
# The web page's test (tests/browser) drives chromium with playwright-core
# from npm: Debian's nodejs and npm unless a node with npm is there already
# (Debian's npm conflicts with NodeSource's nodejs, which brings its own).
command -v npm >/dev/null || TEST_PACKAGES+=(nodejs npm)
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}

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
    # Grid Engine's packages would ask whether to set up a cluster in
    # /var/lib/gridengine: no (tests/sge makes cells of its own).
    echo "gridengine-common shared/gridengineconfig boolean false" |
        "${sudo[@]}" debconf-set-selections 2>/dev/null || true
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

# failure_digest DIR "NAME, NAME": what each failed test said about its
# failure, from ctest's log in DIR: CUnit's failed assertions and the lines
# that say FAIL or die, without the servers' info lines.  Printed last, so
# that a log cut in the middle still shows why.
failure_digest() {
    local file=$1/Testing/Temporary/LastTest.log t
    [ -f "$file" ] || return 0
    for t in ${2//,/ }; do
        log "why $t failed:"
        # at most 40 lines, counted in awk (no head: a pipe closed early
        # would fail under pipefail); the servers' own log lines skipped
        awk -v t="$t" '
            function out(s) { print "    " s; if (++n >= 40) exit }
            $0 ~ "^[0-9]+/[0-9]+ Test: " t "$" { on = 1; next }
            on && /^<end of output>/ { on = 0 }
            !on { next }
            /^ *Test: / { cur = $0; sub(/ *\.\.\..*/, "", cur) }
            /FAILED/ { out(cur " ... FAILED"); next }
            /^ *[0-9]+\. .*:[0-9]+ *- / { out($0); next }
            /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T/ { next }
            /FAIL|[Ff]ailed|[Aa]ssert|[Ee]rror|Run Summary|asserts|tests / { out($0) }
        ' "$file" || true
    done
}

PASSED=""
# run_suite NAME DIR NOT_RUN ctest...: runs ctest in DIR; on failure prints
# the verdict (how many failed, which, what was not run) and exits 1.
run_suite() {
    local name=$1 dir=$2 not_run=$3
    shift 3
    log "tests: $name"
    local out
    out=$(mktemp)
    local rc=0
    (cd "$dir" && "$@") 2>&1 | tee "$out" || rc=${PIPESTATUS[0]}
    local total failed names
    total=$(sed -n 's/.*tests passed, [0-9]* tests failed out of \([0-9]*\).*/\1/p' "$out" | tail -1)
    failed=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of.*/\1/p' "$out" | tail -1)
    names=$(sed -n '/The following tests FAILED:/,$ s/^[[:space:]]*[0-9]* - \([^ ]*\) .*/\1/p' "$out" |
        paste -sd, - | sed 's/,/, /g')
    rm -f "$out"
    if [ "$rc" -ne 0 ]; then
        failure_digest "$dir" "$names" || true
        if [ -n "$failed" ]; then
            log "FAILED: $name: $failed of $total tests failed ($names); $not_run not run"
        else
            log "FAILED: $name: ctest ended with status $rc; $not_run not run"
        fi
        exit 1
    fi
    PASSED+="${PASSED:+, }${total:-0} in the $name"
}

# run_accordd ARGS...: accordd in the foreground.  Started by root, it runs
# as the system account accord (never root: the jobs it launches run as its
# user), from /var/lib/accord-quickstart, which holds its database and jobs.
# When accord cannot reach the build tree (a clone under /root), accordd and
# the example MPI programs are copied there first.
QS_USER=accord
QS_DIR=/var/lib/accord-quickstart
run_accordd() {
    if [ "$(id -u)" -ne 0 ]; then
        log "starting accordd as $(id -un) (Ctrl-C stops it)"
        exec build/accordd "$@"
    fi
    id -u "$QS_USER" >/dev/null 2>&1 ||
        useradd --system --user-group --home-dir /nonexistent --no-create-home \
            --shell /usr/sbin/nologin --comment "Accord co-allocation service" "$QS_USER"
    install -d -o "$QS_USER" -g "$QS_USER" -m 0750 "$QS_DIR"
    local as=(setpriv "--reuid=$QS_USER" "--regid=$QS_USER" --init-groups --no-new-privs
              --inh-caps=-all --bounding-set=-all --)
    local bin=$PWD/build
    if ! "${as[@]}" test -x "$bin/accordd"; then
        bin=$QS_DIR/bin
        install -d -m 0755 "$bin"
        for p in accordd accord-ring accord-metatrace; do
            [ -e "build/$p" ] && install -m 0755 "build/$p" "$bin/$p"
        done
        log "$QS_USER cannot reach $PWD/build: running a copy from $bin"
    fi
    log "starting accordd as $QS_USER in $QS_DIR (Ctrl-C stops it)"
    cd "$QS_DIR"
    exec "${as[@]}" "$bin/accordd" "$@"
}

case "${1:-}" in
run)
    install_missing
    build build
    run_accordd "${@:2}"
    ;;
test)
    install_missing "${TEST_PACKAGES[@]}"
    build build || { log "FAILED: the plain build does not compile; no test run"; exit 1; }
    build build-asan -DACCORD_SANITIZE=ON ||
        { log "FAILED: the ASan+UBSan build does not compile; no test run"; exit 1; }
    # The benchmarks build Release (tests/bench/*.sh): -O3 warns where -O2 does not.
    build build-release -DCMAKE_BUILD_TYPE=Release ||
        { log "FAILED: the Release build does not compile; no test run"; exit 1; }
    # Each phase that fails ends the run with one verdict that names it, the
    # failed tests and the phases not run.
    run_suite "plain build" build "sanitizer and fuzz phases" \
        ctest --output-on-failure -j 2
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        run_suite "ASan+UBSan build" build-asan "fuzz phase" \
        ctest --output-on-failure -j 2 -LE "valgrind|package|patroni"
    fuzz_note="fuzzing skipped (FUZZ_SECONDS=0)"
    if [ "$FUZZ_SECONDS" -gt 0 ]; then
        build build-fuzz -DCMAKE_C_COMPILER=clang -DACCORD_FUZZ=ON -DACCORD_TESTS=OFF || {
            log "FAILED: the fuzzers do not compile; the tests passed ($PASSED)"
            exit 1
        }
        log "fuzzing: each harness for ${FUZZ_SECONDS} s"
        if ! tests/fuzz/run.sh build-fuzz "$FUZZ_SECONDS"; then
            log "FAILED: fuzzing found a crash (the input is kept, see above); the tests" \
                "passed ($PASSED)"
            exit 1
        fi
        fuzz_note="fuzzing $((4 * FUZZ_SECONDS)) s: no crash"
    fi
    log "PASSED: every test passed ($PASSED); $fuzz_note"
    ;;
*)
    echo "usage: $0 run | test" >&2
    exit 2
    ;;
esac
