#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# README.md's quick start, tried as a new user would: every command of the
# blocks marked "<!-- test_readme: run -->" runs in order, against the
# accordd that `./quickstart.sh run` starts (the embedded testbed, no
# configuration; as root it runs as an unprivileged account, here nobody),
# on a free port and in a temporary directory, and each must do what its
# comment in the README says.  A command this script does not know how to
# check fails the test: whoever adds one to the README says here what it
# must do.
#
# The README's commands name build/ and http://127.0.0.1:8080; they run
# from the source directory with BUILD_DIR and the test's address instead.
# ID is the id of the agreement the previous commands made.
#
#   tests/integration/test_readme.sh BUILD_DIR [SOURCE_DIR]
set -euo pipefail
BUILD=$(cd "${1:?usage: test_readme.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
TMP=$(mktemp -d)
PID=
cleanup() {
    if [ -n "$PID" ]; then
        kill "$PID" 2>/dev/null || true
        wait "$PID" 2>/dev/null || true
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT
fails=0
fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# ------------------------------------------------------------ the commands
# One command a line (continuations joined), then a tab, then its comment.
awk '
    /<!-- test_readme: run -->/ { armed = 1; next }
    armed && /^```sh/ { inblock = 1; armed = 0; next }
    inblock && /^```/ { inblock = 0; next }
    inblock {
        line = $0
        if (line ~ /\\$/) { held = held substr(line, 1, length(line) - 1); next }
        line = held line
        held = ""
        comment = ""
        if ((i = index(line, " # ")) > 0) {
            comment = substr(line, i + 3)
            line = substr(line, 1, i - 1)
        }
        gsub(/[ \t]+/, " ", line)
        sub(/ $/, "", line)
        sub(/^ +/, "", comment)
        print line "\t" comment
    }' "$SRC/README.md" >"$TMP/commands"
n=$(wc -l <"$TMP/commands")
if [ "$n" -lt 4 ]; then
    echo "FAIL: README.md has $n marked commands; are the <!-- test_readme: run --> marks gone?" >&2
    exit 1
fi

# ------------------------------------------------------------- accordd
# As ./quickstart.sh run starts it: no configuration, and never as root
# (an accordd running as root refuses every offer it would launch).
AS=()
BIN=$BUILD
chmod 0755 "$TMP"
if [ "$(id -u)" -eq 0 ]; then
    chown nobody "$TMP"
    AS=(setpriv --reuid=nobody --regid=nogroup --init-groups --no-new-privs --inh-caps=-all
        --bounding-set=-all --)
    if ! "${AS[@]}" test -x "$BUILD/accordd"; then
        # quickstart.sh's way when its account cannot reach the build tree
        BIN=$TMP/bin
        install -d -m 0755 "$BIN"
        for p in accordd accord-ring accord-metatrace; do
            [ -e "$BUILD/$p" ] && install -m 0755 "$BUILD/$p" "$BIN/$p"
        done
    fi
fi
[ -x "$BIN/accord-ring" ] || { echo "FAIL: $BIN/accord-ring is not built (MPICH)" >&2; exit 1; }
(cd "$TMP" && exec "${AS[@]}" "$BIN/accordd" --listen 127.0.0.1:0 >"$TMP/accordd.out" \
    2>"$TMP/accordd.err") &
PID=$!
URL=
for _ in $(seq 100); do
    URL=$(grep -o 'listening on http://[0-9.:]*' "$TMP/accordd.out" 2>/dev/null | sed 's/.* //') ||
        true
    [ -n "$URL" ] && break
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$URL" ]; then
    echo "FAIL: accordd did not start:" >&2
    cat "$TMP/accordd.err" >&2
    exit 1
fi
export ACCORD_URL=$URL
unset ACCORD_TOKEN ACCORD_CACERT ACCORD_CERT ACCORD_KEY
who=$(id -un)
[ ${#AS[@]} -eq 0 ] || who=nobody
echo "accordd at $URL (as $who)"

# --------------------------------------------------------------- run each
ID=
# run CMD: runs it in the source directory; OUT (its stdout), RC, and the
# files $TMP/out and $TMP/err.
run() {
    set +e
    (cd "$SRC" && sh -c "$1") </dev/null >"$TMP/out" 2>"$TMP/err"
    RC=$?
    set -e
    OUT=$(cat "$TMP/out")
}
show() {
    echo "    exit $RC; stdout:" >&2
    sed 's/^/      /' "$TMP/out" | head -20 >&2
    echo "    stderr:" >&2
    sed 's/^/      /' "$TMP/err" | head -20 >&2
}

while IFS=$'\t' read -r cmd comment; do
    if [[ $cmd =~ (^|[[:space:]])ID([[:space:]]|$) ]] && [ -z "$ID" ]; then
        fail "'$cmd' names ID, but no command before it made an agreement"
        continue
    fi
    real=$(printf '%s' "$cmd" | sed -e "s#http://127.0.0.1:8080#$URL#g" -e "s#^build/#$BUILD/#" \
        -e "s/\(^\| \)ID\( \|$\)/\1$ID\2/g")
    echo "\$ $cmd"
    case $cmd in
    curl\ *-X\ POST*/agreements)
        # "the agreement (XML)": a wsag:Agreement with its id, for the offer's name
        file=$(printf '%s' "$cmd" | grep -o '@[^ ]*' | cut -c2-)
        name=$(grep -o '<wsag:Name>[^<]*' "$SRC/$file" | head -1 | cut -d'>' -f2)
        run "$real"
        ID=$(printf '%s' "$OUT" | grep -o 'wsag:AgreementId="[^"]*"' | head -1 | cut -d'"' -f2 ||
            true)
        if [ "$RC" -ne 0 ] || [[ $OUT != *"<wsag:Agreement "* ]] || [ -z "$ID" ] ||
            [[ $OUT != *"<wsag:Name>$name</wsag:Name>"* ]]; then
            fail "'$cmd' does not print the agreement for $name"
            show
        fi
        ;;
    build/accordctl\ list)
        # "ID: the first column"
        run "$real"
        if [ "$RC" -ne 0 ] || ! printf '%s\n' "$OUT" | awk -v id="$ID" '$1 == id { f = 1 } END { exit !f }'
        then
            fail "'$cmd' does not list $ID in its first column"
            show
        fi
        ;;
    build/accordctl\ trace\ ID)
        # "how that agreement was negotiated": the rounds, each adapter's answer
        run "$real"
        if [ "$RC" -ne 0 ] || [[ $(head -1 "$TMP/out") != "Agreement $ID: "*round* ]] ||
            ! grep -q 'preview' "$TMP/out" || ! grep -q 'reserve' "$TMP/out"; then
            fail "'$cmd' does not show how $ID was negotiated"
            show
        fi
        ;;
    build/accordctl\ modify\ ID\ *)
        # "a new version": version 2, with what was asked
        run "$real"
        end=$(printf '%s' "$cmd" | sed -n 's/.*--end \([^ ]*\).*/\1/p')
        if [ "$RC" -ne 0 ] || [[ $OUT != *"Version 2 of agreement $ID"* ]] ||
            { [ -n "$end" ] && ! grep -Eq "^End +$end" "$TMP/out"; }; then
            fail "'$cmd' does not make a new version of $ID"
            show
        fi
        ;;
    build/accordctl\ submit\ *)
        # prints "Agreement   ID  (NAME)": the first line, ID the new agreement's,
        # and it starts at once (it waits behind nothing of the commands before)
        want=$(printf '%s' "$comment" | sed -n 's/^prints "\(.*\)"$/\1/p')
        [ -n "$want" ] || fail "the README's comment on '$cmd' does not say what it prints"
        pattern="^$(printf '%s' "$want" | sed 's/[().]/\\&/g; s/ID/[a-z0-9]+/')\$"
        asked=$(date +%s)
        run "$real"
        first=$(head -1 "$TMP/out")
        if [ "$RC" -ne 0 ] || ! [[ $first =~ $pattern ]]; then
            fail "'$cmd' does not print \"$want\" first"
            show
            ID=
            continue
        fi
        ID=$(printf '%s' "$first" | awk '{ print $2 }')
        start=$(sed -n 's/^Start  *\([^ ]*\).*/\1/p' "$TMP/out")
        late=$(($(date -d "$start" +%s) - asked))
        if [ "$late" -gt 60 ]; then
            fail "'$cmd': the job of $ID starts at $start, $late s after it was asked, not at once"
        fi
        ;;
    build/accordctl\ launch\ ID)
        # "its job: state, exit status": the state now, and a few seconds
        # after its start the exit status 0
        run "$real"
        if [ "$RC" -ne 0 ] || [[ $(head -1 "$TMP/out") != "Job of agreement $ID: "* ]]; then
            fail "'$cmd' does not show the state of $ID's job"
            show
            continue
        fi
        for _ in $(seq 120); do
            grep -Eq '^Job of agreement [a-z0-9]+: (exited|stopped|terminated|failed|missed|lost|described)' "$TMP/out" && break
            sleep 1
            run "$real"
        done
        if ! grep -Eq '^ +exit status +0$' "$TMP/out"; then
            fail "'$cmd': $ID's job did not end with exit status 0 within two minutes"
            show
        fi
        ;;
    *)
        fail "test_readme.sh does not know what '$cmd' must do: add it to the script"
        ;;
    esac
done <"$TMP/commands"

# "Or open http://127.0.0.1:8080/ui/ in a browser": the page is there.
grep -q 'open http://127.0.0.1:8080/ui/' "$SRC/README.md" ||
    fail "README.md no longer names the web page at /ui/: update test_readme.sh"
code=$(curl -s -o "$TMP/ui" -w '%{http_code}' "$URL/ui/" || true)
if [ "$code" != 200 ] || ! grep -qi '<html' "$TMP/ui"; then
    fail "$URL/ui/ answers $code, not the web page"
fi

kill -0 "$PID" 2>/dev/null || fail "accordd died"
if [ "$fails" -gt 0 ]; then
    echo "accordd's log:" >&2
    tail -30 "$TMP/accordd.err" >&2
    exit 1
fi
echo "the $n commands of README.md's quick start do what it says"
