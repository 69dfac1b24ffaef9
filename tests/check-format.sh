#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-format.sh - fails when clang-format would change a C file of the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
list() { # the tracked C files, or every one under the source folders outside git
    git ls-files '*.c' '*.h' 2>/dev/null && return 0
    find lib adapters resources db server site simulator cli client tools examples tests \
        -name '*.[ch]' 2>/dev/null
}
bad=$(list | while read -r f; do
    if [ -f "$f" ] && ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
        echo "$f"
    fi
done)
if [ -n "$bad" ]; then
    echo "not formatted (run clang-format -i on them):"
    echo "$bad"
    exit 1
fi
echo "all C files formatted"
