# SPDX-License-Identifier: Apache-2.0
# upgrade.sh - the package test's upgrade part (sourced by test_package.sh
# once the new packages are built and OLD_DEB is the single package accord
# of before the split): in a fresh chroot, accord OLD_VERSION installed,
# an agreement made, /etc/accord/accord.conf edited; then the upgrade to the
# transitional accord and its parts, as apt-get install does it with the
# answer "keep yours" to the conffile question.  The edited file and the
# database stay, the agreement is served again, the conffiles belong to
# accordd and accord-site, and purging the transitional package takes
# nothing of them.

step "upgrade from the single package accord $OLD_VERSION"
install_tarball
unpack_root "$WORK/upgrade" "$TAR"
cp "$OLD_DEB" "$ROOT/tmp/accord_${OLD_VERSION}_old.deb"
cp "$SRC/docs/examples/offer.xml" "$ROOT/tmp/offer.xml"
new=()
for p in accord "${PARTS[@]}"; do
    cp "$(deb "$p")" "$ROOT/tmp/"
    new+=("$(indeb "$p")")
done
apt_install "$WORK/upgrade.log" "/tmp/accord_${OLD_VERSION}_old.deb" || fatal "apt-get install accord $OLD_VERSION"
expect "accord $OLD_VERSION is installed" \
    test "$(in_root dpkg-query -W -f '${Version}' accord)" = "$OLD_VERSION"

NETNS_OF="" start_accordd "$WORK/old-accordd" || fatal "accordd $OLD_VERSION serves 127.0.0.1:8080"
out=$(in_net "$DPID" accordctl submit /tmp/offer.xml 2>&1)
old_id=$(awk '$1 == "Agreement" { print $2; exit }' <<<"$out")
expect "accordd $OLD_VERSION agreed an offer" test -n "$old_id"
stop_daemon "$DPID"
printf '# An edit of the administrator (test_package).\n' >>"$ROOT/etc/accord/accord.conf"
conf_sum=$(md5sum <"$ROOT/etc/accord/accord.conf")
db_sum=$(md5sum <"$ROOT/var/lib/accord/accord.db")

apt_install "$WORK/upgrade.log" -o Dpkg::Options::=--force-confold "${new[@]}" ||
    fatal "apt-get install of accord $(field accord Version) and its parts over accord $OLD_VERSION"
ok "apt-get install of the transitional accord and ${PARTS[*]} over accord $OLD_VERSION"
expect "accord is the transitional $(field accord Version)" \
    test "$(in_root dpkg-query -W -f '${Version}' accord)" = "$(field accord Version)"
expect "the edited /etc/accord/accord.conf is kept" \
    test "$(md5sum <"$ROOT/etc/accord/accord.conf")" = "$conf_sum"
check "the package's new accord.conf is offered beside it (accord.conf.dpkg-dist)" \
    test -f "$ROOT/etc/accord/accord.conf.dpkg-dist"
new_site_conf=$(dpkg-deb --fsys-tarfile "$(deb accord-site)" | tar -xOf - ./etc/accord-site/accord-site.conf | md5sum)
expect "the unedited accord-site.conf is the new package's" \
    test "$(md5sum <"$ROOT/etc/accord-site/accord-site.conf")" = "$new_site_conf"
# owner FILE: the package dpkg says the file belongs to.
owner() { in_root dpkg-query -S "$1" 2>/dev/null | cut -d: -f1; }
# conffile_of PACKAGE FILE: dpkg has FILE as a current (not obsolete)
# conffile of PACKAGE.
conffile_of() {
    in_root dpkg-query -W -f '${Conffiles}\n' "$1" | awk -v f="$2" '$1 == f && $3 != "obsolete" { found = 1 } END { exit !found }'
}
check "/etc/accord/accord.conf belongs to accordd" test "$(owner /etc/accord/accord.conf)" = accordd
check "it is a conffile of accordd" conffile_of accordd /etc/accord/accord.conf
check "/etc/accord-site/accord-site.conf belongs to accord-site" \
    test "$(owner /etc/accord-site/accord-site.conf)" = accord-site
check "it is a conffile of accord-site" conffile_of accord-site /etc/accord-site/accord-site.conf
expect "the database is untouched" test "$(md5sum <"$ROOT/var/lib/accord/accord.db")" = "$db_sum"
check "accordd.service is still enabled" \
    test -L "$ROOT/etc/systemd/system/multi-user.target.wants/accordd.service"

NETNS_OF="" start_accordd "$WORK/new-accordd" || fatal "the upgraded accordd serves 127.0.0.1:8080"
expect "the upgraded accordd serves the agreement made before (Observed)" \
    grep -q "^State *Observed" <<<"$(in_net "$DPID" accordctl show "$old_id" 2>&1)"
stop_daemon "$DPID"

step "the transitional package purged"
check "apt-mark manual ${PARTS[*]}" in_root apt-mark manual "${PARTS[@]}"
check "apt-get purge accord" apt_root purge accord
for p in "${PARTS[@]}"; do
    expect "$p stays installed" installed "$p"
done
expect "the edited /etc/accord/accord.conf is still there" \
    test "$(md5sum <"$ROOT/etc/accord/accord.conf" 2>&1)" = "$conf_sum"
check "it is still a conffile of accordd" conffile_of accordd /etc/accord/accord.conf
check "/etc/accord-site/accord-site.conf is still there" test -f "$ROOT/etc/accord-site/accord-site.conf"
check "/var/lib/accord/accord.db is still there" test -f "$ROOT/var/lib/accord/accord.db"
