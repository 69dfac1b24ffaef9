// SPDX-License-Identifier: Apache-2.0
// ui.test.mjs - Accord's web page in chromium (run by test_ui.sh, which
// starts accordd and passes its URL and the users' tokens).
//
// Two offers posted over the API show as bars on the right rows at the right
// times; one opened shows its trace picture and guarantee state; terminated
// from the page its bar changes; a quote is held and committed from the page;
// an agreement named like markup is shown as text with no dialog; a fault's
// text is shown; another user does not see alice's agreements; an admin sees
// everyone's.  Each view passes axe-core's WCAG 2.0/2.1 A and AA rules (and
// the bar labels' contrast, which axe cannot judge on SVG); the bars are
// buttons found by role and name, reached and opened with the keyboard.
// Screenshots of each view go to $SHOTS/ui-*.png.
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';
import { axeCheck, barLabelContrast, AXE_VERSION } from './a11y.mjs';

const require = createRequire(process.env.NODE_DIR + '/');
const { chromium } = require('playwright-core');

const URL = process.env.ACCORD_URL;
const SHOTS = process.env.SHOTS;
const T = { alice: process.env.ALICE, bob: process.env.BOB, ops: process.env.OPS };
const XSS = '<img src=x onerror=alert(1)>';
const HOUR = 3600e3;

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

const esc = (v) => String(v).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

// An offer of the meta-job vocabulary: comps [[term, site, nodes]], links
// [[a, b, Mbit/s]].
function offer({ name, initiator, earliest, duration = 'PT2H', comps, links = [] }) {
  const sdt = (n, body) => `<wsag:ServiceDescriptionTerm wsag:Name="${n}" wsag:ServiceName="metajob">${body}</wsag:ServiceDescriptionTerm>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<wsag:AgreementOffer xmlns:wsag="http://schemas.ggf.org/graap/2007/03/ws-agreement" xmlns:co="urn:accord:coalloc:1">
<wsag:Name>${esc(name)}</wsag:Name>
<wsag:Context><wsag:AgreementInitiator>${initiator}</wsag:AgreementInitiator>
<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider><wsag:TemplateName>meta-job</wsag:TemplateName></wsag:Context>
<wsag:Terms><wsag:All>
${sdt('schedule', `<co:Schedule>${earliest ? `<co:EarliestStart>${new Date(earliest).toISOString().replace(/\.\d+Z/, 'Z')}</co:EarliestStart>` : ''}<co:Duration>${duration}</co:Duration></co:Schedule>`)}
${comps.map(([t, site, n]) => sdt(t, `<co:Component><co:Site>${site}</co:Site><co:Nodes>${n}</co:Nodes></co:Component>`)).join('\n')}
${links.map(([a, b, bw]) => sdt(`${a}-${b}`, `<co:Link><co:Between>${a}</co:Between><co:And>${b}</co:And><co:Bandwidth unit="Mbit/s">${bw}</co:Bandwidth></co:Link>`)).join('\n')}
</wsag:All></wsag:Terms></wsag:AgreementOffer>`;
}

async function api(user, method, path, body) {
  const r = await fetch(URL + path, {
    method,
    headers: { Authorization: 'Bearer ' + T[user], Accept: 'application/json', ...(body ? { 'Content-Type': 'application/xml' } : {}) },
    body,
  });
  const j = await r.json();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(j)}`);
  return j;
}

const hourFloor = (t) => Math.floor(t / HOUR) * HOUR;

// A page of the user's (null: none), with before(page) run before it loads
// (routes, say).
async function openAs(ctx, user, before) {
  const page = await ctx.newPage();
  if (before) await before(page);
  page.dialogs = [];
  page.on('dialog', (d) => {
    page.dialogs.push(d.type() + ': ' + d.message());
    if (d.type() === 'confirm' && page.acceptConfirm) d.accept();
    else d.dismiss();
  });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  // Every error but chromium's note of an answer that was not 2xx (the
  // page shows those itself).
  page.on('console', (m) => {
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of/.test(m.text()))
      page.errors.push(m.text());
  });
  await page.goto(URL + '/ui/');
  if (user) {
    await page.fill('#token', T[user]);
    await page.click('#login button[type=submit]');
    await page.waitForFunction(() => document.getElementById('who').textContent.startsWith('token set'));
  }
  await page.waitForFunction(() => document.body.dataset.ready);
  return page;
}

// The bar of an agreement on a row: its rectangle and the window drawn.
async function bar(page, id, row) {
  return page.evaluate(([id, row]) => {
    const svg = document.getElementById('timeline');
    const g = svg.querySelector(`g.bar[data-id="${id}"][data-row="${row}"]`);
    const r = svg.querySelector(`g.row[data-row="${row}"] rect`);
    if (!g) return null;
    const rect = g.querySelector('rect');
    const num = (e, a) => Number(e.getAttribute(a));
    return {
      x: num(rect, 'x'), w: num(rect, 'width'), y: num(rect, 'y'), h: num(rect, 'height'),
      rowY: num(r, 'y'), rowH: num(r, 'height'), state: g.dataset.state, cls: g.getAttribute('class'),
      from: Number(svg.dataset.from), until: Number(svg.dataset.until), x0: Number(svg.dataset.x0), plot: Number(svg.dataset.plot),
      label: g.querySelector('title').textContent,
    };
  }, [id, row]);
}

// Every bar label drawn reads at 4.5:1 or more on whatever is behind it.
async function labelsReadable(page) {
  const { bad, measured } = await barLabelContrast(page);
  assert.ok(measured > 0, 'some bar has a label');
  assert.deepEqual(bad, [], 'bar labels under 4.5:1 or not clipped to their bar');
}

// What has the focus: a bar's id, row and role, or another element's id and
// class.
async function focused(page) {
  return page.evaluate(() => {
    const e = document.activeElement;
    return { id: e.dataset.id || e.id, row: e.dataset.row, role: e.getAttribute('role'), cls: e.getAttribute('class') };
  });
}

// The states a test cannot wait for (Pending, Complete, a Violated
// guarantee, the Terminating ones), given to real agreements by rewriting
// the API's answers in the page: states {id: state}, violated [id].
async function fakeStates(page, states, violated) {
  const patch = (a) => (states[a.id] ? { ...a, state: states[a.id] } : a);
  await page.route((u) => /^\/agreements(\/[A-Za-z0-9]+)?$/.test(u.pathname), async (route) => {
    if (route.request().method() !== 'GET') return route.continue();
    const r = await route.fetch();
    const j = await r.json();
    if (j.agreements) j.agreements = j.agreements.map(patch);
    await route.fulfill({ response: r, json: j.agreements ? j : patch(j) });
  });
  await page.route((u) => /^\/agreements\/[A-Za-z0-9]+\/state$/.test(u.pathname), async (route) => {
    const r = await route.fetch();
    const j = await r.json();
    const id = route.request().url().split('/').at(-2);
    if (violated.includes(id))
      j.guaranteeTerms = [...j.guaranteeTerms, { name: 'bandwidth', state: 'Violated', reason: 'faked' },
        { name: 'latency', state: 'Fulfilled' }, { name: 'drops', state: 'NotDetermined' }];
    await route.fulfill({ response: r, json: j });
  });
}

function xOf(b, t) {
  return b.x0 + ((Math.min(Math.max(t, b.from), b.until) - b.from) / (b.until - b.from)) * b.plot;
}

async function main() {
  const now = Date.now();
  // Two offers of alice's over the API: one as soon as possible, one from a
  // later hour; and one of bob's.
  const A = await api('alice', 'POST', '/agreements', offer({ name: 'solver-now', initiator: 'alice', comps: [['trace', 'caesar', 16], ['partrace', 'fzj-xd1', 8]], links: [['trace', 'partrace', 2000]] }));
  const B = await api('alice', 'POST', '/agreements', offer({ name: 'viz-later', initiator: 'alice', earliest: hourFloor(now) + 6 * HOUR, duration: 'PT3H', comps: [['viz', 'fh-brs', 4], ['db', 'caesar', 32]] }));
  const X = await api('alice', 'POST', '/agreements', offer({ name: XSS, initiator: 'alice', duration: 'PT1H', comps: [['x', 'fh-brs', 2]] }));
  const C = await api('bob', 'POST', '/agreements', offer({ name: 'bobs-run', initiator: 'bob', comps: [['b', 'fzj-xd1', 4]] }));
  for (const a of [A, B, X, C]) assert.equal(a.state, 'Observed');

  const browser = await chromium.launchPersistentContext(process.env.PROFILE, {
    executablePath: process.env.CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    await check('the page is served with a strict CSP, nosniff and an ETag; a repeat is 304', async () => {
      const r = await fetch(URL + '/ui/');
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type'), /^text\/html/);
      const csp = r.headers.get('content-security-policy');
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
      const js = await fetch(URL + '/ui/app.js');
      assert.match(js.headers.get('content-type'), /^text\/javascript/);
      const again = await fetch(URL + '/ui/app.js', { headers: { 'If-None-Match': js.headers.get('etag') } });
      assert.equal(again.status, 304);
      const none = await fetch(URL + '/ui/nothing.js');
      assert.equal(none.status, 404);
      const api401 = await fetch(URL + '/agreements');
      assert.equal(api401.status, 401);
    });

    const page = await openAs(browser, null);
    await check('without a token the page says what the server answered', async () => {
      await page.waitForFunction(() => /Unauthorized/.test(document.getElementById('status').textContent));
    });
    await check(`axe-core ${AXE_VERSION}: the sign-in form with the error shown meets WCAG A/AA`, async () => {
      await axeCheck(page, 'on the sign-in form with an error shown');
    });

    await page.fill('#token', T.alice);
    await page.click('#login button[type=submit]');
    await page.waitForSelector(`g.bar[data-id="${B.id}"]`);
    await check('both offers are bars on their sites\' and link\'s rows at their times', async () => {
      for (const [a, rows] of [[A, ['site:caesar', 'site:fzj-xd1', 'link:fzj-xd1_caesar']], [B, ['site:fh-brs', 'site:caesar']]]) {
        for (const row of rows) {
          const b = await bar(page, a.id, row);
          assert.ok(b, `${a.name} has a bar on ${row}`);
          assert.ok(b.y >= b.rowY && b.y + b.h <= b.rowY + b.rowH, `${a.name}'s bar lies inside row ${row}`);
          assert.ok(Math.abs(b.x - xOf(b, Date.parse(a.start))) < 1.5, `${a.name} starts at ${a.start} on ${row}`);
          assert.ok(Math.abs(b.x + b.w - xOf(b, Date.parse(a.end))) < 1.5, `${a.name} ends at ${a.end} on ${row}`);
          assert.equal(b.state, 'Observed');
        }
        assert.equal(await bar(page, a.id, 'link:caesar_fh-brs'), null, 'no bar on a link it does not use');
      }
      const wide = await bar(page, B.id, 'site:caesar'), narrow = await bar(page, A.id, 'site:caesar');
      assert.ok(wide.h > narrow.h, '32 nodes draw taller than 16');
      assert.equal(await bar(page, C.id, 'site:fzj-xd1'), null, "bob's agreement is not alice's to see");
      assert.ok(await page.locator('g.free rect').count() > 0, 'free capacity is shaded');
    });
    await check('the timeline meets WCAG A/AA (axe) and every bar label 4.5:1', async () => {
      await axeCheck(page, 'on the timeline');
      await labelsReadable(page);
    });
    await page.screenshot({ path: `${SHOTS}/ui-timeline.png` });

    await check('moving and zooming the window redraws it', async () => {
      const before = Number(await page.getAttribute('#timeline', 'data-until'));
      await page.click('#zoomout');
      await page.waitForFunction((u) => Number(document.getElementById('timeline').dataset.until) !== u, before);
      const span = await page.evaluate(() => { const s = document.getElementById('timeline').dataset; return s.until - s.from; });
      assert.equal(span, 2 * 86400e3);
      await page.click('#zoomin');
      await page.waitForFunction(() => { const s = document.getElementById('timeline').dataset; return s.until - s.from === 86400e3; });
      await page.waitForSelector(`g.bar[data-id="${A.id}"]`);
    });

    await check('a bar is a button named by its agreement, reached and opened with the keyboard', async () => {
      assert.notEqual(await page.getAttribute('#timeline', 'role'), 'img', 'no image role hides the bars');
      const viz = page.getByRole('button', { name: /^viz-later · 4 nodes on site fh-brs, Observed, \d{4}-\d\d-\d\d \d\d:\d\d UTC to \d{4}-\d\d-\d\d \d\d:\d\d UTC, also 32 nodes on caesar$/ });
      assert.equal(await viz.count(), 1, 'viz-later\'s bar on fh-brs by its role and name');
      assert.equal(await page.getByRole('group', { name: 'site fh-brs, 32 nodes' }).getByRole('button', { name: /^viz-later/ }).count(), 1, 'in its row\'s group');
      assert.equal(await page.locator('#timeline .bar[tabindex="0"]').count(), 1, 'one bar in the tab order');
      await page.focus('#showfree');
      await page.keyboard.press('Tab');
      let f = await focused(page);
      assert.equal(f.role, 'button', 'Tab from the controls reaches a bar');
      for (let i = 0; i < 6; i++) await page.keyboard.press('ArrowUp');
      f = await focused(page);
      assert.equal(f.row, 'site:fzj-xd1', 'up to the first row with bars');
      for (let i = 0; i < 6 && f.row !== 'site:fh-brs'; i++) {
        await page.keyboard.press('ArrowDown');
        f = await focused(page);
      }
      await page.keyboard.press('Home');
      f = await focused(page);
      assert.equal(f.id, X.id, 'Home: the row\'s first bar');
      for (let i = 0; i < 6 && f.id !== B.id; i++) {
        await page.keyboard.press('ArrowRight');
        f = await focused(page);
      }
      assert.deepEqual([f.id, f.row], [B.id, 'site:fh-brs'], 'the arrows reach viz-later\'s bar on fh-brs');
      assert.ok(await viz.evaluate((e) => e === document.activeElement));
      await page.screenshot({ path: `${SHOTS}/ui-focus.png` });
      await page.keyboard.press('Enter');
      await page.waitForSelector(`#agreement[data-id="${B.id}"]:not([hidden])`);
      assert.equal((await focused(page)).id, 'agreement-name', 'the focus moves to the agreement opened');
      await page.keyboard.press('Tab');
      assert.equal((await focused(page)).cls, 'close');
      await page.keyboard.press('Space');
      await page.waitForSelector('#agreement[hidden]', { state: 'attached' });
      f = await focused(page);
      assert.deepEqual([f.id, f.row], [B.id, 'site:fh-brs'], 'closing gives the focus back to the bar');
      await page.keyboard.press('Space');
      await page.waitForSelector(`#agreement[data-id="${B.id}"]:not([hidden])`);
    });

    await check('a bar opens its agreement: allocation, guarantee state, trace picture', async () => {
      await page.click(`g.bar[data-id="${A.id}"][data-row="site:caesar"] rect`);
      await page.waitForSelector(`#agreement[data-id="${A.id}"]:not([hidden])`);
      const text = await page.textContent('#agreement');
      assert.match(text, /solver-now/);
      assert.match(text, /trace-partrace/);
      assert.match(text, /NotDetermined/);
      assert.match(text, /Negotiation: intersect, 1 round/);
      assert.doesNotMatch(text, /\bnull\b|\bundefined\b/, 'no absent part written as text');
      assert.ok(await page.locator('#agreement svg.trace rect.frame').count() >= 3, 'a frame per resource');
      assert.equal(await page.locator('#agreement svg.trace rect.slot').count(), 1, 'the common slot');
      assert.ok(await page.locator('#agreement svg.trace .mark.ok').count() >= 3, 'reserved and verified');
    });
    await check('an agreement\'s detail meets WCAG A/AA (axe)', async () => {
      await axeCheck(page, 'on an agreement\'s detail');
    });
    await page.locator('#agreement').screenshot({ path: `${SHOTS}/ui-agreement.png` });

    await check('the signed document downloads', async () => {
      const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
      const path = await dl.path();
      const xml = (await import('node:fs')).readFileSync(path, 'utf8');
      assert.match(xml, /<wsag:Agreement/);
      assert.match(xml, /<ds:Signature|<Signature/);
    });

    await check('terminate from the page: the agreement and its bar become Terminated', async () => {
      page.acceptConfirm = true;
      await page.click('#terminate');
      await page.waitForSelector(`#agreement[data-state="Terminated"]`);
      await page.waitForSelector(`g.bar[data-id="${A.id}"][data-state="Terminated"]`);
      const b = await bar(page, A.id, 'site:caesar');
      assert.match(b.cls, /st-Terminated/);
      const now = await api('alice', 'GET', `/agreements/${A.id}`);
      assert.equal(now.state, 'Terminated');
      assert.deepEqual(page.dialogs, [`confirm: Terminate solver-now? Its reservations are given back.`]);
      page.acceptConfirm = false;
      page.dialogs.length = 0;
      await axeCheck(page, 'after terminate (Observed and Terminated bars)');
      await labelsReadable(page);
    });
    await page.screenshot({ path: `${SHOTS}/ui-terminated.png` });

    await check('a quote from the page: counter-offers on the timeline, held, committed', async () => {
      const text = offer({ name: 'quoted-run', initiator: 'alice', earliest: hourFloor(Date.now()) + 10 * HOUR, comps: [['q', 'caesar', 8], ['r', 'fh-brs', 2]], links: [['q', 'r', 500]] });
      await page.fill('#offer', text);
      await page.click('#quote');
      await page.waitForSelector('#quote-box[data-state="Advisory"]');
      assert.ok(await page.locator('g.bar.quote[data-row="site:caesar"]').count() >= 1, 'counter-offers drawn');
      assert.ok(await page.locator('g.bar.quote[data-row="link:caesar_fh-brs"]').count() >= 1, 'on the link too');
      assert.match(await page.textContent('#quote-box'), /earliest|busy|free|start/i, 'with their co:Why');
      assert.doesNotMatch(await page.textContent('#quote-box'), /null|undefined/, 'no absent part written as text');
      await page.screenshot({ path: `${SHOTS}/ui-quote.png` });
      await axeCheck(page, 'with a quote\'s counter-offers');
      await labelsReadable(page);
      await page.click('#quote-box button.hold >> nth=0');
      await page.waitForSelector('#quote-box[data-state="Held"]');
      await axeCheck(page, 'with a counter-offer held');
      const qid = await page.getAttribute('#quote-box', 'data-id');
      assert.equal((await api('alice', 'GET', `/negotiations/${qid}`)).state, 'Held');
      await page.click('#commit');
      await page.waitForSelector('#quote-box[data-state="Committed"]');
      await page.waitForSelector('#agreement[data-state="Observed"]');
      const id = await page.getAttribute('#agreement', 'data-id');
      const a = await api('alice', 'GET', `/agreements/${id}`);
      assert.equal(a.name, 'quoted-run');
      assert.equal(a.state, 'Observed');
      await page.waitForSelector(`g.bar[data-id="${id}"][data-row="site:caesar"]`);
    });

    await check('a fault\'s text is shown', async () => {
      await page.fill('#offer', '<co:Nonsense xmlns:co="urn:accord:coalloc:1"/>');
      await page.click('#submit');
      await page.waitForFunction(() => document.getElementById('status').className === 'error');
      assert.match(await page.textContent('#status'), /^(SchemaViolation|InvalidOffer|MalformedDocument): /);
      await axeCheck(page, 'with a fault shown');
    });

    await check('a name like markup is text: no element, no dialog', async () => {
      await page.click(`g.bar[data-id="${X.id}"] rect`);
      await page.waitForSelector(`#agreement[data-id="${X.id}"]`);
      assert.equal(await page.textContent('#agreement-name'), XSS);
      assert.equal(await page.locator('img').count(), 0);
      const b = await bar(page, X.id, 'site:fh-brs');
      assert.ok(b.label.includes(XSS));
      await page.waitForTimeout(300);
      assert.deepEqual(page.dialogs, []);
    });
    await page.screenshot({ path: `${SHOTS}/ui-xss.png` });
    await check('every state\'s bars, labels and badges meet WCAG A/AA (axe, label contrast)', async () => {
      const tall = [['run-d', 'fzj-xd1', 24], ['run-e', 'fh-brs', 12], ['run-f', 'caesar', 48], ['run-g', 'fzj-xd1', 24]];
      const [D, E, F, G] = await Promise.all(tall.map(([name, site, n]) =>
        api('alice', 'POST', '/agreements', offer({ name, initiator: 'alice', duration: 'PT3H', comps: [['c', site, n]] }))));
      const states = { [D.id]: 'Pending', [E.id]: 'Complete', [F.id]: 'Terminated', [G.id]: 'ObservedAndTerminating', [B.id]: 'PendingAndTerminating' };
      const sp = await openAs(browser, 'alice', (p) => fakeStates(p, states, [X.id]));
      try {
        for (const a of [D, E, F, G, B]) await sp.waitForSelector(`g.bar[data-id="${a.id}"][data-state="${states[a.id]}"]`);
        await sp.waitForSelector(`g.bar.violated[data-id="${X.id}"][data-state="Observed"]`);
        const drawn = await sp.$$eval('#timeline .bar[data-id]', (bs) => [...new Set(bs.map((b) => b.dataset.state))].sort());
        assert.deepEqual(drawn, ['Complete', 'Observed', 'ObservedAndTerminating', 'Pending', 'PendingAndTerminating', 'Terminated']);
        await sp.screenshot({ path: `${SHOTS}/ui-states.png` });
        await axeCheck(sp, 'on a timeline of every state');
        const { measured } = await barLabelContrast(sp);
        await labelsReadable(sp);
        assert.ok(measured >= 10, `labels measured: ${measured}`);
        const inside = await sp.$$eval('#timeline .bar-label:not(.halo)', (ls) => [...new Set(ls.map((l) => l.closest('.bar').dataset.state))].sort());
        assert.deepEqual(inside, ['Complete', 'ObservedAndTerminating', 'Pending', 'Terminated'], 'labels inside the bars of each colour');
        const detail = [[D, ['Pending']], [E, ['Complete']], [F, ['Terminated']], [G, ['ObservedAndTerminating']], [X, ['Observed', 'Violated', 'Fulfilled', 'NotDetermined']]];
        for (const [a, badges] of detail) {
          await sp.click(`g.bar[data-id="${a.id}"] rect`);
          await sp.waitForSelector(`#agreement[data-id="${a.id}"][data-state="${states[a.id] || 'Observed'}"]:not([hidden])`);
          for (const b of badges) assert.equal(await sp.locator(`#agreement .badge.st-${b}`).count() > 0, true, `a ${b} badge`);
          await axeCheck(sp, `on the detail of ${a.name}, ${badges.join(', ')}`);
        }
        assert.deepEqual(sp.errors, []);
      } finally {
        await sp.close();
      }
    });
    await check('the page ran without a script error or a CSP violation', async () => {
      assert.deepEqual(page.errors, []);
    });

    const bob = await openAs(browser, 'bob');
    await check('bob sees his own agreement, none of alice\'s', async () => {
      await bob.waitForSelector(`g.bar[data-id="${C.id}"]`);
      for (const a of [A, B, X]) assert.equal(await bob.locator(`g.bar[data-id="${a.id}"]`).count(), 0);
      await bob.goto(URL + `/ui/#a=${B.id}`);
      await bob.waitForFunction(() => /NotFound/.test(document.getElementById('status').textContent));
      assert.match(await bob.textContent('#status'), /no agreement with id/);
      assert.equal(await bob.isHidden('#agreement'), true);
      assert.deepEqual(bob.dialogs, []);
    });

    const ops = await openAs(browser, 'ops');
    await check('an admin sees everyone\'s', async () => {
      await ops.waitForSelector(`g.bar[data-id="${C.id}"]`);
      await ops.waitForSelector(`g.bar[data-id="${B.id}"]`);
    });
  } finally {
    await browser.close();
  }
  console.log(`ui: ${checks - failures} of ${checks} checks passed`);
  process.exit(failures ? 1 : 0);
}

main().catch((e) => {
  console.log('FAIL: ' + (e.stack || e));
  process.exit(1);
});
