#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# retention-bench.sh - builds an optimised Accord and prints POST latency
# with and without retention pruning 10,000 old agreements, from 16 clients
# (tests/bench/retention_bench.c).
#   tests/bench/retention-bench.sh [old agreements, default 10000] [most seconds]
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j2 --target accord_retention_bench >/dev/null
echo "machine: $(nproc) cores, $(uname -srm)"
build-bench/tests/accord_retention_bench "$@"
