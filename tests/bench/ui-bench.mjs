// SPDX-License-Identifier: Apache-2.0
// ui-bench.mjs - opens the web page RUNS times with a two-week window and
// prints the medians of its performance measures (run by ui-bench.sh).
import { createRequire } from 'node:module';

const require = createRequire(process.env.NODE_DIR + '/');
const { chromium } = require('playwright-core');
const URL = process.env.ACCORD_URL;
const RUNS = Number(process.env.RUNS || 5);
const TWO_WEEKS = 14 * 86400e3;

const median = (v) => { const s = [...v].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };

const ctx = await chromium.launchPersistentContext(process.env.PROFILE, {
  executablePath: process.env.CHROMIUM,
  headless: true,
  viewport: { width: 1400, height: 900 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const total = [], draw = [], bars = [];
let shown = 0;
try {
  const page = await ctx.newPage();
  for (let i = 0; i < RUNS; i++) {
    await page.goto(URL + '/ui/');
    await page.waitForFunction(() => document.body.dataset.ready);
    await page.evaluate(() => performance.clearMeasures());
    await page.selectOption('#span', String(TWO_WEEKS / 1000));
    await page.waitForFunction((span) => {
      const s = document.getElementById('timeline').dataset;
      return s.until - s.from === span && performance.getEntriesByName('timeline').length > 0;
    }, TWO_WEEKS, { timeout: 120000 });
    const m = await page.evaluate(() => ({
      total: performance.getEntriesByName('timeline').at(-1).duration,
      draw: performance.getEntriesByName('timeline-draw').at(-1).duration,
      bars: Number(document.getElementById('timeline').dataset.bars),
      shown: document.getElementById('count').textContent,
    }));
    total.push(m.total);
    draw.push(m.draw);
    bars.push(m.bars);
    shown = m.shown;
    console.log(`run ${i + 1}: timeline ${m.total.toFixed(0)} ms (drawing ${m.draw.toFixed(0)} ms), ${m.bars} bars; ${m.shown}`);
  }
} finally {
  await ctx.close();
}
console.log(`median of ${RUNS}: timeline ${median(total).toFixed(0)} ms, drawing ${median(draw).toFixed(0)} ms, ${median(bars)} bars (${shown})`);
