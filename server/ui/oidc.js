// SPDX-License-Identifier: Apache-2.0
// oidc.js - signing in with OpenID Connect: the authorization code flow with
// PKCE (S256) as a public client (no secret in the page), against the issuer
// accordd names at /ui/config.json ([ui] oidc_issuer, docs/ui.md).
//
// The page fetches the issuer's discovery document, sends the browser to the
// authorization endpoint with a fresh state, nonce and code challenge, and,
// back at /ui/ with the code, exchanges it at the token endpoint itself (the
// provider allows the page's origin by CORS; the page's CSP allows the
// issuer's origin and no other).  The access token then is the API's bearer
// token, kept where a pasted one is (api.js: this tab's sessionStorage, never
// localStorage); a refresh token, if the provider gives one, only in memory.
// What must survive the trip to the provider (state, nonce, verifier, where
// the user was) waits in sessionStorage and is removed when the page is back.

import { setToken } from './api.js';

const PENDING = 'accord-oidc-pending'; // the sign-in under way
const SESSION = 'accord-oidc'; // {expires, idToken, name} of the token signed in with
const EARLY = 30e3; // refresh or sign in again this long before the token expires

let cfg = null; // config.json's oidc, or null: no provider
let meta = null; // the discovery document, once fetched
let refreshToken = null; // memory only: a reload forgets it
let timer = null;

export class SignInError extends Error {
  text() {
    return 'Sign-in: ' + this.message;
  }
}

const b64url = (bytes) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const random = (n = 32) => b64url(crypto.getRandomValues(new Uint8Array(n)));
const origin = (u) => new URL(u).origin;

// The provider configured for the page, or null (config.json says none, or
// could not be read: then pasting a token is the way in).
export async function loadConfig() {
  try {
    const r = await fetch('config.json', { cache: 'no-store', credentials: 'same-origin' });
    cfg = r.ok ? (await r.json()).oidc || null : null;
  } catch (e) {
    cfg = null;
  }
  return cfg;
}

export const configured = () => cfg !== null;

function redirectUri() {
  return cfg.redirect_uri || new URL('/ui/', location.href).href;
}

// The issuer's discovery document, checked: it names this issuer, supports
// S256, and its token endpoint is on the issuer's origin (the only one the
// page's CSP lets it connect to).
async function discover() {
  if (meta) return meta;
  const url = cfg.issuer.replace(/\/$/, '') + '/.well-known/openid-configuration';
  let r;
  try {
    r = await fetch(url, { cache: 'no-store', credentials: 'omit' });
  } catch (e) {
    throw new SignInError(`the provider's discovery document (${url}) could not be fetched: ${e.message}`);
  }
  if (!r.ok) throw new SignInError(`the provider's discovery document (${url}) answered ${r.status}`);
  const m = await r.json();
  if (m.issuer !== cfg.issuer) throw new SignInError(`the discovery document names the issuer ${m.issuer}, not ${cfg.issuer}`);
  if (!m.authorization_endpoint || !m.token_endpoint) throw new SignInError('the discovery document names no authorization or token endpoint');
  const pkce = m.code_challenge_methods_supported;
  if (Array.isArray(pkce) && !pkce.includes('S256')) throw new SignInError('the provider does not support PKCE with S256');
  if (origin(m.token_endpoint) !== origin(cfg.issuer))
    throw new SignInError(`the token endpoint ${m.token_endpoint} is not on the issuer's origin, the only one the page may connect to`);
  meta = m;
  return m;
}

// Sends the browser to the provider's login page.  keep: what to have back
// on return (the hash, the offer being written).
export async function signIn(keep = {}) {
  const m = await discover();
  const verifier = random(32);
  const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const pending = { state: random(16), nonce: random(16), verifier, redirect: redirectUri(), keep };
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: cfg.client_id,
    redirect_uri: pending.redirect,
    scope: cfg.scope,
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  // offline_access (a refresh token) is asked with prompt=consent (OpenID
  // Connect Core 11); providers drop it otherwise.
  if (cfg.scope.split(' ').includes('offline_access')) q.set('prompt', 'consent');
  location.assign(m.authorization_endpoint + (m.authorization_endpoint.includes('?') ? '&' : '?') + q);
}

// The claims of a JWT, unchecked (the ID token came straight from the
// token endpoint over the connection the page opened: OpenID Connect Core
// 3.1.3.7 lets TLS stand for its signature then).
function claims(jwt) {
  const part = (jwt || '').split('.')[1];
  if (!part) throw new SignInError('the provider sent no ID token (is openid in the scope?)');
  const s = atob(part.replace(/-/g, '+').replace(/_/g, '/'));
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(s, (c) => c.charCodeAt(0))));
}

async function tokenRequest(params) {
  const m = await discover();
  let r;
  try {
    r = await fetch(m.token_endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: new URLSearchParams({ client_id: cfg.client_id, ...params }),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (e) {
    throw new SignInError(`the token endpoint could not be reached (does the provider allow this origin by CORS?): ${e.message}`);
  }
  const t = await r.json().catch(() => ({}));
  if (!r.ok) throw new SignInError(`the token endpoint refused: ${t.error || r.status}${t.error_description ? ' (' + t.error_description + ')' : ''}`);
  if (!t.access_token || (t.token_type && t.token_type.toLowerCase() !== 'bearer'))
    throw new SignInError('the token endpoint sent no bearer access token');
  return t;
}

// Keeps tokens t: the access token for the API, when it ends, the ID token
// (for signing out at the provider) and whom it names.
function keepTokens(t, name) {
  const expires = Date.now() + (Number(t.expires_in) > 0 ? Number(t.expires_in) * 1000 : 300e3);
  setToken(t.access_token);
  refreshToken = t.refresh_token || refreshToken;
  const old = session();
  sessionStorage.setItem(SESSION, JSON.stringify({ expires, idToken: t.id_token || (old && old.idToken) || '', name }));
}

export function session() {
  try {
    return JSON.parse(sessionStorage.getItem(SESSION) || 'null');
  } catch (e) {
    return null;
  }
}

// Back from the provider (?code=...&state=... or ?error=...): the code
// exchanged for tokens, the URL cleared of it at once.  Returns what the
// sign-in kept (null: this was no return from the provider).
export async function completeSignIn() {
  const q = new URLSearchParams(location.search);
  if (!q.has('state') || !(q.has('code') || q.has('error'))) return null;
  const pending = JSON.parse(sessionStorage.getItem(PENDING) || 'null');
  sessionStorage.removeItem(PENDING);
  const keep = (pending && pending.keep) || {};
  // the code leaves the address bar and the history before anything else
  history.replaceState(null, '', location.pathname + (keep.hash || ''));
  if (!pending || q.get('state') !== pending.state) throw new SignInError('the answer does not match a sign-in of this tab (state); sign in again');
  if (q.has('error')) throw new SignInError(`the provider refused: ${q.get('error')}${q.get('error_description') ? ' (' + q.get('error_description') + ')' : ''}`);
  if (q.has('iss') && q.get('iss') !== cfg.issuer) throw new SignInError(`the answer comes from ${q.get('iss')}, not ${cfg.issuer}`);
  const t = await tokenRequest({
    grant_type: 'authorization_code',
    code: q.get('code'),
    redirect_uri: pending.redirect,
    code_verifier: pending.verifier,
  });
  const c = claims(t.id_token);
  const aud = Array.isArray(c.aud) ? c.aud : [c.aud];
  if (c.iss !== cfg.issuer) throw new SignInError(`the ID token's issuer is ${c.iss}, not ${cfg.issuer}`);
  if (!aud.includes(cfg.client_id)) throw new SignInError("the ID token is not for this page's client");
  if (c.nonce !== pending.nonce) throw new SignInError("the ID token's nonce is not this sign-in's");
  keepTokens(t, c.preferred_username || c.name || c.email || c.sub);
  return keep;
}

// Calls onExpiry(keep) EARLY before the access token ends, after a refresh
// when one is possible (then it is scheduled again), else to sign in again.
export function schedule(onRenewed, onExpiry) {
  clearTimeout(timer);
  const s = session();
  if (!s) return;
  timer = setTimeout(async () => {
    if (refreshToken) {
      try {
        const t = await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken });
        keepTokens(t, s.name);
        onRenewed();
        schedule(onRenewed, onExpiry);
        return;
      } catch (e) {
        refreshToken = null; // and sign in again, below
      }
    }
    onExpiry();
  }, Math.max(0, s.expires - EARLY - Date.now()));
}

// Forgets the tokens; with end_session_endpoint, sends the browser there to
// end the provider's session too (it comes back to /ui/).
export async function signOut() {
  const s = session();
  clearTimeout(timer);
  refreshToken = null;
  setToken('');
  sessionStorage.removeItem(SESSION);
  if (!cfg || !s) return;
  let m = null;
  try {
    m = await discover();
  } catch (e) {
    return; // the tokens are forgotten; the provider's session cannot be ended from here
  }
  if (!m.end_session_endpoint) return;
  const q = new URLSearchParams({ client_id: cfg.client_id, post_logout_redirect_uri: redirectUri() });
  if (s.idToken) q.set('id_token_hint', s.idToken);
  location.assign(m.end_session_endpoint + (m.end_session_endpoint.includes('?') ? '&' : '?') + q);
}

// A pasted token replaces the one signed in with (the provider's session
// stays: signing out of it is the provider's own page then).
export function forgetSession() {
  clearTimeout(timer);
  refreshToken = null;
  sessionStorage.removeItem(SESSION);
}
