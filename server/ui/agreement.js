// SPDX-License-Identifier: Apache-2.0
// agreement.js - one agreement: its allocation, versions, guarantee terms
// with their state and counters, the job and its output, the negotiation
// trace as a picture, the signed document to download, and terminate.

import { call } from './api.js';
import { h, s, add, clear, when, table } from './dom.js';
import { focusBar } from './timeline.js';

const $ = (id) => document.getElementById(id);
const enc = encodeURIComponent;

async function maybe(p) {
  try {
    return await p;
  } catch (e) {
    return null;
  }
}

function stateBadge(st) {
  const violated = st === 'Violated';
  return h('span', { class: 'badge st-' + st + (violated ? ' violated' : '') }, (violated ? '\u26a0 ' : '') + st);
}

function allocation(a) {
  return h('div', {},
    h('h3', { text: 'Allocation' }),
    table(['component', 'site', 'nodes', 'per node', 'reservation'],
      a.components.map((c) => [c.name, c.site, String(c.nodes), String(c.processesPerNode), c.reservation])),
    a.links.length ? table(['link term', 'between', 'link', 'Mbit/s', 'reservation'],
      a.links.map((l) => [l.name, `${l.between} \u2194 ${l.and}`, l.link || '(inside one site)', String(l.bandwidth), l.reservation])) : null,
    a.reasons && a.reasons.length ? h('ul', { class: 'reasons' }, ...a.reasons.map((r) => h('li', { text: r }))) : null);
}

async function versions(a) {
  if (!a.versions || a.versions < 2) return h('p', { class: 'muted', text: 'Version 1 (never modified).' });
  const all = await Promise.all(Array.from({ length: a.versions }, (_, i) =>
    maybe(call('GET', `/agreements/${enc(a.id)}`, { query: { version: i + 1 } }))));
  return h('div', {}, h('h3', { text: 'Versions' }),
    table(['version', 'start', 'end', 'change'], all.map((v, i) => v ? [String(i + 1), when(Date.parse(v.start)), when(Date.parse(v.end)), v.change || ''] : [String(i + 1), '', '', ''])));
}

function guarantees(st) {
  if (!st) return null;
  return h('div', {}, h('h3', { text: 'Terms' }),
    table(['service term', 'state'], st.serviceTerms.map((t) => [t.name, t.state])),
    st.guaranteeTerms.length ? table(['guarantee term', 'state', 'link', 'bytes', 'packets', 'drops', 'why'],
      st.guaranteeTerms.map((g) => [g.name, stateBadge(g.state), g.link || '', g.bytes ?? '', g.packets ?? '', g.drops ?? '', g.reason || ''])) :
      h('p', { class: 'muted', text: 'No guarantee terms.' }));
}

function job(run, output) {
  if (!run) return h('div', {}, h('h3', { text: 'Job' }), h('p', { class: 'muted', text: 'No job (nothing committed).' }));
  const rows = [['style', run.style], ['state', run.state], ['started', when(Date.parse(run.started))], ['ended', when(Date.parse(run.ended))],
    ['exit status', run.exitStatus ?? ''], ['signal', run.signal ?? ''], ['why', run.reason || ''], ['directory', run.directory || ''], ['command', run.command || '']];
  return h('div', {}, h('h3', { text: 'Job' }),
    table(['', ''], rows.filter((r) => r[1] !== '' && r[1] !== undefined).map((r) => [r[0], String(r[1])])),
    h('h4', { text: `Output${run.outputBytes !== undefined ? ` (${run.outputBytes} bytes)` : ''}` }),
    h('pre', { class: 'output', tabindex: 0, text: output || '(none)' }));
}

// The trace as a picture: per round, one lane per resource with the window
// its preview searched, the earliest start it found and the slot that start
// gives; the round's proposed common start, and the agreed slot.
function tracePicture(tr, a) {
  const ev = tr.events;
  const dur = a.endMs - a.startMs || 3600e3;
  const t = (x) => (x ? Date.parse(x) : NaN);
  const starts = ev.map((e) => t(e.from)).filter(Number.isFinite);
  const results = ev.map((e) => t(e.result)).filter(Number.isFinite);
  const lo = Math.min(a.startMs || Infinity, ...starts);
  const hi = Math.max(a.endMs || -Infinity, ...results.map((r) => r + dur)) + dur * 0.5;
  const rounds = [...new Set(ev.map((e) => e.round))].filter((r) => r > 0);
  const lanes = [];
  for (const r of rounds) {
    const targets = [...new Set(ev.filter((e) => e.round === r && e.target).map((e) => e.target))];
    lanes.push({ round: r, head: true });
    for (const tg of targets) lanes.push({ round: r, target: tg });
  }
  const L = 170, W = 620, LH = 22, top = 26;
  const x = (v) => L + ((Math.min(Math.max(v, lo), hi) - lo) / (hi - lo || 1)) * W;
  const height = top + lanes.length * LH + 10;
  const svg = s('svg', { class: 'trace', viewBox: `0 0 ${L + W + 10} ${height}`, width: L + W + 10, height, role: 'img', 'aria-label': 'negotiation trace' });
  svg.append(s('text', { x: L, y: 14, class: 'axis-label', text: when(lo) }),
    s('text', { x: L + W, y: 14, class: 'axis-label end', text: when(hi) }));
  if (a.startMs && a.endMs && a.state !== 'Rejected')
    svg.append(s('rect', { x: x(a.startMs), y: top - 4, width: Math.max(2, x(a.endMs) - x(a.startMs)), height: lanes.length * LH + 6, class: 'slot' },
      s('title', { text: 'the common slot: ' + when(a.startMs) + ' \u2192 ' + when(a.endMs) })));
  lanes.forEach((ln, i) => {
    const y = top + i * LH;
    if (ln.head) {
      const p = ev.find((e) => e.round === ln.round && e.kind === 'propose');
      svg.append(s('text', { x: 4, y: y + 15, class: 'round', text: `round ${ln.round}` }));
      if (p && p.result) {
        svg.append(s('line', { x1: x(t(p.result)), x2: x(t(p.result)), y1: y + 2, y2: y + LH * 0.9, class: 'propose' }),
          s('text', { x: x(t(p.result)) + 4, y: y + 15, class: 'propose-label', text: 'proposed ' + when(t(p.result)) }));
      }
      return;
    }
    const mine = ev.filter((e) => e.round === ln.round && e.target === ln.target);
    svg.append(s('text', { x: 14, y: y + 15, class: 'lane', text: ln.target }));
    for (const e of mine) {
      if (e.kind === 'preview') {
        svg.append(s('line', { x1: x(t(e.from)), x2: x(t(e.until)), y1: y + 11, y2: y + 11, class: 'window' }));
        if (e.result) {
          const r = t(e.result);
          svg.append(s('rect', { x: x(r), y: y + 4, width: Math.max(3, x(r + dur) - x(r)), height: 14, class: 'frame ' + e.status },
            s('title', { text: `${e.target}: ${e.detail || ''}` })));
        }
      } else if (e.kind === 'reserve' || e.kind === 'verify' || e.kind === 'cancel') {
        const ok = e.status === 'Ok';
        svg.append(s('text', { x: Math.min(L + W - 10, x(t(e.result) || t(e.from)) + (e.kind === 'verify' ? 12 : 2)), y: y + 15, class: 'mark ' + (ok ? 'ok' : 'bad'), text: (ok ? '\u2713' : '\u2717') },
          s('title', { text: `${e.kind} ${e.status}: ${e.detail || ''}` })));
      }
    }
  });
  return svg;
}

function traceView(tr, a) {
  if (!tr) return null;
  return h('div', {}, h('h3', { text: `Negotiation: ${tr.strategy}, ${tr.rounds} round${tr.rounds === 1 ? '' : 's'}, ${tr.rollbacks} rollback${tr.rollbacks === 1 ? '' : 's'}` }),
    tracePicture(tr, a),
    h('details', {}, h('summary', { text: `the ${tr.events.length} events` }),
      table(['#', 'round', 'kind', 'status', 'resource', 'detail'], tr.events.map((e) => [String(e.seq), String(e.round), e.kind, e.status, e.target || '', e.detail || '']))));
}

async function download(a, ctx) {
  try {
    const blob = await call('GET', `/agreements/${enc(a.id)}`, { accept: 'application/xml', as: 'blob' });
    const url = URL.createObjectURL(blob);
    const link = h('a', { href: url, download: `agreement-${a.id}.xml` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  } catch (e) {
    ctx.say(e.text ? e.text() : String(e), 'error');
  }
}

async function terminate(a, ctx) {
  if (!window.confirm(`Terminate ${a.name || a.id}? Its reservations are given back.`)) return;
  try {
    await call('POST', `/agreements/${enc(a.id)}/terminate`);
    ctx.say(`${a.name || a.id} is terminated.`, 'ok');
  } catch (e) {
    ctx.say(e.text ? e.text() : String(e), 'error');
  }
  await openAgreement(a.id, ctx);
  await ctx.refresh();
}

export async function openAgreement(id, ctx) {
  const box = $('agreement');
  let a;
  try {
    a = await call('GET', `/agreements/${enc(id)}`);
  } catch (e) {
    ctx.say(e.text ? e.text() : String(e), 'error');
    return;
  }
  a.startMs = Date.parse(a.start);
  a.endMs = Date.parse(a.end);
  const [st, tr, run, out, vers] = await Promise.all([
    maybe(call('GET', `/agreements/${enc(id)}/state`)),
    maybe(call('GET', `/agreements/${enc(id)}/negotiation`)),
    maybe(call('GET', `/agreements/${enc(id)}/launch`)),
    maybe(call('GET', `/agreements/${enc(id)}/launch/output`, { accept: 'text/plain', as: 'text' })),
    versions(a),
  ]);
  const canEnd = ['Observed', 'Pending', 'ObservedAndTerminating', 'PendingAndTerminating'].includes(a.state);
  add(clear(box),
    h('div', { class: 'head' },
      h('h2', { id: 'agreement-name', tabindex: -1, text: a.name || a.id }),
      stateBadge(a.state),
      h('button', { type: 'button', class: 'close', title: 'close', 'aria-label': 'close the agreement', on: { click: () => close(a.id) } }, '\u00d7')),
    h('p', { class: 'meta' }, `${a.id} \u00b7 ${a.initiator} \u00b7 ${when(a.startMs)} \u2192 ${when(a.endMs)}` +
      (a.version ? ` \u00b7 version ${a.version} of ${a.versions}` : '')),
    h('div', { class: 'row' },
      h('button', { type: 'button', id: 'download', on: { click: () => download(a, ctx) } }, 'Download the signed document'),
      canEnd ? h('button', { type: 'button', id: 'terminate', class: 'danger', on: { click: () => terminate(a, ctx) } }, 'Terminate') : null),
    allocation(a), vers, guarantees(st), job(run, out), traceView(tr, a));
  box.hidden = false;
  box.dataset.id = a.id;
  box.dataset.state = a.state;
  box.scrollIntoView({ block: 'nearest' });
  // The focus follows what was opened (a keyboard or screen reader user
  // lands on its name); closing brings it back to the bar.
  $('agreement-name').focus({ preventScroll: true });
}

function close(id) {
  const box = $('agreement');
  const back = document.querySelector(`#timeline .bar[data-id="${CSS.escape(id)}"][tabindex="0"]`) ||
    document.querySelector(`#timeline .bar[data-id="${CSS.escape(id)}"]`);
  box.hidden = true;
  if (back) focusBar(back);
}
