// SPDX-License-Identifier: Apache-2.0
// hostile.test.mjs - what a page of another site can do to a loopback
// accordd without [auth] (the quick start's), in chromium (run by
// test_ui.sh, which starts that accordd and passes its URL and database).
//
//   - offers that carry script (an XHTML script, an SVG script, an XHTML img
//     with onerror) are refused; an agreement that holds them anyway (stored
//     by an accordd before this check, written here into its database)
//     runs nothing when the browser opens it: every answer carries a
//     Content-Security-Policy that runs nothing;
//   - a page of another origin that posts an offer as a form or as text,
//     or terminates an agreement with fetch(), changes nothing;
//   - a name of another site that resolves to accordd (DNS rebinding,
//     here chromium's host resolver rules) is refused.
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import assert from 'node:assert/strict';

const require = createRequire(process.env.NODE_DIR + '/');
const { chromium } = require('playwright-core');

const URL = process.env.OPEN_URL; // http://127.0.0.1:PORT
const PORT = new globalThis.URL(URL).port;

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
  }
}

// An offer with `context` inside its wsag:Context.
const offer = (name, context = '') => `<?xml version="1.0" encoding="UTF-8"?>
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement" xmlns:co="urn:accord:coalloc:1">
<wsag:Name>${name}</wsag:Name>
<wsag:Context><wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider>${context}</wsag:Context>
<wsag:Terms><wsag:All>
<wsag:ServiceDescriptionTerm wsag:Name="schedule" wsag:ServiceName="metajob"><co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>
<wsag:ServiceDescriptionTerm wsag:Name="a" wsag:ServiceName="metajob"><co:Component><co:Site>caesar</co:Site><co:Nodes>2</co:Nodes></co:Component></wsag:ServiceDescriptionTerm>
</wsag:All></wsag:Terms></wsag:AgreementOffer>`;

// Each script, if it ran, would call the attacker's server (BEACON) and
// alert().
let BEACON = '';
const scripts = () => ({
  'an XHTML script': `<h:script xmlns:h="http://www.w3.org/1999/xhtml">new Image().src='${BEACON}/ran-xhtml';alert('xhtml')</h:script>`,
  'an SVG script': `<svg xmlns="http://www.w3.org/2000/svg"><script>new Image().src='${BEACON}/ran-svg';alert('svg')</script></svg>`,
  'an img with onerror': `<img xmlns="http://www.w3.org/1999/xhtml" src="x" onerror="new Image().src='${BEACON}/ran-img';alert('img')"/>`,
});

async function api(method, path, body, type = 'application/xml') {
  const r = await fetch(URL + path, {
    method, body, headers: { Accept: 'application/json', ...(body ? { 'Content-Type': type } : {}) },
  });
  return { status: r.status, json: await r.json() };
}

async function count() {
  return (await api('GET', '/agreements?limit=1000')).json.agreements.length;
}

// The attacker's site: its page, and every request that reaches it.
const hits = [];
let attackPage = '';
const server = http.createServer((rq, rs) => {
  hits.push(rq.url);
  if (rq.url === '/attack.html') {
    rs.writeHead(200, { 'Content-Type': 'text/html' });
    rs.end(attackPage);
  } else {
    rs.writeHead(204);
    rs.end();
  }
});

async function main() {
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const OTHER = `http://127.0.0.1:${server.address().port}`;
  BEACON = OTHER;
  const browser = await chromium.launchPersistentContext(process.env.PROFILE, {
    executablePath: process.env.CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--host-resolver-rules=MAP rebound.test 127.0.0.1'],
  });
  const page = await browser.newPage();
  page.dialogs = [];
  page.on('dialog', (d) => { page.dialogs.push(d.message()); d.dismiss(); });
  try {
    await check('offers that carry script are refused, naming what they carry', async () => {
      for (const [what, s] of Object.entries(scripts())) {
        const r = await api('POST', '/agreements', offer('scripted', s));
        assert.equal(r.status, 400, what);
        assert.equal(r.json.code, 'SchemaViolation', what);
        assert.match(r.json.message, /XHTML|SVG/, what);
      }
      assert.equal(await count(), 0);
    });

    // An agreement whose stored offer holds all three, as one stored before
    // the check would.
    const A = await api('POST', '/agreements', offer('plain'));
    assert.equal(A.status, 201);
    const id = A.json.id;
    writeFileSync(process.env.EVIL, offer('plain', Object.values(scripts()).join('')));
    execFileSync('sqlite3', [process.env.DB, `UPDATE agreement SET offer = readfile('${process.env.EVIL}') WHERE id = '${id}'`]);

    await check('an agreement that holds script runs none of it when opened', async () => {
      const doc = await (await fetch(`${URL}/agreements/${id}`)).text();
      assert.match(doc, /h:script/); // the stored offer does hold them
      assert.match(doc, /onerror/);
      const r = await page.goto(`${URL}/agreements/${id}`);
      assert.equal(r.status(), 200);
      await page.waitForTimeout(1500);
      assert.deepEqual(page.dialogs, []);
      assert.deepEqual(hits.filter((u) => u.startsWith('/ran')), []);
      const h = r.headers();
      assert.match(h['content-security-policy'] || '', /default-src 'none'/);
      assert.match(h['content-security-policy'] || '', /sandbox/);
      assert.equal(h['x-content-type-options'], 'nosniff');
    });

    await check('a page of another origin changes nothing', async () => {
      const before = await count();
      attackPage = `<!doctype html><body><script>
        const go = (path, type, body) => fetch(${JSON.stringify(URL)} + path,
          { method: 'POST', mode: 'no-cors', headers: type ? { 'Content-Type': type } : {}, body });
        const offer = ${JSON.stringify(offer('csrf'))};
        Promise.allSettled([
          go('/agreements', 'application/x-www-form-urlencoded', offer),
          go('/agreements', 'text/plain', offer),
          go('/negotiations?hold=PT5M', 'text/plain', offer),
          go('/agreements/${id}/terminate'),
          fetch(${JSON.stringify(URL)} + '/agreements/${id}', { method: 'DELETE', mode: 'no-cors' }),
        ]).then(() => { new Image().src = '/done'; });
      </script></body>`;
      await page.goto(`${OTHER}/attack.html`);
      await page.waitForFunction(() => true);
      for (let i = 0; i < 50 && !hits.includes('/done'); i++) await page.waitForTimeout(100);
      assert.ok(hits.includes('/done'), 'the attack page ran');
      assert.equal(await count(), before);
      const s = await api('GET', `/agreements/${id}/state`);
      assert.equal(s.json.state, 'Observed');
      // a form posted across sites: the browser navigates to the answer
      attackPage = `<!doctype html><body><form method="post" enctype="text/plain" action="${URL}/agreements">
        <input name="x" value="${offer('form').replace(/"/g, '&quot;')}"></form>
        <script>document.forms[0].submit()</script></body>`;
      await page.goto(`${OTHER}/attack.html`);
      await page.waitForURL(`${URL}/agreements`);
      assert.equal(await count(), before);
    });

    await check('a name of another site that resolves here is refused', async () => {
      for (const path of ['/agreements', '/ui/', `/agreements/${id}`]) {
        const r = await page.goto(`http://rebound.test:${PORT}${path}`);
        assert.equal(r.status(), 403, path);
        assert.match(await r.text(), /does not answer to the name 'rebound\.test'/);
      }
    });
  } finally {
    await browser.close();
    server.close();
  }
  console.log(`hostile: ${checks - failures} of ${checks} checks passed`);
  process.exit(failures ? 1 : 0);
}

main().catch((e) => {
  console.log('FAIL: ' + (e.stack || e));
  process.exit(1);
});
