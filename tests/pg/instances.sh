# SPDX-License-Identifier: Apache-2.0
# instances.sh - sourced by the tests that run several accordd on one
# PostgreSQL database (test_pg_*.sh): what they share.  The caller sets
# BUILD, T (its temporary directory) and defines fail; PIDS collects the
# instances' process ids for its cleanup.
BUILD=$(cd "$BUILD" && pwd) || exit 1
PIDS=()

# The signing pair every instance shares: $T/sign.key, $T/sign.crt.
pg_signing_pair() {
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/sign.key" -out "$T/sign.crt" \
        -subj "/CN=Accord test" -days 2 2>/dev/null || fail "openssl"
    chmod 600 "$T/sign.key"
}

# pg_ini_head URL LEASE [SERVER-LINE...]: the sections every instance's
# configuration begins with: [server] on a free port (and the lines given),
# [database] at URL with a lease of LEASE seconds, [signing] with the pair
# above.  The caller appends its own sections.
pg_ini_head() {
    local url=$1 lease=$2
    shift 2
    printf '[server]\nlisten = 127.0.0.1:0\n'
    [ $# -eq 0 ] || printf '%s\n' "$@"
    printf '\n[database]\nurl = %s\nlease = PT%sS\n' "$url" "$lease"
    printf '\n[signing]\nkey = %s\ncertificate = %s\n\n' "$T/sign.key" "$T/sign.crt"
}

# pg_start N: instance N on $T/accord.ini, in its own working directory
# $T/wN, logging to $T/aN.log; its port into $T/portN, its URL into $T/urlN.
pg_start() {
    mkdir -p "$T/w$1"
    (cd "$T/w$1" && exec "$BUILD/accordd" --config "$T/accord.ini") >"$T/a$1.log" 2>&1 &
    PIDS[$1]=$!
    local port
    for _ in $(seq 100); do
        port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$T/a$1.log" 2>/dev/null)
        if [ -n "$port" ]; then
            echo "$port" >"$T/port$1"
            echo "http://127.0.0.1:$port" >"$T/url$1"
            return 0
        fi
        kill -0 "${PIDS[$1]}" 2>/dev/null || break
        sleep 0.1
    done
    cat "$T/a$1.log" >&2
    fail "instance $1 did not start"
}

# pg_sites: the sites every instance's configuration ends with, the ones
# pg_offer names: sa and sb (sim-batch, 16 nodes each) and the link sa_sb
# of 1000 Mbit/s between them on network wan (sim-network).
pg_sites() {
    cat <<CONF
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
}

# pg_offer NAME INITIATOR NODES_A NODES_B MBITS: an hour on sites sa and sb
# and the bandwidth between them.
pg_offer() {
    cat <<XML
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement" xmlns:co="urn:accord:coalloc:1"><wsag:Name>$1</wsag:Name><wsag:Context><wsag:AgreementInitiator>$2</wsag:AgreementInitiator><wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context><wsag:Terms><wsag:All><wsag:ServiceDescriptionTerm wsag:Name="s" wsag:ServiceName="m"><co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name="a" wsag:ServiceName="m"><co:Component><co:Site>sa</co:Site><co:Nodes>$3</co:Nodes></co:Component></wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name="b" wsag:ServiceName="m"><co:Component><co:Site>sb</co:Site><co:Nodes>$4</co:Nodes></co:Component></wsag:ServiceDescriptionTerm><wsag:ServiceDescriptionTerm wsag:Name="l" wsag:ServiceName="m"><co:Link><co:Between>a</co:Between><co:And>b</co:And><co:Bandwidth>$5</co:Bandwidth></co:Link></wsag:ServiceDescriptionTerm></wsag:All></wsag:Terms></wsag:AgreementOffer>
XML
}

# pg_given: the agreement ids that clients were given, one per line (from
# the answers $T/rN whose final code $T/cN is 200 or 201).
pg_given() {
    local c r
    for c in "$T"/c*; do
        grep -q '^20[01]$' "$c" || continue
        r=$T/r${c##*/c}
        grep -o 'wsag:AgreementId="[a-z0-9]*"' "$r" | head -1 | cut -d'"' -f2
    done | sort -u
}

# pg_check_kept URL: nothing lost and nothing doubled on the database at
# URL: every agreement given to a client (pg_given) is there, no offer has
# two agreements, and no resource of pg_sites is booked beyond its capacity,
# neither in accordd's reservations nor in the simulated sites' calendars.
pg_check_kept() {
    local url=$1 n_given missing twice line res p cap s
    pg_given >"$T/given"
    n_given=$(wc -l <"$T/given")
    psql "$url" -At -c "SELECT id FROM agreement WHERE state IN ('Observed','Pending')" | sort >"$T/stored"
    missing=$(comm -23 "$T/given" "$T/stored" | wc -l)
    echo "agreements given to clients: $n_given; missing on the primary: $missing"
    [ "$n_given" -gt 0 ] || fail "no agreement was given"
    [ "$missing" = 0 ] || fail "$missing agreements were lost: $(comm -23 "$T/given" "$T/stored" | head -3)"
    twice=$(psql "$url" -At -c "SELECT count(*) FROM (SELECT name FROM agreement WHERE state = 'Observed' GROUP BY name HAVING count(*) > 1) x")
    [ "$twice" = 0 ] || fail "$twice offers have two agreements"
    for line in $(psql "$url" -At -c "$(pg_peak "SELECT resource, amount, start_time, end_time FROM reservation WHERE state = 'committed'")") \
        $(for s in sa sb wan; do psql "$url" -At -c "$(pg_peak "SELECT resource, amount, start_time, end_time FROM ledger_$s.booking")"; done); do
        res=${line%|*} p=${line#*|}
        case $res in sa | sb) cap=16 ;; sa_sb) cap=1000 ;; *) fail "unknown resource $res" ;; esac
        [ "$p" -le "$cap" ] || fail "$res booked $p of $cap: booked twice"
    done
}

# pg_peak QUERY: the most each resource of QUERY's bookings (resource,
# amount, start_time, end_time) holds at once.
pg_peak() {
    echo "SELECT resource, max(s) FROM (SELECT b1.resource, (SELECT sum(b2.amount) FROM ($1) b2
          WHERE b2.resource = b1.resource AND b2.start_time <= b1.start_time
          AND b2.end_time > b1.start_time) s FROM ($1) b1) x GROUP BY resource ORDER BY 1"
}
