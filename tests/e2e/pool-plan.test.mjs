// The planner over pools on the page: a class given targets of its own,
// each class planned on its own pool, the split run together and applied.
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

test('each class on a pool of its own: planned, run together, applied', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('preset').selectOption('chat-and-batch');
  await p.waitForRun();
  // The batch job (the second class) may wait a minute for its first token.
  const target = p.byTestId('class-ttft-target-1-number');
  await target.fill('60000');
  await target.press('Enter');
  await p.page.waitForFunction(
    () => document.querySelector('[data-testid="class-ttft-target-1-number"]')?.value === '60000',
    null,
    { timeout: 10_000 },
  );
  const duration = await p.value('duration-number');
  await p.byTestId('plan-pools').check();
  await p.byTestId('plan-run').click();
  await p.byTestId('pool-plan').waitFor({ timeout: 240_000 });
  const rows = await p.page.$$eval('[data-testid="pool-plan"] tbody tr', (rs) =>
    rs.map((r) => ({ id: r.dataset.testid, usd: Number(r.querySelector('[data-testid="usd-month"]').dataset.value) })),
  );
  assert.deepEqual(rows.map((r) => r.id), ['pool-plan-row-whole', 'pool-plan-row-chat', 'pool-plan-row-batch job']);
  const split = p.byTestId('pool-plan-split');
  assert.equal(await split.getAttribute('data-meets'), 'true', await p.text('pool-plan-verdicts'));
  // Fixed pools are billed their replicas: the split costs its classes' answers.
  const splitUsd = Number(await split.getAttribute('data-value'));
  const sum = rows[1].usd + rows[2].usd;
  assert.ok(Math.abs(splitUsd - sum) <= 1e-6 * sum, `${splitUsd} against ${sum}`);
  // Apply the split: the scenario becomes its pools and rules, and the
  // run on screen costs what the plan's run of it did.
  const before = await p.text('run-time');
  await p.byTestId('pool-plan-apply-split').click();
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
  await p.byTestId('per-pool').waitFor({ timeout: 30_000 });
  const pools = await p.page.$$eval('[data-testid="per-pool"] tbody tr', (rs) => rs.map((r) => r.dataset.testid));
  assert.deepEqual(pools, ['per-pool-chat', 'per-pool-batch job']);
  // Applied over the scenario's own window, whatever window the plan ran.
  assert.equal(await p.value('duration-number'), duration, 'the run keeps its length');
  const month = await p.value('card-usd-per-month');
  assert.ok(Math.abs(month - splitUsd) <= 1e-6 * splitUsd, `${month} against ${splitUsd}`);
  assert.deepEqual(lab.errors, []);
});
