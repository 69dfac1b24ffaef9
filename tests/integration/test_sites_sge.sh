#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test_sites_sge.sh - one meta-job across a real Slurm cluster and a real
# Grid Engine cluster (issue 22), each behind an accord-site of its own, for
# the user's own account at each (issue 33).
# Needs both testbeds (ctest fixtures "slurm" and "sge"):
#
#   site  runs on                    adapter
#   sitea 127.0.0.1:<free>           slurm: the Slurm testbed's cluster sitea
#                                    (slurmd on 127.0.0.1); mapfile: alice ->
#                                    ACCOUNT_A, bob -> ACCOUNT_BOB; proxies
#                                    through the adapter's srun --reservation
#                                    as the mapped account
#   sgea  127.0.0.1:<free> on host   sge: the Grid Engine testbed (qmaster
#         sgea-gw (DIR/bin/on-gw:    sgea-qm, exec hosts sgea-n1..n3 in
#         the root network namespace network namespaces 10.83.0.11-13),
#         under its own host name)   mapfile: alice -> ACCOUNT_B (bob: none);
#                                    proxies through the adapter's qsub -sync
#                                    y -ar LOCALID as the mapped account
#   (job_user stays nobody at both: every request here names a mapped user)
#   accordd on 127.0.0.1:0 with [auth] tokens for alice and bob (broker
#   mode: the sites take accordd's word for the user), [site sitea] and
#   [site sgea] of adapter = remote
#   (mutual TLS), a [link] of 1000 Mbit/s between them of adapter tc (egress
#   accsge0 towards the exec hosts, each exec host's eth0 back; the Slurm
#   nodes reach the exec hosts from 10.83.0.1), [launch] launcher = manual
#   with control_address 10.83.0.1
#   (the bridge of the Grid Engine testbed: reached from sitea's nodes and
#   from the exec hosts alike), account nobody, UCX over TCP.
#
#   1. alice's offer with a component at each site and 100 Mbit/s between
#      them is agreed; at the common start both reservations exist in their
#      batch systems (scontrol show reservation LOCALID, qrstat -ar LOCALID)
#      with the agreed start, each for her account there only (Users=ACCOUNT_A,
#      the AR's acl_list ACCOUNT_B), and the link's classes are on the wire;
#   2. the MPI ring (accord-ring, 2 ranks at each site) runs across both to
#      RING OK and exit status 0, its traffic through the link's classes; sgea's proxy ran as a Grid Engine job of
#      ACCOUNT_B in the advance reservation (qstat), its ranks on an exec host
#      of the reservation; while it runs, /proc shows component slurm's ranks
#      under ACCOUNT_A's uid and component sge's under ACCOUNT_B's;
#   3. the job's end releases both reservations; a second agreement's
#      terminate removes both of its reservations;
#   4. bob's offer for both is refused with 403 naming sgea (which maps no
#      account for him), and nothing is booked for him at either: no Slurm
#      reservation, no AR, nothing in either site's journal.
#
# ACCOUNT_A, ACCOUNT_B and ACCOUNT_BOB are throwaway local accounts
# (accas<pid>, accag<pid>, accbs<pid>) this test creates (useradd, no home)
# and removes however it ends: each site's jobs run as the user's own
# account there, never as the daemon's.
#
# Root only.  Never stops the testbeds (the fixtures do); the daemons, what
# this test booked, the accounts and the temporary directory go however this
# ends (trap).
#
#   SLURM_TESTBED_DIR=... SGE_TESTBED_DIR=... test_sites_sge.sh BUILD_DIR
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd) || exit 1
T0=$(date +%s)
# shellcheck source=../support/checks.sh
. "$SRC/tests/support/checks.sh"
die() {
    echo "test_sites_sge: $*"
    exit 1
}

[ "$(id -u)" = 0 ] || die "needs root"
for b in accordd accord-site accord-ring tests/libucx_finalize_barrier.so; do
    [ -e "$BUILD/$b" ] || die "$BUILD/$b missing"
done
PROXY=$(command -v hydra_pmi_proxy) || die "hydra_pmi_proxy missing (apt-get install -y mpich)"
command -v curl >/dev/null || die "curl missing (apt-get install -y curl)"
[ -n "${SLURM_TESTBED_DIR:-}" ] && [ -r "$SLURM_TESTBED_DIR/env.sh" ] ||
    die "SLURM_TESTBED_DIR/env.sh missing: run through ctest (fixture slurm)"
[ -n "${SGE_TESTBED_DIR:-}" ] && [ -r "$SGE_TESTBED_DIR/env.sh" ] ||
    die "SGE_TESTBED_DIR/env.sh missing: run through ctest (fixture sge)"
# shellcheck disable=SC1091
. "$SLURM_TESTBED_DIR/env.sh"
# shellcheck disable=SC1091
. "$SGE_TESTBED_DIR/env.sh"
[ -r "${SLURM_CONF_SITEA:-}" ] || die "the Slurm testbed has no cluster sitea"
export SLURM_CONF=$SLURM_CONF_SITEA TZ=UTC
GW=$SGE_TESTBED_BIN/on-gw
[ -x "$GW" ] || die "$GW missing (an older Grid Engine testbed?)"
scontrol ping >/dev/null 2>&1 || die "sitea's slurmctld does not answer (scontrol ping)"
"$SGE_TESTBED_BIN/qconf" -sss >/dev/null 2>&1 || die "the Grid Engine qmaster does not answer"
# Every Slurm node idle first (see test_sites_slurm.sh).
nodes=$(sinfo -h -N -o '%N' | sort -u | wc -l)
for i in $(seq 180); do
    idle=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2=="idle"' | sort -u | wc -l || true)
    [ "$idle" -eq "$nodes" ] && break
    [ "$i" -eq 180 ] && { sinfo -N >&2; die "sitea: only $idle of $nodes nodes idle after 90 s"; }
    sleep 0.5
done
qrstat_() { "$SGE_TESTBED_BIN/qrstat" "$@"; }

DIR=$(mktemp -d /tmp/accord-sites-sge.XXXXXX)
chmod 0755 "$DIR"
C=$DIR/certs
PIDS=()
ACCOUNT_A=accas$$ ACCOUNT_B=accag$$ ACCOUNT_BOB=accbs$$
ACCOUNTS=()
cleanup() {
    local p r a alive
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for _ in $(seq 50); do
        alive=
        for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=yes; done
        [ -n "$alive" ] || break
        sleep 0.1
    done
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    # What a failure left booked (Accord's keys are acc-*); the testbeds stay.
    for r in $(scontrol show reservation -o 2>/dev/null | sed -n 's/^ReservationName=\(acc-[^ ]*\).*/\1/p'); do
        scancel --reservation="$r" 2>/dev/null
        scontrol delete ReservationName="$r" >/dev/null 2>&1
    done
    for r in $(qrstat_ -u '*' 2>/dev/null | awk '$2 ~ /^acc-/ {print $2}'); do
        "$SGE_TESTBED_BIN/qrdel" -f "$r" >/dev/null 2>&1
    done
    for a in "${ACCOUNTS[@]}"; do userdel "$a" >/dev/null 2>&1; done
    rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

"$SRC/tests/support/mkcerts.sh" "$C" >/dev/null || die "mkcerts.sh failed"
chmod 0755 "$C"
for a in "$ACCOUNT_A" "$ACCOUNT_B" "$ACCOUNT_BOB"; do
    useradd -M -d /nonexistent -s /usr/sbin/nologin "$a" || die "useradd $a failed"
    ACCOUNTS+=("$a")
done
UID_A=$(id -u "$ACCOUNT_A") UID_B=$(id -u "$ACCOUNT_B")

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
mapfile = $DIR/$1/mapfile
identity = broker
hydra_pmi_proxy = $PROXY
control_networks = 10.83.0.1/32
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

# Starts accord-site NAME (through the command words given before it, if
# any); sets PORT to the port it listens on.
PORT=
start_site() { # [WRAPPER...] NAME
    local n=${*: -1} pid
    setsid env -u SLURM_CONF "${@:1:$#-1}" "$BUILD/accord-site" --config "$DIR/$n/site.ini" \
        </dev/null >"$DIR/$n/log" 2>&1 &
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

mkdir -p "$DIR/sitea" "$DIR/sgea" "$DIR/accordd"
# Each site maps accordd's users to accounts of its own: alice is a different
# account at each, bob has one at sitea only.
printf '# sitea: both users\nuser alice %s\nuser bob %s\n' "$ACCOUNT_A" "$ACCOUNT_BOB" \
    >"$DIR/sitea/mapfile"
printf '# sgea: alice only\nuser "alice" %s\n' "$ACCOUNT_B" >"$DIR/sgea/mapfile"
site_ini sitea "[site sitea]
adapter = slurm
nodes = 8
slurm_conf = $SLURM_CONF_SITEA
users = root,nobody" >"$DIR/sitea/site.ini"
site_ini sgea "[site sgea]
adapter = sge
nodes = 3
sge_root = $SGE_ROOT
cell = $SGE_CELL
pe = mpi
queue = all.q
slots = 2
users = nobody
bin_dir = /usr/lib/gridengine
timeout = PT20S" >"$DIR/sgea/site.ini"
start_site sitea || exit 1
PA=$PORT
# On the gateway host: its name and the testbed's /etc/hosts, so that Grid
# Engine's commands (the adapter's, and qsub as ACCOUNT_B) resolve every host.
start_site "$GW" sgea || exit 1
PB=$PORT

remote() { # PORT
    cat <<EOF
url = https://127.0.0.1:$1
ca = $C/ca.crt
certificate = $C/accord.crt
key = $C/accord.key
timeout = 30
connect_timeout = 2
retries = 1
EOF
}
ALICE_TOKEN=aliceSecretToken0001 BOB_TOKEN=bobSecretToken000001
printf 'alice %s\nbob %s\n' "$ALICE_TOKEN" "$BOB_TOKEN" >"$DIR/accordd/tokens"
chmod 600 "$DIR/accordd/tokens"
cat >"$DIR/accordd/accordd.ini" <<EOF
[auth]
tokens = $DIR/accordd/tokens

[negotiation]
lead_time = PT1S
adapter_timeout = PT40S

[launch]
enabled = yes
account = nobody
launcher = manual
control_address = 10.83.0.1
control_ports = 50200:50300
proxy_timeout = 30
grace = PT2S
path = $BUILD
; ranks in the root namespace (sitea) and on the exec hosts' namespaces
; (sgea) talk over TCP; the shim adds the barriers MPI_Finalize misses then
env = UCX_TLS=tcp
env = LD_PRELOAD=$BUILD/tests/libucx_finalize_barrier.so

; sitea's nodes reach the exec hosts from the bridge's address
[site sitea]
adapter = remote
nodes = 8
hosts = sitea-n[01-08]
addresses = 10.83.0.1,10.83.0.1,10.83.0.1,10.83.0.1,10.83.0.1,10.83.0.1,10.83.0.1,10.83.0.1
$(remote "$PA")

[site sgea]
adapter = remote
nodes = 3
hosts = sgea-n[1-3]
addresses = 10.83.0.[11-13]
$(remote "$PB")

; the link between them, enforced with tc: towards the exec hosts on the
; bridge, back from them on each exec host's eth0
[network wan]
adapter = tc
path.sitea_sgea.sitea = -/accsge0
path.sitea_sgea.sgea = asg-n1/eth0 asg-n2/eth0 asg-n3/eth0
audit_interval = 1s

[link sitea_sgea]
sites = sitea sgea
capacity = 1000
network = wan
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
[ -n "$URL" ] || {
    tail -n 20 "$DIR/accordd/log"
    die "accordd did not come up"
}
echo "sitea (slurm) on $PA, sgea (sge) on $PB, accordd at $URL"

# ------------------------------------------------------------ helpers

STATUS_FILE=$DIR/status
TOKEN=$ALICE_TOKEN WHO=alice # whose requests api() makes, and whose offer() is
api() { # METHOD PATH [BODY]
    local out
    out=$(curl -s --max-time 120 -X "$1" -H 'Content-Type: application/xml' \
        -H "Authorization: Bearer $TOKEN" \
        ${3:+--data-binary "$3"} -w '\n%{http_code}' "$URL$2")
    echo "${out##*$'\n'}" >"$STATUS_FILE"
    printf '%s' "${out%$'\n'*}"
}
st() { cat "$STATUS_FILE"; }
site_doc() { # PORT KEY: the site's reservation document
    curl -s --max-time 10 --cacert "$C/ca.crt" --cert "$C/accord.crt" --key "$C/accord.key" \
        "https://127.0.0.1:$1/v1/reservations/$2"
}
journal() { # AGREEMENT-ID: "key adapter state" lines
    sqlite3 -separator ' ' -cmd '.timeout 5000' "$DIR/accordd/accordd.db" \
        "SELECT key, adapter, state FROM reservation WHERE agreement_id = '$1' ORDER BY key"
}
local_id() { sed -n 's/.*localId="\([^"]*\)".*/\1/p' | head -n 1; }
no_slurm_resv() { ! scontrol show reservation "$1" -o 2>/dev/null | grep -q "^ReservationName=$1 "; }
no_sge_resv() { ! qrstat_ -u '*' 2>/dev/null | awk '{print $1}' | grep -qx "$1"; }
wait_for() { # SECONDS COMMAND...
    local end=$(($(date +%s) + $1))
    shift
    while ! "$@"; do
        [ "$(date +%s)" -lt "$end" ] || return 1
        sleep 0.25
    done
}
utc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
agreement_id() { sed -n 's/.*wsag:AgreementId="\([^"]*\)".*/\1/p' <<<"$1" | head -n 1; }
agreement_state() {
    api GET "/agreements/$1/state" | sed -n 's/.*<wsag:State>\([A-Za-z]*\)<\/wsag:State>.*/\1/p' | head -n 1
}
state_is() { [ "$(agreement_state "$1")" = "$2" ]; }
has() { [[ $1 == *"$2"* ]]; }   # TEXT PART
lacks() { [[ $1 != *"$2"* ]]; } # TEXT PART

comp='<co:ProcessesPerNode>2</co:ProcessesPerNode><co:Executable>accord-ring</co:Executable><co:Argument>--sleep=2</co:Argument>'
offer() { # NAME AHEAD SECONDS [LAUNCH-TERM]
    cat <<EOF
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement" xmlns:co="urn:accord:coalloc:1">
<wsag:Name>$1</wsag:Name><wsag:Context><wsag:AgreementInitiator>$WHO</wsag:AgreementInitiator>
<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context><wsag:Terms><wsag:All>
<wsag:ServiceDescriptionTerm wsag:Name="schedule" wsag:ServiceName="m"><co:Schedule>
<co:EarliestStart>$(utc $(($(date +%s) + $2)))</co:EarliestStart><co:Duration>PT$3S</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>
<wsag:ServiceDescriptionTerm wsag:Name="slurm" wsag:ServiceName="m"><co:Component><co:Site>sitea</co:Site>
<co:Nodes>1</co:Nodes>$comp</co:Component></wsag:ServiceDescriptionTerm>
<wsag:ServiceDescriptionTerm wsag:Name="sge" wsag:ServiceName="m"><co:Component><co:Site>sgea</co:Site>
<co:Nodes>1</co:Nodes>$comp</co:Component></wsag:ServiceDescriptionTerm>
<wsag:ServiceDescriptionTerm wsag:Name="wire" wsag:ServiceName="m"><co:Link><co:Between>slurm</co:Between>
<co:And>sge</co:And><co:Bandwidth>100</co:Bandwidth></co:Link></wsag:ServiceDescriptionTerm>
${4:-}
</wsag:All></wsag:Terms></wsag:AgreementOffer>
EOF
}

# ------------------------------------------------------------ 1. agreed

echo "== 1. alice's offer across sitea (Slurm) and sgea (Grid Engine)"
launch='<wsag:ServiceDescriptionTerm wsag:Name="launch" wsag:ServiceName="m"><co:Launch style="mpich-g2"/></wsag:ServiceDescriptionTerm>'
reply=$(api POST /agreements "$(offer hetero 8 240 "$launch")")
ID=$(agreement_id "$reply")
if [ "$(st)" = 201 ] && [ -n "$ID" ]; then ok "agreed across both sites ($ID)"; else
    bad "POST /agreements: $(st)"
    head -c 2000 <<<"$reply"
    echo
fi
START=$(sed -n 's/.*<co:Start>\([^<]*\)<\/co:Start>.*/\1/p' <<<"$reply" | head -n 1)
KA=$(journal "$ID" | awk '$2 == "sitea" && $3 == "committed" {print $1}')
KB=$(journal "$ID" | awk '$2 == "sgea" && $3 == "committed" {print $1}')
expect "a committed reservation at each site ($KA, $KB)" test -n "$KA" -a -n "$KB"
LA=$(site_doc "$PA" "$KA" | local_id)
LB=$(site_doc "$PB" "$KB" | local_id)
expect "each site reports its batch system's id (Slurm $LA, Grid Engine AR $LB)" \
    test -n "$LA" -a -n "$LB"
booked_for() { # SITE KEY: the account the site's journal booked KEY for
    sqlite3 -cmd '.timeout 5000' "$DIR/$1/$1.db" "SELECT account FROM site_bookings WHERE key = '$2'"
}
expect "sitea's journal booked $KA for $ACCOUNT_A" test "$(booked_for sitea "$KA")" = "$ACCOUNT_A"
expect "sgea's journal booked $KB for $ACCOUNT_B" test "$(booked_for sgea "$KB")" = "$ACCOUNT_B"
start_s=$(date -u -d "$START" +%s 2>/dev/null || echo 0)
# Both exist at the common start, in their own batch systems.
wait_for 30 sh -c '[ "$(date +%s)" -ge "$1" ]' _ "$start_s"
resv=$(scontrol show reservation "$LA" -o 2>/dev/null)
expect "Slurm holds $LA at the start (scontrol show reservation)" grep -q "^ReservationName=$LA " <<<"$resv"
expect "  from $START" has "$resv" " StartTime=${START%Z} "
expect "  for alice's account at sitea only (Users=$ACCOUNT_A)" has "$resv" " Users=$ACCOUNT_A "
ar=$(qrstat_ -ar "$LB" 2>/dev/null)
expect "Grid Engine holds AR $LB at the start (qrstat -ar)" grep -q "^name  *$KB\$" <<<"$ar"
expect "  from $START" grep -q "^start_time  *$(date -u -d "$START" '+%m/%d/%Y %H:%M:%S')\$" <<<"$ar"
expect "  for alice's account at sgea only (acl_list $ACCOUNT_B)" grep -q "^acl_list  *$ACCOUNT_B\$" <<<"$ar"
expect "  2 slots of PE mpi" grep -q "^granted_parallel_environment  *mpi slots 2\$" <<<"$ar"
host_b=$(sed -n 's/^granted_slots_list  *all\.q@\([^=]*\)=2$/\1/p' <<<"$ar")
expect "  on one exec host ($host_b)" grep -q "^sgea-n[1-3]\$" <<<"$host_b"
[ "$failures" = 0 ] || printf '    | %s\n    | %s\n' "$resv" "$(tr '\n' ' ' <<<"$ar")"
# The link's 100 Mbit/s on the wire: a leaf class of that rate on the bridge
# (towards the exec hosts) and on the AR's exec host (back).
leaf() { tc ${1:+-n "$1"} class show dev "$2" 2>/dev/null | grep -q " rate 100Mbit "; }
ns_b=asg-${host_b#sgea-}
expect "tc: 100 Mbit/s towards sgea on accsge0" wait_for 10 leaf "" accsge0
expect "tc: 100 Mbit/s back from $host_b (on $ns_b/eth0)" wait_for 10 leaf "$ns_b" eth0

# ------------------------------------------------------------ 2. the ring

echo "== 2. the MPI ring across both"
# While it runs: sgea's proxy is a Grid Engine job accord-KEY of ACCOUNT_B in
# AR LB, and the ranks (accord-ring processes, ACCORD_COMPONENT in their
# environment) run under each site's account.
ranks() { # "COMPONENT UID" of every accord-ring process now
    local p c
    for p in $(pgrep -x accord-ring); do
        c=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^ACCORD_COMPONENT=//p')
        echo "$c $(awk '/^Uid:/ {print $2}' "/proc/$p/status" 2>/dev/null)"
    done | sort -u
}
seen= uids=
for _ in $(seq 300); do
    seen=$("$SGE_TESTBED_BIN/qstat" -u '*' 2>/dev/null | awk -v n="accord-$KB" 'substr(n, 1, 10) == $3 {print $4, $5}' | head -n 1)
    [ -n "$seen" ] && break
    state_is "$ID" Complete && break
    sleep 0.2
done
expect "sgea's proxy was a Grid Engine job of $ACCOUNT_B ($seen)" grep -q "^$ACCOUNT_B " <<<"$seen"
# Until it ends: the bytes the link's leaf classes carried (they go with the
# reservation at the job's end, so they are sampled while it runs).
leaf_bytes() { # NS DEV: what the 100 Mbit/s leaf sent, or 0
    tc ${1:+-n "$1"} -s class show dev "$2" 2>/dev/null |
        awk '/ rate 100Mbit / {f = 1; next} f && /Sent/ {print $2; f = 0; found = 1} END {if (!found) print 0}' |
        head -n 1
}
bytes_a=0 bytes_b=0 end=$(($(date +%s) + 150))
while ! state_is "$ID" Complete && [ "$(date +%s)" -lt "$end" ]; do
    a=$(leaf_bytes "" accsge0) b=$(leaf_bytes "$ns_b" eth0)
    [ "$a" -gt "$bytes_a" ] && bytes_a=$a
    [ "$b" -gt "$bytes_b" ] && bytes_b=$b
    if [ -z "$uids" ]; then
        r=$(ranks)
        [[ $r == *slurm* && $r == *sge* ]] && uids=$r
    fi
    sleep 0.2
done
expect "component slurm's ranks ran as $ACCOUNT_A (uid $UID_A): $(tr '\n' ' ' <<<"$uids")" \
    test "$(awk '$1 == "slurm" {print $2}' <<<"$uids")" = "$UID_A"
expect "component sge's ranks ran as $ACCOUNT_B (uid $UID_B)" \
    test "$(awk '$1 == "sge" {print $2}' <<<"$uids")" = "$UID_B"
if state_is "$ID" Complete; then ok "meta-job Complete"; else bad "meta-job not Complete: $(agreement_state "$ID")"; fi
expect "the ranks' traffic went through the link's classes ($bytes_a bytes towards sgea, $bytes_b back)" \
    test "$bytes_a" -gt 0 -a "$bytes_b" -gt 0
out=$(api GET "/agreements/$ID/launch/output")
expect "RING OK with 4 ranks of components slurm and sge" grep -q 'RING OK ranks=4 components=slurm:2,sge:2' <<<"$out"
expect "exit status 0" grep -q '<co:ExitStatus>0</co:ExitStatus>' <<<"$(api GET "/agreements/$ID/launch")"
hosts_b=$(sed -n 's/.*component sge host \([^ ]*\) .*/\1/p' <<<"$out" | sort -u | tr '\n' ' ')
expect "component sge's ranks ran on the AR's host ($hosts_b)" test "$hosts_b" = "$host_b "
hosts_a=$(sed -n 's/.*component slurm host \([^ ]*\) .*/\1/p' <<<"$out" | sort -u | tr '\n' ' ')
expect "component slurm's ranks ran on a node of $LA ($hosts_a)" grep -q "^sitea-n[0-9]* $" <<<"$hosts_a"
netns=$(sed -n 's/.*component \(slurm\|sge\) host .* netns \([^ ]*\) .*/\1 \2/p' <<<"$out" | sort -u | wc -l)
expect "each component's ranks in a network namespace of their own ($netns)" test "$netns" = 2
expect "sitea's proxy ended COMPLETED" grep -q "proxy job .* on site sitea, COMPLETED, exit status 0" <<<"$out"
expect "sgea's proxy ended COMPLETED" grep -q "proxy job .* on site sgea, COMPLETED, exit status 0" <<<"$out"
expect "sgea's daemon submitted it into AR $LB" grep -q "^Job [0-9]* exited with exit code 0" \
    "$DIR"/sgea/sgea.jobs/*/output
if [ "$failures" != 0 ]; then
    echo "    | launch output:"
    head -n 40 <<<"$out" | sed 's/^/    | /'
    for f in "$DIR"/*/*.jobs/*/output "$DIR"/*/*.jobs/*/proxy.out; do
        [ -f "$f" ] && { echo "    | $f:"; head -n 20 "$f" | sed 's/^/    | /'; }
    done
fi

# ------------------------------------------------------------ 3. terminate

echo "== 3. the job's end releases both; terminate removes both"
expect "the job's end released the Slurm reservation $LA" wait_for 15 no_slurm_resv "$LA"
expect "  and the Grid Engine AR $LB" wait_for 15 no_sge_resv "$LB"
no_leaf() { ! leaf "$@"; }
expect "  and the link's classes" wait_for 15 no_leaf "" accsge0
reply=$(api POST /agreements "$(offer later 600 300)")
ID=$(agreement_id "$reply")
expect "a second agreement across both ($ID)" test "$(st)" = 201 -a -n "$ID"
KA=$(journal "$ID" | awk '$2 == "sitea" && $3 == "committed" {print $1}')
KB=$(journal "$ID" | awk '$2 == "sgea" && $3 == "committed" {print $1}')
LA=$(site_doc "$PA" "$KA" | local_id)
LB=$(site_doc "$PB" "$KB" | local_id)
expect "Slurm holds $LA" sh -c 'scontrol show reservation "$0" -o >/dev/null' "$LA"
expect "Grid Engine holds AR $LB" sh -c '! "$0" -ar "$1" -xml | grep -q ar_unknown' \
    "$SGE_TESTBED_BIN/qrstat" "$LB"
api POST "/agreements/$ID/terminate" >/dev/null
expect "terminated (200)" test "$(st)" = 200
expect "the Slurm reservation $LA is gone" wait_for 15 no_slurm_resv "$LA"
expect "the Grid Engine AR $LB is gone" wait_for 15 no_sge_resv "$LB"

# ------------------------------------------------------------ 4. bob

echo "== 4. bob's offer: refused naming sgea, nothing booked at either"
# Nothing of alice's is left (3. waited for it): whatever is booked now is bob's.
site_rows() { # SITE WHERE: how many rows of the site's journal match
    sqlite3 -cmd '.timeout 5000' "$DIR/$1/$1.db" "SELECT count(*) FROM site_bookings WHERE $2"
}
TOKEN=$BOB_TOKEN WHO=bob
reply=$(api POST /agreements "$(offer bobs 600 300)")
code=$(st)
WHO=alice
expect "refused with 403, the site's refusal (not a server fault): $code" test "$code" = 403
expect "  naming sgea: no account for user bob" has "$reply" "site sgea: no account for user bob"
fault_of() { has "$1" "co:code=\"$2\"" && lacks "$1" "wsag:AgreementId="; } # REPLY CODE
expect "  a Fault Forbidden, not an agreement" fault_of "$reply" Forbidden
BID=$(sed -n 's/.*<co:AgreementId>\([^<]*\)<.*/\1/p' <<<"$reply" | head -n 1)
TOKEN=$BOB_TOKEN
expect "  his agreement ($BID) is Rejected" state_is "$BID" Rejected
TOKEN=$ALICE_TOKEN
[ "$failures" = 0 ] || head -c 1500 <<<"$reply"
resv=$(scontrol show reservation -o 2>/dev/null)
expect "no Slurm reservation for $ACCOUNT_BOB" lacks "$resv" "Users=$ACCOUNT_BOB "
expect "  nor any of Accord's" lacks "$resv" "ReservationName=acc-"
expect "no Grid Engine AR at all (qrstat)" test -z "$(qrstat_ -u '*' 2>/dev/null | awk '$2 ~ /^acc-/')"
expect "sitea's journal: nothing for $ACCOUNT_BOB, nothing reserved" \
    test "$(site_rows sitea "account = '$ACCOUNT_BOB' OR state = 'reserved'")" = 0
expect "sgea's journal: nothing reserved" test "$(site_rows sgea "state = 'reserved'")" = 0
expect "accordd's journal: nothing committed for bob" test "$(sqlite3 -cmd '.timeout 5000' \
    "$DIR/accordd/accordd.db" "SELECT count(*) FROM reservation r JOIN agreement a ON a.id = r.agreement_id
     WHERE a.initiator = 'bob' AND r.state IN ('committed', 'reserved')")" = 0

echo "== the daemons stop, and their logs"
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
checks_summary test_sites_sge "in $(($(date +%s) - T0)) s"
