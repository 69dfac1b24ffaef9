#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test_launch_batch.sh - accordd's own Slurm site with launch = batch: its
# component's hosts stay in the one mpiexec and Hydra starts their proxy
# through the slurm adapter's process command (srun --reservation
# --nodelist=HOST -N1 -n1, from DIR/launch.sh, Hydra's -launcher-exec), so a
# meta-job with a Slurm part and a local part is one MPI_COMM_WORLD.
# Needs the Slurm testbed (ctest fixture "slurm") and MPICH:
#
#   accordd on 127.0.0.1:0, [launch] launcher = fork, account ACCOUNT (a
#   throwaway local account this test makes and removes however it ends);
#   [site sitea] adapter = slurm (the testbed's cluster sitea), users
#   root,ACCOUNT, launch = batch; [site local] adapter = sim-batch, 1 node.
#
#   1. an offer with a component at each site, accord-ring with 2 ranks
#      each, is agreed and runs to RING OK ranks=4, exit status 0;
#   2. while it runs: the Slurm component's ranks run inside a Slurm job
#      (SLURM_JOB_ID in their environment) of ACCOUNT named accord-KEY in the
#      reservation (squeue), and /proc shows every rank under ACCOUNT's uid;
#   3. the job's directory holds launch.sh with the srun line.
#
# Root only.  Never stops the testbed; accordd, what it booked, the account
# and the temporary directory go however this ends (trap).
#
#   SLURM_TESTBED_DIR=... test_launch_batch.sh BUILD_DIR
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd) || exit 1
T0=$(date +%s)
# shellcheck source=../support/checks.sh
. "$SRC/tests/support/checks.sh"
die() {
    echo "test_launch_batch: $*"
    exit 1
}

[ "$(id -u)" = 0 ] || die "needs root"
for b in accordd accord-ring; do [ -e "$BUILD/$b" ] || die "$BUILD/$b missing"; done
command -v mpiexec.hydra >/dev/null || die "mpiexec.hydra missing (apt-get install -y mpich)"
command -v curl >/dev/null || die "curl missing (apt-get install -y curl)"
[ -n "${SLURM_TESTBED_DIR:-}" ] && [ -r "$SLURM_TESTBED_DIR/env.sh" ] ||
    die "SLURM_TESTBED_DIR/env.sh missing: run through ctest (fixture slurm)"
# shellcheck disable=SC1091
. "$SLURM_TESTBED_DIR/env.sh"
[ -r "${SLURM_CONF_SITEA:-}" ] || die "the Slurm testbed has no cluster sitea"
export SLURM_CONF=$SLURM_CONF_SITEA TZ=UTC
scontrol ping >/dev/null 2>&1 || die "sitea's slurmctld does not answer (scontrol ping)"
# Every node of sitea idle first (see test_sites_slurm.sh): the test before
# this one on the cluster may leave nodes completing or not yet responding.
nodes=$(sinfo -h -N -o '%N' | sort -u | wc -l)
for i in $(seq 180); do
    idle=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2=="idle"' | sort -u | wc -l || true)
    [ "$idle" -eq "$nodes" ] && break
    [ "$i" -eq 180 ] && { sinfo -N >&2; die "sitea: only $idle of $nodes nodes idle after 90 s"; }
    sleep 0.5
done

DIR=$(mktemp -d /tmp/accord-launch-batch.XXXXXX)
chmod 0755 "$DIR"
ACCOUNT=accjl$$
PID=
MADE=
cleanup() {
    local r
    if [ -n "$PID" ]; then
        kill -TERM "$PID" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$PID" 2>/dev/null
    fi
    for r in $(scontrol show reservation -o 2>/dev/null | sed -n 's/^ReservationName=\(acc-[^ ]*\).*/\1/p'); do
        scancel --reservation="$r" 2>/dev/null
        scontrol delete ReservationName="$r" >/dev/null 2>&1
    done
    [ -n "$MADE" ] && userdel "$ACCOUNT" >/dev/null 2>&1
    rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

useradd -M -d /nonexistent -s /usr/sbin/nologin "$ACCOUNT" || die "useradd $ACCOUNT failed"
MADE=yes
UID_A=$(id -u "$ACCOUNT")

cat >"$DIR/accordd.ini" <<EOF
[negotiation]
lead_time = PT1S
adapter_timeout = PT20S

[launch]
enabled = yes
account = $ACCOUNT
launcher = fork
grace = PT2S
path = $BUILD
directory = $DIR/jobs

[site sitea]
adapter = slurm
nodes = 8
slurm_conf = $SLURM_CONF_SITEA
users = root,$ACCOUNT
launch = batch

[site local]
adapter = sim-batch
nodes = 1
EOF
setsid "$BUILD/accordd" --config "$DIR/accordd.ini" --db "$DIR/accordd.db" \
    --listen 127.0.0.1:0 </dev/null >"$DIR/log" 2>&1 &
PID=$!
URL=
for _ in $(seq 200); do
    URL=$(sed -n 's/.*listening on \(http:\/\/[^ ]*\).*/\1/p' "$DIR/log" | head -n 1)
    [ -n "$URL" ] && break
    sleep 0.1
done
[ -n "$URL" ] || {
    tail -n 20 "$DIR/log"
    die "accordd did not come up"
}

STATUS_FILE=$DIR/status
api() { # METHOD PATH [BODY]
    local out
    out=$(curl -s --max-time 60 -X "$1" -H 'Content-Type: application/xml' \
        ${3:+--data-binary "$3"} -w '\n%{http_code}' "$URL$2")
    echo "${out##*$'\n'}" >"$STATUS_FILE"
    printf '%s' "${out%$'\n'*}"
}
st() { cat "$STATUS_FILE"; }
utc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
agreement_state() {
    api GET "/agreements/$1/state" | sed -n 's/.*<wsag:State>\([A-Za-z]*\)<\/wsag:State>.*/\1/p' | head -n 1
}
comp='<co:Nodes>1</co:Nodes><co:ProcessesPerNode>2</co:ProcessesPerNode><co:Executable>accord-ring</co:Executable><co:Argument>--sleep=3</co:Argument>'
offer=$(cat <<EOF
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement" xmlns:co="urn:accord:coalloc:1">
<wsag:Name>batch</wsag:Name><wsag:Context><wsag:AgreementInitiator>tester</wsag:AgreementInitiator>
<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context><wsag:Terms><wsag:All>
<wsag:ServiceDescriptionTerm wsag:Name="schedule" wsag:ServiceName="m"><co:Schedule>
<co:EarliestStart>$(utc $(($(date +%s) + 5)))</co:EarliestStart><co:Duration>PT180S</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>
<wsag:ServiceDescriptionTerm wsag:Name="slurm" wsag:ServiceName="m"><co:Component><co:Site>sitea</co:Site>$comp</co:Component></wsag:ServiceDescriptionTerm>
<wsag:ServiceDescriptionTerm wsag:Name="local" wsag:ServiceName="m"><co:Component><co:Site>local</co:Site>$comp</co:Component></wsag:ServiceDescriptionTerm>
<wsag:ServiceDescriptionTerm wsag:Name="launch" wsag:ServiceName="m"><co:Launch style="mpich-g2"/></wsag:ServiceDescriptionTerm>
</wsag:All></wsag:Terms></wsag:AgreementOffer>
EOF
)

echo "== 1. a meta-job with a Slurm part (launch = batch) and a local part"
reply=$(api POST /agreements "$offer")
ID=$(sed -n 's/.*wsag:AgreementId="\([^"]*\)".*/\1/p' <<<"$reply" | head -n 1)
if [ "$(st)" = 201 ] && [ -n "$ID" ]; then ok "agreed ($ID)"; else
    bad "POST /agreements: $(st)"
    head -c 2000 <<<"$reply"
    echo
fi

# While it runs: the ranks, and Slurm's own word on the proxy's job.
ranks() { # "COMPONENT UID SLURM_JOB_ID" of every accord-ring process now
    local p env
    for p in $(pgrep -x accord-ring); do
        env=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null)
        echo "$(sed -n 's/^ACCORD_COMPONENT=//p' <<<"$env") $(awk '/^Uid:/ {print $2}' "/proc/$p/status" 2>/dev/null) $(sed -n 's/^SLURM_JOB_ID=//p' <<<"$env")"
    done | sort -u
}
seen= jobs=
end=$(($(date +%s) + 120))
[ -n "$ID" ] || end=0
while [ "$(date +%s)" -lt "$end" ]; do
    state=$(agreement_state "$ID")
    [ "$state" = Complete ] && break
    r=$(ranks)
    [[ $r == *slurm* && $r == *local* ]] && seen=$r
    [ -n "$jobs" ] || jobs=$(squeue -h -u "$ACCOUNT" -o '%j|%u|%v|%N' 2>/dev/null)
    sleep 0.2
done
expect "the meta-job is Complete" test "$(agreement_state "$ID")" = Complete
out=$(api GET "/agreements/$ID/launch/output")
expect "RING OK over 4 ranks of both components: one MPI_COMM_WORLD" \
    grep -q 'RING OK ranks=4 components=slurm:2,local:2' <<<"$out"
expect "exit status 0" grep -q '<co:ExitStatus>0</co:ExitStatus>' <<<"$(api GET "/agreements/$ID/launch")"

echo "== 2. the Slurm part through srun, as $ACCOUNT (uid $UID_A)"
slurm_line=$(awk '$1 == "slurm"' <<<"$seen")
expect "the Slurm component's ranks ran in a Slurm job, as $ACCOUNT ($slurm_line)" \
    grep -q "^slurm $UID_A [0-9][0-9]*\$" <<<"$slurm_line"
expect "the local component's ranks ran as $ACCOUNT, outside Slurm ($(awk '$1 == "local"' <<<"$seen"))" \
    grep -qx "local $UID_A" <<<"$(awk '$1 == "local" {print $1, $2, $3}' <<<"$seen" | sed 's/ *$//')"
expect "squeue: a job accord-KEY of $ACCOUNT in the reservation ($jobs)" \
    grep -q "^accord-\(acc-[^|]*\)|$ACCOUNT|\1|sitea-n[0-9]*\$" <<<"$jobs"

echo "== 3. the job's launch.sh"
script=$(ls "$DIR"/jobs/*/launch.sh 2>/dev/null | head -n 1)
expect "launch.sh runs srun --reservation --nodelist -N1 -n1 for the Slurm host" \
    grep -q "srun' '--reservation=acc-[^']*' '--nodelist=sitea-n[0-9]*' '-N1' '-n1'" "$script"

if [ "$failures" != 0 ]; then
    echo "    | output:"
    head -n 30 <<<"$out" | sed 's/^/    | /'
    [ -f "$script" ] && sed 's/^/    | /' "$script"
    tail -n 30 "$DIR/log"
fi
no_sanitizer_reports "$DIR/log"
checks_summary test_launch_batch "in $(($(date +%s) - T0)) s"
