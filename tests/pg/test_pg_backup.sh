#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test_pg_backup.sh BUILD_DIR - backup and restore on PostgreSQL (issue 34,
# docs/operations.md "Backup and restore"), end to end with the real
# binaries:
#   1. accordd on database SRC (a password in its URL, [auth] tokens, a
#      [signing] pair) books agreements; one document is kept, signed;
#   2. `accordctl admin backup` while clients post more: the archive holds
#      MANIFEST, accord.dump (pg_dump's custom format), signing/ and auth/;
#      pg_dump got the password through its environment, never on its
#      command line (a pg_dump of the test's own in front on PATH records
#      both), and the MANIFEST does not show it either;
#   3. `accordd --restore accord.dump` into a new, empty database DST: done;
#      a second restore into DST (no longer empty) is refused, naming what
#      it holds, and changes nothing;
#   4. accordd started on DST with the archive's signing pair and tokens:
#      the agreements the backup counted are there, those made before it
#      in their states; the certificate is the same and the signature made
#      before the backup verifies with it; a new offer is booked.
#
# Needs the cluster of start-cluster.sh (PG_TEST_DIR; ctest fixture "pg").
# Root (the cluster runs as nobody); about 15 s.
set -u
BUILD=${1:?usage: test_pg_backup.sh BUILD_DIR}
DIR=${PG_TEST_DIR:?PG_TEST_DIR names the cluster of start-cluster.sh}
BASE=$(cat "$DIR/url") || { echo "no cluster in $DIR" >&2; exit 1; }
T=$(mktemp -d /tmp/accord-pg-backup-XXXXXX)
chmod 755 "$T"
SRC=bk_src_$$ DST=bk_dst_$$
PASSWORD=not-on-a-command-line-$$
# the password: in the URL, as a centre's would be (the test cluster trusts
# its socket and does not ask for it)
SRC_URL=$(echo "$BASE" | sed "s|^postgresql://|postgresql://accord:$PASSWORD@|; s|@/accord?|@/$SRC?|")
DST_URL=$(echo "$BASE" | sed "s|^postgresql://|postgresql://accord:$PASSWORD@|; s|@/accord?|@/$DST?|")
. "$(dirname "$0")/instances.sh"
CTL=$BUILD/accordctl
fail() {
    echo "FAIL: $*" >&2
    for f in "$T"/a?.log; do [ -f "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }; done
    exit 1
}
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    for db in $SRC $DST; do psql "$BASE" -q -c "DROP DATABASE IF EXISTS $db" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

for db in $SRC $DST; do psql "$BASE" -q -c "CREATE DATABASE $db" || fail "cannot make $db"; done

# pg_dump and pg_restore as accordd runs them, recorded: arguments and the
# environment's PGPASSWORD (then the real ones)
mkdir "$T/bin"
for tool in pg_dump pg_restore; do
    cat >"$T/bin/$tool" <<TOOL
#!/bin/sh
printf '%s\n' "\$@" >>"$T/$tool.args"
echo "PGPASSWORD=\${PGPASSWORD:-}" >>"$T/$tool.env"
exec /usr/bin/$tool "\$@"
TOOL
    chmod 755 "$T/bin/$tool"
done
export PATH="$T/bin:$PATH"

pg_signing_pair
printf 'alice alice-token-0123456789\nroot root-token-0123456789 admin\n' >"$T/tokens"
chmod 600 "$T/tokens"
# ini URL TOKENS KEY CERT
ini() {
    printf '[server]\nlisten = 127.0.0.1:0\n\n[database]\nurl = %s\n' "$1"
    printf '\n[signing]\nkey = %s\ncertificate = %s\n' "$3" "$4"
    printf '\n[auth]\ntokens = %s\n\n[negotiation]\nhorizon = P2D\nlead_time = PT5S\n\n' "$2"
    pg_sites
}
ini "$SRC_URL" "$T/tokens" "$T/sign.key" "$T/sign.crt" >"$T/accord.ini"
pg_start 1
u() { cat "$T/url$1"; }
post() { # post N NAME: an offer of alice's; the answer into $T/body, the status printed
    pg_offer "$2" alice 1 1 10 >"$T/offer-$2.xml"
    curl -s -m 30 -o "$T/body" -w '%{http_code}' -H 'Accept: application/json' \
        -H 'Content-Type: application/xml' -H 'Authorization: Bearer alice-token-0123456789' \
        --data-binary "@$T/offer-$2.xml" "$(u "$1")/agreements"
}
get() { # get N PATH [ACCEPT]
    curl -s -m 10 -H "Accept: ${3:-application/json}" \
        -H 'Authorization: Bearer root-token-0123456789' "$(u "$1")$2"
}
field() { grep -o "\"$1\":\"\?[^\",]*" | head -1 | sed 's/.*[:"]//'; }

# 1. agreements, one document kept as it was signed
: >"$T/before"
for k in $(seq 12); do
    code=$(post 1 "before-$k")
    case $code in 2??) ;; *) fail "1: offer $k answered $code: $(cat "$T/body")" ;; esac
    echo "$(field id <"$T/body") $(field state <"$T/body")" >>"$T/before"
done
first=$(head -1 "$T/before" | cut -d' ' -f1)
get 1 "/agreements/$first" application/xml >"$T/pre.xml"
grep -q 'SignatureValue' "$T/pre.xml" || fail "1: $first's document is not signed"
get 1 /certificate >"$T/live.pem"
echo "1: $(wc -l <"$T/before") agreements on $SRC"

# 2. the backup, while 4 clients post
for c in 1 2 3 4; do
    (for k in $(seq 6); do post 1 "during-$c-$k" >/dev/null; done) &
    LOAD[c]=$!
done
out=$("$CTL" --server "$(u 1)" --token root-token-0123456789 admin backup "$T/backup.tar" 2>&1) ||
    fail "2: backup: $out"
wait "${LOAD[@]}"
echo "2: $out"
counted=$(echo "$out" | grep -o '[0-9]* agreement' | grep -o '[0-9]*')
[ -n "$counted" ] && [ "$counted" -ge 12 ] || fail "2: the backup counted '$counted' agreements"
tar -tf "$T/backup.tar" | sort >"$T/list"
for f in MANIFEST accord.dump signing/sign.key signing/sign.crt auth/tokens; do
    grep -qx "$f" "$T/list" || fail "2: $f is not in the archive: $(cat "$T/list")"
done
mkdir "$T/x" && tar -xf "$T/backup.tar" -C "$T/x" || fail "2: tar -x"
head -c 5 "$T/x/accord.dump" | grep -q PGDMP || fail "2: accord.dump is not pg_dump's custom format"
grep -q "file accord.dump postgresql://accord@/$SRC?" "$T/x/MANIFEST" ||
    fail "2: MANIFEST: $(cat "$T/x/MANIFEST")"
grep -rq "$PASSWORD" "$T/x/MANIFEST" "$T/pg_dump.args" && fail "2: the password is shown"
grep -qx "PGPASSWORD=$PASSWORD" "$T/pg_dump.env" || fail "2: pg_dump had no PGPASSWORD"
grep -qx -- '--format=custom' "$T/pg_dump.args" || fail "2: pg_dump $(cat "$T/pg_dump.args")"
grep -q -- '--snapshot=' "$T/pg_dump.args" || fail "2: pg_dump took no exported snapshot"
ls "${TMPDIR:-/tmp}" | grep -q "^accord-backup-" && fail "2: the work directory was left in ${TMPDIR:-/tmp}"

# 3. restore into the empty database; again: refused
ini "$DST_URL" "$T/x/auth/tokens" "$T/x/signing/sign.key" "$T/x/signing/sign.crt" >"$T/restored.ini"
"$BUILD/accordd" --config "$T/restored.ini" --restore "$T/x/accord.dump" >"$T/r1.out" 2>&1 ||
    fail "3: restore: $(cat "$T/r1.out")"
grep -q "$PASSWORD" "$T/pg_restore.args" && fail "3: the password is on pg_restore's command line"
grep -qx "PGPASSWORD=$PASSWORD" "$T/pg_restore.env" || fail "3: pg_restore had no PGPASSWORD"
n=$(psql "$(echo "$BASE" | sed "s|/accord?|/$DST?|")" -At -c "SELECT count(*) FROM agreement")
[ "$n" = "$counted" ] || fail "3: $n agreements restored, the backup counted $counted"
"$BUILD/accordd" --config "$T/restored.ini" --restore "$T/x/accord.dump" >"$T/r2.out" 2>&1 &&
    fail "3: a restore into a database that is not empty passed"
grep -q "database postgresql://accord@/$DST?.* is not empty ([0-9]* tables, views or sequences: " "$T/r2.out" ||
    fail "3: the second restore said: $(cat "$T/r2.out")"
grep -q "$PASSWORD" "$T/r2.out" && fail "3: the refusal shows the password"
echo "3: restored $n agreements into $DST; again: $(cat "$T/r2.out")"

# 4. accordd on the restored database
cp "$T/restored.ini" "$T/accord.ini"
pg_start 2
while read -r id state; do
    got=$(get 2 "/agreements/$id" | field state)
    [ "$got" = "$state" ] || fail "4: $id is $got on the restored database, was $state"
done <"$T/before"
get 2 /certificate >"$T/restored.pem"
cmp -s "$T/live.pem" "$T/restored.pem" || fail "4: another certificate"
"$CTL" verify "$T/pre.xml" --cert "$T/restored.pem" >/dev/null ||
    fail "4: the signature made before the backup does not verify"
get 2 "/agreements/$first" application/xml >"$T/post.xml"
"$CTL" verify "$T/post.xml" --cert "$T/restored.pem" >/dev/null ||
    fail "4: the restored agreement's document does not verify"
code=$(post 2 after)
case $code in 2??) ;; *) fail "4: a new offer on the restored database: $code $(cat "$T/body")" ;; esac
echo "4: the restored accordd serves the $(wc -l <"$T/before") agreements in their states, the same certificate; signatures verify"
echo "all passed"
