#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The documents name exactly the configuration keys the readers accept:
#
#   accordd's keys      docs/man/accord.conf.5 and docs/configuration.md
#   accord-site's keys  ([daemon], [peer NAME]) docs/man/accord-site.8
#
# Which keys are accepted is asked of the readers themselves (conf_keys,
# tests/support/conf_keys.c, tries every candidate as a key of every
# section); the candidates are every identifier among the string literals
# of the readers' sources, and every key the documents name, so that a key
# added to the code or to a document alone is found.
#
# How a key is written, per section (the heading names the section: the
# first [word] in it):
#   a man page   .SH "[server]" (accord.conf.5) or .SS "[daemon]"
#                (accord-site.8); each key is the bold word(s) of the line
#                after a .TP: ".B listen", ".BR localhost \", \" control_address"
#   the markdown "## [server]"; each key is a `key` in the first column of a
#                table row: "| `listen` | ... |", "| `a`, `b` | ... |"
# [accounts] takes user names as keys and is not compared.
#
# The adapters' settings (the other keys of [site NAME] and [network NAME])
# are asked of each compiled-in adapter kind (conf_keys settings) and must be
# those of its heading in both documents: .SS "adapter = KIND" (or "adapter
# = KIND or KIND") with the same .TP/.B entries, and "### adapter = KIND"
# with the same tables.
#
# The adapter kinds compiled in (conf_keys adapters) are the bold words of
# the adapter key's paragraph in [site NAME] and [network NAME] of
# accord.conf.5, and each is a `kind` in the adapter row of those sections
# of docs/configuration.md.
#
#   tests/check-doc-keys.sh BUILD_DIR [SOURCE_DIR]
set -eu
BUILD=$(cd "${1:?usage: check-doc-keys.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=${2:-$(cd "$(dirname "$0")/.." && pwd)}
PROBE=$BUILD/tests/conf_keys
[ -x "$PROBE" ] || { echo "FAIL: $PROBE is not built" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# man_keys PAGE: "SECTION KEY" per documented key.
man_keys() {
    awk '
        /^\.S[HS] / {
            sec = ""
            if (match($0, /\[[a-z]+/)) sec = substr($0, RSTART + 1, RLENGTH - 1)
            next
        }
        /^\.TP/ { tp = 1; next }
        tp {
            tp = 0
            if (sec == "" || ($1 != ".B" && $1 != ".BR")) next
            line = $0
            gsub(/"[^"]*"/, " ", line)          # the roman text between the bold words
            n = split(line, w, " ")
            for (i = 2; i <= n; i++)
                if (w[i] ~ /^[a-z][a-z0-9_]*$/) print sec, w[i]
        }' "$1" | sort -u
}

# md_keys FILE: the same from the tables of a markdown file.
md_keys() {
    awk '
        /^## / {
            sec = ""
            if (match($0, /\[[a-z]+/)) sec = substr($0, RSTART + 1, RLENGTH - 1)
            next
        }
        sec != "" && /^\| *`/ {
            split($0, cell, "|")
            first = cell[2]
            while (match(first, /`[^`]*`/)) {
                w = substr(first, RSTART + 1, RLENGTH - 2)
                first = substr(first, RSTART + RLENGTH)
                if (w ~ /^[a-z][a-z0-9_]*$/) print sec, w
            }
        }' "$1" | sort -u
}

# accepted DAEMON SOURCES...: "SECTION KEY" per key its reader accepts.
accepted() {
    daemon=$1
    shift
    {
        grep -ohE '"[a-z][a-z0-9_]{1,40}"' "$@" | tr -d '"'
        cut -d' ' -f2 "$TMP/documented"
    } | sort -u >"$TMP/candidates"
    "$PROBE" "$daemon" <"$TMP/candidates" | grep -v '^accounts ' | sort -u
}

fails=0
# compare WHAT ACCEPTED DOCUMENTED [NOUN]: both ways.
compare() {
    noun=${4:-keys}
    missing=$(comm -23 "$2" "$3")
    extra=$(comm -13 "$2" "$3")
    if [ -n "$missing" ]; then
        echo "FAIL: $1 does not name these $noun the reader accepts:" >&2
        echo "$missing" | sed 's/ /] /; s/^/    [/' >&2
        fails=$((fails + 1))
    fi
    if [ -n "$extra" ]; then
        echo "FAIL: $1 names $noun the reader refuses:" >&2
        echo "$extra" | sed 's/ /] /; s/^/    [/' >&2
        fails=$((fails + 1))
    fi
    return 0
}

man_keys "$SRC/docs/man/accord.conf.5" | grep -v '^accounts ' >"$TMP/man" || true
md_keys "$SRC/docs/configuration.md" | grep -v '^accounts ' >"$TMP/md" || true
sort -u "$TMP/man" "$TMP/md" >"$TMP/documented"
accepted accordd "$SRC"/server/config/*.c "$SRC"/resources/*.c >"$TMP/accordd"
n=$(wc -l <"$TMP/accordd")
# The readers answer: far fewer would mean the probe itself is broken.
if [ "$n" -lt 80 ]; then
    echo "FAIL: the probe found only $n keys of accordd" >&2
    exit 1
fi
compare docs/man/accord.conf.5 "$TMP/accordd" "$TMP/man"
compare docs/configuration.md "$TMP/accordd" "$TMP/md"

# man_kinds PAGE: "SECTION KIND" per bold word of an adapter paragraph.
man_kinds() {
    awk '
        /^\.S[HS] / {
            sec = ""
            if (match($0, /\[[a-z]+/)) sec = substr($0, RSTART + 1, RLENGTH - 1)
            on = 0
            next
        }
        /^\.TP/ { tp = 1; on = 0; next }
        /^\.PP/ { on = 0; next }
        tp { tp = 0; on = ($0 == ".B adapter"); next }
        on && /^\.BR? / {
            line = $0
            gsub(/\\-/, "-", line)
            gsub(/"[^"]*"/, " ", line)
            n = split(line, w, " ")
            for (i = 2; i <= n; i++)
                if (w[i] ~ /^[a-z][a-z0-9-]*$/ && ($1 == ".B" || i % 2 == 0) &&
                    w[i + 1] !~ /^\([1-8]\)/)         # a page: accord-site (8)
                    print sec, w[i]
        }' "$1" | sort -u
}
"$PROBE" adapters | sort -u >"$TMP/kinds"
man_kinds "$SRC/docs/man/accord.conf.5" >"$TMP/man_kinds"
compare docs/man/accord.conf.5 "$TMP/kinds" "$TMP/man_kinds" "adapter kinds"
while read -r sec kind; do
    awk -v sec="$sec" '
        /^## / { on = index($0, "## [" sec " ") == 1; next }
        on && /^\| `adapter` \|/ { print }' "$SRC/docs/configuration.md" | grep -q "\`$kind\`" ||
        { echo "FAIL: docs/configuration.md [$sec NAME] adapter does not name the kind $kind" >&2
          fails=$((fails + 1)); }
done <"$TMP/kinds"

# settings_keys FILE: "adapter:KIND KEY" per setting under an adapter
# heading of a man page or a markdown file (KINDS: the kinds there are).
settings_keys() {
    awk -v kinds="$(cut -d' ' -f2 "$TMP/kinds" | sort -u | tr '\n' ' ')" '
        BEGIN { n = split(kinds, k, " "); for (i = 1; i <= n; i++) known[k[i]] = 1 }
        /^\.S[HS] / || /^#+ / {
            nk = 0
            if ($0 ~ /adapter = /) {
                line = $0
                gsub(/[",]/, " ", line)
                m = split(line, w, " ")
                for (i = 1; i <= m; i++) if (w[i] in known) kind[++nk] = w[i]
            }
            next
        }
        nk == 0 { next }
        /^\.TP/ { tp = 1; next }
        tp {
            tp = 0
            if ($1 != ".B" && $1 != ".BR") next
            line = $0
            gsub(/"[^"]*"/, " ", line)
            m = split(line, w, " ")
            for (i = 2; i <= m; i++)
                if (w[i] ~ /^[a-z][a-z0-9_]*$/) for (j = 1; j <= nk; j++) print "adapter:" kind[j], w[i]
            next
        }
        /^\| *`/ {
            split($0, cell, "|")
            first = cell[2]
            while (match(first, /`[^`]*`/)) {
                w1 = substr(first, RSTART + 1, RLENGTH - 2)
                first = substr(first, RSTART + RLENGTH)
                if (w1 ~ /^[a-z][a-z0-9_]*$/) for (j = 1; j <= nk; j++) print "adapter:" kind[j], w1
            }
        }' "$1" | sort -u
}
settings_keys "$SRC/docs/man/accord.conf.5" >"$TMP/man_settings"
settings_keys "$SRC/docs/configuration.md" >"$TMP/md_settings"
{
    grep -ohE '"[a-z][a-z0-9_]{1,40}"' "$SRC"/adapters/*/*.c "$SRC"/lib/ledger/*.c | tr -d '"'
    cut -d' ' -f2 "$TMP/man_settings" "$TMP/md_settings"
} | sort -u >"$TMP/candidates"
mkdir "$TMP/adapters"
# The adapters log what they open (a calendar's migrations): kept for a failure.
(cd "$TMP/adapters" && "$PROBE" settings "$TMP/adapters" <"$TMP/candidates" 2>"$TMP/probe.log") |
    sort -u >"$TMP/settings" || { cat "$TMP/probe.log" >&2; exit 1; }
if [ "$(wc -l <"$TMP/settings")" -lt 30 ]; then
    echo "FAIL: the probe found only $(wc -l <"$TMP/settings") adapter settings" >&2
    cat "$TMP/probe.log" >&2
    exit 1
fi
compare docs/man/accord.conf.5 "$TMP/settings" "$TMP/man_settings" "adapter settings"
compare docs/configuration.md "$TMP/settings" "$TMP/md_settings" "adapter settings"

man_keys "$SRC/docs/man/accord-site.8" >"$TMP/documented" || true
accepted accord-site "$SRC"/site/site_config.c >"$TMP/site"
compare docs/man/accord-site.8 "$TMP/site" "$TMP/documented"

[ $fails = 0 ] || exit 1
echo "the documents name the $n keys of accordd, the $(wc -l <"$TMP/settings") settings of its" \
    "$(cut -d' ' -f2 "$TMP/kinds" | sort -u | wc -l) adapter kinds and the $(wc -l <"$TMP/site") keys of accord-site's own sections"
