#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# hostile3-bench.sh [BUILD [OPTION...]]: the three hostile cases of issue 31 against
# daemons with their default bounds (tests/bench/hostile3_bench.c): idle
# kept-alive connections over accordd's connection_limit, an admitted peer of
# accord-site that holds 2048 connections with slow bodies, and slow readers
# of large lists on accordd.  Release build (tests/bench/run.sh's).  Prints
# figures; takes a minute or two.  Options after BUILD go to the program:
#   hostile3-bench.sh build-bench --only C --name-bytes 4000
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build-bench}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" --target accord_hostile3_bench >/dev/null
[ $# -gt 0 ] && shift
"$build/tests/accord_hostile3_bench" "$@"
