#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# mkcerts.sh DIR: the test PKI of issue 11 (TLS both ways), made with openssl.
#
# Everything is EC P-256 (fast: the whole set takes well under a second).
# Idempotent: when DIR already holds a complete set (the marker DIR/.complete
# is written last) nothing is touched; otherwise the set is made afresh.
#
#   ca.crt ca.key                  the test CA (CN=accord-test-ca)
#   other-ca.crt other-ca.key      a second, unrelated CA (CN=accord-other-ca)
#   site-alpha.crt/.key            server certs of the site daemons, SAN IP
#   site-beta.crt/.key             10.79.1.11 / 10.79.2.11 / 10.79.3.11 resp.,
#   site-net.crt/.key              plus IP 127.0.0.1 and DNS localhost
#   server.crt server.key          accordd's HTTPS cert (SAN 127.0.0.1, localhost)
#   server2.crt server2.key        a second one for accordd (reload tests)
#   accord.crt accord.key          client cert CN=accord-main (an admitted peer)
#   alice.crt alice.key            client cert CN=alice (a user of accordd)
#   intruder.crt intruder.key      client cert CN=intruder, same CA, not admitted
#   stranger.crt stranger.key      CN=accord-main, signed by the OTHER CA
#   expired.crt expired.key        CN=accord-main, same CA, valid 2020-01-01..02
#   tampered.crt tampered.key      accord.crt with one byte of its signature
#                                  changed (key = accord.key)
#   *.fp                           each leaf's SHA-256 fingerprint, as Accord
#                                  prints it: SHA256:AB:CD:...
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
dir=$1
mkdir -p "$dir"
[ -f "$dir/.complete" ] && exit 0

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$dir"
rm -f ./*.crt ./*.key ./*.fp

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null; }

ca() { # ca NAME CN
    key "$1"
    openssl req -x509 -new -key "$1.key" -subj "/CN=$2" -days 3650 -sha256 \
        -addext basicConstraints=critical,CA:TRUE \
        -addext keyUsage=critical,keyCertSign,cRLSign -out "$1.crt"
}

leaf() { # leaf NAME CN CA EXTENSIONS
    key "$1"
    printf '%s\n' "$4" >"$tmp/$1.ext"
    openssl req -new -key "$1.key" -subj "/CN=$2" -out "$tmp/$1.csr"
    openssl x509 -req -in "$tmp/$1.csr" -CA "$3.crt" -CAkey "$3.key" -CAcreateserial \
        -CAserial "$tmp/$3.srl" -days 3650 -sha256 -extfile "$tmp/$1.ext" -out "$1.crt" 2>/dev/null
}

SERVER_EXT='basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth'
CLIENT_EXT='basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth'

ca ca accord-test-ca
ca other-ca accord-other-ca

leaf site-alpha site-alpha ca "$SERVER_EXT
subjectAltName=IP:10.79.1.11,IP:127.0.0.1,DNS:localhost"
leaf site-beta site-beta ca "$SERVER_EXT
subjectAltName=IP:10.79.2.11,IP:127.0.0.1,DNS:localhost"
leaf site-net site-net ca "$SERVER_EXT
subjectAltName=IP:10.79.3.11,IP:127.0.0.1,DNS:localhost"
leaf server accordd ca "$SERVER_EXT
subjectAltName=IP:127.0.0.1,DNS:localhost"
leaf server2 accordd-renewed ca "$SERVER_EXT
subjectAltName=IP:127.0.0.1,DNS:localhost"

leaf accord accord-main ca "$CLIENT_EXT"
leaf alice alice ca "$CLIENT_EXT"
leaf intruder intruder ca "$CLIENT_EXT"
leaf stranger accord-main other-ca "$CLIENT_EXT"

# Expired: openssl 3.0's x509 -req cannot set dates in the past; "openssl ca"
# can (-startdate/-enddate), with a throw-away database.
key expired
openssl req -new -key expired.key -subj "/CN=accord-main" -out "$tmp/expired.csr"
printf '%s\n' "$CLIENT_EXT" >"$tmp/expired.ext"
: >"$tmp/index.txt"
cat >"$tmp/ca.cnf" <<EOF
[ca]
default_ca = test
[test]
database = $tmp/index.txt
new_certs_dir = $tmp
serial = $tmp/expired.srl
default_md = sha256
policy = any
[any]
commonName = supplied
EOF
echo 1000 >"$tmp/expired.srl"
openssl ca -batch -config "$tmp/ca.cnf" -cert ca.crt -keyfile ca.key -in "$tmp/expired.csr" \
    -startdate 20200101000000Z -enddate 20200102000000Z -extfile "$tmp/expired.ext" \
    -notext -out expired.crt 2>/dev/null

# Tampered: accord.crt with the last byte of its DER (inside the signature)
# flipped; the certificate still parses, its signature no longer verifies.
openssl x509 -in accord.crt -outform DER -out "$tmp/t.der"
size=$(wc -c <"$tmp/t.der")
last=$(od -An -tu1 -j $((size - 1)) -N1 "$tmp/t.der" | tr -d ' ')
head -c $((size - 1)) "$tmp/t.der" >"$tmp/t2.der"
printf "$(printf '\\%03o' $((last ^ 1)))" >>"$tmp/t2.der"
openssl x509 -inform DER -in "$tmp/t2.der" -out tampered.crt
cp accord.key tampered.key

for c in site-alpha site-beta site-net server server2 accord alice intruder stranger expired \
    tampered; do
    openssl x509 -in "$c.crt" -noout -fingerprint -sha256 | sed 's/^.*=/SHA256:/' >"$c.fp"
done
chmod 600 ./*.key
touch .complete
