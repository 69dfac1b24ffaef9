#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# remote-bench.sh [BUILD] [RUNS]: the 3-site negotiation through in-process
# adapters and through the remote adapter to three real accord-site daemons
# over mutual TLS on loopback (tests/bench/remote_bench.c), RUNS times (default
# 3) with accord-site's defaults (threads = 4, durable), then once each with
# threads = 16 and with durable = no.  Prints figures; take the medians.
set -eu
build=${1:-build}
runs=${2:-3}
i=0
while [ "$i" -lt "$runs" ]; do
    "$build/tests/accord_remote_bench" 10 1000 4 yes 2>/dev/null
    echo
    i=$((i + 1))
done
"$build/tests/accord_remote_bench" 10 1000 16 yes 2>/dev/null
echo
"$build/tests/accord_remote_bench" 10 1000 4 no 2>/dev/null
