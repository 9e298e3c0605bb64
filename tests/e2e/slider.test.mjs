// Dragging a slider re-simulates and redraws: slider → sim-core → cards and charts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startLab, saveScreenshot } from './support/harness.mjs';
import { LabPage } from './support/lab-page.mjs';

let lab;
before(async () => {
  lab = await startLab();
});
after(async () => {
  await lab?.close();
});

test('dragging the arrival-rate slider re-simulates and redraws the charts', async () => {
  const lab_page = new LabPage(await lab.newPage(), lab.url);
  await lab_page.open();
  await saveScreenshot(lab_page.page, 'default-1280x800');

  const rateBefore = await lab_page.value('arrival-rate-number').catch(() => null);
  const ttftBefore = await lab_page.text('card-ttft-p99');
  const ttftMsBefore = await lab_page.value('card-ttft-p99');
  const queueBefore = await lab_page.canvasPixels('chart-queue');
  const latencyBefore = await lab_page.canvasPixels('chart-latency');
  assert.match(ttftBefore, /^\d+(\.\d+)? (ms|s)$/, 'the default scenario shows a p99 TTFT');

  // Towards the right end of a log scale from 0.1 to 500 req/s: far past what
  // one H100 serves, so the queue explodes.
  await lab_page.dragSlider('arrival-rate', 0.8);

  const ttftAfter = await lab_page.waitForTextChange('card-ttft-p99', ttftBefore, 15_000);
  await lab_page.waitForRun();
  const rateAfter = Number(await lab_page.byTestId('arrival-rate-number').inputValue());
  assert.ok(rateAfter > 20, `the slider moved the rate: ${rateBefore} → ${rateAfter}`);
  const ttftMsAfter = await lab_page.value('card-ttft-p99');
  assert.ok(ttftMsAfter > 10 * ttftMsBefore, `overload must multiply the p99 TTFT: ${ttftBefore} → ${ttftAfter}`);
  // Bounded waits: charts redraw on the frame after the numbers.
  assert.notEqual(await lab_page.waitForCanvasChange('chart-queue', queueBefore), queueBefore, 'the queue chart was not redrawn');
  assert.notEqual(await lab_page.waitForCanvasChange('chart-latency', latencyBefore), latencyBefore, 'the latency chart was not redrawn');
  assert.match(lab_page.page.url(), /#s=v1\./, 'the address carries the scenario');
  await saveScreenshot(lab_page.page, 'after-drag-1280x800');

  assert.deepEqual(lab.errors, [], 'the page logged errors');
});

test('a launch spike makes the queue build in the middle of the run', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  const ttft = await p.value('card-ttft-p99');
  const before = await p.text('card-ttft-p99');
  await p.byTestId('spike-number').fill('5');
  await p.byTestId('spike-number').press('Enter');
  await p.waitForTextChange('card-ttft-p99', before, 15_000);
  await p.waitForRun();
  assert.ok((await p.value('card-ttft-p99')) > 10 * ttft, '5× the traffic for 100 s overwhelms one H100');
  assert.equal(await p.byTestId('burstiness').count(), 0, 'burstiness does not apply to a schedule');
  // The spike travels with the link.
  const again = new LabPage(await lab.newPage(), lab.url);
  await again.open(new URL(p.page.url()).hash);
  assert.equal(await again.byTestId('spike-number').inputValue(), '5.0');
  assert.deepEqual(lab.errors, []);
});

test('switching batching policies is state, not history: every round trip equals a fresh choice', async () => {
  const policies = ['none', 'static', 'continuous', 'chunked_prefill'];
  // What choosing each policy fresh on the default scenario gives.
  const fresh = {};
  for (const to of policies) {
    const p = new LabPage(await lab.newPage(), lab.url);
    await p.open();
    await p.byTestId('batching').selectOption(to);
    await p.waitForRun();
    fresh[to] = await knobs(p);
    await p.page.close();
  }
  assert.equal(fresh.continuous['max-seqs-number'], fresh.chunked_prefill['max-seqs-number']);
  assert.ok(Number(fresh.continuous['max-seqs-number']) > 1, 'continuous batching batches');
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  for (const from of policies) {
    for (const to of policies) {
      if (from === to) continue;
      await p.byTestId('batching').selectOption(from);
      await p.byTestId('batching').selectOption(to);
      await p.waitForRun();
      assert.deepEqual(await knobs(p), fresh[to], `${from} → ${to}`);
    }
  }
  // And the numbers agree with the fresh choice's: batching back on batches.
  assert.ok((await p.value('card-throughput')) > 100, 'chunked prefill serves the default load');
  assert.deepEqual(lab.errors, []);
});

/** The values of the batching knobs the page shows (absent ones omitted). */
async function knobs(p) {
  const out = {};
  for (const id of ['max-seqs-number', 'max-wait-number', 'token-budget-number', 'chunk-number']) {
    const el = p.byTestId(id);
    if ((await el.count()) > 0) out[id] = await el.inputValue();
  }
  return out;
}

test('a heavy run shows a labelled preview at once, then its full numbers, computed off the page\'s thread', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('preset').selectOption('launch-spike');
  await p.waitForRun();
  // The run worker loads after the first full run.
  await p.page.waitForFunction(() => window.wasmBindings.run_worker_up(), null, { timeout: 30_000 });
  const before = await p.text('run-time');
  // Think time 2.3 s: over a million requests in the full run.
  await p.byTestId('think-time-number').fill('2.3');
  await p.byTestId('think-time-number').press('Enter');
  await p.byTestId('run-preview').waitFor({ state: 'visible', timeout: 10_000 });
  assert.match(await p.text('run-preview'), /^The numbers shown are a preview: the first [\d.]+ (s|min) of [\d.]+ (s|min) simulated, while the full run finishes\.$/);
  // The cards show the preview's numbers while the full run goes on.
  assert.match(await p.text('card-throughput'), /\d/);
  assert.equal(await p.byTestId('run-time').count(), 0, 'the full run is still going');
  await p.waitForTextChange('run-time', before, 120_000);
  await p.waitForRun(120_000);
  assert.equal(await p.byTestId('run-preview').count(), 0, 'the preview note goes with the full run');
  assert.match(await p.text('run-time'), /^\d{1,3}(,\d{3}){2,} requests over [\d,]+ s simulated, computed in [\d.]+ (ms|s) off the page's thread$/);
  assert.equal(await p.byTestId('run-time').getAttribute('data-worker'), 'true');
  // The worker's numbers are the page's own: the same scenario run here, in
  // one go, exports the same summary, every figure.
  const download = async (id) => {
    const [d] = await Promise.all([p.page.waitForEvent('download'), p.byTestId(id).click()]);
    return readFile(await d.path(), 'utf8');
  };
  const scenario = await download('export-scenario');
  const shown = await download('export-summary');
  const here = await p.page.evaluate((json) => window.wasmBindings.summary_csv(json), scenario);
  assert.ok(shown.split('\n').length > 50, 'a full summary');
  assert.equal(shown, here, 'the worker\'s run exports what a run on the page does');
  assert.deepEqual(lab.errors, []);
});

test('a drag is followed while it moves: new numbers appear before the slider is let go', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.waitForRun();
  const shown = () => p.page.evaluate(() => window.wasmBindings.run_progress()[1]);
  const first = await shown();
  const slider = p.byTestId('arrival-rate');
  await slider.scrollIntoViewIfNeeded();
  const box = await slider.boundingBox();
  const y = box.y + box.height / 2;
  await p.page.mouse.move(box.x + box.width * 0.3, y);
  await p.page.mouse.down();
  const seen = new Set();
  for (let i = 1; i <= 20; i++) {
    await p.page.mouse.move(box.x + box.width * (0.3 + (0.3 * i) / 20), y);
    await p.page.waitForTimeout(60);
    seen.add(await shown());
  }
  // Still held: the numbers on screen have already changed several times,
  // never starved by the next move.
  const during = [...seen].filter((s) => s > first).length;
  await p.page.mouse.up();
  assert.ok(during >= 3, `the numbers changed ${during} times during a 20-move drag`);
  await p.waitForRun();
  assert.match(await p.text('card-ttft-p99'), /\d/);
  assert.deepEqual(lab.errors, []);
});
