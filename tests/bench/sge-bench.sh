#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sge-bench.sh - co-allocates across a real Slurm cluster and a real Grid
# Engine cluster (both started here, on this machine, and stopped after) and
# prints Accord's time per agreement next to the raw commands that book the
# same (scontrol create reservation + qrsub).  Needs root (the daemons), and
# no other Grid Engine testbed running (its bridge and subnet are fixed).
#   tests/bench/sge-bench.sh [runs, default 10]
set -euo pipefail
cd "$(dirname "$0")/../.."
export SLURM_TESTBED_DIR=${SLURM_TESTBED_DIR:-/tmp/accord-slurm-bench}
export SLURM_TESTBED_PORT_BASE=${SLURM_TESTBED_PORT_BASE:-18800}
export SLURM_TESTBED_CLUSTERS="sitea:8"
export SGE_TESTBED_DIR=${SGE_TESTBED_DIR:-/tmp/accord-sge-bench}
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j2 --target accord_sge_bench >/dev/null
tests/slurm/stop-testbed.sh --purge 2>/dev/null || true
tests/sge/stop-testbed.sh --purge 2>/dev/null || true
trap 'tests/slurm/stop-testbed.sh --purge; tests/sge/stop-testbed.sh --purge' EXIT
tests/slurm/start-testbed.sh
tests/sge/start-testbed.sh
build-bench/tests/accord_sge_bench "${1:-10}"
