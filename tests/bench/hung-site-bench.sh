#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# hung-site-bench.sh [BUILD [OPTION...]]: issue 32, item 3 (tests/bench/hung_site_bench.c).
# The other sites' agreements per second without load and with 40 clients
# on a hung site, side by side in each run, their ratio, and the medians.
# Release build (tests/bench/run.sh's).  Takes about 45 s a run (3 runs by
# default).  Options after BUILD go to the program:
#   hung-site-bench.sh build-bench --runs 5 --seconds 20 --timeout 15
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build-bench}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" --target accord_hung_site_bench >/dev/null
[ $# -gt 0 ] && shift
"$build/tests/accord_hung_site_bench" "$@"
