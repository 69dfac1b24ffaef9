#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# hostile-bench.sh [BUILD]: an admitted client's wait while 5000 hostile
# connections (no bytes, or a byte every 5 s) from 50 addresses press on
# accordd and on accord-site (tests/bench/hostile_bench.c), each daemon with
# its default bounds.  Release build (tests/bench/run.sh's).  Prints figures.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build-bench}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" --target accord_hostile_bench >/dev/null
"$build/tests/accord_hostile_bench" --hostile 5000 --tries 50
