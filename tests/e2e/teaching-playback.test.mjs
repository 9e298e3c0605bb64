// The teaching timeline and playback over simulated time.
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

test('the GPU timeline redraws when static batching replaces continuous', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('chart-timeline').waitFor({ state: 'visible', timeout: 15_000 });
  await p.byTestId('chart-timeline').scrollIntoViewIfNeeded();
  const continuous = await p.canvasPixels('chart-timeline');
  await saveScreenshot(p.page, 'timeline-continuous-1280x800');
  await p.byTestId('batching').selectOption('static');
  await p.page.waitForFunction(
    (before) => document.querySelector('[data-testid="chart-timeline"]').toDataURL() !== before,
    continuous,
    { timeout: 15_000 },
  );
  await p.byTestId('chart-timeline').scrollIntoViewIfNeeded();
  await saveScreenshot(p.page, 'timeline-static-1280x800');
  assert.deepEqual(lab.errors, []);
});

test('playback animates the charts over simulated time', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('preset').selectOption('launch-spike');
  await p.waitForTextChange('card-throughput', '2238 tok/s', 30_000);
  await p.waitForRun();
  const full = await p.canvasPixels('chart-queue');
  assert.equal(await p.text('playhead-value'), 'all');
  await p.byTestId('speed').selectOption('600');
  await p.byTestId('play').click();
  await p.page.waitForFunction(
    () => parseFloat(document.querySelector('[data-testid="playhead-value"]').textContent) > 200,
    null,
    { timeout: 10_000 },
  );
  await p.byTestId('play').click(); // pause
  const paused = await p.text('playhead-value');
  const partial = await p.waitForCanvasChange('chart-queue', full);
  assert.notEqual(partial, full, 'the chart shows only the run so far');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(await p.text('playhead-value'), paused, 'paused means paused');
  assert.deepEqual(lab.errors, []);
});
