// The foundation's vertical slice: slider → sim-core → number and canvas chart.
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

test('dragging the arrival-rate slider re-simulates and redraws the chart', async () => {
  const lab_page = new LabPage(await lab.newPage(), lab.url);
  await lab_page.open();
  await saveScreenshot(lab_page.page, 'default-1280x800');

  const rateBefore = await lab_page.text('arrival-rate-value');
  const ttftBefore = await lab_page.text('ttft-p99');
  const ttftMsBefore = await lab_page.value('ttft-p99');
  const pixelsBefore = await lab_page.canvasPixels('queue-chart');
  assert.match(ttftBefore, /^\d+(\.\d+)? (ms|s)$/, 'the default scenario shows a p99 TTFT');

  // Towards the right end: past what one H100 can serve, so the queue explodes.
  await lab_page.dragSlider('arrival-rate', 0.85);

  const rateAfter = await lab_page.waitForTextChange('arrival-rate-value', rateBefore);
  const ttftAfter = await lab_page.waitForTextChange('ttft-p99', ttftBefore);
  assert.notEqual(rateAfter, rateBefore);
  const ttftMsAfter = await lab_page.value('ttft-p99');
  assert.ok(
    ttftMsAfter > 10 * ttftMsBefore,
    `overload must multiply the p99 TTFT: ${ttftBefore} → ${ttftAfter}`,
  );
  const pixelsAfter = await lab_page.canvasPixels('queue-chart');
  assert.notEqual(pixelsAfter, pixelsBefore, 'the chart was not redrawn');
  await saveScreenshot(lab_page.page, 'after-drag-1280x800');

  assert.deepEqual(lab.errors, [], 'the page logged errors');
});
