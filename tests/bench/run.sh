#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh - builds an optimised Accord and prints the benchmark's figures.
#   tests/bench/run.sh [seconds for each HTTP run, default 10]
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j "$(nproc)" --target accord_bench >/dev/null
echo "machine: $(nproc) cores, $(uname -srm)"
build-bench/tests/accord_bench "${1:-10}"
