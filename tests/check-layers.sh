#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check-layers.sh - the layers of the tree hold: every quoted #include of a
# source file resolves, relative to that file, to a file of a layer its own
# layer may use (docs/architecture.md, "Layers").  With the path of a built
# accordctl it also checks that the client links neither libmicrohttpd nor
# GnuTLS.
#
#   tests/check-layers.sh [path/to/accordctl]
#
# Prints every include that breaks a rule, with its file and line, and exits
# non-zero when there is one.
set -eu
cd "$(dirname "$0")/.."

# layer: the top-level folders its files may include from (itself always).
allowed() {
    case $1 in
    lib) echo "lib" ;;
    adapters) echo "lib adapters" ;;
    resources) echo "lib adapters resources" ;;
    db) echo "lib db" ;;
    simulator) echo "lib simulator" ;;
    server) echo "lib adapters resources db simulator server" ;;
    site) echo "lib adapters resources site" ;;
    client) echo "lib client" ;;
    cli) echo "lib client cli" ;;
    tools) echo "lib tools" ;;
    examples) echo "examples" ;;
    *) return 1 ;;
    esac
}

LAYERS="lib adapters resources db simulator server site client cli tools examples"
bad=0
for layer in $LAYERS; do
    [ -d "$layer" ] || continue
    ok=$(allowed "$layer")
    # file:line:include for every quoted include of the layer's sources
    find "$layer" -name '*.[ch]' -print | sort | while read -r f; do
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
            sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1 \2/' |
            while read -r line inc; do
                dir=$(dirname "$f")
                target=$(realpath -m --relative-to=. "$dir/$inc")
                if [ ! -e "$target" ]; then
                    echo "$f:$line: \"$inc\" does not resolve relative to the file"
                    continue
                fi
                top=${target%%/*}
                case " $ok " in
                *" $top "*) ;;
                *) echo "$f:$line: $layer/ includes $target ($top/ is not below $layer/)" ;;
                esac
            done
    done
done >"${TMPDIR:-/tmp}/check-layers.$$"
if [ -s "${TMPDIR:-/tmp}/check-layers.$$" ]; then
    cat "${TMPDIR:-/tmp}/check-layers.$$"
    bad=1
fi
rm -f "${TMPDIR:-/tmp}/check-layers.$$"

if [ $# -ge 1 ]; then
    if readelf -d "$1" | grep NEEDED | grep -Ei 'microhttpd|gnutls'; then
        echo "$1 links a server library (libmicrohttpd or GnuTLS)"
        bad=1
    fi
fi

if [ $bad -ne 0 ]; then
    echo "the layers do not hold"
    exit 1
fi
echo "the layers hold"
