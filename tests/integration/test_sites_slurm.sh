#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test_sites_slurm.sh - an accord-site fronting the real Slurm test cluster,
# end to end (issue 11).  The Slurm testbed (ctest fixture "slurm",
# tests/slurm/start-testbed.sh) runs slurmctld and slurmd on 127.0.0.1 in the
# root namespace; this test runs there too:
#
#   site  listens on        adapters
#   sitea 127.0.0.1:<free>  slurm: the testbed's cluster sitea (8 nodes),
#                           users = root,nobody; job_user = nobody
#   simb  127.0.0.1:<free>  sim-batch, 2 nodes simb-n[1-2]
#   accordd on 127.0.0.1:0 with [site sitea] and [site simb] of adapter =
#   remote over mutual TLS (tests/support/mkcerts.sh), [launch] launcher =
#   manual, control_address = 127.0.0.1.
#
#   1. an offer across both is agreed; the Slurm reservation exists
#      (scontrol show reservation by the local id the site reports) and each
#      site answers its key over mTLS; terminate removes the Slurm reservation
#      and both sites answer 404;
#   2. a meta-job of accord-ring (2 ranks at each site) runs to RING OK and
#      exit 0; sitea's daemon started its proxy through srun --reservation:
#      while it runs, squeue -R LOCALID shows it as a job accord-KEY of user
#      nobody, and component a's ranks ran on the reservation's node; both
#      daemons' job tables hold their proxy; terminate removes the
#      reservation.  The site daemons run without SLURM_CONF in their
#      environment: the slurm section's slurm_conf serves srun too.
#
# Root only.  Never stops the Slurm testbed (the fixture does); the daemons
# and the temporary directory go however this ends (trap).
#
#   SLURM_TESTBED_DIR=... tests/integration/test_sites_slurm.sh BUILD_DIR
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd) || exit 1
T0=$(date +%s)
# shellcheck source=../support/checks.sh
. "$SRC/tests/support/checks.sh"
die() {
    echo "test_sites_slurm: $*"
    exit 1
}

[ "$(id -u)" = 0 ] || die "needs root"
for b in accordd accord-site accord-ring; do
    [ -x "$BUILD/$b" ] || die "$BUILD/$b missing"
done
PROXY=$(command -v hydra_pmi_proxy) || die "hydra_pmi_proxy missing (apt-get install -y mpich)"
command -v curl >/dev/null || die "curl missing (apt-get install -y curl)"
[ -n "${SLURM_TESTBED_DIR:-}" ] && [ -r "$SLURM_TESTBED_DIR/env.sh" ] ||
    die "SLURM_TESTBED_DIR/env.sh missing: run through ctest (fixture slurm)"
# shellcheck disable=SC1091
. "$SLURM_TESTBED_DIR/env.sh"
[ -r "${SLURM_CONF_SITEA:-}" ] || die "the testbed has no cluster sitea"
export SLURM_CONF=$SLURM_CONF_SITEA TZ=UTC
scontrol ping >/dev/null 2>&1 || die "sitea's slurmctld does not answer (scontrol ping)"
# Every node of sitea idle first: the test before this one on the cluster
# (test_slurm_real) ends by restarting sitea's slurmctld, whose nodes answer
# "not responding" (idle*) until their slurmd registers again, and a preview
# then finds no free node at all.
nodes=$(sinfo -h -N -o '%N' | sort -u | wc -l)
for i in $(seq 180); do
    idle=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2=="idle"' | sort -u | wc -l || true)
    [ "$idle" -eq "$nodes" ] && break
    [ "$i" -eq 180 ] && { sinfo -N >&2; die "sitea: only $idle of $nodes nodes idle after 90 s"; }
    sleep 0.5
done

DIR=$(mktemp -d /tmp/accord-sites-slurm.XXXXXX)
chmod 0755 "$DIR"
C=$DIR/certs
PIDS=()
cleanup() {
    local p r alive
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for _ in $(seq 50); do
        alive=
        for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=yes; done
        [ -n "$alive" ] || break
        sleep 0.1
    done
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    # Slurm reservations and jobs of this test (named by its keys, acc-*)
    # that a failure left behind; the testbed itself stays.
    for r in $(scontrol show reservation -o 2>/dev/null | sed -n 's/^ReservationName=\(acc-[^ ]*\).*/\1/p'); do
        scancel --reservation="$r" 2>/dev/null
        scontrol delete ReservationName="$r" >/dev/null 2>&1
    done
    rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

"$SRC/tests/support/mkcerts.sh" "$C" >/dev/null || die "mkcerts.sh failed"
chmod 0755 "$C"

# ------------------------------------------------------------ daemons

site_ini() { # NAME ADAPTER-SECTION
    cat <<EOF
[daemon]
name = $1
listen = 127.0.0.1:0
database = $DIR/$1/$1.db
certificate = $C/site-alpha.crt
key = $C/site-alpha.key
client_ca = $C/ca.crt
job_user = nobody
hydra_pmi_proxy = $PROXY
control_networks = 127.0.0.0/8
threads = 4

[peer accord-main]
subject = CN=accord-main
max_nodes = 4
max_duration = 3600
max_advance = 86400
max_reservations = 16
connections = 16

$2
EOF
}

# Starts accord-site NAME; sets PORT to the port it listens on.
PORT=
start_site() { # NAME
    local n=$1 pid
    # No SLURM_CONF from this shell: the slurm section's slurm_conf must
    # serve the adapter's commands and the proxies' srun alike.
    setsid env -u SLURM_CONF "$BUILD/accord-site" --config "$DIR/$n/site.ini" </dev/null >"$DIR/$n/log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    PORT=
    for _ in $(seq 150); do
        PORT=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$DIR/$n/log" | head -n 1)
        [ -n "$PORT" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$PORT" ]; then
        echo "site $n did not come up:"
        tail -n 20 "$DIR/$n/log"
        return 1
    fi
}

mkdir -p "$DIR/sitea" "$DIR/simb" "$DIR/accordd"
site_ini sitea "[site sitea]
adapter = slurm
nodes = 8
slurm_conf = $SLURM_CONF_SITEA
users = root,nobody" >"$DIR/sitea/site.ini"
site_ini simb "[site simb]
adapter = sim-batch
nodes = 2
hosts = simb-n[1-2]" >"$DIR/simb/site.ini"
start_site sitea || exit 1
PA=$PORT
start_site simb || exit 1
PB=$PORT

remote() { # NAME PORT
    cat <<EOF
url = https://127.0.0.1:$2
ca = $C/ca.crt
certificate = $C/accord.crt
key = $C/accord.key
timeout = 20
connect_timeout = 2
retries = 1
EOF
}
cat >"$DIR/accordd/accordd.ini" <<EOF
[negotiation]
lead_time = PT1S
adapter_timeout = PT25S

[launch]
enabled = yes
; accordd runs as root here: mpiexec runs as nobody (a job never runs as root)
account = nobody
launcher = manual
control_address = 127.0.0.1
control_ports = 50000:50100
proxy_timeout = 30
grace = PT2S
path = $BUILD

[site sitea]
adapter = remote
nodes = 8
hosts = sitea-n[01-08]
$(remote sitea "$PA")

[site simb]
adapter = remote
nodes = 2
hosts = simb-n[1-2]
$(remote simb "$PB")
EOF
setsid "$BUILD/accordd" --config "$DIR/accordd/accordd.ini" --db "$DIR/accordd/accordd.db" \
    --listen 127.0.0.1:0 </dev/null >"$DIR/accordd/log" 2>&1 &
PIDS+=("$!")
URL=
for _ in $(seq 200); do
    URL=$(sed -n 's/.*listening on \(http:\/\/[^ ]*\).*/\1/p' "$DIR/accordd/log" | head -n 1)
    [ -n "$URL" ] && break
    sleep 0.1
done
[ -n "$URL" ] || { tail -n 20 "$DIR/accordd/log"; die "accordd did not come up"; }
echo "sitea (slurm) on $PA, simb (sim-batch) on $PB, accordd at $URL"

# ------------------------------------------------------------ helpers

STATUS_FILE=$DIR/status
api() { # METHOD PATH [BODY]
    local out
    out=$(curl -s --max-time 120 -X "$1" -H 'Content-Type: application/xml' \
        ${3:+--data-binary "$3"} -w '\n%{http_code}' "$URL$2")
    echo "${out##*$'\n'}" >"$STATUS_FILE"
    printf '%s' "${out%$'\n'*}"
}
st() { cat "$STATUS_FILE"; }
port_of() { case $1 in sitea) echo "$PA" ;; simb) echo "$PB" ;; esac; }
# A site's answer for a key over mTLS as accordd: BODY on stdout, the status
# into STATUS_FILE.
site_get() { # SITE KEY
    local out
    out=$(curl -s --max-time 10 -w '\n%{http_code}' --cacert "$C/ca.crt" --cert "$C/accord.crt" \
        --key "$C/accord.key" "https://127.0.0.1:$(port_of "$1")/v1/reservations/$2")
    echo "${out##*$'\n'}" >"$STATUS_FILE"
    printf '%s' "${out%$'\n'*}"
}
site_code() { site_get "$1" "$2" >/dev/null; st; }
journal() { # AGREEMENT-ID: "key adapter state" lines
    sqlite3 -separator ' ' -cmd '.timeout 5000' "$DIR/accordd/accordd.db" \
        "SELECT key, adapter, state FROM reservation WHERE agreement_id = '$1' ORDER BY key"
}
local_id() { sed -n 's/.*localId="\([^"]*\)".*/\1/p' | head -n 1; }
slurm_resv() { scontrol show reservation "$1" -o 2>/dev/null; }
no_resv() { ! scontrol show reservation "$1" -o 2>/dev/null | grep -q "^ReservationName=$1 "; }
wait_for() { # SECONDS COMMAND...
    local end=$(($(date +%s) + $1))
    shift
    while ! "$@"; do
        [ "$(date +%s)" -lt "$end" ] || return 1
        sleep 0.25
    done
}
utc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
offer() { # NAME AHEAD SECONDS [COMPONENT-EXTRA] [TERMS]
    cat <<EOF
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement" xmlns:co="urn:accord:coalloc:1">
<wsag:Name>$1</wsag:Name><wsag:Context><wsag:AgreementInitiator>tester</wsag:AgreementInitiator>
<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context><wsag:Terms><wsag:All>
<wsag:ServiceDescriptionTerm wsag:Name="schedule" wsag:ServiceName="m"><co:Schedule>
<co:EarliestStart>$(utc $(($(date +%s) + $2)))</co:EarliestStart><co:Duration>PT$3S</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>
<wsag:ServiceDescriptionTerm wsag:Name="a" wsag:ServiceName="m"><co:Component><co:Site>sitea</co:Site>
<co:Nodes>1</co:Nodes>${4:-}</co:Component></wsag:ServiceDescriptionTerm>
<wsag:ServiceDescriptionTerm wsag:Name="b" wsag:ServiceName="m"><co:Component><co:Site>simb</co:Site>
<co:Nodes>1</co:Nodes>${4:-}</co:Component></wsag:ServiceDescriptionTerm>
${5:-}</wsag:All></wsag:Terms></wsag:AgreementOffer>
EOF
}
agreement_id() { sed -n 's/.*wsag:AgreementId="\([^"]*\)".*/\1/p' <<<"$1" | head -n 1; }
agreement_state() {
    api GET "/agreements/$1/state" | sed -n 's/.*<wsag:State>\([A-Za-z]*\)<\/wsag:State>.*/\1/p' | head -n 1
}
state_is() { [ "$(agreement_state "$1")" = "$2" ]; }

# ------------------------------------------------------------ 1. end to end

echo "== 1. an offer across sitea (Slurm) and simb (sim-batch)"
reply=$(api POST /agreements "$(offer e2e 5 120)")
ID1=$(agreement_id "$reply")
if [ "$(st)" = 201 ] && [ -n "$ID1" ]; then ok "agreed across both sites ($ID1)"; else
    bad "POST /agreements: $(st)"
    head -c 2000 <<<"$reply"
    echo
fi
KA=$(journal "$ID1" | awk '$2 == "sitea" && $3 == "committed" {print $1}')
KB=$(journal "$ID1" | awk '$2 == "simb" && $3 == "committed" {print $1}')
expect "a committed reservation at each site ($KA, $KB)" test -n "$KA" -a -n "$KB"
doc=$(site_get sitea "$KA")
expect "sitea answers its key over mTLS ($(st))" test "$(st)" = 200
LA=$(local_id <<<"$doc")
has() { [[ $1 == *"$2"* ]]; } # TEXT PART
expect "sitea's reservation document: Observed" has "$doc" 'state="Observed"'
expect "  of 1 node, with a local id ($LA)" test -n "$LA" -a -n "$(has "$doc" 'amount="1"' && echo y)"
resv=$(slurm_resv "$LA")
expect "Slurm holds reservation $LA (scontrol show reservation)" grep -q "^ReservationName=$LA " <<<"$resv"
expect "  of 1 node" has "$resv" " NodeCnt=1 "
expect "  for users root,nobody" has "$resv" " Users=root,nobody "
[ "$failures" = 0 ] || echo "    | $resv"
expect "simb answers its key over mTLS" test "$(site_code simb "$KB")" = 200
api POST "/agreements/$ID1/terminate" >/dev/null
expect "terminated (200)" test "$(st)" = 200
expect "the Slurm reservation $LA is gone" wait_for 15 no_resv "$LA"
expect "sitea answers 404 for its key" wait_for 10 sh -c '[ "$(curl -s -o /dev/null -w "%{http_code}" --cacert "$1/ca.crt" --cert "$1/accord.crt" --key "$1/accord.key" "$2")" = 404 ]' \
    _ "$C" "https://127.0.0.1:$PA/v1/reservations/$KA"
expect "simb answers 404 for its key" test "$(site_code simb "$KB")" = 404

# ------------------------------------------------------------ 2. meta-job

echo "== 2. a meta-job: sitea's proxy through srun --reservation"
launch='<wsag:ServiceDescriptionTerm wsag:Name="launch" wsag:ServiceName="m"><co:Launch style="mpich-g2"/></wsag:ServiceDescriptionTerm>'
# --sleep=3: the ring alone ends in about 0.4 s, sometimes before squeue
# below has seen its proxy (it missed it once in a run after test_slurm_real)
comp='<co:ProcessesPerNode>2</co:ProcessesPerNode><co:Executable>accord-ring</co:Executable><co:Argument>through slurm</co:Argument><co:Argument>--sleep=3</co:Argument>'
reply=$(api POST /agreements "$(offer ring 4 180 "$comp" "$launch")")
ID2=$(agreement_id "$reply")
expect "meta-job agreed" test "$(st)" = 201 -a -n "$ID2"
[ "$(st)" = 201 ] || sed 's/^/    | /' <<<"$reply" | head -n 20
KA=$(journal "$ID2" | awk '$2 == "sitea" && $3 == "committed" {print $1}')
LA=$(site_get sitea "$KA" | local_id)
# While it runs: the proxy is a step of sitea's reservation, named accord-KEY.
seen=
for _ in $(seq 300); do
    if squeue -h -R "$LA" -o '%j %R %N' 2>/dev/null | grep -q "^accord-$KA "; then
        seen=$(squeue -h -R "$LA" -o '%i %j %u %N' 2>/dev/null | head -n 1)
        break
    fi
    state_is "$ID2" Complete && break
    sleep 0.2
done
expect "the proxy ran as a Slurm job in reservation $LA, as nobody ($seen)" \
    grep -q " nobody " <<<"$seen "
if wait_for 120 state_is "$ID2" Complete; then ok "meta-job Complete"; else bad "meta-job not Complete: $(agreement_state "$ID2")"; fi
out=$(api GET "/agreements/$ID2/launch/output")
expect "RING OK with 4 ranks of components a and b" grep -q 'RING OK ranks=4 components=a:2,b:2' <<<"$out"
expect "exit status 0" grep -q '<co:ExitStatus>0</co:ExitStatus>' <<<"$(api GET "/agreements/$ID2/launch")"
hosts_a=$(sed -n 's/.*component a host \([^ ]*\) .*/\1/p' <<<"$out" | sort -u | tr '\n' ' ')
expect "component a's ranks ran on a node of $LA ($hosts_a)" grep -q "^sitea-n[0-9]* $" <<<"$hosts_a"
# The site daemons' job tables (DB.jobs/ID.job) and sitea's proxy output,
# where the wrapper records the command it ran.
jobs_a=$(grep -l "key=$KA" "$DIR/sitea/sitea.jobs"/*.job 2>/dev/null | wc -l)
expect "sitea's daemon recorded the proxy job ($jobs_a)" test "$jobs_a" -ge 1
KB=$(journal "$ID2" | awk '$2 == "simb" && $3 == "committed" {print $1}')
jobs_b=$(grep -l "key=$KB" "$DIR/simb/simb.jobs"/*.job 2>/dev/null | wc -l)
expect "simb's daemon recorded the proxy job ($jobs_b)" test "$jobs_b" -ge 1
if [ "$failures" != 0 ]; then
    echo "    | launch output:"
    head -n 40 <<<"$out" | sed 's/^/    | /'
    for f in "$DIR"/*/*.jobs/*/output; do
        [ -f "$f" ] && { echo "    | $f:"; head -n 20 "$f" | sed 's/^/    | /'; }
    done
fi
api POST "/agreements/$ID2/terminate" >/dev/null
expect "the meta-job's Slurm reservation $LA is gone after terminate" wait_for 15 no_resv "$LA"

# Every daemon stops on SIGTERM; a sanitized build's daemons leave no report.
echo "== the daemons stop, and their logs"
# (a daemon that exited stays a zombie of this shell until waited for)
gone() { [ ! -e "/proc/$1" ] || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
for p in "${PIDS[@]}"; do
    name=$(cat "/proc/$p/comm" 2>/dev/null || echo "pid $p")
    kill -TERM "$p" 2>/dev/null
    expect "$name stops on SIGTERM" wait_for 5 gone "$p"
done
no_sanitizer_reports "$DIR"/*/log

if [ "$failures" != 0 ]; then
    for f in "$DIR"/*/log; do [ -f "$f" ] && { echo "== $f (tail)"; tail -n 20 "$f"; }; done
fi
checks_summary test_sites_slurm "in $(($(date +%s) - T0)) s"
