#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# slurm-bench.sh - co-allocates on two real Slurm clusters (started here, on
# this machine, and stopped after) and prints Accord's time next to the time
# of the Slurm commands it ran.  Needs root (Slurm's daemons).
#   tests/bench/slurm-bench.sh [negotiations, default 20]
set -euo pipefail
cd "$(dirname "$0")/../.."
export SLURM_TESTBED_DIR=${SLURM_TESTBED_DIR:-/tmp/accord-slurm-bench}
export SLURM_TESTBED_PORT_BASE=${SLURM_TESTBED_PORT_BASE:-18800}
export SLURM_TESTBED_CLUSTERS="sitea:8 siteb:16"
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j "$(nproc)" --target accord_slurm_bench >/dev/null
tests/slurm/stop-testbed.sh --purge 2>/dev/null || true
tests/slurm/start-testbed.sh
trap 'tests/slurm/stop-testbed.sh --purge' EXIT
build-bench/tests/accord_slurm_bench "${1:-20}"
