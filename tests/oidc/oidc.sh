# SPDX-License-Identifier: Apache-2.0
# Shell functions for tests that need a real OpenID provider
# (tests/oidc/provider.mjs: oidc-provider from npm, pinned by
# tests/oidc/package-lock.json).  Source this file, then:
#
#   oidc_start BUILD_DIR WORK_DIR [provider.mjs options...]
#       installs oidc-provider with `npm ci` into BUILD_DIR/oidc-node (again
#       only when the lock changed; never into the source tree), makes a CA
#       and a certificate for 127.0.0.1 in WORK_DIR, starts the provider on
#       a free loopback port and waits until it is ready.  Sets
#         OIDC_ISSUER  its issuer URL (https://127.0.0.1:PORT)
#         OIDC_CA      the CA file that verifies its certificate
#         OIDC_PID     its process id
#       Its output goes to WORK_DIR/oidc.log.
#   oidc_token CLIENT [SCOPE] [RESOURCE]
#       prints an access token (a JWT) of CLIENT (accord-cc, accord-es,
#       accord-short) by client credentials; SCOPE defaults to every
#       compute.* scope, RESOURCE (the audience) to the provider's --audience.
#   oidc_user_token USER [SCOPE] [REDIRECT]
#       prints an access token of USER (any name: the provider's dev login
#       takes it as the sub) by the authorization code flow with PKCE of the
#       public client accord-ui, as a browser would go through it (login,
#       consent); SCOPE defaults to every compute.* scope, REDIRECT to
#       http://127.0.0.1:8080/ui/ (any loopback port's /ui/ is allowed).  Its
#       "aud" names the provider's --audience and each --also-audience.
#   oidc_rotate     new signing keys at the provider (prints their kids)
#   oidc_forge MODE TOKEN [ARG]
#       a token the provider would never sign (tests/oidc/forge.mjs)
#   oidc_stop       stops it (call it from the test's cleanup trap)
#
# The caller removes WORK_DIR.
OIDC_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OIDC_PID=
OIDC_ISSUER=
OIDC_CA=
OIDC_NODE_DIR=

oidc_start() {
    local build=${1:?oidc_start BUILD_DIR WORK_DIR} work=${2:?oidc_start BUILD_DIR WORK_DIR}
    shift 2
    local node_dir=$build/oidc-node
    command -v node >/dev/null && command -v npm >/dev/null && command -v openssl >/dev/null ||
        { echo "oidc_start: node, npm and openssl are needed (quickstart.sh test installs them)" >&2; return 1; }
    if ! cmp -s "$OIDC_HERE/package-lock.json" "$node_dir/package-lock.json" ||
        [ ! -d "$node_dir/node_modules/oidc-provider" ]; then
        mkdir -p "$node_dir" || return 1
        cp "$OIDC_HERE/package.json" "$OIDC_HERE/package-lock.json" "$node_dir/" || return 1
        (cd "$node_dir" && npm ci --no-audit --no-fund --prefer-offline >"$work/npm.log" 2>&1) ||
            { cat "$work/npm.log" >&2; echo "oidc_start: npm ci of oidc-provider failed" >&2; return 1; }
    fi
    # ESM resolves packages from the script's directory: run a copy there.
    cp "$OIDC_HERE/provider.mjs" "$OIDC_HERE/forge.mjs" "$node_dir/" || return 1
    OIDC_NODE_DIR=$node_dir

    # A CA and a server certificate for 127.0.0.1, made for this run.
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
        -subj "/CN=oidc test CA" -keyout "$work/oidc-ca.key" -out "$work/oidc-ca.pem" \
        >/dev/null 2>&1 || { echo "oidc_start: openssl could not make the CA" >&2; return 1; }
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
        -keyout "$work/oidc.key" -out "$work/oidc.csr" >/dev/null 2>&1 &&
        openssl x509 -req -in "$work/oidc.csr" -CA "$work/oidc-ca.pem" -CAkey "$work/oidc-ca.key" \
            -CAcreateserial -days 1 -out "$work/oidc.pem" \
            -extfile <(printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n') \
            >/dev/null 2>&1 || { echo "oidc_start: openssl could not make the certificate" >&2; return 1; }
    OIDC_CA=$work/oidc-ca.pem

    node "$node_dir/provider.mjs" --port 0 --cert "$work/oidc.pem" --key "$work/oidc.key" "$@" \
        >"$work/oidc.log" 2>&1 &
    OIDC_PID=$!
    local _
    for _ in $(seq 150); do
        OIDC_ISSUER=$(sed -n 's/^ready \(https:[^ ]*\)$/\1/p' "$work/oidc.log")
        [ -n "$OIDC_ISSUER" ] && return 0
        kill -0 "$OIDC_PID" 2>/dev/null || break
        sleep 0.1
    done
    cat "$work/oidc.log" >&2
    echo "oidc_start: the provider did not start" >&2
    oidc_stop
    return 1
}

oidc_token() {
    local client=${1:?oidc_token CLIENT [SCOPE] [RESOURCE]}
    local scope=${2:-compute.read compute.create compute.modify compute.cancel}
    local args=(--data-urlencode grant_type=client_credentials --data-urlencode "scope=$scope")
    [ -n "${3:-}" ] && args+=(--data-urlencode "resource=$3")
    local answer
    answer=$(curl -sS --cacert "$OIDC_CA" -u "$client:secret-$client" "${args[@]}" \
        "$OIDC_ISSUER/token") || return 1
    # {"access_token":"...", ...}: a JWT has only base64url characters and dots.
    local token
    token=$(printf '%s' "$answer" | sed -n 's/.*"access_token":"\([A-Za-z0-9._-]*\)".*/\1/p')
    [ -n "$token" ] || { echo "oidc_token: no token: $answer" >&2; return 1; }
    printf '%s\n' "$token"
}

oidc_user_token() {
    local user=${1:?oidc_user_token USER [SCOPE] [REDIRECT]}
    local scope=${2:-compute.read compute.create compute.modify compute.cancel}
    local redirect=${3:-http://127.0.0.1:8080/ui/}
    local jar verifier challenge next step code answer token
    jar=$(mktemp) || return 1
    verifier=$(openssl rand -hex 32)
    challenge=$(printf '%s' "$verifier" | openssl dgst -sha256 -binary | base64 | tr '+/' '-_' | tr -d '=')
    # go URL [curl args]: where the answer redirects to
    go() { curl -sS -c "$jar" -b "$jar" --cacert "$OIDC_CA" -o /dev/null -w '%{redirect_url}' "$@"; }
    next=$(go -G "$OIDC_ISSUER/auth" --data-urlencode client_id=accord-ui \
        --data-urlencode "redirect_uri=$redirect" --data-urlencode response_type=code \
        --data-urlencode "scope=openid $scope" --data-urlencode "code_challenge=$challenge" \
        --data-urlencode code_challenge_method=S256 --data-urlencode state=oidc-sh)
    # the interactions (login, then consent) until the redirect to the page
    for step in 1 2 3 4 5 6; do
        case "$next" in
        "$OIDC_ISSUER"/interaction/*)
            if [ "$step" = 1 ]; then
                next=$(go --data-urlencode prompt=login --data-urlencode "login=$user" \
                    --data-urlencode password=x "$next")
            else
                next=$(go --data-urlencode prompt=consent "$next")
            fi
            ;;
        "$OIDC_ISSUER"/*) next=$(go "$next") ;;
        *) break ;;
        esac
    done
    rm -f "$jar"
    code=$(printf '%s' "$next" | sed -n 's/.*[?&]code=\([^&]*\).*/\1/p')
    [ -n "$code" ] || { echo "oidc_user_token: no code for $user (ended at $next)" >&2; return 1; }
    answer=$(curl -sS --cacert "$OIDC_CA" --data-urlencode grant_type=authorization_code \
        --data-urlencode client_id=accord-ui --data-urlencode "code=$code" \
        --data-urlencode "code_verifier=$verifier" --data-urlencode "redirect_uri=$redirect" \
        "$OIDC_ISSUER/token") || return 1
    token=$(printf '%s' "$answer" | sed -n 's/.*"access_token":"\([A-Za-z0-9._-]*\)".*/\1/p')
    [ -n "$token" ] || { echo "oidc_user_token: no token: $answer" >&2; return 1; }
    printf '%s\n' "$token"
}

oidc_rotate() {
    curl -sS --fail --cacert "$OIDC_CA" -X POST "$OIDC_ISSUER/admin/rotate"
}

oidc_forge() {
    node "$OIDC_NODE_DIR/forge.mjs" "$@"
}

oidc_stop() {
    if [ -n "$OIDC_PID" ]; then
        kill "$OIDC_PID" 2>/dev/null
        wait "$OIDC_PID" 2>/dev/null
        OIDC_PID=
    fi
}
