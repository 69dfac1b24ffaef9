// SPDX-License-Identifier: Apache-2.0
// timeline.js - the timeline: one row per site and per link, the agreements
// as bars over the window (their height the share of the row's nodes or
// Mbit/s they hold, stacked where they overlap), the free capacity from the
// previews shaded beneath, counter-offers dashed on top.

import { s, clear } from './dom.js';

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

function label(a, amount, unit) {
  return (a.violated ? '\u26a0 ' : '') + (a.name || a.id) + ' \u00b7 ' + amount + ' ' + unit;
}

// view: {rows: [{kind, name, cap, unit}], agreements, quotes, free, from,
// until, now}; returns the number of bars drawn.
export function drawTimeline(svg, view) {
  const width = Math.max(600, svg.clientWidth || svg.parentNode.clientWidth || 1000);
  const W = width - LABEL - 10;
  const { from, until } = view;
  const x = (t) => LABEL + ((Math.min(Math.max(t, from), until) - from) / (until - from)) * W;
  const height = AXIS + view.rows.length * ROW + 4;
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
  const axis = s('g', { class: 'axis' });
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
    frag.append(s('g', { class: 'row ' + r.kind, 'data-row': r.kind + ':' + r.name },
      s('rect', { x: 0, y: rowY(i), width, height: ROW, class: i % 2 ? 'row-odd' : 'row-even' }),
      s('text', { x: 6, y: rowY(i) + 22, class: 'row-name', text: r.name }),
      s('text', { x: 6, y: rowY(i) + 40, class: 'row-cap', text: (r.kind === 'link' ? 'link, ' : '') + r.cap + ' ' + r.unit })));
  });

  // Free capacity: each preview level's frames, darker where more is free.
  if (view.free) {
    const g = s('g', { class: 'free' });
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
  const g = s('g', { class: 'bars' });
  perRow.forEach((items, i) => {
    stack(items, inner);
    for (const it of items) {
      const x0 = x(it.start), w = Math.max(2, x(it.end) - x0);
      const y = rowY(i) + 5 + (inner - it.y - it.h);
      let bar;
      if (it.a) {
        const a = it.a;
        const text = label(a, it.amount, it.unit);
        const tip = `${text}\n${a.state}${a.violated ? ', a guarantee is Violated' : ''}\n${a.start} \u2192 ${a.end}\nid ${a.id}, ${a.initiator}`;
        bar = s('g', { class: 'bar st-' + a.state + (a.violated ? ' violated' : ''), 'data-id': a.id, 'data-state': a.state, 'data-row': it.row, tabindex: 0, role: 'button', 'aria-label': text },
          s('title', { text: tip }),
          s('rect', { x: x0, y, width: w, height: it.h, rx: 2 }));
        if (w > 50) bar.append(s('text', { x: x0 + 3, y: y + Math.min(it.h, 16) - 4, class: 'bar-label', text }));
      } else {
        const q = it.q;
        bar = s('g', { class: 'bar quote', 'data-option': q.option, 'data-row': it.row },
          s('title', { text: `counter-offer ${q.option}: ${q.why || ''}` }),
          s('rect', { x: x0, y, width: w, height: it.h, rx: 2 }));
        if (w > 40) bar.append(s('text', { x: x0 + 3, y: y + Math.min(it.h, 16) - 4, class: 'bar-label', text: 'option ' + q.option + ' \u00b7 ' + it.amount + ' ' + it.unit }));
      }
      g.append(bar);
      bars++;
    }
  });
  frag.append(g);
  if (view.now > from && view.now < until)
    frag.append(s('line', { x1: x(view.now), x2: x(view.now), y1: AXIS - 6, y2: height, class: 'now' }));
  svg.append(frag);
  return bars;
}
