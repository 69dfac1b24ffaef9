#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# wal-bench.sh - builds an optimised Accord and prints the largest size of
# accordd's write-ahead log while 100,000 agreements are made.
#   tests/bench/wal-bench.sh [agreements, default 100000] [wal_limit bytes]
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j "$(nproc)" --target accord_wal_bench >/dev/null
echo "machine: $(nproc) cores, $(uname -srm)"
build-bench/tests/accord_wal_bench "$@"
