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
