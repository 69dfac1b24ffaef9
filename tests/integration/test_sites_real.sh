#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test_sites_real.sh - sites in their own domains, end to end (issue 11): three
# accord-site daemons in network namespaces of the testbed (alpha and beta:
# sim-batch; net: the tc network adapter), accordd in the root namespace with
# remote adapters, everything over mutual TLS (tests/integration/sites-bed.sh).
#
#   1. an offer across the three is negotiated, each site answers its
#      reservation by key (asked over mTLS with curl), the link's HTB class is on
#      the wire at the start; /sites and accordctl sites show the sites' health,
#      round trip and endpoint; terminated: gone at every site;
#   2. a meta-job (Hydra -launcher manual): the site daemons start the proxies;
#      accord-ring runs to RING OK and exit 0, each component's ranks in its own
#      site's namespace;
#   3. site alpha SIGKILLed between reserve and verify: 503 naming alpha,
#      rollback at beta and net, nothing of it booked anywhere after alpha comes
#      back, and alpha's earlier booking survived its restart;
#   4. beta's link down between reserve and verify: the calls time out,
#      rollback; after the link is up again beta's booking is cancelled and a
#      new offer is agreed;
#   5. accordd SIGKILLed mid-negotiation: after its restart every open journal
#      entry is cancelled at its remote site by key;
#   6. TLS: no certificate, an unadmitted one (same CA), another CA's, an
#      expired one and a tampered one are refused in the handshake (TLS 1.2
#      and 1.3); accordd with another CA for alpha cannot reach alpha; the
#      admitted peer over its limits gets the site's PeerLimit;
#   and at the end every daemon stops on SIGTERM, with no sanitizer report in
#   any daemon's log (the ASan build's daemons are checked too).
#
# How a kill lands between reserve and verify: the test write-locks site net's
# journal (net.db) with a sqlite3 shell, so net's reserve waits while alpha's
# and beta's answer; the test polls the site's own journal (site_bookings,
# state reserved), kills or partitions, and only then releases the lock: the
# engine verifies after every reserve has answered.
#
# Root only.  Holds /run/lock/accord-netbed.lock for the whole run; the bed
# goes down however this ends (trap; a guardian in its own session when this
# shell is killed).  ctest: test_sites_real (RESOURCE_LOCK netbed).
#
#   tests/integration/test_sites_real.sh BUILD_DIR
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BED=$SRC/tests/integration/sites-bed.sh
export ACCORD_BUILD=${1:?usage: $0 BUILD_DIR}
export SITES_BED_DIR=${SITES_BED_DIR:-/run/accord-sites-bed}
DIR=$SITES_BED_DIR
C=$DIR/certs
T0=$(date +%s)
# shellcheck source=../support/checks.sh
. "$SRC/tests/support/checks.sh"

[ "$(id -u)" = 0 ] || { echo "test_sites_real: needs root"; exit 1; }
for b in accordd accord-site accordctl accord-ring; do
    [ -x "$ACCORD_BUILD/$b" ] || { echo "test_sites_real: $ACCORD_BUILD/$b missing"; exit 1; }
done
command -v sqlite3 >/dev/null || { echo "test_sites_real: sqlite3 missing (apt-get install -y sqlite3)"; exit 1; }

exec 9>/run/lock/accord-netbed.lock
flock -w 900 9 || { echo "test_sites_real: the testbed stayed in use"; exit 1; }
# The guardian: in a session of its own (a timeout's kill of this process group
# misses it), holding the lock until it has cleaned up.
MAIN=$$
setsid bash -c "trap '' INT TERM HUP
    while kill -0 $MAIN 2>/dev/null; do sleep 0.5; done
    [ -e '$DIR.done' ] || '$BED' down >/dev/null 2>&1
    rm -f '$DIR.done' '$DIR.status' '$DIR.bg'" </dev/null >/dev/null 2>&1 &
trap '[ -z "${LOCK_PID:-}" ] || kill "$LOCK_PID" 2>/dev/null
    "$BED" down >/dev/null 2>&1; rm -f "$DIR.status" "$DIR.bg"; : >"$DIR.done"' EXIT
rm -f "$DIR.done"

if ! "$BED" up; then
    echo "test_sites_real: the bed did not come up"
    for f in "$DIR"/*/log; do [ -f "$f" ] && { echo "== $f"; tail -n 30 "$f"; }; done
    exit 1
fi
URL=$(cat "$DIR/accordd/url")
ADB=$DIR/accordd/accordd.db

# ------------------------------------------------------------ helpers

# accordd's API: the body on stdout, the HTTP status into the file STATUS_FILE
# (callers run it in a subshell, so no variable would survive): st prints it.
STATUS_FILE=$DIR.status
api() { # METHOD PATH [BODY]
    local out
    out=$(curl -s --max-time 60 --cacert "$C/ca.crt" -X "$1" -H 'Content-Type: application/xml' \
        ${3:+--data-binary "$3"} -w '\n%{http_code}' "$URL$2")
    echo "${out##*$'\n'}" >"$STATUS_FILE"
    printf '%s' "${out%$'\n'*}"
}
st() { cat "$STATUS_FILE"; }

site_addr() { case $1 in alpha) echo 10.79.1.11 ;; beta) echo 10.79.2.11 ;; net | wan) echo 10.79.3.11 ;; esac; }
site_dir() { case $1 in wan) echo net ;; *) echo "$1" ;; esac; }

# A site's answer for a reservation key, over mTLS as accordd (accord.crt):
# the HTTP status on stdout (000: no answer).
site_key() { # SITE KEY
    curl -s -o /dev/null --max-time 10 -w '%{http_code}' --cacert "$C/ca.crt" \
        --cert "$C/accord.crt" --key "$C/accord.key" "https://$(site_addr "$1"):8443/v1/reservations/$2"
}

# accordd's journal: "key adapter state" of an agreement's reservations.
journal() { # AGREEMENT-ID
    sqlite3 -separator ' ' -cmd '.timeout 5000' "$ADB" \
        "SELECT key, adapter, state FROM reservation WHERE agreement_id = '$1' ORDER BY key"
}

# Keys at SITE's own journal in state STATE (site_bookings), one a line.
site_rows() { # SITE STATE
    local d
    d=$(site_dir "$1")
    sqlite3 -cmd '.timeout 5000' "$DIR/$d/$d.db" \
        "SELECT key FROM site_bookings WHERE state = '$2' ORDER BY key" 2>/dev/null
}

# Waits up to SECONDS for a key at SITE in state reserved that is not in the
# list KNOWN (space separated); prints it.
wait_new_reserved() { # SITE KNOWN SECONDS
    local k end
    end=$(($(date +%s%N) + $3 * 1000000000))
    while [ "$(date +%s%N)" -lt "$end" ]; do
        for k in $(site_rows "$1" reserved); do
            case " $2 " in *" $k "*) ;; *)
                echo "$k"
                return 0
                ;;
            esac
        done
        sleep 0.02
    done
    return 1
}

# Waits up to SECONDS until COMMAND succeeds.
wait_for() { # SECONDS COMMAND...
    local end=$(($(date +%s) + $1))
    shift
    while ! "$@"; do
        [ "$(date +%s)" -lt "$end" ] || return 1
        sleep 0.25
    done
}

utc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }

# An offer: components a (alpha) and b (beta) of NODES_A/NODES_B nodes, a link
# of MBIT between them (0: none), starting at the earliest AHEAD s from now
# for SECONDS; EXTRA terms appended (a launch).
offer() { # NAME AHEAD SECONDS NODES_A NODES_B MBIT [COMPONENT-EXTRA] [TERMS]
    local s
    s=$(utc $(($(date +%s) + $2)))
    cat <<EOF
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement" xmlns:co="urn:accord:coalloc:1">
<wsag:Name>$1</wsag:Name><wsag:Context><wsag:AgreementInitiator>tester</wsag:AgreementInitiator>
<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context><wsag:Terms><wsag:All>
<wsag:ServiceDescriptionTerm wsag:Name="schedule" wsag:ServiceName="m"><co:Schedule>
<co:EarliestStart>$s</co:EarliestStart><co:Duration>PT$3S</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>
<wsag:ServiceDescriptionTerm wsag:Name="a" wsag:ServiceName="m"><co:Component><co:Site>alpha</co:Site>
<co:Nodes>$4</co:Nodes>${7:-}</co:Component></wsag:ServiceDescriptionTerm>
<wsag:ServiceDescriptionTerm wsag:Name="b" wsag:ServiceName="m"><co:Component><co:Site>beta</co:Site>
<co:Nodes>$5</co:Nodes>${7:-}</co:Component></wsag:ServiceDescriptionTerm>
EOF
    if [ "$6" -gt 0 ]; then
        cat <<EOF
<wsag:ServiceDescriptionTerm wsag:Name="ab" wsag:ServiceName="m"><co:Link><co:Between>a</co:Between>
<co:And>b</co:And><co:Bandwidth>$6</co:Bandwidth></co:Link></wsag:ServiceDescriptionTerm>
EOF
    fi
    echo "${8:-}</wsag:All></wsag:Terms></wsag:AgreementOffer>"
}

agreement_id() { sed -n 's/.*wsag:AgreementId="\([^"]*\)".*/\1/p' <<<"$1" | head -n 1; }
agreement_state() { # ID
    api GET "/agreements/$1/state" | sed -n 's/.*<wsag:State>\([A-Za-z]*\)<\/wsag:State>.*/\1/p' | head -n 1
}
state_is() { [ "$(agreement_state "$1")" = "$2" ]; }

# Every key of the journal lines on stdin answers WANT at its site.
keys_answer() { # WANT  (stdin: journal lines)
    local k a s got rc=0
    while read -r k a s; do
        [ -n "$k" ] || continue
        got=$(site_key "$a" "$k")
        if [ "$got" != "$1" ]; then
            echo "    | $a: $k ($s) answers $got, not $1"
            rc=1
        fi
    done
    return "$rc"
}

# Nothing booked at any site but the keys KEEP: no reserved or intent row in
# any site's journal, and no booking in the adapters' calendars (sim-batch's
# and tc's files beside the site's database).
nothing_booked_but() { # KEEP (space separated keys)
    local s d k rc=0
    for s in alpha beta net; do
        for k in $(site_rows "$s" reserved) $(site_rows "$s" intent); do
            case " $1 " in *" $k "*) ;; *)
                echo "    | $s still holds $k"
                rc=1
                ;;
            esac
        done
    done
    for s in alpha:alpha beta:beta net:wan; do
        for k in $(sqlite3 -cmd '.timeout 5000' "$DIR/${s%%:*}/${s%%:*}.db.sim-${s#*:}" \
            "SELECT key FROM booking" 2>/dev/null); do
            case " $1 " in *" $k "*) ;; *)
                echo "    | ${s%%:*}'s calendar (${s#*:}) still books $k"
                rc=1
                ;;
            esac
        done
    done
    return "$rc"
}

# HTB leaf classes of RATE Mbit/s on alpha's uplink (the link's path).
leaves() { tc -n acc-gw-alpha class show dev up0 | grep -c "rate ${1}Mbit " || true; }

# hold|release: site net's journal (net.db) write-locked by a sqlite3 shell of
# the test (BEGIN IMMEDIATE).  Net's previews only read and go on; its reserve
# must first write its intent row and waits for the lock (net's busy time-out
# is 5 s, accordd's time limit per call 3 s): while the test holds the lock,
# the round's reserve step cannot end, so the engine cannot verify yet.
LOCK_PID=
LOCK_FD=
net_lock() {
    if [ "$1" = hold ]; then
        rm -f "$DIR/net-lock"
        mkfifo "$DIR/net-lock"
        sqlite3 "$DIR/net/net.db" <"$DIR/net-lock" >/dev/null 2>&1 &
        LOCK_PID=$!
        exec {LOCK_FD}>"$DIR/net-lock"
        echo "BEGIN IMMEDIATE;" >&"$LOCK_FD"
        # held once another writer is refused at once
        wait_for 3 sh -c "sqlite3 '$DIR/net/net.db' 'BEGIN IMMEDIATE; ROLLBACK;' 2>&1 | grep -q locked"
    elif [ -n "$LOCK_PID" ]; then
        echo "ROLLBACK;" >&"$LOCK_FD"
        exec {LOCK_FD}>&-
        wait "$LOCK_PID" 2>/dev/null
        LOCK_PID=
        rm -f "$DIR/net-lock"
    fi
    return 0
}

# The agreement a journal key belongs to (accordd's database).
agreement_of() { sqlite3 -cmd '.timeout 5000' "$ADB" "SELECT agreement_id FROM reservation WHERE key = '$1'"; }

# Up to 3 attempts: POSTs OFFER in the background (answer into $DIR/post,
# status into $DIR.bg), waits until SITE reserved a key of it, runs ACTION
# at once, waits for the answer.  An attempt whose negotiation was committed
# anyway (the action came after the verify step: a race of the test, not a
# result) is undone with UNDO and terminated, and the next one made.  Sets
# KEY and AID; returns 1 when no attempt landed.
KEY=
AID=
between_reserve_and_verify() { # SITE OFFER-NAME ACTION UNDO
    local site=$1 attempt known post
    for attempt in 1 2 3; do
        known=$(site_rows "$site" reserved | tr '\n' ' ')
        net_lock hold || echo "    | could not lock net's journal"
        STATUS_FILE=$DIR.bg api POST /agreements "$(offer "$2-$attempt" 5 40 1 1 50)" >"$DIR/post" &
        post=$!
        if ! KEY=$(wait_new_reserved "$site" "$known" 2); then
            net_lock release
            wait "$post"
            echo "    | $site never reserved: $(head -c 400 "$DIR/post")"
            return 1
        fi
        eval "$3"
        net_lock release
        wait "$post"
        AID=$(agreement_of "$KEY")
        if [ -n "$AID" ] && ! journal "$AID" | grep -qv ' committed$'; then
            echo "    | attempt $attempt: $3 came after the verify step ($AID committed); again"
            eval "$4"
            api POST "/agreements/$AID/terminate" >/dev/null
            continue
        fi
        return 0
    done
    return 1
}

# ------------------------------------------------------------ 1. end to end

echo "== 1. an offer across alpha, beta and net, end to end"
reply=$(api POST /agreements "$(offer e2e 5 40 1 1 100)")
ID1=$(agreement_id "$reply")
if [ "$(st)" = 201 ] && [ -n "$ID1" ]; then ok "agreed across three sites ($ID1)"; else
    bad "POST /agreements: $(st)"
    head -c 2000 <<<"$reply"
    echo
fi
J1=$(journal "$ID1" | grep ' committed$' || true)
expect "one committed reservation at each of alpha, beta, wan" \
    test "$(awk '{print $2}' <<<"$J1" | sort | tr '\n' ' ')" = "alpha beta wan "
if keys_answer 200 <<<"$J1"; then ok "each site answers its reservation by key (mTLS)"; else bad "a site does not know its reservation"; fi
body=$(curl -s --max-time 10 --cacert "$C/ca.crt" --cert "$C/accord.crt" --key "$C/accord.key" \
    "https://10.79.1.11:8443/v1/reservations/$(awk '$2 == "alpha" {print $1}' <<<"$J1")")
expect "alpha's reservation document: 1 node" grep -q 'amount="1"' <<<"$body"
expect "alpha's reservation document: Observed" grep -q 'state="Observed"' <<<"$body"
sites=$(api GET /sites)
expect "/sites shows the remote endpoints" \
    grep -q 'co:endpoint="https://10.79.1.11:8443"' <<<"$sites"
expect "/sites shows a measured round trip" grep -q 'co:rttUs="[1-9][0-9]*"' <<<"$sites"
ctl=$("$ACCORD_BUILD/accordctl" --server "$URL" --cacert "$C/ca.crt" sites 2>&1)
expect "accordctl sites shows alpha's endpoint" grep -q "https://10.79.1.11:8443" <<<"$ctl"
expect "accordctl sites shows a round-trip column" grep -q "RTT" <<<"$ctl"
[ "$failures" = 0 ] || sed 's/^/    | /' <<<"$ctl"
expect "no HTB class before the start" test "$(leaves 100)" = 0
if wait_for 12 sh -c "[ \"\$(tc -n acc-gw-alpha class show dev up0 | grep -c 'rate 100Mbit ')\" -ge 1 ]"; then
    ok "at the start the net site's tc adapter put the link's class on the wire"
else
    bad "no 100 Mbit/s class on acc-gw-alpha/up0 after the start"
fi
api POST "/agreements/$ID1/terminate" >/dev/null
expect "terminated (200)" test "$(st)" = 200
if wait_for 10 keys_answer 404 <<<"$J1"; then ok "gone at every site (404 by key)"; else bad "still known at a site after terminate"; fi
expect "the link's class is gone" wait_for 5 sh -c "[ \"\$(tc -n acc-gw-alpha class show dev up0 | grep -c 'rate 100Mbit ')\" = 0 ]"
if out=$(nothing_booked_but ""); then ok "nothing booked anywhere after terminate"; else bad "bookings left after terminate"; echo "$out"; fi

# ------------------------------------------------------------ 2. meta-job

echo "== 2. a meta-job whose proxies the site daemons start"
launch='<wsag:ServiceDescriptionTerm wsag:Name="launch" wsag:ServiceName="m"><co:Launch style="mpich-g2"/></wsag:ServiceDescriptionTerm>'
comp='<co:ProcessesPerNode>2</co:ProcessesPerNode><co:Executable>accord-ring</co:Executable><co:Argument>across domains</co:Argument>'
reply=$(api POST /agreements "$(offer ring 4 90 1 1 0 "$comp" "$launch")")
ID2=$(agreement_id "$reply")
expect "meta-job agreed" test "$(st)" = 201 -a -n "$ID2"
[ "$(st)" = 201 ] || sed 's/^/    | /' <<<"$reply" | head -n 20
if wait_for 75 state_is "$ID2" Complete; then ok "meta-job Complete"; else bad "meta-job not Complete: $(agreement_state "$ID2")"; fi
out=$(api GET "/agreements/$ID2/launch/output")
expect "RING OK with 4 ranks of components a and b" grep -q 'RING OK ranks=4 components=a:2,b:2' <<<"$out"
launchdoc=$(api GET "/agreements/$ID2/launch")
expect "exit status 0" grep -q '<co:ExitStatus>0</co:ExitStatus>' <<<"$launchdoc"
ns_alpha=$(ip netns exec acc-alpha1 readlink /proc/self/ns/net)
ns_beta=$(ip netns exec acc-beta1 readlink /proc/self/ns/net)
ns_a=$(sed -n 's/.*component a host [^ ]* netns \([^ ]*\).*/\1/p' <<<"$out" | sort -u | tr '\n' ' ')
ns_b=$(sed -n 's/.*component b host [^ ]* netns \([^ ]*\).*/\1/p' <<<"$out" | sort -u | tr '\n' ' ')
expect "component a's ranks ran in alpha's namespace ($ns_alpha)" test "$ns_a" = "$ns_alpha "
expect "component b's ranks ran in beta's namespace ($ns_beta)" test "$ns_b" = "$ns_beta "
# The site daemons' job tables: a record (SITE.jobs/ID.job) per proxy,
# for a key of this agreement.
for s in alpha beta; do
    n=$(grep -l "acc-$ID2-" "$DIR/$s/$s.jobs"/*.job 2>/dev/null | wc -l)
    expect "site $s's daemon started the agreement's proxy ($n job)" test "$n" -ge 1
done
[ "$failures" = 0 ] || { echo "    | launch output:"; head -n 40 <<<"$out" | sed 's/^/    | /'; }

# ------------------------------------------------------------ 3. site killed

echo "== 3. site alpha killed (SIGKILL) between reserve and verify"
# alpha's own booking, to survive its restart (2 h ahead, no link).
reply=$(api POST /agreements "$(offer keep 7200 600 1 1 0)")
ID3K=$(agreement_id "$reply")
expect "an agreement to keep at alpha" test "$(st)" = 201
[ "$(st)" = 201 ] || sed 's/^/    | /' <<<"$reply" | head -n 20
KEEP=$(journal "$ID3K" | awk '$3 == "committed" {print $1}' | tr '\n' ' ')
KEEP_ALPHA=$(journal "$ID3K" | awk '$2 == "alpha" && $3 == "committed" {print $1}')
if between_reserve_and_verify alpha killed '"$BED" stop alpha KILL' '"$BED" start alpha'; then
    ok "alpha killed right after it reserved $KEY, before the verify step"
else
    bad "the kill never landed between reserve and verify"
fi
reply=$(cat "$DIR/post")
expect "the negotiation failed (agreement $AID: $(agreement_state "$AID"))" \
    test -n "$AID" -a "$(agreement_state "$AID")" != Observed
expect "503 ($(cat "$DIR.bg"))" test "$(cat "$DIR.bg")" = 503
expect "the answer names site alpha" grep -q "site alpha" <<<"$reply"
[ "$(cat "$DIR.bg")" = 503 ] || head -c 600 <<<"$reply"
if keys_answer 404 < <(journal "$AID" | grep -v ' alpha '); then ok "rolled back at beta and net"; else bad "left at beta or net"; fi
"$BED" start alpha && ok "alpha restarted" || bad "alpha did not restart"
expect "alpha's earlier booking survived its restart" test "$(site_key alpha "$KEEP_ALPHA")" = 200
if wait_for 20 nothing_booked_but "$KEEP" >/dev/null; then ok "nothing of the failed offer booked anywhere once alpha is back"; else
    bad "bookings of the failed offer left"
    nothing_booked_but "$KEEP"
fi

# ------------------------------------------------------------ 4. partition

echo "== 4. beta's link down between reserve and verify"
link_up() {
    ip -n acc-beta1 link set eth0 up
    ip -n acc-beta1 route replace default via 10.79.2.1
}
t=$(date +%s)
if between_reserve_and_verify beta cut 'ip -n acc-beta1 link set eth0 down' link_up; then
    ok "beta's link down right after it reserved $KEY, before the verify step"
else
    bad "the partition never landed between reserve and verify"
fi
took=$(($(date +%s) - t))
reply=$(cat "$DIR/post")
expect "the negotiation failed (agreement $AID: $(agreement_state "$AID"))" \
    test -n "$AID" -a "$(agreement_state "$AID")" != Observed
expect "the answer names site beta and a time-out ($(cat "$DIR.bg") after $took s)" \
    sh -c 'grep -q "site beta" "$1" && grep -qi "timed out" "$1"' _ "$DIR/post"
[ "$failures" = 0 ] || head -c 600 <<<"$reply"
if keys_answer 404 < <(journal "$AID" | grep -v ' beta '); then ok "rolled back at alpha and net"; else bad "left at alpha or net"; fi
expect "beta still holds it while cut off (its cancel could not reach it)" \
    grep -qx "$KEY" < <(site_rows beta reserved)
link_up
if wait_for 25 nothing_booked_but "$KEEP" >/dev/null; then ok "healed: beta's booking cancelled once the link is up"; else
    bad "beta still holds the booking after the link came back"
    nothing_booked_but "$KEEP"
fi
reply=$(api POST /agreements "$(offer healed 5 30 1 1 50)")
ID4B=$(agreement_id "$reply")
expect "a new offer across the three is agreed after the partition" test "$(st)" = 201
[ -z "$ID4B" ] || api POST "/agreements/$ID4B/terminate" >/dev/null

# ------------------------------------------------------------ 5. accordd killed

echo "== 5. accordd killed (SIGKILL) mid-negotiation"
restart_accordd() { "$BED" start accordd && URL=$(cat "$DIR/accordd/url"); }
if between_reserve_and_verify alpha crash '"$BED" stop accordd KILL' restart_accordd; then
    ok "accordd killed after alpha reserved $KEY, before the commit"
else
    bad "the kill of accordd never landed mid-negotiation"
fi
echo "    | journal at the kill: $(journal "$AID" | tr '\n' ';')"
restart_accordd && ok "accordd restarted" || bad "accordd did not restart"
if wait_for 20 sh -c "! sqlite3 -cmd '.timeout 5000' '$ADB' \"SELECT state FROM reservation WHERE agreement_id = '$AID'\" | grep -qv '^cancelled$\|^failed$'"; then
    ok "every journal entry of the interrupted negotiation cancelled"
else
    bad "open entries after the restart: $(journal "$AID" | tr '\n' ';')"
fi
if wait_for 15 keys_answer 404 < <(journal "$AID"); then ok "cancelled at each remote site by key"; else bad "a remote site still holds one"; fi
expect "the agreement is Rejected ($(agreement_state "$AID"))" state_is "$AID" Rejected
if out=$(nothing_booked_but "$KEEP"); then ok "nothing booked anywhere but the kept agreement"; else bad "left"; echo "$out"; fi

# ------------------------------------------------------------ 6. TLS

echo "== 6. TLS: who the sites admit"
tls() { # SITE CERT-NAME [CURL-OPTION]: curl's exit code and HTTP status
    local s=$1 n=$2 rc code
    code=$(curl -s -o /dev/null --max-time 10 -w '%{http_code}' --cacert "$C/ca.crt" ${3:-} \
        ${n:+--cert "$C/$n.crt" --key "$C/$n.key"} "https://$(site_addr "$s"):8443/v1/health")
    rc=$?
    echo "$rc $code"
}
refused() { # DESCRIPTION CERT-NAME
    local r
    # TLS 1.2: the server refuses before its Finished, so curl's handshake
    # itself fails (35, no HTTP at all).
    r=$(tls alpha "$2" --tls-max\ 1.2)
    case $r in
    "35 000") ok "$1 refused in the TLS 1.2 handshake (curl $r)" ;;
    *) bad "$1 over TLS 1.2: curl exit and status '$r', not '35 000'" ;;
    esac
    # TLS 1.3: the client's handshake ends before the server has checked the
    # certificate; the server's alert comes instead of any HTTP (56, or 52/55
    # when it closes first), never a status.
    r=$(tls alpha "$2")
    case $r in
    "35 000" | "52 000" | "55 000" | "56 000") ok "$1 refused over TLS 1.3 without any HTTP (curl $r)" ;;
    *) bad "$1 over TLS 1.3: curl exit and status '$r'" ;;
    esac
}
expect "accord.crt (admitted) gets an answer" test "$(tls alpha accord)" = "0 200"
refused "no client certificate" ""
refused "intruder.crt (same CA, not admitted)" intruder
refused "stranger.crt (CN=accord-main, another CA)" stranger
refused "expired.crt (same CA, expired)" expired
# tampered.crt: accord.crt with one byte of its signature changed (mkcerts.sh).
refused "tampered.crt (accord.crt, one byte of its signature changed)" tampered
code=$(curl -s -o /dev/null --max-time 10 -w '%{http_code}' --cacert "$C/other-ca.crt" \
    --cert "$C/accord.crt" --key "$C/accord.key" https://10.79.1.11:8443/v1/health)
expect "a site's certificate does not verify against another CA" test "$code" = 000
# accordd checks each site's certificate against the CA of its section: with
# another CA for alpha, alpha cannot be reached.
sed -i '/^\[site alpha\]/,/^\[/ s|^ca = .*|ca = '"$C"'/other-ca.crt|' "$DIR/accordd/accordd.ini"
"$BED" stop accordd && restart_accordd
reply=$(api POST /agreements "$(offer wrongca 5 40 1 1 0)")
printf '%s' "$reply" >"$DIR/reply"
expect "with another CA for alpha: refused ($(st)), alpha unreachable over TLS" \
    sh -c 'grep -q "site alpha" "$1" && grep -qi "unreachable" "$1" && grep -qi "TLS\|certificate" "$1"' _ "$DIR/reply"
[ "$failures" = 0 ] || head -c 600 "$DIR/reply"
sed -i 's|^ca = .*other-ca.crt|ca = '"$C"'/ca.crt|' "$DIR/accordd/accordd.ini"
"$BED" stop accordd && restart_accordd
# Over the peer's limits: 2 nodes at alpha (max_nodes = 1).
reply=$(api POST /agreements "$(offer greedy 5 40 2 1 0)")
printf '%s' "$reply" >"$DIR/reply"
expect "2 nodes at alpha (max_nodes 1): refused ($(st)) with the site's PeerLimit" \
    sh -c 'grep -q "site alpha" "$1" && grep -q "PeerLimit\|max_nodes" "$1"' _ "$DIR/reply"
[ "$failures" = 0 ] || head -c 600 <<<"$reply"
reply=$(api POST /agreements "$(offer long 5 7200 1 1 0)")
printf '%s' "$reply" >"$DIR/reply"
expect "2 h at alpha (max_duration 1 h): refused ($(st)) with PeerLimit" \
    sh -c 'grep -q "site alpha" "$1" && grep -q "PeerLimit\|max_duration" "$1"' _ "$DIR/reply"
if out=$(nothing_booked_but "$KEEP"); then ok "the refused offers left nothing booked"; else bad "left"; echo "$out"; fi

# Every daemon stops on SIGTERM; a sanitized build reports what it found in
# the daemons' logs (leaks at exit, errors).
echo "== the daemons stop, and their logs"
for n in accordd alpha beta net; do
    "$BED" stop "$n" TERM && ok "$n stopped on SIGTERM" || bad "$n did not stop on SIGTERM within 5 s"
done
no_sanitizer_reports "$DIR"/*/log

if [ "$failures" != 0 ]; then
    for f in "$DIR"/*/log; do [ -f "$f" ] && { echo "== $f (tail)"; tail -n 15 "$f"; }; done
fi
checks_summary test_sites_real "in $(($(date +%s) - T0)) s"
