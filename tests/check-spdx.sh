#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# check-spdx.sh - every source file of the tree (C, shell, Python, SQL,
# JavaScript, CSS, HTML, XSD, CMake, man pages, systemd units, configuration
# and simulator parameter files, the Debian maintainer scripts) names its
# licence in a line "SPDX-License-Identifier: Apache-2.0".  Data files (test
# fixtures, generated results, images) are covered by LICENSE and
# debian/copyright instead.
#
# Usage: tests/check-spdx.sh [SOURCE_DIR]     exit 0: all carry it, 1: not
set -u
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src" || exit 1
# The tree's files: git's list in a clone, else every file but build trees.
files() {
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files
    else
        find . -path ./.git -prune -o -path './build*' -prune -o -path ./Testing -prune \
            -o -path '*/node_modules' -prune -o -type f -print | sed 's|^\./||'
    fi
}
[ -f LICENSE ] || { echo "check-spdx: no LICENSE at the root" >&2; exit 1; }
grep -q "Apache License" LICENSE || { echo "check-spdx: LICENSE is not the Apache License" >&2; exit 1; }

bad=0
n=0
while IFS= read -r f; do
    case $f in
    tests/data/* | docs/sim/* | */corpus/*) continue ;;
    esac
    case ${f##*/} in
    *.c | *.h | *.css | *.sh | *.py | *.gp | *.sim | *.cmake | *.service | *.conf | \
        *.supp | *.dict | *.sql | *.js | *.mjs | *.html | *.xsd | CMakeLists.txt | \
        .clang-format | .gitignore) ;;
    run | rules | *.postinst | *.postrm | *.prerm | *.preinst) ;;
    *.[158]) case $f in docs/man/*) ;; *) continue ;; esac ;;
    *) continue ;;
    esac
    [ -f "$f" ] || continue
    n=$((n + 1))
    if ! head -n 5 "$f" | grep -q "SPDX-License-Identifier: Apache-2.0"; then
        echo "check-spdx: $f: no SPDX-License-Identifier line in its first five lines" >&2
        bad=1
    fi
done < <(files)
[ $bad -eq 0 ] && echo "check-spdx: $n source files carry the SPDX line"
exit $bad
