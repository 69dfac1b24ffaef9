// SPDX-License-Identifier: Apache-2.0
// ask.js - asking: an offer pasted or uploaded, a quote with its
// counter-offers (and their co:Why) on the timeline, holding one, then
// committing it or giving it back; or booking the offer at once.

import { call } from './api.js';
import { h, add, clear, when, table } from './dom.js';
import { openAgreement } from './agreement.js';

const $ = (id) => document.getElementById(id);
let ctx;
let current = null; // the quote shown

function offer() {
  const text = $('offer').value.trim();
  if (!text) throw new Error('paste an offer (or choose a file) first');
  return text;
}

function fail(e) {
  ctx.say(e.text ? e.text() : e.message || String(e), 'error');
}

// The counter-offers as the timeline draws them.
function onTimeline(q) {
  return q.counterOffers.map((o) => ({
    option: o.option,
    start: Date.parse(o.start),
    end: Date.parse(o.end),
    why: o.why,
    uses: [
      ...sumBy(o.components, (c) => c.site, (c) => c.nodes).map(([k, v]) => ({ row: 'site:' + k, amount: v, unit: 'nodes' })),
      ...sumBy(o.links.filter((l) => l.via), (l) => l.via, (l) => l.bandwidth).map(([k, v]) => ({ row: 'link:' + k, amount: v, unit: 'Mbit/s' })),
    ],
  }));
}

function sumBy(list, key, val) {
  const m = new Map();
  for (const x of list) m.set(key(x), (m.get(key(x)) || 0) + val(x));
  return [...m];
}

function show(q) {
  current = q;
  const box = clear($('quote-box'));
  box.dataset.state = q.state;
  box.dataset.id = q.id;
  const held = q.state === 'Held';
  add(box, h('h3', { text: `Quote ${q.id}: ${q.state}` }),
    held ? h('p', { text: `Option ${q.heldOption} is held until ${when(Date.parse(q.heldUntil))}.` }) : null,
    q.reason ? h('p', { class: 'muted', text: q.reason }) : null,
    q.agreement ? h('p', {}, 'Agreement ', h('a', { href: '#', on: { click: (ev) => { ev.preventDefault(); openAgreement(q.agreement, ctx); } } }, q.agreement)) : null,
    table(['option', 'start', 'end', 'sites', 'why', ''], q.counterOffers.map((o) => [
      String(o.option), when(Date.parse(o.start)), when(Date.parse(o.end)),
      o.components.map((c) => `${c.name} ${c.nodes} on ${c.site}`).join(', '),
      o.why || '',
      q.state === 'Advisory' ? h('button', { type: 'button', class: 'hold', 'data-option': o.option, on: { click: () => hold(o.option) } }, 'Hold') : '',
    ])),
    held ? h('div', { class: 'row' },
      h('button', { type: 'button', id: 'commit', on: { click: commit } }, 'Commit'),
      h('button', { type: 'button', id: 'release', on: { click: release } }, 'Give it back')) : null);
  ctx.showQuotes(q.state === 'Advisory' || held ? onTimeline(q) : []);
}

async function quote() {
  try {
    show(await call('POST', '/negotiations', { body: offer() }));
    ctx.say('');
  } catch (e) {
    fail(e);
  }
}

async function hold(option) {
  try {
    show(await call('POST', '/negotiations', { body: offer(), query: { hold: $('hold').value, option } }));
    ctx.say(`Option ${option} is held.`, 'ok');
  } catch (e) {
    fail(e);
  }
}

async function commit() {
  try {
    const a = await call('POST', '/agreements', { body: '', query: { quote: current.id } });
    show(await call('GET', `/negotiations/${encodeURIComponent(current.id)}`));
    ctx.say(`Committed: agreement ${a.id} is ${a.state}.`, 'ok');
    await ctx.refresh();
    await openAgreement(a.id, ctx);
  } catch (e) {
    fail(e);
  }
}

async function release() {
  try {
    show(await call('DELETE', `/negotiations/${encodeURIComponent(current.id)}`));
    ctx.say('The hold is given back.', 'ok');
  } catch (e) {
    fail(e);
  }
}

async function submit() {
  try {
    const a = await call('POST', '/agreements', { body: offer() });
    ctx.say(`Agreement ${a.id} is ${a.state}.`, 'ok');
    await ctx.refresh();
    await openAgreement(a.id, ctx);
  } catch (e) {
    fail(e);
  }
}

export function initAsk(c) {
  ctx = c;
  $('quote').addEventListener('click', quote);
  $('submit').addEventListener('click', submit);
  $('offer-file').addEventListener('change', async () => {
    const f = $('offer-file').files[0];
    if (f) $('offer').value = await f.text();
  });
}
