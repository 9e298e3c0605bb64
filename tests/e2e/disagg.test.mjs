// Prefill/decode disaggregation on the page: the preset split by its own
// control, the hand-off shown under the by-pool table, the split planner's
// answer applied, and the link round trip.
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

test('splitting a pool by its control hands every cache to the decode pool', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('preset').selectOption('split-prefill-decode');
  await p.waitForRun();
  const colocated = await p.value('card-goodput');
  const before = await p.text('run-time');
  await p.byTestId('decode-pool').selectOption('decode');
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
  // A new pool "decode", a copy of the first: the prefill pool completes
  // nothing itself and says so; every cache moved once.
  await p.byTestId('per-pool').waitFor({ timeout: 30_000 });
  const first = p.page.locator('[data-testid="per-pool-self-hosted"] [data-testid="completed"]');
  assert.match(await first.innerText(), /prefills for decode/);
  const decode = Number(
    await p.page.locator('[data-testid="per-pool-decode"] [data-testid="completed"]').getAttribute('data-value'),
  );
  const handoff = p.byTestId('handoff');
  assert.equal(Number(await handoff.getAttribute('data-transfers')), decode);
  assert.ok(Number(await handoff.getAttribute('data-transfer-mean-ms')) > 0);
  // Four GPUs prefill and eight decode now (the copy kept two replicas):
  // tokens keep the 15 ms pace.
  assert.ok((await p.value('card-goodput')) > colocated, 'the split meets the targets more often');
  // The link control applies to the prefill pool, and travels in the link.
  const beforeLink = await p.text('run-time');
  await p.byTestId('kv-link').selectOption('ethernet');
  await p.waitForTextChange('run-time', beforeLink, 30_000);
  await p.waitForRun();
  const url = p.page.url();
  const q = new LabPage(await lab.newPage(), lab.url);
  await q.page.goto(url);
  await q.waitForRun();
  assert.equal(await q.byTestId('decode-pool').inputValue(), 'decode');
  assert.equal(await q.byTestId('kv-link').inputValue(), 'ethernet');
  for (const card of ['card-ttft-p50', 'card-goodput', 'card-usd-per-month']) {
    assert.equal(await q.value(card), await p.value(card), card);
  }
  assert.deepEqual(lab.errors, []);
});

test('the split planner answers a ratio, and Apply runs it', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('preset').selectOption('split-prefill-decode');
  await p.waitForRun();
  await p.byTestId('split-run').click();
  await p.byTestId('split-plan').waitFor({ timeout: 120_000 });
  const split = Number(await p.byTestId('split-plan-split').getAttribute('data-value'));
  const colocated = Number(await p.byTestId('split-plan-colocated').getAttribute('data-value'));
  assert.ok(split > 0 && split < colocated, `split ${split} against colocated ${colocated}`);
  assert.match(await p.text('split-plan-verdict'), /less than the cheapest colocated/);
  const before = await p.text('run-time');
  await p.byTestId('split-plan-apply').click();
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
  const month = await p.value('card-usd-per-month');
  assert.ok(Math.abs(month - split) <= 1e-6 * split, `${month} against ${split}`);
  assert.equal(await p.byTestId('decode-pool').inputValue(), 'decode');
  assert.deepEqual(lab.errors, []);
});
