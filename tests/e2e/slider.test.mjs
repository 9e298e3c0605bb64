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
  const waitBefore = await lab_page.text('mean-wait');
  const pixelsBefore = await lab_page.canvasPixels('queue-chart');
  assert.match(waitBefore, /^\d+(\.\d+)? ms$/, 'the default scenario shows a mean wait');

  // Towards the right end: past the server's capacity, so the queue explodes.
  await lab_page.dragSlider('arrival-rate', 0.85);

  const rateAfter = await lab_page.waitForTextChange('arrival-rate-value', rateBefore);
  const waitAfter = await lab_page.waitForTextChange('mean-wait', waitBefore);
  assert.notEqual(rateAfter, rateBefore);
  assert.ok(
    parseFloat(waitAfter) > parseFloat(waitBefore),
    `more traffic must mean a longer wait: ${waitBefore} → ${waitAfter}`,
  );
  const pixelsAfter = await lab_page.canvasPixels('queue-chart');
  assert.notEqual(pixelsAfter, pixelsBefore, 'the chart was not redrawn');
  await saveScreenshot(lab_page.page, 'after-drag-1280x800');

  assert.deepEqual(lab.errors, [], 'the page logged errors');
});
