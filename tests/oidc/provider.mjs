// SPDX-License-Identifier: Apache-2.0
// A real OpenID provider for Accord's tests: oidc-provider (pinned in
// package-lock.json: 8.x, which runs on Debian 12's node 18 as on newer
// ones) on a loopback port over HTTPS, with signing keys made
// for the run (one RS256, one ES256).  See tests/oidc/oidc.sh for how the
// tests start it, and docs/security.md for what accordd checks.
//
//   node provider.mjs --port N --cert CERT.pem --key KEY.pem
//                     [--audience URI] [--also-audience URI]... [--redirect URL]...
//
// --port 0 picks a free port.  When ready it prints one line
//   ready ISSUER_URL
// on stdout.  It serves:
//  - clients for client_credentials (secret "secret-" + client_id), whose
//    access tokens are JWTs for the requested resource (RFC 8707
//    resource indicator; default: --audience):
//      accord-cc      RS256, lives an hour
//      accord-es      ES256, lives an hour
//      accord-short   RS256, lives 1 s (for "expired")
//  - accord-ui: a public client (no secret) for the authorization code
//    flow with PKCE, redirecting to any loopback port's /ui/ (a native
//    client, RFC 8252) or to each --redirect; its access tokens are JWTs
//    for --audience too, and for each --also-audience besides ("aud" an
//    array: a user's token meant for accordd and for the sites that want
//    the user's own token).  devInteractions is on: any username signs in as
//    that sub, with any password.
//  - every access token carries scope (compute.read compute.create
//    compute.modify compute.cancel, or what was asked of them) and
//    wlcg.groups: ["/accord", "/accord/SUB"].
//  - POST /admin/rotate (loopback only): new signing keys; the old ones
//    stay in the JWKS (as a provider rotating keys does), the new ones
//    sign.  Answers {"kids": [...]} with the new key ids.
//  - GET /admin/kids: the kids in the JWKS, the signing ones first.
// SIGTERM or SIGINT stops it.  tests/oidc/forge.mjs makes the tokens a
// provider would never sign (another key, alg none, HS256).
import { createServer } from 'node:https';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import Provider from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';

const { values: opt } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    cert: { type: 'string' },
    key: { type: 'string' },
    audience: { type: 'string', default: 'https://accord.example' },
    'also-audience': { type: 'string', multiple: true, default: [] },
    redirect: { type: 'string', multiple: true, default: [] },
  },
});
if (!opt.cert || !opt.key) {
  console.error('usage: provider.mjs --port N --cert CERT.pem --key KEY.pem [--audience URI] [--redirect URL]...');
  process.exit(2);
}

const SCOPES = ['compute.read', 'compute.create', 'compute.modify', 'compute.cancel'];
const TTL = { 'accord-short': 1 };
const ALG = { 'accord-es': 'ES256' };

async function makeKey(alg) {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, alg, use: 'sig', kid: `${alg.toLowerCase()}-${randomUUID().slice(0, 8)}` };
}

let keys = [await makeKey('RS256'), await makeKey('ES256')];

const server = createServer({ cert: readFileSync(opt.cert), key: readFileSync(opt.key) });
await new Promise((resolve) => { server.listen(Number(opt.port), '127.0.0.1', resolve); });
const issuer = `https://127.0.0.1:${server.address().port}`;

function makeProvider() {
  const provider = new Provider(issuer, {
    jwks: { keys },
    clients: [
      ...['accord-cc', 'accord-es', 'accord-short'].map((id) => ({
        client_id: id,
        client_secret: `secret-${id}`,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope: SCOPES.join(' '),
      })),
      {
        client_id: 'accord-ui',
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: ['http://127.0.0.1/ui/', 'http://localhost/ui/', ...opt.redirect],
        post_logout_redirect_uris: ['http://127.0.0.1/ui/', 'http://localhost/ui/', ...opt.redirect],
        scope: `openid offline_access ${SCOPES.join(' ')}`,
      },
    ],
    scopes: ['openid', 'offline_access', ...SCOPES],
    pkce: { required: () => true },
    // The page on a loopback port calls the token endpoint from the browser.
    clientBasedCORS: (ctx, origin) => /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(origin),
    findAccount: (ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    extraTokenClaims: (ctx, token) => {
      const sub = token.accountId || token.clientId;
      return { 'wlcg.groups': ['/accord', `/accord/${sub}`] };
    },
    formats: {
      customizers: {
        // A single resource indicator gives a single audience; a user's
        // token names the --also-audience services too.
        jwt: (ctx, token, jwt) => {
          if (token.clientId === 'accord-ui' && jwt.payload.aud === opt.audience && opt['also-audience'].length) {
            jwt.payload.aud = [opt.audience, ...opt['also-audience']];
          }
        },
      },
    },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => opt.audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource, client) => ({
          scope: SCOPES.join(' '),
          audience: resource,
          accessTokenTTL: TTL[client.clientId] || 3600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: ALG[client.clientId] || 'RS256' } },
        }),
      },
    },
    ttl: {
      ClientCredentials: (ctx, token) => token.resourceServer?.accessTokenTTL || 3600,
      AccessToken: 3600,
      AuthorizationCode: 60,
      Grant: 3600,
      IdToken: 3600,
      Interaction: 600,
      RefreshToken: 86400,
      Session: 3600,
    },
  });
  provider.on('server_error', (ctx, err) => console.error('server_error', err));
  // A native client's loopback redirect may name any port (RFC 8252, 7.3),
  // and oidc-provider 8 allows that for redirect_uris only; the page's
  // sign-out comes back to the same loopback /ui/ on accordd's port.
  const registered = provider.Client.prototype.postLogoutRedirectUriAllowed;
  provider.Client.prototype.postLogoutRedirectUriAllowed = function allowed(value) {
    if (registered.call(this, value)) return true;
    if (this.applicationType !== 'native') return false;
    let u;
    try { u = new URL(value); } catch { return false; }
    if (u.protocol !== 'http:' || !['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) return false;
    u.port = '';
    return this.postLogoutRedirectUris.some((r) => {
      try { const v = new URL(r); v.port = ''; return v.href === u.href; } catch { return false; }
    });
  };
  return provider;
}

let provider = makeProvider();
let handler = provider.callback();

server.on('request', async (req, res) => {
  if (req.url === '/admin/rotate' && req.method === 'POST') {
    const fresh = [await makeKey('RS256'), await makeKey('ES256')];
    keys = [...fresh, ...keys];
    provider = makeProvider(); // a new keystore; clients are the same
    handler = provider.callback();
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kids: fresh.map((k) => k.kid) }));
    return;
  }
  if (req.url === '/admin/kids' && req.method === 'GET') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kids: keys.map((k) => k.kid) }));
    return;
  }
  handler(req, res);
});

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => { server.close(); process.exit(0); });
}
console.log(`ready ${issuer}`);
