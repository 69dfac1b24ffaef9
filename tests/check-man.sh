#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every man page of docs/man renders without a warning: man(1) from man-db
# with groff's warnings on (man --warnings), and lexgrog finds its NAME line
# (what apropos and whatis index).  Pages cited in SEE ALSO that are not
# here are not checked.
#
#   tests/check-man.sh [DIR]
DIR=${1:-$(dirname "$0")/../docs/man}
command -v man >/dev/null || { echo "FAIL: no man (install man-db and groff-base)" >&2; exit 1; }
fails=0
n=0
for page in "$DIR"/*.[1-8]; do
    [ -e "$page" ] || continue
    n=$((n + 1))
    warnings=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$page" 2>&1 >/dev/null)
    if [ -n "$warnings" ]; then
        echo "FAIL: $page: $warnings" >&2
        fails=$((fails + 1))
    fi
    if command -v lexgrog >/dev/null && ! lexgrog "$page" >/dev/null 2>&1; then
        echo "FAIL: $page: lexgrog finds no NAME line" >&2
        fails=$((fails + 1))
    fi
done
if [ $n = 0 ]; then
    echo "FAIL: no page in $DIR" >&2
    exit 1
fi
[ $fails = 0 ] || exit 1
echo "$n pages render without warnings"
