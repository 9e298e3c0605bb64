// Speculative decoding on the page: switched on by its control, the card of
// tokens per decode step appears with what the acceptance rate promises,
// answers stream faster at this small batch, and the setting travels in
// the link.
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

test('an EAGLE head makes each decode step yield its accepted drafts', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.waitForRun();
  const plain = await p.value('card-tpot-p50');
  const before = await p.text('run-time');
  await p.byTestId('speculative').selectOption('eagle');
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
  // EAGLE's defaults: 3 draft tokens, 70 % accepted: (1 − 0.7⁴) / 0.3 = 2.53.
  const perStep = await p.value('card-spec-tokens');
  assert.ok(Math.abs(perStep - 2.53) < 0.1, `${perStep} tokens a step`);
  assert.match(await p.text('card-spec-tokens-note'), /promises 2\.53/);
  assert.ok((await p.value('card-tpot-p50')) < 0.7 * plain, 'tokens come faster');
  // Nothing accepted: one token a step, slower than without speculation.
  const rate = p.byTestId('speculative-acceptance-number');
  await rate.fill('0');
  const beforeZero = await p.text('run-time');
  await rate.press('Enter');
  await p.waitForTextChange('run-time', beforeZero, 30_000);
  await p.waitForRun();
  assert.equal(await p.value('card-spec-tokens'), 1);
  assert.ok((await p.value('card-tpot-p50')) > plain, 'it pays the drafts for nothing');
  // The link carries the setting.
  const q = new LabPage(await lab.newPage(), lab.url);
  await q.page.goto(p.page.url());
  await q.waitForRun();
  assert.equal(await q.byTestId('speculative').inputValue(), 'eagle');
  assert.equal(await q.value('speculative-acceptance-number'), 0);
  assert.deepEqual(lab.errors, []);
});

test('EAGLE at 30 req/s keeps up, and the capacity cards say so', async () => {
  // The capacity is measured on the replica as configured: speculation's
  // several tokens a step counted, so no false overload (issue 48).
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.waitForRun();
  let before = await p.text('run-time');
  await p.byTestId('speculative').selectOption('eagle');
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
  before = await p.text('run-time');
  await p.byTestId('arrival-rate-number').fill('30');
  await p.byTestId('arrival-rate-number').press('Enter');
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
  await p.byTestId('card-capacity').waitFor({ timeout: 30_000 });
  // The run drains: served about what is asked.
  assert.ok((await p.value('card-goodput')) > 0.95, 'the run keeps up');
  assert.equal(await p.value('card-replicas-needed'), 1);
  assert.equal(await p.byTestId('overload').count(), 0, 'no overload banner');
  assert.ok((await p.value('card-capacity')) > 30, 'more than the 30 tasks/s asked');
  assert.deepEqual(lab.errors, []);
});

test('a refused setting leaves its menu showing what the scenario still has', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.waitForRun();
  const before = await p.text('run-time');
  await p.byTestId('batching').selectOption('static');
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
  const off = await p.byTestId('speculative').inputValue();
  // Speculation needs iteration-level batching: refused, said under the menu.
  await p.byTestId('speculative').selectOption('eagle');
  await p.byTestId('speculative-error').waitFor({ timeout: 10_000 });
  assert.match(await p.text('speculative-error'), /iteration-level batching/);
  assert.equal(await p.byTestId('speculative').inputValue(), off, 'the menu shows the setting still in force');
  assert.deepEqual(lab.errors, []);
});

