#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh - runs each libFuzzer harness for a bounded time (CI: quickstart.sh
# test).  First every saved regression input under tests/data/fuzz/ goes
# through its harness once, then each harness searches from its seed corpus.
# A crash, a sanitizer report, a leak or a hang (an input over 10 s) fails.
#
#   tests/fuzz/run.sh BUILD_DIR [SECONDS_PER_HARNESS]     (default 20)
#
# BUILD_DIR is configured with -DCMAKE_C_COMPILER=clang -DACCORD_FUZZ=ON.
# The last line says how many inputs ran; a crashing input is kept and named.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:?usage: run.sh BUILD_DIR [SECONDS]}
SECONDS_EACH=${2:-20}
WORK=$(mktemp -d /tmp/accord-fuzz-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

log() { printf '[fuzz] %s\n' "$*" >&2; }

# harness  seed directories                                    regression prefix
HARNESSES=(
    "fuzz_offer:$SRC/tests/data/offers $SRC/docs/examples:offer"
    "fuzz_config:$SRC/tests/fuzz/seeds/config:config"
    "fuzz_http:$SRC/tests/fuzz/seeds/http:http"
    "fuzz_proto:$SRC/tests/fuzz/seeds/proto:proto"
    "fuzz_jwt:$SRC/tests/fuzz/seeds/jwt:jwt"
)

total_runs=0
failed=()
for spec in "${HARNESSES[@]}"; do
    IFS=: read -r name seeds prefix <<<"$spec"
    bin=$BUILD/tests/fuzz/$name
    [ -x "$bin" ] || { log "$bin not built"; failed+=("$name (not built)"); continue; }
    dict=$SRC/tests/fuzz/$prefix.dict
    dict_opt=()
    [ -f "$dict" ] && dict_opt=(-dict="$dict")
    opts=(-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$WORK/$name-")

    regressions=("$SRC"/tests/data/fuzz/"$prefix"-*)
    if [ -e "${regressions[0]}" ]; then
        if ! "$bin" "${opts[@]}" "${regressions[@]}" >"$WORK/$name-regress.log" 2>&1; then
            tail -40 "$WORK/$name-regress.log" >&2
            log "$name: a saved regression input (tests/data/fuzz/$prefix-*) fails again"
            failed+=("$name (regression input)")
            continue
        fi
    fi

    mkdir -p "$WORK/$name-corpus"
    # shellcheck disable=SC2086 # seeds is a list of directories
    "$bin" "${opts[@]}" "${dict_opt[@]}" -max_total_time="$SECONDS_EACH" -print_final_stats=1 \
        "$WORK/$name-corpus" $seeds >"$WORK/$name.log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/$name.log" | tail -1)
    if [ $rc -ne 0 ] || [ -z "$runs" ]; then
        grep -v '^#' "$WORK/$name.log" | tail -40 >&2
        keep=$(mktemp -d /tmp/accord-fuzz-crash-XXXXXX)
        cp "$WORK/$name"-crash-* "$WORK/$name"-leak-* "$WORK/$name"-timeout-* \
            "$WORK/$name"-oom-* "$WORK/$name.log" "$keep"/ 2>/dev/null
        log "$name: FAILED (exit $rc); the input and the log are in $keep"
        failed+=("$name")
        continue
    fi
    total_runs=$((total_runs + runs))
    log "$name: $runs inputs in ${SECONDS_EACH} s, no crash"
done

if [ ${#failed[@]} -gt 0 ]; then
    log "FAILED: ${failed[*]}"
    exit 1
fi
log "fuzzing ${#HARNESSES[@]} harnesses x ${SECONDS_EACH} s: $total_runs inputs, no crash"
