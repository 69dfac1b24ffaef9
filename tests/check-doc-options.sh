#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# accordd's, accord-site's and accordctl's options: the program accepts
# exactly those its --help shows and its man page describes.
#
# Candidates are the options --help shows, those the man page names, and the
# long options of the program's getopt tables (the "{"name", ..._argument"
# entries of its sources).  Each is asked of the program itself:
# "PROGRAM --NAME --zz-none --zz-none" answers "unknown option '--NAME'"
# only when it does not know it (a value that starts with "--" is refused,
# so nothing is started; --help and --version just print).
#   accordd, accord-site  the OPTIONS section of the man page: the bold
#                         words of the line after each .TP
#   accordctl             its options (OPTIONS) and every command's: the man
#                         page names each option somewhere, `accordctl
#                         COMMAND --help` shows the command's, and every
#                         option the page names is one of accordctl's
#
#   tests/check-doc-options.sh BUILD_DIR [SOURCE_DIR]
set -eu
BUILD=${1:?usage: check-doc-options.sh BUILD_DIR [SOURCE_DIR]}
SRC=${2:-$(cd "$(dirname "$0")/.." && pwd)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# The long options (--name) in text read on standard input, one a line.
longs() {
    sed 's/\\-/-/g; s/\\f[BIRP]//g' | grep -oE -- '(^|[^a-z0-9-])--[a-z][a-z0-9-]*' |
        sed 's/^[^-]*//' | sort -u
}

# The long options of the getopt tables of FILES.
table_longs() {
    grep -ohE '\{"[a-z][a-z0-9-]*", *(no|required|optional)_argument' "$@" |
        sed 's/^{"/--/; s/".*//' | sort -u
}

# known PROGRAM [ARGS...] --NAME: the program does not call --NAME unknown.
known() {
    opt=$(eval echo "\${$#}")
    out=$("$@" --zz-none --zz-none 2>&1 </dev/null) || true
    case $out in
    *"unknown option '$opt'"* | *"unrecognized option '$opt'"*) return 1 ;;
    esac
    return 0
}

# man_options PAGE: the options of its OPTIONS section.
man_options() {
    awk '
        /^\.SH / { on = ($0 ~ /^\.SH "?OPTIONS"?$/); next }
        on && /^\.TP/ { tp = 1; next }
        on && tp { tp = 0; print }' "$1" | longs
}

# check PROGRAM PAGE SOURCES...: accordd and accord-site.
check() {
    prog=$1
    page=$2
    shift 2
    bin=$BUILD/$prog
    "$bin" --help | longs >"$TMP/help"
    man_options "$page" >"$TMP/man"
    table_longs "$@" | sort -u - "$TMP/help" "$TMP/man" >"$TMP/cand"
    : >"$TMP/known"
    while read -r o; do
        if known "$bin" "$o"; then echo "$o" >>"$TMP/known"; fi
    done <"$TMP/cand"
    if [ "$(wc -l <"$TMP/known")" -lt 5 ]; then
        fail "$prog: the probe found only $(wc -l <"$TMP/known") options"
        return 0
    fi
    for f in help man; do
        what="$prog --help"
        [ $f = help ] || what=$(basename "$page")
        missing=$(comm -23 "$TMP/known" "$TMP/$f" | tr '\n' ' ')
        extra=$(comm -13 "$TMP/known" "$TMP/$f" | tr '\n' ' ')
        [ -z "$missing" ] || fail "$what does not show these options $prog accepts: $missing"
        [ -z "$extra" ] || fail "$what shows options $prog refuses: $extra"
    done
    echo "$prog: $(wc -l <"$TMP/known" | tr -d ' ') options, all in --help and $(basename "$page")"
}

check accordd "$SRC/docs/man/accordd.8" "$SRC/server/main.c"
check accord-site "$SRC/docs/man/accord-site.8" "$SRC/site/main.c"

# accordctl: its own options, then each command's.
ctl=$BUILD/accordctl
page=$SRC/docs/man/accordctl.1
longs <"$page" >"$TMP/page"
"$ctl" --help | longs >"$TMP/help"
man_options "$page" >"$TMP/man"
table_longs "$SRC/cli/main.c" "$SRC/cli/format.c" "$SRC/cli/ctl.h" |
    sort -u - "$TMP/help" "$TMP/man" >"$TMP/cand"
: >"$TMP/all"
while read -r o; do
    if known "$ctl" "$o"; then echo "$o" >>"$TMP/all"; fi
done <"$TMP/cand"
missing=$(comm -23 "$TMP/all" "$TMP/man" | tr '\n' ' ')
extra=$(comm -13 "$TMP/all" "$TMP/man" | tr '\n' ' ')
[ -z "$missing" ] || fail "accordctl.1 OPTIONS does not describe these options of accordctl: $missing"
[ -z "$extra" ] || fail "accordctl.1 OPTIONS describes options accordctl refuses: $extra"
undocumented=$(comm -23 "$TMP/all" "$TMP/help" | grep -v -- '--version' | tr '\n' ' ' || true)
[ -z "$undocumented" ] || fail "accordctl --help does not show: $undocumented"
commands=$("$ctl" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
[ -n "$commands" ] || fail "accordctl --help lists no command"
for cmd in $commands; do
    grep -q "^\.B[IR]* \"*$cmd\b" "$page" || fail "accordctl.1 does not describe the command $cmd"
    "$ctl" "$cmd" --help 2>&1 | longs >"$TMP/cmdhelp"
    table_longs "$SRC/cli/cmd_$cmd.c" 2>/dev/null | sort -u - "$TMP/cmdhelp" >"$TMP/cand"
    while read -r o; do
        if known "$ctl" "$cmd" "$o"; then
            echo "$o" >>"$TMP/all"
            grep -qx -- "$o" "$TMP/page" || fail "accordctl.1 does not name $cmd's option $o"
            [ "$o" = --help ] || grep -qx -- "$o" "$TMP/cmdhelp" ||
                fail "accordctl $cmd --help does not show its option $o"
        else
            grep -qx -- "$o" "$TMP/cmdhelp" && fail "accordctl $cmd --help shows $o, which it refuses"
        fi
    done <"$TMP/cand"
done
sort -u -o "$TMP/all" "$TMP/all"
extra=$(comm -13 "$TMP/all" "$TMP/page" | tr '\n' ' ')
[ -z "$extra" ] || fail "accordctl.1 names options no command of accordctl accepts: $extra"
echo "accordctl: $(wc -l <"$TMP/all" | tr -d ' ') options, each named in accordctl.1 and shown by --help"

[ $fails = 0 ] || exit 1
