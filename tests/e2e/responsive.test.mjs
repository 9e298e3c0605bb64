// The page never blocks: runs are sliced, charts draw on their own frame.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startLab } from './support/harness.mjs';
import { LabPage } from './support/lab-page.mjs';

let lab;
before(async () => {
  lab = await startLab();
});
after(async () => {
  await lab?.close();
});

test('switching between presets keeps every frame short', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  for (const id of ['launch-spike', 'self-hosted-tuning', 'overnight-batch', 'pay-for-speed', 'classification', 'chatbot-h100']) {
    const longest = await p.page.evaluate(async (id) => {
      let last = performance.now();
      let worst = 0;
      let run = true;
      const tick = (t) => {
        worst = Math.max(worst, t - last);
        last = t;
        if (run) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
      const select = document.querySelector('[data-testid="preset"]');
      select.value = id;
      select.dispatchEvent(new Event('change'));
      await new Promise((r) => setTimeout(r, 2500));
      run = false;
      return worst;
    }, id);
    // Frames come every 16.7 ms: 50 ms of blocking shows as a gap of ~67 ms.
    assert.ok(longest < 60, `${id}: a frame took ${longest.toFixed(0)} ms`);
  }
  assert.deepEqual(lab.errors, []);
});
