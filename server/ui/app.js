// SPDX-License-Identifier: Apache-2.0
// app.js - the page: signing in (oidc.js) or the pasted token, the window over time, the timeline's data
// (sites and links, the agreements in the window page by page, the free
// capacity from the previews), and opening an agreement.

import { call, token, setToken, iso } from './api.js';
import { h, when } from './dom.js';
import { drawTimeline, focusBar, timelineKey } from './timeline.js';
import { openAgreement } from './agreement.js';
import { initAsk } from './ask.js';
import * as oidc from './oidc.js';

const PAGE = 1000; // the API's largest page
const LEVELS = [0.25, 0.5, 0.75, 1]; // free capacity shaded at these shares of a site
const $ = (id) => document.getElementById(id);

const state = {
  span: 86400e3,
  from: 0,
  rows: [],
  siteCap: new Map(),
  agreements: [],
  quotes: [],
  free: null,
  seq: 0,
};

export function say(text, kind) {
  const st = $('status');
  st.textContent = text || '';
  st.className = kind || '';
}

function hourFloor(t) {
  return Math.floor(t / 3600e3) * 3600e3;
}

async function loadSites() {
  const s = await call('GET', '/sites');
  state.rows = [];
  state.siteCap.clear();
  for (const x of s.sites) {
    state.rows.push({ kind: 'site', name: x.name, cap: x.nodes, unit: 'nodes' });
    state.siteCap.set(x.name, x.nodes);
  }
  for (const l of s.links) state.rows.push({ kind: 'link', name: l.name, cap: l.capacity, unit: 'Mbit/s' });
}

// Every agreement whose [start, end) meets the window: the first page says
// how many there are, the rest are asked for together.
async function loadAgreements(from, until) {
  const q = (offset) => call('GET', '/agreements', { query: { from: iso(from), until: iso(until), limit: PAGE, offset } });
  const first = await q(0);
  const pages = [first];
  const more = [];
  for (let off = PAGE; off < first.total; off += PAGE) more.push(q(off));
  pages.push(...(await Promise.all(more)));
  const seen = new Set();
  const out = [];
  for (const p of pages) {
    for (const a of p.agreements) {
      if (seen.has(a.id) || a.state === 'Rejected' || !a.start || !a.end) continue;
      seen.add(a.id);
      a.startMs = Date.parse(a.start);
      a.endMs = Date.parse(a.end);
      out.push(a);
    }
  }
  return { list: out, total: first.total };
}

// A site's free frames for a share of its nodes, from its preview.
async function loadFree(from, until) {
  const free = new Map();
  const jobs = [];
  for (const [site, cap] of state.siteCap) {
    const levels = [];
    free.set(site, levels);
    LEVELS.forEach((share, i) => {
      const nodes = Math.max(1, Math.round(cap * share));
      jobs.push(call('GET', `/sites/${encodeURIComponent(site)}/preview`, {
        query: { nodes, duration: 'PT1M', from: iso(Math.max(from, Date.now())), until: iso(until) },
      }).then((p) => {
        levels.push({ level: i + 1, frames: p.frames.map((f) => [Date.parse(f.start), Date.parse(f.end)]) });
      }).catch(() => {}));
    });
  }
  if (until > Date.now()) await Promise.all(jobs);
  for (const levels of free.values()) levels.sort((a, b) => a.level - b.level);
  return free;
}

// Marks the Observed agreements whose guarantees are Violated (one state
// each: only when few are in the window).
async function markViolated(list) {
  const observed = list.filter((a) => a.state === 'Observed' || a.state === 'Complete');
  if (observed.length > 50) return;
  await Promise.all(observed.map(async (a) => {
    try {
      const st = await call('GET', `/agreements/${encodeURIComponent(a.id)}/state`);
      a.violated = st.guaranteeTerms.some((g) => g.state === 'Violated');
    } catch (e) {
      a.violated = false;
    }
  }));
}

export function draw() {
  const until = state.from + state.span;
  performance.mark('timeline-draw-start');
  const bars = drawTimeline($('timeline'), {
    rows: state.rows, agreements: state.agreements, quotes: state.quotes,
    free: $('showfree').checked ? state.free : null, from: state.from, until, now: Date.now(),
  });
  performance.mark('timeline-draw-end');
  performance.measure('timeline-draw', 'timeline-draw-start', 'timeline-draw-end');
  $('timeline').dataset.bars = bars;
}

export async function refresh() {
  const seq = ++state.seq;
  const from = state.from, until = from + state.span;
  $('range').textContent = when(from) + ' \u2192 ' + when(until);
  performance.mark('timeline-load-start');
  try {
    if (!state.rows.length) await loadSites();
    const [ag, free] = await Promise.all([loadAgreements(from, until), loadFree(from, until)]);
    await markViolated(ag.list);
    if (seq !== state.seq) return; // a newer window was asked for meanwhile
    state.agreements = ag.list;
    state.free = free;
    $('count').textContent = `${ag.list.length} agreement${ag.list.length === 1 ? '' : 's'} in the window`;
    draw();
    performance.mark('timeline-ready');
    performance.measure('timeline', 'timeline-load-start', 'timeline-ready');
    document.body.dataset.ready = String(seq);
    say('');
  } catch (e) {
    if (seq !== state.seq) return;
    say(e.text ? e.text() : String(e), 'error');
    // accordd no longer takes the token signed in with (revoked, its
    // issuer's keys changed): forgotten, and Sign in offered again.
    if (e.status === 401 && oidc.session()) {
      oidc.forgetSession();
      setToken('');
      who();
      say(e.text() + ' \u2014 sign in again', 'error');
    }
    document.body.dataset.ready = String(seq);
  }
}

export function showQuotes(options) {
  state.quotes = options;
  if (options.length) {
    const first = Math.min(...options.map((o) => o.start));
    if (first < state.from || first >= state.from + state.span) {
      state.from = hourFloor(first) - 3600e3;
      refresh();
      return;
    }
  }
  draw();
}

function move(by) {
  state.from += by;
  refresh();
}

function zoom(factor) {
  const mid = state.from + state.span / 2;
  state.span = Math.min(14 * 86400e3, Math.max(6 * 3600e3, state.span * factor));
  state.from = hourFloor(mid - state.span / 2);
  const sel = $('span');
  const opt = [...sel.options].find((o) => Number(o.value) * 1000 === state.span);
  sel.value = opt ? opt.value : '';
  refresh();
}

function who() {
  const s = oidc.session();
  if (s && token()) $('who').textContent = `signed in as ${s.name} until ${when(s.expires)}`;
  else $('who').textContent = token() ? 'token set for this tab' : 'no token (a client certificate, or an open server)';
  $('signin').hidden = !oidc.configured() || Boolean(s && token());
  $('logout').textContent = s && token() ? 'Sign out' : 'Forget';
}

// To the provider's login page, with what to have back on return: the
// agreement open (#a=ID) and the offer being written.
function signIn() {
  oidc.signIn({ hash: location.hash, offer: $('offer').value }).catch((e) => say(e.text ? e.text() : String(e), 'error'));
}

// Back from the provider: the code exchanged; then the token renewed or a
// new sign-in before it expires.
async function initSignIn() {
  if (!(await oidc.loadConfig())) return;
  try {
    const keep = await oidc.completeSignIn();
    if (keep && keep.offer) $('offer').value = keep.offer;
  } catch (e) {
    say(e.text ? e.text() : String(e), 'error');
  }
  oidc.schedule(who, signIn);
}

async function init() {
  state.from = hourFloor(Date.now()) - 2 * 3600e3;
  $('login').addEventListener('submit', (ev) => {
    ev.preventDefault();
    oidc.forgetSession();
    setToken($('token').value.trim());
    $('token').value = '';
    who();
    state.rows = [];
    refresh();
  });
  $('signin').addEventListener('click', signIn);
  $('logout').addEventListener('click', () => {
    oidc.signOut().catch(() => {});
    who();
    state.agreements = [];
    draw();
  });
  $('earlier').addEventListener('click', () => move(-state.span / 2));
  $('later').addEventListener('click', () => move(state.span / 2));
  $('now').addEventListener('click', () => { state.from = hourFloor(Date.now()) - state.span / 8; refresh(); });
  $('zoomin').addEventListener('click', () => zoom(0.5));
  $('zoomout').addEventListener('click', () => zoom(2));
  $('span').addEventListener('change', () => { state.span = Number($('span').value) * 1000; refresh(); });
  $('showfree').addEventListener('change', draw);
  // A bar clicked, or Enter or Space on it, opens its agreement; it stays
  // the timeline's tab stop, for the way back.
  const open = (g) => {
    focusBar(g);
    openAgreement(g.dataset.id, { refresh, say });
  };
  $('timeline').addEventListener('click', (ev) => {
    const g = ev.target.closest('.bar[data-id]');
    if (g) open(g);
  });
  $('timeline').addEventListener('keydown', (ev) => timelineKey(ev, open));
  window.addEventListener('resize', () => draw());
  initAsk({ refresh, say, showQuotes });
  await initSignIn();
  who();
  // #a=ID opens that agreement (a link to share: it holds no credentials).
  const fromHash = () => {
    const m = /^#a=([A-Za-z0-9]+)$/.exec(location.hash);
    if (m) openAgreement(m[1], { refresh, say });
  };
  window.addEventListener('hashchange', fromHash);
  refresh().then(fromHash);
}

init();
