#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-all.sh - runs every experiment of examples/sim and writes its CSV and
# plot under OUT (default docs/sim): one command for all of science.md's
# experiments.  Replications run in parallel, at most JOBS at once.
#   examples/sim/run-all.sh [OUT] [JOBS]     (build first: cmake --build build)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-docs/sim}
JOBS=${2:-2}
SIM=${SIM:-build/accord-sim}
mkdir -p "$OUT"
for f in examples/sim/*.sim; do
    start=$(date +%s)
    "$SIM" -j "$JOBS" -o "$OUT" --plot "$f"
    echo "$(basename "$f"): $(( $(date +%s) - start )) s"
done
