// The page never blocks for long: every run advances in slices of bounded work
// (at most 40,000 events each), one slice per animation frame; a long run's
// full simulation goes to the run worker, its preview sliced here. This asserts the
// bound on work, which cannot flake on a busy machine; how long the frames
// take is measured by `cargo xtask bench-web`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startLab } from './support/harness.mjs';
import { LabPage } from './support/lab-page.mjs';

const MAX_SLICE_EVENTS = 40000;

let lab;
before(async () => {
  lab = await startLab();
});
after(async () => {
  await lab?.close();
});

test('every preset runs in slices of bounded work', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  for (const id of ['launch-spike', 'self-hosted-tuning', 'overnight-batch', 'pay-for-speed', 'classification', 'chatbot-h100']) {
    const before = await p.text('run-time');
    await p.byTestId('preset').selectOption(id);
    await p.page.waitForFunction(
      (old) => {
        const el = document.querySelector('[data-testid="run-time"]');
        return el && el.textContent !== old;
      },
      before,
      { timeout: 60_000 },
    );
    const el = p.byTestId('run-time');
    const slices = Number(await el.getAttribute('data-slices'));
    const most = Number(await el.getAttribute('data-max-slice-events'));
    assert.ok(slices >= 1, `${id}: ${slices} slices`);
    assert.ok(most <= MAX_SLICE_EVENTS, `${id}: a slice processed ${most} events`);
    if (id === 'launch-spike') {
      // A run this long is sliced on the page, or previewed here while the
      // run worker computes it in full.
      const worker = await el.getAttribute('data-worker');
      assert.ok(slices > 1 || worker === 'true', `the launch spike's ${most}-event slices: ${slices}, worker ${worker}`);
    }
  }
  assert.deepEqual(lab.errors, []);
});
