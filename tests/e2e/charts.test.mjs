// The charts say what they are about: TTFT on its own scale with its target
// in the legend, end-to-end beside it, waiting never hidden under running,
// the curve's durations and circles explained. Read from each canvas's text
// alternative, what a screen reader (and anyone hovering) gets.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startLab, saveScreenshot } from './support/harness.mjs';
import { LabPage } from './support/lab-page.mjs';

let lab;
before(async () => {
  lab = await startLab();
});
after(async () => {
  await lab?.close();
});

const label = (p, id) => p.byTestId(id).getAttribute('aria-label');

test('TTFT and end-to-end latency each have a chart; the target reads in its own unit', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  const ttft = await label(p, 'chart-latency');
  assert.match(ttft, /^Time to first token over time\./);
  assert.match(ttft, /vertical: latency \(ms\)/, 'TTFT of a light load reads in ms');
  assert.match(ttft, /Marked: TTFT target 500 ms\./);
  assert.doesNotMatch(ttft, /end-to-end/);
  assert.match(await label(p, 'chart-e2e'), /^End-to-end latency over time\..* end-to-end p99:/);
  // Overloaded, latencies reach minutes: the target still reads 500 ms.
  const before = await p.text('card-throughput');
  await p.byTestId('arrival-rate-number').fill('60');
  await p.byTestId('arrival-rate-number').press('Enter');
  await p.waitForTextChange('card-throughput', before, 30_000);
  await p.waitForRun();
  assert.match(await label(p, 'chart-latency'), /Marked: TTFT target 500 ms\./);
  assert.match(await label(p, 'chart-distribution'), /Marked: TTFT target 500 ms\./);
  const queue = await label(p, 'chart-queue');
  assert.match(queue, /^Requests waiting and running\..* running \(in a batch\):.* waiting:/);
  await p.byTestId('chart-latency').scrollIntoViewIfNeeded();
  await saveScreenshot(p.page, 'charts-overloaded-1280x800');
  assert.deepEqual(lab.errors, []);
});

test('the curve reads its latencies as durations and explains its circles and today', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  // The fleet's measured capacity first: the curve shades where it tips over.
  await p.byTestId('card-capacity').waitFor({ timeout: 60_000 });
  await p.byTestId('curve-run').click();
  await p.byTestId('chart-curve').waitFor({ state: 'visible', timeout: 60_000 });
  await p.page.waitForFunction(
    () => (document.querySelector('[data-testid="chart-curve"]')?.getAttribute('aria-label') ?? '').length > 0,
    null,
    { timeout: 60_000 },
  );
  const curve = await label(p, 'chart-curve');
  assert.match(curve, /vertical: end-to-end latency \((ms|s), log\) \(log scale\)/);
  assert.match(curve, /none \(one at a time\) p50:/, 'every policy is drawn, one at a time included');
  assert.match(curve, /Marked: today's load: [\d.]+k? output tok\/s\./);
  assert.match(curve, /the highest load each policy kept up with\./);
  // Issue 45: the loads between which the fleet tips over within the
  // model's error (its capacity over the band's ends), shaded.
  const [, lo, hi] = curve.match(/Shaded: tips over within the model's error: ([\d.]+)k–([\d.]+)k output tok\/s\./) ?? [];
  assert.ok(Number(lo) < Number(hi), curve);
  assert.deepEqual(lab.errors, []);
});

test('every chart on screen says what to read in it, and the cost charts mark today', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  // The cost curves come after the capacity measurement.
  await p.page.waitForFunction(
    () => /today's load/.test(document.querySelector('[data-testid="chart-cost-mtok"]')?.getAttribute('aria-label') ?? ''),
    null,
    { timeout: 60_000 },
  );
  const uncaptioned = await p.page.evaluate(() =>
    [...document.querySelectorAll('figure')]
      .filter((f) => f.style.display !== 'none' && f.querySelector('canvas'))
      .filter((f) => (f.querySelector('figcaption')?.textContent ?? '').trim().length < 40)
      .map((f) => f.querySelector('canvas').dataset.testid),
  );
  assert.deepEqual(uncaptioned, []);
  const shown = await p.page.evaluate(() =>
    [...document.querySelectorAll('figure')].filter((f) => f.style.display !== 'none').length,
  );
  assert.ok(shown >= 9, `${shown} charts on screen`);
  assert.match(await label(p, 'chart-cost-mtok'), /Marked: today's load [\d.]+\/s\./);
  assert.deepEqual(lab.errors, []);
});
