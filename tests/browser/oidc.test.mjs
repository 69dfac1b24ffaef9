// SPDX-License-Identifier: Apache-2.0
// oidc.test.mjs - the web page signs in with OpenID Connect (run by
// test_ui_oidc.sh, which starts the provider of tests/oidc and an accordd
// whose [ui] names it).
//
// accordd takes the provider's tokens ([issuer]) and a static one ([auth]).
// The page says what it signs in against and its CSP lets it connect to the
// issuer's origin and no other; Sign in goes through the provider's login
// and consent pages and back with a code, which leaves the address bar; the
// access token (a JWT of the provider's, never in localStorage) is the
// bearer token of the API calls; an offer booked from the page shows on the
// timeline; near its expiry the page signs in again by itself, or renews
// the token with a refresh token kept in memory only; Sign out
// forgets the token and ends the provider's session (the next sign-in asks
// for the password again); a pasted token still works.  The sign-in and
// sign-out controls pass axe-core's WCAG A and AA rules.
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';
import { axeCheck } from './a11y.mjs';

const require = createRequire(process.env.NODE_DIR + '/');
const { chromium } = require('playwright-core');

const URL = process.env.ACCORD_URL;
const ISSUER = process.env.OIDC_ISSUER;
const SHOTS = process.env.SHOTS;

let checks = 0;
let failures = 0;
async function check(what, f) {
  checks++;
  try {
    await f();
    console.log('ok: ' + what);
  } catch (e) {
    failures++;
    console.log('FAIL: ' + what + '\n  ' + (e.message || String(e)).split('\n').slice(0, 12).join('\n  '));
    if (current) console.log('  the page was at ' + current.url() + ': ' + (await current.textContent('body').catch(() => '')).replace(/\s+/g, ' ').slice(0, 300));
  }
}
let current = null; // the page under test, for the failures' message

const claims = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());
const who = (page) => page.textContent('#who');

function offer(name) {
  const sdt = (n, body) => `<wsag:ServiceDescriptionTerm wsag:Name="${n}" wsag:ServiceName="metajob">${body}</wsag:ServiceDescriptionTerm>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement" xmlns:co="urn:accord:coalloc:1">
<wsag:Name>${name}</wsag:Name>
<wsag:Context><wsag:AgreementInitiator>alice</wsag:AgreementInitiator>
<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider><wsag:TemplateName>meta-job</wsag:TemplateName></wsag:Context>
<wsag:Terms><wsag:All>
${sdt('schedule', '<co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule>')}
${sdt('solver', '<co:Component><co:Site>caesar</co:Site><co:Nodes>4</co:Nodes></co:Component>')}
</wsag:All></wsag:Terms></wsag:AgreementOffer>`;
}

// Through the provider's pages (oidc-provider's own login and consent
// forms) as user, back to the page signed in.
async function providerLogin(page, user) {
  await page.waitForURL((u) => u.href.startsWith(ISSUER + '/interaction/'));
  await page.fill('input[name=login]', user);
  await page.fill('input[name=password]', 'any password');
  await page.click('button[type=submit]');
  await page.waitForURL((u) => u.href.startsWith(ISSUER + '/interaction/') || u.href.startsWith(URL + '/ui/'));
  if (page.url().startsWith(ISSUER)) await page.click('button[type=submit]'); // consent: Continue
  await page.waitForURL((u) => u.href.startsWith(URL + '/ui/'));
  await page.waitForFunction(() => document.getElementById('who').textContent.startsWith('signed in as'));
}

async function main() {
  const ctx = await chromium.launchPersistentContext(process.env.PROFILE, {
    executablePath: process.env.CHROMIUM,
    headless: true,
    ignoreHTTPSErrors: true, // the provider's certificate is of a CA made for the run
    viewport: { width: 1400, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    await check('config.json names the provider; the CSP lets the page connect to its origin and no other', async () => {
      const r = await fetch(URL + '/ui/config.json');
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type'), /^application\/json/);
      assert.deepEqual(await r.json(), {
        oidc: { issuer: ISSUER, client_id: 'accord-ui', scope: process.env.OIDC_SCOPE, redirect_uri: null },
      });
      const csp = (await fetch(URL + '/ui/')).headers.get('content-security-policy');
      assert.match(csp, new RegExp(`connect-src 'self' ${ISSUER.replace(/\./g, '\\.')};`));
    });

    const page = await ctx.newPage();
    current = page;
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    // What the page sends accordd: the Authorization of each API call.
    const bearers = [];
    page.on('request', (rq) => {
      if (rq.url().startsWith(URL) && !rq.url().startsWith(URL + '/ui/'))
        bearers.push({ method: rq.method(), path: new globalThis.URL(rq.url()).pathname, auth: rq.headers().authorization || '' });
    });
    await page.clock.install(); // the token's expiry, reached at will below
    await page.goto(URL + '/ui/');
    await page.waitForFunction(() => document.body.dataset.ready);

    await check('before signing in: a Sign in button, no token, accordd\'s 401 shown, no WCAG A/AA violation', async () => {
      assert.ok(await page.isVisible('#signin'));
      assert.match(await who(page), /^no token/);
      assert.match(await page.textContent('#status'), /Unauthorized|token/);
      await axeCheck(page, 'with the Sign in button');
    });

    let token = '';
    await check('Sign in: the provider\'s login page, back with a code that leaves the address bar', async () => {
      const asked = page.waitForRequest((rq) => rq.url().startsWith(ISSUER + '/auth'));
      await page.click('#signin');
      const authorize = await asked;
      const q = new globalThis.URL(authorize.url()).searchParams;
      assert.equal(q.get('response_type'), 'code');
      assert.equal(q.get('client_id'), 'accord-ui');
      assert.equal(q.get('code_challenge_method'), 'S256');
      assert.match(q.get('code_challenge'), /^[A-Za-z0-9_-]{43}$/);
      assert.ok(q.get('state') && q.get('nonce'), 'state and nonce');
      assert.equal(q.get('redirect_uri'), URL + '/ui/');
      // the provider's login page, once the redirects to it are over (a
      // screenshot taken while the page navigates fails)
      await page.waitForURL((u) => u.pathname.startsWith('/interaction/'));
      await page.waitForLoadState('load');
      await page.screenshot({ path: `${SHOTS}/ui-oidc-login.png` });
      await providerLogin(page, 'alice');
      assert.equal(page.url(), URL + '/ui/', 'no code or state left in the URL');
      assert.match(await who(page), /^signed in as alice until /);
      assert.ok(await page.isHidden('#signin'));
      assert.equal(await page.textContent('#logout'), 'Sign out');
      const stored = await page.evaluate(() => ({ local: localStorage.length, token: sessionStorage.getItem('accord-token'), pending: sessionStorage.getItem('accord-oidc-pending') }));
      assert.equal(stored.local, 0, 'nothing in localStorage');
      assert.equal(stored.pending, null, 'the sign-in\'s state, nonce and verifier are gone');
      token = stored.token;
      const c = claims(token);
      assert.equal(c.iss, ISSUER);
      assert.equal(c.sub, 'alice');
      assert.match(c.scope, /compute\.create/);
      await page.waitForFunction(() => document.body.dataset.ready);
      await axeCheck(page, 'signed in, with the Sign out button');
    });

    await check('an offer booked from the page goes with the token as Bearer and shows on the timeline', async () => {
      bearers.length = 0;
      await page.fill('#offer', offer('signed-in-run'));
      await page.click('#submit');
      await page.waitForSelector('#agreement[data-state="Observed"]');
      const id = await page.getAttribute('#agreement', 'data-id');
      await page.waitForSelector(`g.bar[data-id="${id}"][data-row="site:caesar"]`);
      // accordd took the token as alice's (her offer, hers to read)
      const r = await fetch(`${URL}/agreements/${id}`, { headers: { Authorization: 'Bearer ' + token, Accept: 'application/json' } });
      assert.equal(r.status, 200);
      const a = await r.json();
      assert.equal(a.name, 'signed-in-run');
      assert.equal(a.initiator, 'alice');
      const post = bearers.find((b) => b.method === 'POST' && b.path === '/agreements');
      assert.ok(post, 'the offer was posted');
      assert.equal(post.auth, 'Bearer ' + token);
      assert.ok(bearers.every((b) => b.auth === 'Bearer ' + token), 'every API call carries it');
      await page.screenshot({ path: `${SHOTS}/ui-oidc-signed-in.png` });
    });

    await check('near its expiry the page signs in again by itself (the provider\'s session holds: no password)', async () => {
      const { expires } = await page.evaluate(() => JSON.parse(sessionStorage.getItem('accord-oidc')));
      const ahead = expires - 20e3 - (await page.evaluate(() => Date.now()));
      assert.ok(ahead > 0, 'the token lives more than 20 s');
      await page.clock.runFor(ahead);
      await page.waitForURL((u) => u.href.startsWith(ISSUER + '/interaction/'));
      // oidc-provider asks a native client's user to confirm each time
      // (its consent page), but not for the password: its session holds.
      assert.equal(await page.locator('input[name=password]').count(), 0, 'no login page');
      await page.click('button[type=submit]');
      await page.waitForURL((u) => u.href.startsWith(URL + '/ui/'));
      await page.waitForFunction(() => document.getElementById('who').textContent.startsWith('signed in as'));
      const again = await page.evaluate(() => sessionStorage.getItem('accord-token'));
      assert.notEqual(again, token, 'a new token');
      assert.equal(claims(again).sub, 'alice');
      token = again;
    });

    await check('Sign out forgets the token and ends the provider\'s session', async () => {
      await page.click('#logout');
      await page.waitForURL((u) => u.href.startsWith(ISSUER));
      await page.screenshot({ path: `${SHOTS}/ui-oidc-logout.png` });
      await page.click('button[name=logout], button[type=submit]'); // the provider asks: sign out?
      await page.waitForURL((u) => u.href.startsWith(URL + '/ui/'));
      await page.waitForFunction(() => document.getElementById('who').textContent.startsWith('no token'));
      assert.equal(await page.evaluate(() => sessionStorage.getItem('accord-token')), null);
      assert.equal(await page.evaluate(() => sessionStorage.getItem('accord-oidc')), null);
      assert.ok(await page.isVisible('#signin'));
      await axeCheck(page, 'signed out');
      // The provider's session is over: signing in asks for the password again.
      await page.click('#signin');
      await page.waitForURL((u) => u.href.startsWith(ISSUER + '/interaction/'));
      assert.equal(await page.locator('input[name=password]').count(), 1, 'the login page again');
      await providerLogin(page, 'bob');
      assert.match(await who(page), /^signed in as bob /);
    });

    await check('a pasted token replaces the signed-in one', async () => {
      bearers.length = 0;
      const ready = await page.evaluate(() => document.body.dataset.ready);
      await page.fill('#token', process.env.STATIC);
      await page.click('#login button[type=submit]');
      await page.waitForFunction(() => document.getElementById('who').textContent.startsWith('token set'));
      assert.equal(await page.evaluate(() => sessionStorage.getItem('accord-oidc')), null);
      await page.waitForFunction((r) => document.body.dataset.ready !== r, ready);
      assert.equal(await page.textContent('#status'), '', 'accordd took it');
      assert.ok(bearers.length > 0 && bearers.every((b) => b.auth === 'Bearer ' + process.env.STATIC));
      // Forget (no sign-in to end): no trip to the provider.
      await page.click('#logout');
      assert.match(await who(page), /^no token/);
      assert.ok(page.url().startsWith(URL + '/ui/'));
    });

    await check('with offline_access the page renews the token by its refresh token, which it keeps in memory only', async () => {
      // accordd's [ui] oidc_scope as an operator would extend it
      await page.route(URL + '/ui/config.json', async (route) => {
        const r = await route.fetch();
        const j = await r.json();
        j.oidc.scope += ' offline_access';
        await route.fulfill({ response: r, json: j });
      });
      await page.reload();
      await page.waitForFunction(() => document.body.dataset.ready);
      const asked = page.waitForRequest((rq) => rq.url().startsWith(ISSUER + '/auth'));
      await page.click('#signin');
      const authorize = await asked;
      assert.equal(new globalThis.URL(authorize.url()).searchParams.get('prompt'), 'consent');
      await page.waitForURL((u) => u.href.startsWith(ISSUER + '/interaction/'));
      const exchanged = page.waitForResponse((r) => r.url().startsWith(ISSUER + '/token') && r.request().method() === 'POST');
      await page.click('button[type=submit]'); // consent (bob's session holds)
      const first = await (await exchanged).json();
      await page.waitForURL((u) => u.href.startsWith(URL + '/ui/'));
      await page.waitForFunction(() => document.getElementById('who').textContent.startsWith('signed in as bob'));
      assert.ok(first && first.refresh_token, 'the provider gave a refresh token');
      const stored = await page.evaluate(() => [...Array(sessionStorage.length).keys()].map((i) => sessionStorage.getItem(sessionStorage.key(i))).join(' '));
      assert.ok(!stored.includes(first.refresh_token), 'the refresh token is not in sessionStorage');
      assert.equal(await page.evaluate(() => localStorage.length), 0);
      const { expires } = await page.evaluate(() => JSON.parse(sessionStorage.getItem('accord-oidc')));
      const refreshed = page.waitForRequest((rq) => rq.url().startsWith(ISSUER + '/token') && /grant_type=refresh_token/.test(rq.postData() || ''));
      await page.clock.runFor(expires - 20e3 - (await page.evaluate(() => Date.now())));
      await refreshed;
      await page.waitForFunction((old) => sessionStorage.getItem('accord-token') !== old, first.access_token);
      assert.ok(page.url().startsWith(URL + '/ui/'), 'the page stayed');
      assert.match(await who(page), /^signed in as bob /);
      assert.equal(claims(await page.evaluate(() => sessionStorage.getItem('accord-token'))).sub, 'bob');
      await page.unroute(URL + '/ui/config.json');
    });

    await check('a token accordd refuses (401) is forgotten and Sign in offered again', async () => {
      await page.route(URL + '/sites', (route) => route.fulfill({
        status: 401, contentType: 'application/json',
        json: { code: 'Unauthorized', message: 'the token is expired' },
      }));
      await page.evaluate(() => { document.body.dataset.ready = ''; });
      await page.reload();
      await page.waitForFunction(() => document.body.dataset.ready);
      assert.match(await page.textContent('#status'), /the token is expired \u2014 sign in again/);
      assert.match(await who(page), /^no token/);
      assert.ok(await page.isVisible('#signin'));
      assert.equal(await page.evaluate(() => sessionStorage.getItem('accord-token')), null);
      await page.unroute(URL + '/sites');
    });

    await check('no error in the page', async () => assert.deepEqual(errors, []));
  } finally {
    await ctx.close();
  }
  console.log(`${checks - failures}/${checks} checks passed`);
  if (failures) process.exit(1);
}

main().catch((e) => {
  console.log('FAIL: ' + (e.stack || e));
  process.exit(1);
});
