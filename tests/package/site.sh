# SPDX-License-Identifier: Apache-2.0
# site.sh - the package test's accord-site part (sourced by
# test_package.sh in the chroot $ROOT where accord-client and accordd are
# installed): accord-site installed, its units verified and enabled
# nowhere, and two instances of the template accord-site@.service, alpha
# and beta, started from the installed unit's lines side by side on one
# host (one network namespace), each with its own configuration, state
# directory, database and certificate, asked for their health over mutual
# TLS and stopped.

step "accord-site: two sites from the template accord-site@.service"
apt_install "$WORK/install.log" "$(indeb accord-site)" || fatal "apt-get install accord-site"
ok "apt-get install ./$(basename "$(deb accord-site)")"
check "the system user accord-site exists" in_root getent passwd accord-site
check "/var/lib/accord-site belongs to accord-site" \
    test "$(in_root stat -c %U:%a /var/lib/accord-site)" = accord-site:750
expect "neither accord-site unit is enabled" \
    test -z "$(find "$ROOT/etc/systemd/system" -name 'accord-site*')"
for unit in accord-site.service accord-site@alpha.service; do
    check "systemd-analyze verify $unit" in_root sh -c \
        "cd /lib/systemd/system && systemd-analyze verify --man=no $unit"
done

# The test PKI: a CA, the two sites' server certificates, Accord's client
# certificate (CN=accord-main, the [peer] of the packaged example).
sh "$SRC/tests/support/mkcerts.sh" "$WORK/pki" >"$WORK/pki.log" 2>&1 || fatal "tests/support/mkcerts.sh"
tls=$ROOT/etc/accord-site/tls
install -d -m 0750 -g "$(in_root id -g accord-site)" "$tls"
for name in alpha beta; do
    install -m 0644 "$WORK/pki/site-$name.crt" "$tls/"
    install -m 0640 -g "$(in_root id -g accord-site)" "$WORK/pki/site-$name.key" "$tls/"
done
install -m 0644 "$WORK/pki/ca.crt" "$tls/accord-ca.crt"

# NAME.conf: the packaged example with the site's name, port, certificate,
# and a relative database path (it lands in the instance's directory).
site_conf() { # site_conf NAME PORT
    sed -e "s/^name = alpha$/name = $1/" -e "s/^listen = 127.0.0.1:8443$/listen = 127.0.0.1:$2/" \
        -e "s|^database = .*|database = accord-site.db|" \
        -e "s|^certificate = .*|certificate = /etc/accord-site/tls/site-$1.crt|" \
        -e "s|^key = .*|key = /etc/accord-site/tls/site-$1.key|" \
        -e "s/^\[site alpha\]$/[site $1]/" "$ROOT/etc/accord-site/accord-site.conf" \
        >"$ROOT/etc/accord-site/$1.conf"
}
site_conf alpha 8443
site_conf beta 8444

declare -A SITE_PID SITE_LISTENER
NETNS_OF=""
for name in alpha beta; do
    notify_listener "/run/site-$name-notify" "$WORK/site-$name.notify" || fatal "the notification socket of $name"
    SITE_LISTENER[$name]=$LPID
    start_site_instance "$name" "$WORK/site-$name"
    SITE_PID[$name]=$DPID
    wait_output "$WORK/site-$name" "listening on port" "$DPID" || fatal "accord-site@$name serves"
    ok "accord-site@$name serves (started as the template starts it)"
    # beta beside alpha: the same host, the same loopback.
    NETNS_OF=${SITE_PID[alpha]}
done
NETNS_OF=""
port=8443
for name in alpha beta; do
    pid=${SITE_PID[$name]}
    check "accord-site@$name runs as accord-site" test "$(stat -c %u "/proc/$pid")" = "$(in_root id -u accord-site)"
    health=$(nsenter --net="/proc/$pid/ns/net" curl -sS --max-time 10 --cacert "$WORK/pki/ca.crt" \
        --cert "$WORK/pki/accord.crt" --key "$WORK/pki/accord.key" "https://127.0.0.1:$port/v1/health" 2>&1)
    echo "    | $(tr -d '\n' <<<"$health" | cut -c1-160)"
    expect "accord-site@$name answers on $port over mutual TLS as site $name" grep -q "\"$name\"" <<<"$health"
    check "its database is /var/lib/accord-site/$name/accord-site.db, owned by accord-site" \
        test "$(in_root stat -c %U "/var/lib/accord-site/$name/accord-site.db")" = accord-site
    rc=0
    stop_daemon "$pid" || rc=$?
    expect "accord-site@$name stops on SIGTERM with status 0" test "$rc" = 0
    wait "${SITE_LISTENER[$name]}"
    expect "accord-site@$name told the manager: ready, stopping" \
        test "$(grep -v '^EXTEND_TIMEOUT_USEC=[0-9]*$\|^WATCHDOG=1$' "$WORK/site-$name.notify" |
            cut -d' ' -f1 | paste -sd'|' -)" = "READY=1|STOPPING=1"
    port=$((port + 1))
done
