#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# check-doc-links.sh - every relative link of README.md and docs/**/*.md must
# name a file of the tree, and a link's #anchor a heading of the Markdown file
# it points to (GitHub's anchors: lower case, punctuation dropped, blanks to
# dashes).  Links to http(s), mailto and the like are not followed.
#
# Usage: tests/check-doc-links.sh [SOURCE_DIR]     exit 0: all resolve, 1: not
set -u
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src" || exit 1

# The anchors of a Markdown file, one a line (fenced code blocks skipped).
anchors() {
    awk '/^```/ { code = !code; next } !code && /^#+ / { sub(/^#+ +/, ""); print }' "$1" |
        sed -e 's/`//g' -e 's/\[\([^]]*\)\]([^)]*)/\1/g' |
        tr '[:upper:]' '[:lower:]' |
        sed -e 's/[^[:alnum:] _-]//g' -e 's/ /-/g'
}

bad=0
checked=0
while IFS= read -r md; do
    dir=$(dirname "$md")
    # the targets of [text](target), outside fenced code blocks
    targets=$(awk '/^```/ { code = !code; next } !code' "$md" |
        grep -o '\](\([^)[:space:]]*\))' | sed -e 's/^](//' -e 's/)$//')
    for t in $targets; do
        case $t in
        http:* | https:* | mailto:* | file:* | man:*) continue ;;
        esac
        path=${t%%#*}
        anchor=
        [ "$path" != "$t" ] && anchor=${t#*#}
        if [ -z "$path" ]; then
            file=$md
        else
            file=$dir/$path
        fi
        checked=$((checked + 1))
        if [ ! -e "$file" ]; then
            echo "$md: $t: no such file" >&2
            bad=1
            continue
        fi
        if [ -n "$anchor" ] && [ "${file%.md}" != "$file" ] && [ -f "$file" ]; then
            if ! anchors "$file" | grep -qxF -- "$anchor"; then
                echo "$md: $t: no heading with that anchor in $file" >&2
                bad=1
            fi
        fi
    done
done < <(find README.md docs -name '*.md' | sort)

[ "$bad" = 0 ] && echo "check-doc-links: $checked relative links resolve"
exit "$bad"
