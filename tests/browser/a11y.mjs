// SPDX-License-Identifier: Apache-2.0
// a11y.mjs - accessibility checks for the browser tests: axe-core (pinned in
// package-lock.json) run in the page against the WCAG 2.0 and 2.1 A and AA
// rules, and the contrast of the timeline's bar labels, which axe leaves
// undecided (SVG text over SVG shapes).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const require = createRequire(process.env.NODE_DIR + '/');
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export const AXE_VERSION = require('axe-core/package.json').version;
export const WCAG_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

// What axe found, one line per rule and one per element, with the fix it
// suggests: the message of the error thrown when there is anything.
function report(what, violations) {
  const lines = [`${violations.length} WCAG A/AA violation${violations.length === 1 ? '' : 's'} (axe-core ${AXE_VERSION}) ${what}:`];
  for (const v of violations) {
    lines.push(`  ${v.id} (${v.impact}): ${v.help} [${v.tags.filter((t) => /^wcag\d/.test(t)).join(' ')}]`);
    for (const n of v.nodes.slice(0, 8)) {
      lines.push(`    at ${n.target.join(' ')}`);
      for (const l of (n.failureSummary || '').split('\n').slice(1, 4)) lines.push(`      ${l.trim()}`);
    }
    if (v.nodes.length > 8) lines.push(`    and ${v.nodes.length - 8} more`);
  }
  return lines.join('\n');
}

// axe run in the page as it is now; throws naming every violation.  The
// source is evaluated through the DevTools protocol, which the page's
// Content-Security-Policy (script-src 'self') does not govern, so the CSP
// stays as strict as served.  Returns how many rules passed.
export async function axeCheck(page, what) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(AXE);
  const r = await page.evaluate(async (tags) => {
    const res = await window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return {
      passes: res.passes.length,
      violations: res.violations.map((v) => ({
        id: v.id, impact: v.impact, help: v.help, tags: v.tags,
        nodes: v.nodes.map((n) => ({ target: n.target.map(String), failureSummary: n.failureSummary })),
      })),
    };
  }, WCAG_AA);
  if (r.violations.length) throw new Error(report(what, r.violations));
  return r.passes;
}

// The contrast of every bar label of the timeline with what is behind it:
// the bar's fill laid over each background a bar can stand on (the rows and
// the free shading at its darkest), or the label's own halo when it has one
// (a stroke painted under the text, as on the hatched Violated bars).  Also
// that each label is clipped to its bar (a haloed one to the bar's width),
// so that none runs over the page behind it.
// Returns [{label, ratio, ...}] of every label under 4.5:1, and how many
// labels were measured.
export async function barLabelContrast(page) {
  return page.evaluate(() => {
    const rgba = (c) => {
      const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/.exec(c);
      return m ? [Number(m[1]), Number(m[2]), Number(m[3]), m[4] === undefined ? 1 : Number(m[4])] : null;
    };
    const over = (top, alpha, under) => top.slice(0, 3).map((v, i) => v * alpha + under[i] * (1 - alpha));
    const lum = (c) => {
      const l = c.slice(0, 3).map((v) => v / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
      return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
    };
    const ratio = (a, b) => {
      const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
      return (x + 0.05) / (y + 0.05);
    };
    const svg = document.getElementById('timeline');
    const fillOf = (sel) => {
      const e = svg.querySelector(sel);
      if (!e) return null;
      const cs = getComputedStyle(e);
      return { c: rgba(cs.fill), a: Number(cs.fillOpacity) * (rgba(cs.fill) || [0, 0, 0, 1])[3] };
    };
    // The backgrounds: each row colour, and each with all free levels over it.
    const grounds = [];
    for (const sel of ['.row-even', '.row-odd']) {
      const f = fillOf(sel);
      if (!f) continue;
      let g = f.c.slice(0, 3);
      grounds.push(g);
      for (const lv of [1, 2, 3, 4]) {
        const fr = fillOf('.free .free-' + lv);
        if (fr) g = over(fr.c, fr.a, g);
      }
      grounds.push(g);
    }
    const bad = [];
    let measured = 0;
    for (const t of svg.querySelectorAll('.bar .bar-label')) {
      measured++;
      const bar = t.closest('.bar');
      const rect = bar.querySelector('rect');
      const ts = getComputedStyle(t);
      const fg = rgba(ts.fill);
      const halo = ts.paintOrder.startsWith('stroke') && parseFloat(ts.strokeWidth) >= 2 && rgba(ts.stroke);
      // The label's viewport: the bar's own box, or (haloed) as wide as the bar.
      const clip = t.parentNode;
      const same = (k) => Math.abs(Number(clip.getAttribute(k)) - Number(rect.getAttribute(k))) < 0.01;
      const clipped = clip.tagName === 'svg' && (halo ? ['x', 'width'] : ['x', 'y', 'width', 'height']).every(same);
      let worst = Infinity;
      if (halo) worst = ratio(fg, halo);
      else {
        const rs = getComputedStyle(rect);
        const fill = rgba(rs.fill);
        if (!fill) worst = 0; // a pattern without a halo: unknown, so failing
        else for (const g of grounds) worst = Math.min(worst, ratio(fg, over(fill, Number(rs.fillOpacity) * fill[3], g)));
      }
      if (worst < 4.5 || !clipped)
        bad.push({ label: t.textContent, cls: bar.getAttribute('class'), ratio: Math.round(worst * 100) / 100, clipped });
    }
    return { bad, measured };
  });
}
