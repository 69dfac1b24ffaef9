#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# server-bench.sh - builds an optimised Accord and loads the real accordd:
# agreements/s while N agreements fill the database, its RSS then, GET/s,
# a new client among 1,500 idle and slow connections, SIGTERM to exit.
#   tests/bench/server-bench.sh [N, default 100000] [seconds of GETs, default 10]
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j "$(nproc)" --target accord_server_bench accordd >/dev/null
echo "machine: $(nproc) cores, $(uname -srm)"
build-bench/tests/accord_server_bench "${1:-100000}" "${2:-10}"
