// SPDX-License-Identifier: Apache-2.0
// timeline.js - the timeline: one row per site and per link, the agreements
// as bars over the window (their height the share of the row's nodes or
// Mbit/s they hold, stacked where they overlap), the free capacity from the
// previews shaded beneath, counter-offers dashed on top.
//
// For screen readers and the keyboard the picture is a group per row, and
// each agreement's bar a button named by the agreement, its state, what it
// holds on the row and elsewhere, and its times.  One bar at a time is in
// the tab order (a roving tabindex): the arrow keys move between bars,
// Enter or Space opens one.  The axis, row shading, free capacity and the
// line for now are hidden from them (the names say all that the bars mean).

import { s, clear, when } from './dom.js';

const LABEL = 170; // the row names' column
const ROW = 64;
const AXIS = 30;
const HOUR = 3600e3;
const STEPS = [HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR, 48 * HOUR, 96 * HOUR];

// The row's bars placed: each at the lowest height where it fits beside the
// bars it overlaps (a row's bars overlap only as far as capacity allows, so
// the active list stays short).
function stack(items, inner) {
  items.sort((a, b) => a.start - b.start);
  let active = [];
  for (const it of items) {
    active = active.filter((o) => o.end > it.start);
    active.sort((a, b) => a.y - b.y);
    let y = 0;
    for (const o of active) {
      if (o.y >= y + it.h) break;
      y = Math.max(y, o.y + o.h);
    }
    it.y = Math.min(y, inner - it.h);
    active.push(it);
  }
}

function ticks(from, until, width) {
  const span = until - from;
  const step = STEPS.find((st) => (span / st) * 90 <= width) || STEPS[STEPS.length - 1];
  const out = [];
  for (let t = Math.ceil(from / step) * step; t < until; t += step) out.push(t);
  return { out, step };
}

function tickLabel(t, step) {
  const d = new Date(t);
  const hm = d.toISOString().slice(11, 16);
  return step >= 24 * HOUR || hm === '00:00' ? d.toISOString().slice(5, 10) + (hm === '00:00' ? '' : ' ' + hm) : hm;
}

const LABEL_H = 14; // a bar this tall holds its label; a lower one gets it above, haloed

// The bar's key, kept across redraws: the one in the tab order.
let current = null;

function label(a, amount, unit) {
  return (a.violated ? '\u26a0 ' : '') + (a.name || a.id) + ' \u00b7 ' + amount + ' ' + unit;
}

function holding(u) {
  return u.site ? `${u.nodes} nodes on ${u.site}` : `${u.bandwidth} Mbit/s on link ${u.link}`;
}

// The bar's accessible name begins with its visible label (WCAG 2.5.3, the
// label in the name), then the rest: "viz-later · 4 nodes on site fh-brs,
// Observed, 2026-12-06 16:00 UTC to 2026-12-06 19:00 UTC, also 32 nodes on
// caesar".
// (Ten thousand bars are named in one draw: the times are formatted without
// a regular expression, once per agreement.)
function barName(a, text, row) {
  if (a.spanText === undefined) a.spanText = stamp(a.startMs) + ' to ' + stamp(a.endMs);
  let also = '';
  for (const u of a.usage || []) if ((u.site ? 'site:' + u.site : 'link:' + u.link) !== row) also += (also ? ', ' : ', also ') + holding(u);
  return `${text} on ${row.replace(':', ' ')}, ${a.state}${a.violated ? ', a guarantee is Violated' : ''}, ${a.spanText}${also}`;
}

// "2026-12-06 16:00 UTC", as dom.js's when() writes it.
function stamp(ms) {
  const iso = new Date(ms).toISOString();
  return iso.slice(0, 10) + ' ' + iso.slice(11, 16) + ' UTC';
}

// Whether a bar too low for its label has room for it above, inside the
// row and under no other bar (items: the row's, stacked, sorted by start;
// only bars wide enough for a label ask).
function roomAbove(items, it, inner) {
  const top = it.y + it.h;
  if (top + LABEL_H > inner) return false;
  for (const o of items) {
    if (o.start >= it.end) break;
    if (o !== it && o.end > it.start && o.y < top + LABEL_H && o.y + o.h > top) return false;
  }
  return true;
}

// The label, clipped to the bar (a nested svg is a viewport that clips):
// white or dark on the bar's own fill when the bar is tall enough, else dark
// with a white halo just above the bar, so it reads on any background; none
// when there is no room there either (the name is in the tooltip).
function barLabel(x0, y, w, it, items, inner, text) {
  if (it.h >= LABEL_H)
    return s('svg', { x: x0, y, width: w, height: it.h, class: 'bar-clip' },
      s('text', { x: 3, y: Math.min(it.h, 16) - 4, class: 'bar-label', text }));
  if (!roomAbove(items, it, inner)) return null;
  return s('svg', { x: x0, y: y - LABEL_H, width: w, height: LABEL_H + it.h, class: 'bar-clip' },
    s('text', { x: 3, y: LABEL_H - 3, class: 'bar-label halo', text }));
}

const keyOf = (g) => g.dataset.id + '|' + g.dataset.row;

// view: {rows: [{kind, name, cap, unit}], agreements, quotes, free, from,
// until, now}; returns the number of bars drawn.
export function drawTimeline(svg, view) {
  const width = Math.max(600, svg.clientWidth || svg.parentNode.clientWidth || 1000);
  const W = width - LABEL - 10;
  const { from, until } = view;
  const x = (t) => LABEL + ((Math.min(Math.max(t, from), until) - from) / (until - from)) * W;
  const height = AXIS + view.rows.length * ROW + 4;
  const focused = svg.contains(document.activeElement); // a bar had the focus: the same one gets it back
  clear(svg);
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('width', width);
  svg.setAttribute('height', height);
  svg.dataset.from = from; // for tests and tools: the window drawn, and its geometry
  svg.dataset.until = until;
  svg.dataset.x0 = LABEL;
  svg.dataset.plot = W;
  const frag = document.createDocumentFragment();
  frag.append(s('defs', {},
    s('pattern', { id: 'hatch', width: 8, height: 8, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
      s('rect', { width: 8, height: 8, class: 'hatch-bg' }),
      s('line', { x1: 0, y1: 0, x2: 0, y2: 8, class: 'hatch-line' }))));

  const { out: tk, step } = ticks(from, until, W);
  const axis = s('g', { class: 'axis', 'aria-hidden': 'true' });
  for (const t of tk) {
    axis.append(s('line', { x1: x(t), x2: x(t), y1: AXIS - 6, y2: height, class: 'grid' }),
      s('text', { x: x(t) + 3, y: AXIS - 10, text: tickLabel(t, step) }));
  }
  frag.append(axis);

  const index = new Map();
  view.rows.forEach((r, i) => index.set(r.kind + ':' + r.name, i));
  const rowY = (i) => AXIS + i * ROW;
  const inner = ROW - 10;
  view.rows.forEach((r, i) => {
    frag.append(s('g', { class: 'row ' + r.kind, 'data-row': r.kind + ':' + r.name, 'aria-hidden': 'true' },
      s('rect', { x: 0, y: rowY(i), width, height: ROW, class: i % 2 ? 'row-odd' : 'row-even' }),
      s('text', { x: 6, y: rowY(i) + 22, class: 'row-name', text: r.name }),
      s('text', { x: 6, y: rowY(i) + 40, class: 'row-cap', text: (r.kind === 'link' ? 'link, ' : '') + r.cap + ' ' + r.unit })));
  });

  // Free capacity: each preview level's frames, darker where more is free.
  if (view.free) {
    const g = s('g', { class: 'free', 'aria-hidden': 'true' });
    for (const [name, levels] of view.free) {
      const i = index.get('site:' + name);
      if (i === undefined) continue;
      for (const lv of levels) {
        for (const [a, b] of lv.frames) {
          if (b <= from || a >= until) continue;
          g.append(s('rect', { x: x(a), y: rowY(i) + 2, width: Math.max(1, x(b) - x(a)), height: ROW - 4, class: 'free-' + lv.level }));
        }
      }
    }
    frag.append(g);
  }

  // Bars, per row.
  const perRow = view.rows.map(() => []);
  const place = (rowKey, amount, item) => {
    const i = index.get(rowKey);
    if (i === undefined) return;
    const cap = view.rows[i].cap || 1;
    perRow[i].push({ ...item, amount, row: rowKey, h: Math.max(5, Math.min(inner, (inner * amount) / cap)) });
  };
  for (const a of view.agreements) {
    if (!a.startMs || !a.endMs || a.endMs <= from || a.startMs >= until) continue;
    for (const u of a.usage || []) {
      if (u.site) place('site:' + u.site, u.nodes, { a, start: a.startMs, end: a.endMs, unit: 'nodes' });
      else if (u.link) place('link:' + u.link, u.bandwidth, { a, start: a.startMs, end: a.endMs, unit: 'Mbit/s' });
    }
  }
  for (const q of view.quotes || []) {
    for (const u of q.uses) place(u.row, u.amount, { q, start: q.start, end: q.end, unit: u.unit });
  }
  let bars = 0;
  let first = null, keep = null;
  const g = s('g', { class: 'bars' });
  perRow.forEach((items, i) => {
    stack(items, inner);
    const r = view.rows[i];
    const rowG = s('g', { role: 'group', 'data-row': r.kind + ':' + r.name, 'aria-label': `${r.kind} ${r.name}, ${r.cap} ${r.unit}` });
    for (const it of items) {
      const x0 = x(it.start), w = Math.max(2, x(it.end) - x0);
      const y = rowY(i) + 5 + (inner - it.y - it.h);
      let bar;
      if (it.a) {
        const a = it.a;
        const text = label(a, it.amount, it.unit);
        const tip = `${text}\n${a.state}${a.violated ? ', a guarantee is Violated' : ''}\n${a.start} \u2192 ${a.end}\nid ${a.id}, ${a.initiator}`;
        bar = s('g', { class: 'bar st-' + a.state + (a.violated ? ' violated' : ''), 'data-id': a.id, 'data-state': a.state, 'data-row': it.row, 'data-start': it.start, tabindex: -1, role: 'button', 'aria-label': barName(a, text, it.row) },
          s('title', { text: tip }),
          s('rect', { x: x0, y, width: w, height: it.h, rx: 2 }));
        const lb = w > 50 && barLabel(x0, y, w, it, items, inner, text);
        if (lb) bar.append(lb);
        first = first || bar;
        if (current && keyOf(bar) === current) keep = bar;
      } else {
        const q = it.q;
        const what = 'option ' + q.option + ' \u00b7 ' + it.amount + ' ' + it.unit;
        bar = s('g', { class: 'bar quote', 'data-option': q.option, 'data-row': it.row, role: 'img',
          'aria-label': `${what} on ${it.row.replace(':', ' ')}, counter-offer, ${when(q.start)} to ${when(q.end)}` },
          s('title', { text: `counter-offer ${q.option}: ${q.why || ''}` }),
          s('rect', { x: x0, y, width: w, height: it.h, rx: 2 }));
        const lb = w > 40 && barLabel(x0, y, w, it, items, inner, what);
        if (lb) bar.append(lb);
      }
      rowG.append(bar);
      bars++;
    }
    g.append(rowG);
  });
  frag.append(g);
  // The bar in the tab order: the one that was, or the first.
  const tab = keep || first;
  if (tab) {
    tab.setAttribute('tabindex', 0);
    current = keyOf(tab);
  }
  if (view.now > from && view.now < until)
    frag.append(s('line', { x1: x(view.now), x2: x(view.now), y1: AXIS - 6, y2: height, class: 'now', 'aria-hidden': 'true' }));
  svg.append(frag);
  if (focused && tab) tab.focus();
  return bars;
}

// The bar that takes the tab stop and the focus.
export function focusBar(bar) {
  const svg = bar.ownerSVGElement;
  for (const b of svg.querySelectorAll('.bar[tabindex="0"]')) if (b !== bar) b.setAttribute('tabindex', -1);
  bar.setAttribute('tabindex', 0);
  current = keyOf(bar);
  bar.focus();
}

// The bar of the row before (by -1) or after (by 1) that starts nearest to
// this one's start.
function nearby(bar, by) {
  const rows = [...bar.ownerSVGElement.querySelectorAll('.bars > g[role="group"]')];
  const start = Number(bar.dataset.start);
  for (let i = rows.indexOf(bar.parentNode) + by; i >= 0 && i < rows.length; i += by) {
    let best = null;
    for (const b of rows[i].querySelectorAll('.bar[data-id]'))
      if (!best || Math.abs(b.dataset.start - start) < Math.abs(best.dataset.start - start)) best = b;
    if (best) return best;
  }
  return null;
}

// The keys on a bar: Enter or Space opens it (open(bar)); the arrows move
// along its row (left, right) and to the rows above and below, Home and End
// to the row's first and last bar.
export function timelineKey(ev, open) {
  const bar = ev.target.closest && ev.target.closest('.bar[data-id]');
  if (!bar || ev.altKey || ev.ctrlKey || ev.metaKey) return; // the browser's own shortcuts stay
  const inRow = [...bar.parentNode.querySelectorAll('.bar[data-id]')];
  const at = inRow.indexOf(bar);
  let to;
  switch (ev.key) {
    case 'Enter':
    case ' ':
      ev.preventDefault();
      open(bar);
      return;
    case 'ArrowRight': to = inRow[at + 1]; break;
    case 'ArrowLeft': to = inRow[at - 1]; break;
    case 'Home': to = inRow[0]; break;
    case 'End': to = inRow[inRow.length - 1]; break;
    case 'ArrowDown': to = nearby(bar, 1); break;
    case 'ArrowUp': to = nearby(bar, -1); break;
    default: return;
  }
  ev.preventDefault(); // the arrows do not scroll the page meanwhile
  if (to) focusBar(to);
}
