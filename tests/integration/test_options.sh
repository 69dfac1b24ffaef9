#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The programs' command lines and `--check-config`, as data:
#
#   tests/data/config/bad/*.conf        accordd --check-config exits 1 and prints
#                                       exactly the lines of the matching
#                                       *.expected on standard error; so does a
#                                       start, which makes no database
#   tests/data/config/good/*.conf       it exits 0 with nothing on standard error,
#                                       and the effective configuration it prints
#                                       loads back to the same bytes
#   tests/data/config/site-bad, site-good   the same for accord-site
#
# and the options of accordd, accord-site, accord-sim and accord-flowgen:
# --help (exit 0, on standard output), --version, an unknown option, an
# option whose value is missing or is another option.
#
#   tests/integration/test_options.sh BUILD_DIR
BUILD=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd) || exit 1
DATA=$(cd "$(dirname "$0")/../data/config" && pwd) || exit 1
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM
ACCORDD=$BUILD/accordd
SITE=$BUILD/accord-site
fails=0

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# check_bad PROGRAM DIR: every DIR/*.conf against its *.expected.
check_bad() {
    prog=$1
    n=0
    for conf in "$DATA/$2"/*.conf; do
        name=$(basename "$conf")
        n=$((n + 1))
        (cd "$DATA/$2" && "$prog" --config "$name" --check-config >"$TMP/out" 2>"$TMP/err")
        rc=$?
        [ $rc = 1 ] || fail "$2/$name: exit $rc, expected 1"
        if ! diff -u "$DATA/$2/${name%.conf}.expected" "$TMP/err"; then
            fail "$2/$name: the problems differ from ${name%.conf}.expected"
        fi
        # A start refuses it with the same lines, and makes no database.
        rm -f "$TMP/start.db"
        (cd "$DATA/$2" && timeout 20 "$prog" --config "$name" --db "$TMP/start.db" \
            --listen 127.0.0.1:0 >"$TMP/out" 2>"$TMP/err")
        rc=$?
        [ $rc = 1 ] || fail "$2/$name: a start exited $rc, expected 1"
        if ! diff -u "$DATA/$2/${name%.conf}.expected" "$TMP/err"; then
            fail "$2/$name: a start's problems differ from ${name%.conf}.expected"
        fi
        [ -e "$TMP/start.db" ] && fail "$2/$name: a start made its database"
    done
    [ $n -gt 0 ] || fail "no file in $2"
}

# round_trip PROGRAM LABEL [--config FILE]: --check-config exits 0, says
# nothing on stderr but warnings, and its printout, loaded, prints the same
# bytes.
round_trip() {
    prog=$1
    label=$2
    shift 2
    "$prog" "$@" --check-config >"$TMP/one.ini" 2>"$TMP/err"
    rc=$?
    [ $rc = 0 ] || fail "$label: exit $rc, expected 0"
    grep -v ': warning: ' "$TMP/err" >"$TMP/problems"
    [ -s "$TMP/problems" ] && fail "$label: said on stderr: $(cat "$TMP/problems")"
    cp "$TMP/err" "$TMP/warnings"
    grep -q '^\[' "$TMP/one.ini" || fail "$label: printed no configuration"
    "$prog" --config "$TMP/one.ini" --check-config >"$TMP/two.ini" 2>"$TMP/err" ||
        fail "$label: its printout does not load: $(cat "$TMP/err")"
    cmp -s "$TMP/one.ini" "$TMP/two.ini" || fail "$label: the printout printed again differs"
    "$prog" --config "$TMP/one.ini" --print-config >"$TMP/three.ini" 2>/dev/null
    cmp -s "$TMP/one.ini" "$TMP/three.ini" || fail "$label: --print-config differs"
}

check_good() {
    cd "$DATA/$2" || exit 1
    for conf in *.conf; do
        round_trip "$1" "$2/$conf" --config "$conf"
    done
    cd "$TMP" || exit 1
}

# expect LABEL STATUS STDOUT-PATTERN STDERR-PATTERN COMMAND...: the exit
# status, and grep -E patterns that stdout and stderr match ("" must be
# empty).
expect() {
    label=$1
    want=$2
    out=$3
    err=$4
    shift 4
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    [ $rc = "$want" ] || fail "$label: exit $rc, expected $want"
    for s in out err; do
        pat=$(eval echo "\"\$$s\"")
        if [ -z "$pat" ]; then
            [ -s "$TMP/$s" ] && fail "$label: std$s not empty: $(head -3 "$TMP/$s")"
        elif ! grep -Eq -e "$pat" "$TMP/$s"; then
            fail "$label: std$s does not match '$pat': $(head -3 "$TMP/$s")"
        fi
    done
}

check_bad "$ACCORDD" bad
check_good "$ACCORDD" good
round_trip "$ACCORDD" "the embedded testbed"
# It launches, with no [launch] account: the one warning.
grep -q '^embedded testbed:[0-9]*: warning: enabled: jobs are launched with no \[launch\] account' \
    "$TMP/warnings" || fail "the embedded testbed: no warning of its account: $(cat "$TMP/warnings")"
[ "$(wc -l <"$TMP/warnings")" = 1 ] || fail "the embedded testbed: warned: $(cat "$TMP/warnings")"
check_bad "$SITE" site-bad
check_good "$SITE" site-good

# A file that cannot be opened is a problem too.
expect "accordd, a missing file" 1 "" "^$TMP/none.conf: cannot open it" \
    "$ACCORDD" --config "$TMP/none.conf" --check-config
expect "accord-site, a missing file" 1 "" "^$TMP/none.conf: cannot open it" \
    "$SITE" --config "$TMP/none.conf" --check-config
# --print-config without --config: the embedded text, comments and all.
expect "accordd --print-config" 0 "^# The embedded testbed" "" "$ACCORDD" --print-config
# A normal start names every problem as --check-config does: file, line, key.
expect "accordd, a bad file" 1 "" "^values.conf:3: listen: listen 'nowhere' is not HOST:PORT" \
    sh -c "cd '$DATA/bad' && '$ACCORDD' --config values.conf --listen 127.0.0.1:0"

# Stores only SQLite serves refuse a server's URL at --check-config and at a
# start, before anything is opened, never showing its password: the tc
# adapter's state beside accordd's PostgreSQL database (it has no
# "beside"), accord-site's database given by --db.
sed -e 's|^state = .*|# no state: beside [database]|' "$DATA/bad/tc-state.conf" >"$TMP/tc-url.conf"
printf '[database]\nurl = postgresql://accord:secret@127.0.0.1:9/accord\n' >>"$TMP/tc-url.conf"
printf '[signing]\nkey = /dev/null\ncertificate = /dev/null\n' >>"$TMP/tc-url.conf"
TC_URL="tc-url.conf:15: adapter: adapter tc: accordd's database is a server's \(\[database\] url\), and the tc adapter keeps its state in an SQLite file only: give it one \(state = /var/lib/accord/tc-wan.db\)"
expect "accordd --check-config, tc beside a URL" 1 "^url = postgresql://accord@127.0.0.1:9/accord$" \
    "$TC_URL" "$ACCORDD" --config "$TMP/tc-url.conf" --check-config
grep -q secret "$TMP/err" "$TMP/out" && fail "accordd --check-config, tc beside a URL: the password shown"
expect "accordd, tc beside a URL" 1 "" "$TC_URL" \
    timeout 20 "$ACCORDD" --config "$TMP/tc-url.conf" --listen 127.0.0.1:0
grep -q secret "$TMP/err" && fail "accordd, tc beside a URL: the password shown"
# (accord-site --check-config reads the file alone: site-bad/database.conf)
SITE_CONF=$DATA/site-good/$(ls "$DATA/site-good" | grep -m1 'conf$')
expect "accord-site --db URL" 1 "" \
    "^accord-site: 'postgresql://accord@h/db' is a database on a postgresql server; accord-site's journal is kept in an SQLite file only: give a file's path$" \
    timeout 20 "$SITE" --config "$SITE_CONF" --db postgresql://accord:secret@h/db --listen 127.0.0.1:0
grep -q secret "$TMP/err" && fail "accord-site --db URL: the password shown"

for prog in accordd accord-site accord-sim accord-flowgen; do
    expect "$prog --help" 0 "^usage: $prog" "" "$BUILD/$prog" --help
    expect "$prog -h" 0 "^usage: $prog" "" "$BUILD/$prog" -h
    expect "$prog --version" 0 "^$prog [0-9]+\.[0-9]+" "" "$BUILD/$prog" --version
done
expect "accordd --config --listen" 2 "" "^accordd: option '--config' needs a FILE, not '--listen'$" \
    "$ACCORDD" --config --listen 127.0.0.1:0
expect "accordd --config" 2 "" "^accordd: option '--config' needs a FILE$" "$ACCORDD" --config
expect "accordd --bogus" 2 "" "^accordd: unknown option '--bogus'" "$ACCORDD" --bogus
expect "accordd operand" 2 "" "^accordd: unexpected argument 'x'" "$ACCORDD" x
expect "accordd --db :memory:" 2 "" "^accordd: the database cannot be ':memory:'" timeout 10 \
    "$ACCORDD" --db :memory: --listen 127.0.0.1:0
expect "accordd --jobs without --replay" 2 "" "go with --replay" "$ACCORDD" --jobs 3
expect "accordd --check-config --print-config" 2 "" "go alone" \
    "$ACCORDD" --check-config --print-config
expect "accord-site --db --config" 2 "" "^accord-site: option '--db' needs a PATH, not '--config'$" \
    "$SITE" --db --config x.conf
expect "accord-site --bogus" 2 "" "^accord-site: unknown option '--bogus'" "$SITE" --bogus
expect "accord-site without --config" 2 "" "--config FILE is required" "$SITE"
expect "accord-sim --set" 2 "" "^accord-sim: option '--set' needs a value" "$BUILD/accord-sim" x --set
expect "accord-sim -j 0" 2 "" "^accord-sim: -j: '0' is not a number" "$BUILD/accord-sim" -j 0 x
expect "accord-sim --bogus" 2 "" "^accord-sim: unknown option '--bogus'" "$BUILD/accord-sim" --bogus
expect "accord-sim, no file" 2 "" "which EXPERIMENT" "$BUILD/accord-sim"
expect "accord-flowgen send --streams --bind" 2 "" "option '--streams' needs a value" \
    "$BUILD/accord-flowgen" send 127.0.0.1 9 --streams --bind 127.0.0.1
expect "accord-flowgen serve --bogus" 2 "" "unknown option '--bogus'" \
    "$BUILD/accord-flowgen" serve 9 --bogus
expect "accord-flowgen send --streams 0" 1 "" "--streams: expected 1 to 64" \
    "$BUILD/accord-flowgen" send 127.0.0.1 9 --streams 0
expect "accord-flowgen --bogus" 2 "" "unknown option '--bogus'" "$BUILD/accord-flowgen" --bogus

if [ $fails -gt 0 ]; then
    echo "$fails failure(s)" >&2
    exit 1
fi
echo "all passed"
