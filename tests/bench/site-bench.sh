#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# site-bench.sh [BUILD]: accord-site's cost per protocol call over mutual TLS
# (tests/bench/site_bench.c), with durable commits and without.  Prints figures.
set -eu
build=${1:-build}
for durable in yes no; do
    "$build/tests/accord_site_bench" --rounds 500 --clients 16 --cycles 100 --durable "$durable"
    echo
done
