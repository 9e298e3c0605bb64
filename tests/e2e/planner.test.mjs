// The planning panel: cheapest setup, headroom and the latency–throughput curve,
// computed in the background while the page stays responsive.
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

test('headroom and the latency–throughput curve', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('headroom-run').click();
  await p.byTestId('headroom-verdict').waitFor({ timeout: 60_000 });
  assert.match(await p.text('headroom-verdict'), /^you can grow \d+\.\d\d× before p99 (TTFT|TPOT)/);
  await p.byTestId('curve-run').click();
  await p.byTestId('chart-curve').waitFor({ state: 'visible', timeout: 60_000 });
  await p.byTestId('chart-curve').scrollIntoViewIfNeeded();
  await saveScreenshot(p.page, 'curve-1280x800');
  assert.deepEqual(lab.errors, []);
});

test('the planner finds the cheapest setup without freezing the page', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('plan-run').click();
  await p.byTestId('planner-progress').waitFor({ timeout: 10_000 });
  // While it works, the page still answers: measure the longest gap between frames.
  const longest = await p.page.evaluate(
    () =>
      new Promise((resolve) => {
        let last = performance.now();
        let worst = 0;
        const end = last + 2000;
        const tick = (t) => {
          worst = Math.max(worst, t - last);
          last = t;
          if (t < end) requestAnimationFrame(tick);
          else resolve(worst);
        };
        requestAnimationFrame(tick);
      }),
  );
  assert.ok(longest < 100, `a frame took ${longest.toFixed(0)} ms while planning`);
  await p.byTestId('plan-results').waitFor({ timeout: 120_000 });
  const rows = await p.page.locator('[data-testid="plan-results"] tbody tr').count();
  assert.ok(rows >= 1, 'at least one setup meets the targets');
  assert.match(await p.text('plan-summary'), /288 configurations \(18432 candidate setups\)/);
  await p.byTestId('plan-results').scrollIntoViewIfNeeded();
  await saveScreenshot(p.page, 'planner-1280x800');
  assert.deepEqual(lab.errors, []);
});
