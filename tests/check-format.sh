#!/usr/bin/env bash
# check-format.sh - fails when clang-format would change a C file of the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=$(git ls-files '*.c' '*.h' 2>/dev/null | while read -r f; do
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
