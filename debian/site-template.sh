#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# site-template.sh IN OUT: accord-site@.service, the template that runs one
# accord-site per site on a host, made from accord-site.service at build
# time so that both units keep the same directives (hardening included):
# instance NAME reads /etc/accord-site/NAME.conf and keeps its state in
# /var/lib/accord-site/NAME.  Fails if a line it rewrites is not found.
set -eu
in=$1
out=$2

{
    sed -n 1p "$in"
    cat <<'HEAD'
# accord-site@NAME: one accord-site per site on a host, made at build time
# from accord-site.service (docs/packaging.md).  Instance NAME reads
# /etc/accord-site/NAME.conf and keeps its state (a relative database path
# lands there) in /var/lib/accord-site/NAME.  Not enabled at install:
#   systemctl enable --now accord-site@NAME
HEAD
    sed -e '1,/^\[Unit\]$/{/^\[Unit\]$/!d}' \
        -e 's|^\(Description=.*\)$|\1, site %i|' \
        -e 's|--config /etc/accord-site/accord-site\.conf$|--config /etc/accord-site/%i.conf|' \
        -e 's|^StateDirectory=accord-site$|StateDirectory=accord-site/%i|' \
        -e 's|^WorkingDirectory=/var/lib/accord-site$|WorkingDirectory=/var/lib/accord-site/%i|' \
        "$in"
} >"$out.tmp"

for want in '^Description=.*, site %i$' '^ExecStart=.* --config /etc/accord-site/%i\.conf$' \
    '^StateDirectory=accord-site/%i$' '^WorkingDirectory=/var/lib/accord-site/%i$'; do
    if ! grep -q "$want" "$out.tmp"; then
        echo "site-template.sh: no line $want in the template made from $in" >&2
        rm -f "$out.tmp"
        exit 1
    fi
done
mv "$out.tmp" "$out"
