#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# crash-bench.sh - accordd killed and its database taken away under a mixed
# load, and what it leaves behind once it has settled (issue 32).  A
# benchmark that prints figures; it exits 1 when an invariant is broken.
#
#   tests/bench/crash-bench.sh [--mode sqlite|pg] [--cycles N] [--clients N]
#                              [--instances N] [--settle S] [--build DIR]
#                              [--keep DIR]
#
# Two modes:
#   sqlite (default)  one accordd on an SQLite file, two simulated sites (sa,
#                     sb: 16 nodes each, sim-batch) and a link of 1000 Mbit/s
#                     between them (sim-network); every 3-6 s it is killed
#                     (kill -9) and started again on the same configuration
#                     and database, N cycles (default 10).
#   pg                a PostgreSQL 15 cluster of its own (tests/pg/
#                     start-cluster.sh, socket number 15438 in a temporary
#                     directory; root: the cluster runs as nobody) and
#                     --instances accordd on it (default 2, lease PT8S);
#                     odd cycles stop PostgreSQL (pg_ctl -m immediate) for
#                     5-20 s and start it again while the instances live on,
#                     even cycles kill -9 one instance and start it again.
# Meanwhile --clients parallel curl clients (default 6) send a mixed load,
# spread over the instances: offers (POST /agreements with an
# Idempotency-Key), holds (POST /negotiations?hold=PT2M), commits of their
# held quotes (POST /agreements?quote=ID), modifies of the end of their
# agreements and terminates.  A request answered 503 or not at all (000: the
# process was killed or is starting) is sent again (offers and commits with
# the same Idempotency-Key) for up to 40 s.
#
# Then the load stops and the service is given up to --settle seconds
# (default 30, about three leases) to settle: until no booking at the sites
# is an orphan, no agreement is Pending and no quote is Advisory with
# bookings.  Then the invariants are checked and printed:
#   lost       agreements a client was answered 201 for that are not
#              Observed/Complete (Terminated when a terminate was answered 200)
#   orphans    bookings at the simulated sites (control/bookings; on
#              PostgreSQL the calendars' tables) of no
#              Observed/ObservedAndTerminating agreement and no Held quote
#   overbooked resources whose peak (control/peak; on PostgreSQL the
#              calendars' tables) is above their capacity
#   stuck      agreements Pending, quotes Advisory with bookings, and a final
#              modify of up to 5 Observed agreements not answered 200
# Printed: cycles done, requests by kind, answers by status code (000: no
# answer), the invariants' counts, the seconds the service took to settle,
# and "figure NAME VALUE" lines.  Everything it started (accordd, the
# cluster, the clients) is stopped and its temporary directory removed at
# exit, also on failure; --keep DIR copies the logs there first.  The build
# is ./build unless --build names another.  A default run takes about 2
# minutes (sqlite) and 3-4 minutes (pg).
set -u
cd "$(dirname "$0")/../.." || exit 2
SRC=$PWD
MODE=sqlite CYCLES=10 CLIENTS=6 INSTANCES=2 SETTLE=30 BUILD=$SRC/build KEEP=
while [ $# -gt 0 ]; do
    case $1 in
    --mode) MODE=$2; shift 2 ;;
    --cycles) CYCLES=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --instances) INSTANCES=$2; shift 2 ;;
    --settle) SETTLE=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --keep) KEEP=$2; shift 2 ;;
    *) sed -n '5,8p' "$0" >&2; exit 2 ;;
    esac
done
case $MODE in sqlite | pg) ;; *) echo "crash-bench.sh: --mode is sqlite or pg" >&2; exit 2 ;; esac
[[ $CYCLES =~ ^[0-9]+$ && $CLIENTS =~ ^[1-9][0-9]*$ && $INSTANCES =~ ^[1-9]$ && $SETTLE =~ ^[0-9]+$ ]] ||
    { echo "crash-bench.sh: bad number" >&2; exit 2; }
[ "$MODE" = sqlite ] && INSTANCES=1
BUILD=$(cd "$BUILD" && pwd) && [ -x "$BUILD/accordd" ] || { echo "crash-bench.sh: no accordd in $BUILD" >&2; exit 2; }
if [ "$MODE" = pg ] && [ "$(id -u)" != 0 ]; then
    echo "crash-bench.sh: --mode pg needs root (the cluster runs as nobody)" >&2
    exit 2
fi
PGBIN=/usr/lib/postgresql/15/bin
PORT=15438
LEASE=8

T=$(mktemp -d /tmp/accord-crash-XXXXXX)
chmod 755 "$T"
export PG_TEST_DIR=$T/pg PG_TEST_PORT=$PORT
declare -a PIDS=()
CLIENT_PIDS=()
fail() { echo "crash-bench.sh: $*" >&2; exit 1; }
cleanup() {
    touch "$T/stop"
    for p in "${CLIENT_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    if [ -n "$KEEP" ]; then
        mkdir -p "$KEEP" && cp "$T"/a?.log "$KEEP"/ 2>/dev/null
        cp "$T/pg/log" "$KEEP/postgresql.log" 2>/dev/null
    fi
    [ "$MODE" = pg ] && "$SRC/tests/pg/stop-cluster.sh"
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---------------------------------------------------------------- accordd
{
    printf '[server]\nlisten = 127.0.0.1:0\nallow_control = yes\n\n'
    if [ "$MODE" = pg ]; then
        "$SRC/tests/pg/start-cluster.sh" >/dev/null || fail "cannot start PostgreSQL"
        openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/sign.key" -out "$T/sign.crt" \
            -subj "/CN=Accord crash bench" -days 2 2>/dev/null || fail "openssl"
        chmod 600 "$T/sign.key"
        printf '[database]\nurl = %s\nlease = PT%sS\n\n' \
            "postgresql:///accord?host=$PG_TEST_DIR&port=$PORT&user=accord&connect_timeout=2" "$LEASE"
        printf '[signing]\nkey = %s\ncertificate = %s\n\n' "$T/sign.key" "$T/sign.crt"
    else
        printf '[database]\npath = %s\n\n' "$T/accord.db"
    fi
    cat <<CONF
[negotiation]
horizon = P3D
lead_time = PT5S
adapter_timeout = PT30S

[quota]
max_agreements = 1000000
max_agreements_per_address = 1000000
max_quotes = 1000
max_quotes_per_address = 1000
max_node_hours = 100000000
max_mbit_hours = 1000000000

[site sa]
adapter = sim-batch
nodes = 16

[site sb]
adapter = sim-batch
nodes = 16

[network wan]
adapter = sim-network

[link sa_sb]
sites = sa sb
capacity = 1000
network = wan
CONF
} >"$T/accord.ini" || exit 1

# start N: instance N (its log appended to $T/aN.log), its URL in $T/urlN
# once it listens
start() {
    local n=$1 port before
    rm -f "$T/url$n"
    # the lines of the instances started before (a new one may get the same port)
    before=$(grep -a -c 'listening on http://127.0.0.1:' "$T/a$n.log" 2>/dev/null)
    mkdir -p "$T/w$n"
    (cd "$T/w$n" && exec "$BUILD/accordd" --config "$T/accord.ini") >>"$T/a$n.log" 2>&1 &
    PIDS[$n]=$!
    for _ in $(seq 300); do
        port=$(grep -a 'listening on http://127.0.0.1:' "$T/a$n.log" | tail -n +$((${before:-0} + 1)) |
            sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' | tail -1)
        if [ -n "$port" ]; then
            echo "http://127.0.0.1:$port" >"$T/url$n"
            return 0
        fi
        kill -0 "${PIDS[$n]}" 2>/dev/null || break
        sleep 0.1
    done
    tail -20 "$T/a$n.log" >&2
    fail "instance $n did not start"
}
kill9() {
    local n=$1
    rm -f "$T/url$n"
    kill -9 "${PIDS[$n]}" 2>/dev/null
    wait "${PIDS[$n]}" 2>/dev/null
    PIDS[$n]=
}
for n in $(seq "$INSTANCES"); do
    start "$n"
    if [ "$MODE" = pg ] && [ "$n" = 1 ]; then
        for _ in $(seq 100); do grep -q " leads" "$T/a1.log" && break; sleep 0.1; done
    fi
done

# ---------------------------------------------------------------- clients
# offer NAME NODES_A NODES_B MBITS: an hour on sa and sb and the link
offer() {
    cat <<XML
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement" xmlns:co="urn:accord:coalloc:1"><wsag:Name>$1</wsag:Name><wsag:Context><wsag:AgreementInitiator>crash</wsag:AgreementInitiator><wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context><wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name="s" wsag:ServiceName="m"><co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name="a" wsag:ServiceName="m"><co:Component><co:Site>sa</co:Site><co:Nodes>$2</co:Nodes></co:Component></wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name="b" wsag:ServiceName="m"><co:Component><co:Site>sb</co:Site><co:Nodes>$3</co:Nodes></co:Component></wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name="l" wsag:ServiceName="m"><co:Link><co:Between>a</co:Between><co:And>b</co:And><co:Bandwidth>$4</co:Bandwidth></co:Link></wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>
XML
}
fault_text() { # the message of a fault answer
    sed -n 's/.*<wsag:Reason>\([^<]*\).*/\1/p;s/.*<co:Message>\([^<]*\).*/\1/p;s/.*<co:Description>\([^<]*\).*/\1/p' "$1" | head -1 | cut -c1-300
}
modification() { # modification EPOCH: a new end
    printf '<co:Modification xmlns:co="urn:accord:coalloc:1"><co:End>%s</co:End></co:Modification>\n' \
        "$(date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ)"
}
# req C KIND PATH BODY [KEY]: POST to one instance (client C's own, another
# when it is down), sent again on 000 or 503 for up to 40 s unless the load
# stops; logs "KIND CODE" per answer, leaves the body in $D/out and echoes the
# last code
req() {
    local c=$1 kind=$2 path=$3 body=$4 key=${5:-} code=000 n url t0=$SECONDS args=()
    [ -n "$key" ] && args=(-H "Idempotency-Key: $key")
    [ -n "$body" ] && args+=(-H 'Content-Type: application/xml' --data-binary "@$body")
    for a in $(seq 200); do
        n=$(((c + a) % INSTANCES + 1))
        url=$(cat "$T/url$n" 2>/dev/null)
        if [ -n "$url" ]; then
            code=$(curl -s -o "$D/out" -w '%{http_code}' -m 60 -X POST "${args[@]}" "$url$path")
            case $code in
            2?? | 000) echo "$kind $code" >>"$D/log" ;;
            *)
                f=$(grep -o 'co:code="[A-Za-z]*"' "$D/out" | head -1 | cut -d'"' -f2)
                echo "$kind $code $f" >>"$D/log"
                case $code:$f in 503:* | 409:NoCommonSlot) ;;
                *) echo "$kind $path $code: $(fault_text "$D/out")" >>"$D/odd" ;;
                esac
                ;;
            esac
        else
            code=000
        fi
        case $code in 000 | 503) ;; *) break ;; esac
        [ -e "$T/stop" ] && break
        [ $((SECONDS - t0)) -ge 40 ] && break
        sleep 0.5
    done
    echo "$code"
}
# client C: until $T/stop, a request at a time; what it was given in $D/given
# ("ID END" lines: the id and the end it was given, in epoch seconds), its
# held quotes in $D/held, the agreements whose terminate was answered 200 in
# $D/term, tried but not answered 200 in $D/termtry
client() {
    local c=$1 i=0 r code id end line q
    D=$T/c$c
    mkdir -p "$D"
    : >"$D/given"; : >"$D/held"; : >"$D/term"; : >"$D/termtry"; : >"$D/log"
    RANDOM=$((c * 7919 + $$))
    while [ ! -e "$T/stop" ]; do
        i=$((i + 1))
        r=$((RANDOM % 100))
        if [ "$r" -lt 20 ] && [ "$(wc -l <"$D/held")" -lt 4 ]; then
            offer "c${c}h$i" $((RANDOM % 3 + 1)) $((RANDOM % 3 + 1)) $((RANDOM % 4 * 50 + 50)) >"$D/h$i.xml"
            code=$(req "$c" hold "/negotiations?hold=PT2M" "$D/h$i.xml")
            if [ "$code" = 201 ] && grep -q '>Held<' "$D/out"; then
                q=$(grep -o 'co:[a-zA-Z]*[iI]d="[a-z0-9]*"' "$D/out" | head -1 | cut -d'"' -f2)
                [ -n "$q" ] && echo "$q $i" >>"$D/held"
            else
                rm -f "$D/h$i.xml"
            fi
        elif [ "$r" -lt 40 ] && [ -s "$D/held" ]; then
            line=$(head -1 "$D/held")
            sed -i 1d "$D/held"
            q=${line% *}
            code=$(req "$c" commit "/agreements?quote=$q" "$D/h${line#* }.xml" "q-$q")
            rm -f "$D/h${line#* }.xml"
            [ "$code" = 201 ] && given
        elif [ "$r" -lt 60 ] && [ -s "$D/given" ]; then
            line=$(shuf -n 1 "$D/given")
            id=${line% *} end=${line#* }
            modification $((end - (RANDOM % 40 + 1) * 60)) >"$D/mod.xml"
            req "$c" modify "/agreements/$id/modify" "$D/mod.xml" >/dev/null
        elif [ "$r" -lt 70 ] && [ -s "$D/given" ]; then
            line=$(shuf -n 1 "$D/given")
            id=${line% *}
            code=$(req "$c" terminate "/agreements/$id/terminate" "")
            if [ "$code" = 200 ]; then echo "$id" >>"$D/term"; else echo "$id" >>"$D/termtry"; fi
            grep -v "^$id " "$D/given" >"$D/given.new"; mv "$D/given.new" "$D/given"
        else
            offer "c${c}o$i" $((RANDOM % 3 + 1)) $((RANDOM % 3 + 1)) $((RANDOM % 4 * 50 + 50)) >"$D/o.xml"
            code=$(req "$c" offer /agreements "$D/o.xml" "c$c-$i")
            [ "$code" = 201 ] && given
        fi
    done
}
# given: the agreement answered 201 in $D/out into $D/given
given() {
    local id end
    id=$(grep -o 'wsag:AgreementId="[a-z0-9]*"' "$D/out" | head -1 | cut -d'"' -f2)
    end=$(grep -o '<co:End>[^<]*</co:End>' "$D/out" | head -1 | sed 's/<[^>]*>//g')
    if [ -z "$id" ] || [ -z "$end" ]; then
        echo "201 without an id or end: $(head -c 300 "$D/out")" >>"$D/odd"
        return
    fi
    echo "$id $(date -u -d "$end" +%s)" >>"$D/given"
    echo "$id" >>"$D/all201"
    # the owners its bookings are named by (a committed quote's are the quote's)
    grep -o '<co:Reservation>acc-[a-z0-9]*-' "$D/out" | cut -d- -f2 | sort -u |
        sed "s/\$/ $id/" >>"$D/keys"
}

T0=$SECONDS
for c in $(seq "$CLIENTS"); do
    client "$c" &
    CLIENT_PIDS+=($!)
done

# ----------------------------------------------------------------- cycles
log() { printf '%4ds  %s\n' $((SECONDS - T0)) "$*"; }
DONE=0 OUTAGES=0 KILLS=0 DOWN=0
for cyc in $(seq "$CYCLES"); do
    sleep $((RANDOM % 4 + 3))
    if [ "$MODE" = pg ] && [ $((cyc % 2)) = 1 ]; then
        s=$((RANDOM % 16 + 5))
        runuser -u nobody -- "$PGBIN/pg_ctl" -D "$PG_TEST_DIR/data" -m immediate -w stop >/dev/null ||
            fail "cannot stop PostgreSQL"
        sleep "$s"
        runuser -u nobody -- "$PGBIN/pg_ctl" -D "$PG_TEST_DIR/data" -l "$PG_TEST_DIR/log" -w -t 60 start >/dev/null ||
            fail "cannot start PostgreSQL again"
        OUTAGES=$((OUTAGES + 1)) DOWN=$((DOWN + s))
        log "cycle $cyc: PostgreSQL away for $s s"
    else
        n=$((RANDOM % INSTANCES + 1))
        kill9 "$n"
        [ "$MODE" = pg ] && sleep 2
        t=$SECONDS
        start "$n"
        KILLS=$((KILLS + 1))
        log "cycle $cyc: instance $n killed (kill -9), listening again after $((SECONDS - t)) s"
    fi
    DONE=$cyc
done
sleep 3
touch "$T/stop"
STOP_AT=$SECONDS
log "load stopped; waiting for the clients"
wait "${CLIENT_PIDS[@]}" 2>/dev/null
CLIENT_PIDS=()
LOAD_SECONDS=$((SECONDS - T0))

# ------------------------------------------------------------------ checks
B=$(cat "$T/url1")
jget() { curl -s -m 30 -H 'Accept: application/json' "$B$1"; }
# states: every agreement listed in state $1 (paged), one id a line
list_state() {
    local off=0 page total
    while :; do
        page=$(jget "/agreements?state=$1&limit=1000&offset=$off")
        echo "$page" | jq -r '.agreements[].id'
        total=$(echo "$page" | jq -r '.total')
        off=$((off + 1000))
        [ "$off" -lt "${total:-0}" ] || break
    done
}
# state ID: "agreement STATE" or "quote STATE [AGREEMENT]" or "none"
state() {
    local s
    s=$(jget "/agreements/$1" | jq -r '.state // empty' 2>/dev/null)
    [ -n "$s" ] && { echo "agreement $s"; return; }
    s=$(jget "/negotiations/$1")
    if [ -n "$(echo "$s" | jq -r '.state // empty' 2>/dev/null)" ]; then
        echo "quote $(echo "$s" | jq -r '.state') $(echo "$s" | jq -r '.agreementId // .agreement // empty')"
        return
    fi
    echo none
}
# one pass: the bookings of sa, sb and wan classified into $T/orphans,
# $T/advisory; the Pending agreements into $T/pending
check_pass() {
    : >"$T/orphans"; : >"$T/advisory"; : >"$T/bookings"
    list_state Observed >"$T/obs"
    list_state ObservedAndTerminating >>"$T/obs"
    sort -u -o "$T/obs" "$T/obs"
    # On PostgreSQL the calendars are the database's tables: an instance's
    # own copy of them (control/bookings) catches up only at its next call
    # to the site, and after the load there is none; the tables tell.
    for s in sa sb wan; do
        if [ "$MODE" = pg ]; then
            psql "postgresql:///accord?host=$PG_TEST_DIR&port=$PORT&user=accord" -At -F ' ' -c \
                "SELECT key, resource, start_time, end_time, amount, owner FROM ledger_$s.booking"
        else
            curl -s -m 30 -X POST "$B/adapters/$s/control/bookings"
        fi | sed "s/^/$s /" >>"$T/bookings"
    done
    awk '$2 ~ /^acc-/ {split($2, k, "-"); print k[2]}' "$T/bookings" | sort -u >"$T/booked"
    comm -23 "$T/booked" "$T/obs" | while read -r id; do
        # a committed quote whose agreement a client was given: no request
        a=$(awk -v k="$id" '$1 == k {print $2; exit}' "$T/keys")
        [ -n "$a" ] && grep -qx "$a" "$T/obs" && continue
        st=$(state "$id")
        case $st in
        "quote Held"*) ;;
        "quote Committed "?*)
            a=${st##* }
            grep -qx "$a" "$T/obs" || echo "$id $st" >>"$T/orphans" ;;
        "quote Advisory"*) echo "$id $st" >>"$T/orphans"; echo "$id" >>"$T/advisory" ;;
        *) echo "$id $st" >>"$T/orphans" ;;
        esac
    done
    { list_state Pending; list_state PendingAndTerminating; } >"$T/pending"
}
# settled: the time from the end of the load to the start of the first
# pass that found nothing left over (a pass takes PASS seconds)
cat "$T"/c*/keys 2>/dev/null | sort -u >"$T/keys"
S0=$STOP_AT
SETTLED= PASS=0 PASSES=0
while :; do
    p0=$SECONDS
    check_pass
    PASS=$((SECONDS - p0)) PASSES=$((PASSES + 1))
    if [ ! -s "$T/orphans" ] && [ ! -s "$T/pending" ]; then
        SETTLED=$((p0 - S0))
        break
    fi
    [ $((SECONDS - S0)) -ge "$SETTLE" ] && break
    sleep 1
done
ORPHANS=$(wc -l <"$T/orphans")
ORPHAN_BOOKINGS=0
while read -r id _; do
    ORPHAN_BOOKINGS=$((ORPHAN_BOOKINGS + $(grep -c " acc-$id-" "$T/bookings")))
done <"$T/orphans"
PENDING=$(sort -u "$T/pending" | grep -c .)
ADVISORY=$(grep -c . "$T/advisory")

# nothing lost
LOST=0 GIVEN=0
: >"$T/lost"
: >"$T/states"
for st in Observed Complete Terminated ObservedAndTerminating; do
    list_state "$st" | sed "s/\$/ agreement $st/" >>"$T/states"
done
for d in "$T"/c*/; do
    [ -f "$d/all201" ] || continue
    while read -r id; do
        GIVEN=$((GIVEN + 1))
        st=$(awk -v k="$id" '$1 == k {print $2, $3; exit}' "$T/states")
        [ -n "$st" ] || st=$(state "$id")
        if grep -qx "$id" "$d/term"; then
            ok="agreement Terminated"
        elif grep -qx "$id" "$d/termtry"; then
            ok="agreement (Observed|Complete|Terminated|ObservedAndTerminating)"
        else
            ok="agreement (Observed|Complete)"
        fi
        [[ $st =~ ^$ok$ ]] || { LOST=$((LOST + 1)); echo "$id: $st (want $ok)" >>"$T/lost"; }
    done <"$d/all201"
done

# overbooked
OVER=0
: >"$T/peaks"
for s in sa sb wan; do curl -s -m 30 -X POST "$B/adapters/$s/control/peak" >>"$T/peaks"; done
while read -r name _ p _ cap; do
    [ -n "$cap" ] && [ "$p" -gt "$cap" ] && OVER=$((OVER + 1))
done <"$T/peaks"
# the bookings booked at once at the peak of resource $1 (instance 1's view)
peak_set() {
    awk -v r="$1" '$3 == r {n++; s[n] = $4; e[n] = $5; a[n] = $6; k[n] = $2}
        END {best = -1
             for (i = 1; i <= n; i++) {t = 0
                 for (j = 1; j <= n; j++) if (s[j] <= s[i] && e[j] > s[i]) t += a[j]
                 if (t > best) {best = t; at = s[i]}}
             for (j = 1; j <= n; j++) if (s[j] <= at && e[j] > at) print k[j], s[j], e[j], a[j]}' "$T/bookings"
}
DBOVER= VIEWOVER=
if [ "$MODE" = pg ]; then
    # the same from the other instances, and from the ledger's tables
    for n in $(seq 2 "$INSTANCES"); do
        for s in sa sb wan; do curl -s -m 30 -X POST "$(cat "$T/url$n")/adapters/$s/control/peak"; done |
            tr '\n' ';' | sed 's/;$//; s/;/; /g' >"$T/peaks$n"
    done
    dbpeak() {
        echo "SELECT resource, max(s) FROM (SELECT b1.resource, (SELECT sum(b2.amount) FROM ($1) b2
              WHERE b2.resource = b1.resource AND b2.start_time <= b1.start_time
              AND b2.end_time > b1.start_time) s FROM ($1) b1) x GROUP BY resource ORDER BY 1"
    }
    DBOVER=0
    : >"$T/dbpeaks"
    for s in sa sb wan; do
        psql "postgresql:///accord?host=$PG_TEST_DIR&port=$PORT&user=accord" -At -c \
            "$(dbpeak "SELECT resource, amount, start_time, end_time FROM ledger_$s.booking")" >>"$T/dbpeaks" 2>&1
    done
    while IFS='|' read -r res p; do
        case $res in sa | sb) cap=16 ;; sa_sb) cap=1000 ;; *) continue ;; esac
        [ "${p:-0}" -gt "$cap" ] && DBOVER=$((DBOVER + 1))
    done <"$T/dbpeaks"
    # the tables are the calendars; instance 1's copy may lag (it catches
    # up at its next call to the site): shown, not counted
    VIEWOVER=$OVER OVER=$DBOVER
fi

# a final modify of up to 5 Observed agreements given to clients
STUCK_MOD=0 FINAL=0
: >"$T/finalmod"
cat "$T"/c*/given 2>/dev/null | shuf -n 20 | while read -r id end; do
    [ "$(state "$id")" = "agreement Observed" ] || continue
    # shorter than any version the load made (at most 40 min off the end)
    modification $((end - 2700)) >"$T/fm.xml"
    code=$(curl -s -o "$T/fm.out" -w '%{http_code}' -m 60 -H 'Content-Type: application/xml' \
        --data-binary "@$T/fm.xml" "$B/agreements/$id/modify")
    echo "$id $code $(grep -o 'co:code="[A-Za-z]*"' "$T/fm.out" | head -1) $(fault_text "$T/fm.out")" >>"$T/finalmod"
    [ "$(grep -c . "$T/finalmod")" -ge 5 ] && break
done
FINAL=$(grep -c . "$T/finalmod")
STUCK_MOD=$(awk '$2 != 200' "$T/finalmod" | grep -c .)
STUCK=$((PENDING + ADVISORY + STUCK_MOD))

# ------------------------------------------------------------------ report
cat "$T"/c*/log >"$T/alllog"
echo
echo "crash-bench: mode $MODE, $INSTANCES instance(s), $CLIENTS clients, $(nproc) cores"
if [ "$MODE" = pg ]; then
    echo "cycles done:        $DONE ($OUTAGES PostgreSQL outages, $DOWN s away in all; $KILLS kill -9 of an instance)"
else
    echo "cycles done:        $DONE (kill -9 and restart)"
fi
echo "load:               $LOAD_SECONDS s"
echo "requests by kind:   $(awk '{print $1}' "$T/alllog" | sort | uniq -c | awk '{printf "%s %s, ", $2, $1}' | sed 's/, $//')"
echo "answers by status:  $(awk '{print $2}' "$T/alllog" | sort | uniq -c | awk '{printf "%s x%s, ", $2, $1}' | sed 's/, $//')"
for k in offer hold commit modify terminate; do
    echo "  $k: $(awk -v k=$k '$1 == k {print $2}' "$T/alllog" | sort | uniq -c | awk '{printf "%s x%s, ", $2, $1}' | sed 's/, $//')"
done
echo "faults:             $(awk 'NF == 3 {print $1 ":" $2 ":" $3}' "$T/alllog" | sort | uniq -c | awk '{printf "%s x%s, ", $2, $1}' | sed 's/, $//')"
echo "service log:        $(cat "$T"/a?.log | grep -a -c 'recovery:') recovery lines, $(cat "$T"/a?.log | grep -a -c 'leftovers:') leftovers lines"
echo "agreements given:   $GIVEN (201), of which terminated (200): $(cat "$T"/c*/term | grep -c .)"
echo "bookings at the end: $(grep -c . "$T/bookings") (sa $(grep -c '^sa ' "$T/bookings"), sb $(grep -c '^sb ' "$T/bookings"), wan $(grep -c '^wan ' "$T/bookings"))"
echo "peaks:              $(tr '\n' ';' <"$T/peaks" | sed 's/;$//; s/;/; /g')"
if [ "$MODE" = pg ]; then
    for n in $(seq 2 "$INSTANCES"); do echo "peaks (instance $n): $(cat "$T/peaks$n")"; done
    echo "peaks (database):   $(tr '\n' ' ' <"$T/dbpeaks")"
fi
if [ -n "$SETTLED" ]; then
    echo "settled after:      $SETTLED s from the end of the load (pass $PASSES, after the clients stopped, found nothing left over; a pass takes $PASS s)"
else
    echo "settled after:      not within $SETTLE s ($PASSES passes)"
fi
echo "lost:               $LOST"
echo "orphans:            $ORPHANS owners, $ORPHAN_BOOKINGS bookings"
echo "overbooked:         $OVER resources${VIEWOVER:+ (in the database; in the calendars as instance 1 holds them: $VIEWOVER)}"
echo "stuck:              $STUCK (Pending $PENDING, Advisory quotes with bookings $ADVISORY, final modifies not 200: $STUCK_MOD of $FINAL)"
[ -s "$T/lost" ] && { echo "lost agreements:"; head -10 "$T/lost" | sed 's/^/  /'; }
[ -s "$T/orphans" ] && { echo "orphans:"; head -10 "$T/orphans" | sed 's/^/  /'; }
[ -s "$T/pending" ] && { echo "pending:"; sort -u "$T/pending" | head -10 | sed 's/^/  /'; }
[ "$STUCK_MOD" -gt 0 ] && { echo "final modifies:"; sed 's/^/  /' "$T/finalmod"; }
[ -n "$(cat "$T"/c*/odd 2>/dev/null)" ] && { echo "answers other than 2xx, 503 and 409 NoCommonSlot (a sample):"; cat "$T"/c*/odd | head -5 | sed 's/^/  /'; }
echo "figure $MODE.cycles $DONE"
echo "figure $MODE.requests $(grep -c . "$T/alllog")"
echo "figure $MODE.given $GIVEN"
echo "figure $MODE.lost $LOST"
echo "figure $MODE.orphans $ORPHAN_BOOKINGS"
echo "figure $MODE.overbooked $OVER"
echo "figure $MODE.stuck $STUCK"
echo "figure $MODE.settle_seconds ${SETTLED:--1}"
BROKEN=$((LOST + ORPHAN_BOOKINGS + OVER + STUCK))
[ -z "$SETTLED" ] && BROKEN=$((BROKEN + 1))
if [ "$BROKEN" -gt 0 ]; then
    echo "INVARIANT BROKEN"
    # what the instances logged about each item in question (requests left
    # out), its bookings and, on PostgreSQL, its journal
    { awk '{print $1}' "$T/orphans"; cut -d: -f1 "$T/lost"; sort -u "$T/pending"; } | head -8 |
        while read -r id; do
            echo "--- $id"
            for n in $(seq "$INSTANCES"); do
                grep -a "$id" "$T/a$n.log" | grep -v ' access: ' | tail -12 | cut -c1-400 | sed "s/^/  a$n: /"
            done
            grep " acc-$id-" "$T/bookings" | sed 's/^/  booked (instance 1): /'
            if [ "$MODE" = pg ]; then
                # what each instance's simulated sites hold of it, and the
                # ledger's rows in the database itself
                for n in $(seq 2 "$INSTANCES"); do
                    for s in sa sb wan; do
                        curl -s -m 30 -X POST "$(cat "$T/url$n" 2>/dev/null)/adapters/$s/control/bookings" |
                            grep "^acc-$id-" | sed "s/^/  booked (instance $n): /"
                    done
                done
                for s in sa sb wan; do
                    psql "postgresql:///accord?host=$PG_TEST_DIR&port=$PORT&user=accord" -At \
                        -c "SELECT b::text FROM ledger_$s.booking b WHERE b::text LIKE '%acc-$id-%'" 2>&1 |
                        sed "s/^/  ledger_$s row: /"
                done
                psql "postgresql:///accord?host=$PG_TEST_DIR&port=$PORT&user=accord" -At \
                    -c "SELECT * FROM reservation WHERE agreement_id = '$id'" 2>&1 | sed 's/^/  journal: /'
            fi
        done
    while read -r name _ p _ cap; do
        [ -n "$cap" ] && [ "$p" -gt "$cap" ] || continue
        echo "--- $name: $p of $cap at once, these bookings (instance 1's view) and their owners:"
        peak_set "$name" | while read -r key st en am; do
            id=$(echo "$key" | cut -d- -f2)
            echo "  $key $st $en $am: $(state "$id")"
        done
    done <"$T/peaks"
    [ -z "$KEEP" ] || echo "(the instances' logs are in $KEEP)"
    exit 1
fi
echo "all invariants hold"
