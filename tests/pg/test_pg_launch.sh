#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test_pg_launch.sh BUILD_DIR - launching with several accordd on one
# PostgreSQL database (issue 20): a job starts once, and its timer and its
# watch move when their instance dies.  Real mpiexec.hydra (launcher fork),
# jobs as nobody.  Each rank of a job creates a file named after its
# agreement and rank, refusing to overwrite one: a job started twice leaves a
# file "twice.*".
#   1. an offer to the instance that does not lead: its job runs once, there;
#   2. an offer to that instance, which is then killed (kill -9) before the
#      job's start: the leader takes the run over within the lease and the
#      job runs once;
#   3. an offer to that instance, which is then frozen (SIGSTOP) past the
#      lease: the leader takes the run over and runs the job; thawed, the
#      frozen instance's timer fires and it does not start the job again;
#   4. a long job running on a third instance, terminated through another
#      instance: the job stops (its process is gone) and its run says
#      terminated.
#
# Needs the cluster of start-cluster.sh (PG_TEST_DIR; ctest fixture "pg").
# Root (jobs run as nobody); about 40 s.
set -u
BUILD=$(cd "${1:?usage: test_pg_launch.sh BUILD_DIR}" && pwd) || exit 1
DIR=${PG_TEST_DIR:?PG_TEST_DIR names the cluster of start-cluster.sh}
BASE=$(cat "$DIR/url") || { echo "no cluster in $DIR" >&2; exit 1; }
LEASE=4
T=$(mktemp -d /tmp/accord-pg-launch-XXXXXX)
DB=launch_$$
URL=$(echo "$BASE" | sed "s|/accord?|/$DB?|")
. "$(dirname "$0")/instances.sh"
fail() {
    echo "FAIL: $*" >&2
    tail -n 20 "$T"/a?.log >&2
    exit 1
}
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    # a job nobody stopped (its instance was killed): mpiexec names $T, the
    # ranks wrote their pids
    pkill -9 -f "$T/" 2>/dev/null
    cat "$T"/out/pids.* 2>/dev/null | xargs -r kill -9 2>/dev/null
    psql "$BASE" -q -c "DROP DATABASE IF EXISTS $DB" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
q() { psql "$URL" -At -c "$1"; }
chmod 0755 "$T"
mkdir -m 1777 "$T/out"

psql "$BASE" -q -c "CREATE DATABASE $DB" || fail "cannot make database $DB"
pg_signing_pair

# The job: each rank claims its file; then sleeps $2 seconds.
cat >"$T/job" <<'EOF'
#!/bin/sh
f="$1/$ACCORD_AGREEMENT.rank${PMI_RANK:-0}"
( set -C; : >"$f" ) 2>/dev/null || : >"$1/twice.$ACCORD_AGREEMENT.$$"
echo $$ >>"$1/pids.$ACCORD_AGREEMENT"
exec sleep "$2"
EOF
chmod 0755 "$T/job"

pg_ini_head "$URL" "$LEASE" >"$T/accord.ini"
cat >>"$T/accord.ini" <<CONF
[negotiation]
lead_time = PT6S

[launch]
enabled = yes
account = nobody
directory = $T/jobs
grace = PT2S

[site sa]
adapter = sim-batch
nodes = 8

[site sb]
adapter = sim-batch
nodes = 8
CONF

u() { cat "$T/url$1"; }

# offer NAME SECONDS: one node on each site for two minutes; the job sleeps SECONDS.
offer() {
    cat <<XML
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement" xmlns:co="urn:accord:coalloc:1"><wsag:Name>$1</wsag:Name><wsag:Context><wsag:AgreementInitiator>alice</wsag:AgreementInitiator><wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context><wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name="s" wsag:ServiceName="m"><co:Schedule><co:Duration>PT2M</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name="a" wsag:ServiceName="m"><co:Component><co:Site>sa</co:Site><co:Nodes>1</co:Nodes><co:Executable>$T/job</co:Executable><co:Argument>$T/out</co:Argument><co:Argument>$2</co:Argument></co:Component></wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name="b" wsag:ServiceName="m"><co:Component><co:Site>sb</co:Site><co:Nodes>1</co:Nodes><co:Executable>$T/job</co:Executable><co:Argument>$T/out</co:Argument><co:Argument>$2</co:Argument></co:Component></wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name="l" wsag:ServiceName="m"><co:Launch style="metampich"/></wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>
XML
}
# submit N NAME SECONDS: the offer to instance N; prints the agreement's id.
submit() {
    offer "$2" "$3" >"$T/$2.xml"
    code=$(curl -s -o "$T/$2.out" -w '%{http_code}' -H 'Content-Type: application/xml' \
        -H 'Accept: application/json' --data-binary "@$T/$2.xml" "$(u "$1")/agreements")
    [ "$code" = 201 ] || fail "offer $2 to instance $1: $code $(cat "$T/$2.out")"
    sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' "$T/$2.out" | head -1
}
# run_state N ID: the job's state as instance N tells it.
run_state() {
    "$BUILD/accordctl" --server "$(u "$1")" launch "$2" --json 2>/dev/null |
        sed -n 's/.*"state": *"\([^"]*\)".*/\1/p' | head -1
}
# wait_state N ID STATE... : up to 40 s for one of the states.
wait_state() {
    local n=$1 id=$2 s
    shift 2
    for _ in $(seq 200); do
        s=$(run_state "$n" "$id")
        for want in "$@"; do [ "$s" = "$want" ] && return 0; done
        sleep 0.2
    done
    fail "agreement $id: job $s, not $*"
}
# ran_once ID: the job of ID ran, and once.
ran_once() {
    [ -e "$T/out/$1.rank0" ] || fail "the job of $1 did not run"
    ls "$T/out" | grep -q "^twice\.$1" && fail "the job of $1 was started twice"
    return 0
}
holder() { q "SELECT r.instance FROM run r JOIN agreement a ON a.seq = r.agreement WHERE a.id = '$1'"; }

pg_start 1
pg_start 2
for _ in $(seq 100); do grep -q " leads" "$T"/a?.log && break; sleep 0.1; done
L=$(grep -l " leads" "$T"/a?.log | head -1 | sed 's|.*/a\([0-9]\)\.log|\1|')
[ -n "$L" ] || fail "no instance leads"
N=$((3 - L))
echo "instance $L leads; offers go to instance $N"

# 1. A job agreed on the instance that does not lead runs once, held there.
id1=$(submit "$N" one 1)
inst_n=$(q "SELECT instance FROM agreement WHERE id = '$id1'")
[ "$(holder "$id1")" = "$inst_n" ] || fail "the run of $id1 is not held by the instance that negotiated it"
wait_state "$L" "$id1" exited
ran_once "$id1"
echo "1. job of $id1 ran once on instance $N"

# 2. Its instance dies before the start: the leader takes the run over.
id2=$(submit "$N" two 1)
start2=$(q "SELECT start_time FROM agreement WHERE id = '$id2'")
kill -9 "${PIDS[$N]}"
wait "${PIDS[$N]}" 2>/dev/null
PIDS[$N]=
wait_state "$L" "$id2" exited
ran_once "$id2"
inst_l=$(q "SELECT id FROM instance ORDER BY seen DESC LIMIT 1")
[ "$(holder "$id2")" != "$inst_n" ] || fail "the run of $id2 is still held by the dead instance"
started=$(q "SELECT started FROM run r JOIN agreement a ON a.seq = r.agreement WHERE a.id = '$id2'")
late=$((started - start2))
[ "$late" -le "$LEASE" ] || fail "the job of $id2 started $late s after its start (lease ${LEASE} s)"
grep -q "agreement $id2: its waiting job is taken over" "$T/a$L.log" ||
    fail "the leader did not say it took the run of $id2 over"
echo "2. instance $N killed: the leader ran the job of $id2 once, $late s after its start"

# 3. Its instance freezes before the start: the leader takes the run over
#    and runs the job; thawed, the frozen one does not start it again.
pg_start "$N"
id3=$(submit "$N" frozen 1)
kill -STOP "${PIDS[$N]}"
wait_state "$L" "$id3" exited
kill -CONT "${PIDS[$N]}"
for _ in $(seq 50); do grep -q "launch $id3: not started here" "$T/a$N.log" && break; sleep 0.1; done
grep -q "launch $id3: not started here" "$T/a$N.log" ||
    fail "the thawed instance did not say it leaves the job of $id3 alone"
ran_once "$id3"
[ "$(run_state "$L" "$id3")" = exited ] || fail "the run of $id3 changed after the thaw"
echo "3. instance $N frozen past the lease: the job of $id3 ran once, on the leader"

# 4. A running job on instance 3, terminated through the leader: it stops.
pg_start 3
id4=$(submit 3 long 300)
wait_state 3 "$id4" running
pids=$(cat "$T/out/pids.$id4")
code=$(curl -s -o "$T/term.out" -w '%{http_code}' -X POST "$(u "$L")/agreements/$id4/terminate")
case $code in 2??) ;; *) fail "terminate through instance $L: $code $(cat "$T/term.out")" ;; esac
wait_state 3 "$id4" terminated
for p in $pids; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && fail "the job of $id4 (pid $p) still runs after its terminate"
done
[ "$(q "SELECT state FROM agreement WHERE id = '$id4'")" = Terminated ] ||
    fail "agreement $id4 is not Terminated"
echo "4. the job of $id4 on instance 3 stopped by a terminate through instance $L"
echo "PASS"
