// The hosted-API side on the page: a provider's prompt cache, chosen with
// its control, takes the cached part of every prompt off the bill, says so
// in a card, and travels in the link.
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

async function edit(p, id, set) {
  const before = await p.text('run-time');
  await set(p.byTestId(id));
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
}

test('prompt caching takes the cached system prompt off the API bill', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('preset').selectOption('launch-spike');
  await p.waitForRun();
  // Nothing to cache yet: the control says why.
  await p.byTestId('prompt-cache-inert').waitFor();
  assert.equal(await p.byTestId('card-cache-saving').count(), 0, 'no card without a cache');
  for (const id of ['shared-prompt-number', 'shared-prompt-1-number']) {
    await edit(p, id, async (box) => {
      await box.fill('3000');
      await box.press('Enter');
    });
  }
  await p.page.waitForFunction(() => !document.querySelector('[data-testid="prompt-cache-inert"]'), null, {
    timeout: 10_000,
  });
  const plain = await p.value('card-usd-per-month');
  await edit(p, 'prompt-cache', (select) => select.selectOption('explicit_5m'));
  // A tenth of the $2.50 input price, chosen with the cache.
  assert.equal(await p.value('api-price-cached-number'), 0.25);
  const saved = await p.value('card-cache-saving');
  const cached = await p.value('card-usd-per-month');
  assert.ok(saved > 0, `saved ${saved}`);
  assert.ok(cached < 0.6 * plain, `${cached} a month against ${plain}`);
  assert.ok((await p.value('card-cache-hits')) > 90, 'nearly every request hits the cache');
  // The link carries the cache.
  const q = new LabPage(await lab.newPage(), lab.url);
  await q.page.goto(p.page.url());
  await q.waitForRun();
  assert.equal(await q.byTestId('prompt-cache').inputValue(), 'explicit_5m');
  assert.equal(await q.value('card-cache-saving'), saved);
  // A cached price above the input price is refused, by name, under its control.
  await q.byTestId('api-price-cached-number').fill('9');
  await q.byTestId('api-price-cached-number').press('Enter');
  await q.byTestId('api-price-cached-error').waitFor({ timeout: 10_000 });
  assert.match(await q.text('api-price-cached-error'), /must not exceed the tier's input price/);
  assert.deepEqual(lab.errors, []);
});

test('a batch API takes the long threads out of the rate limit, answered within a day', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('preset').selectOption('launch-spike');
  await p.waitForRun();
  const throttled = await p.value('card-throttled');
  assert.ok(throttled > 1000, `${throttled} × 429 before`);
  await edit(p, 'batch-api', (select) => select.selectOption('on'));
  // The long threads (the second class) go to the new batch tier.
  await edit(p, 'backend-1', (select) => select.selectOption('frontier-batch'));
  await p.page.waitForFunction(
    () => Number(document.querySelector('[data-testid="card-throttled"]')?.dataset.value) === 0,
    null,
    { timeout: 60_000 },
  );
  // Hours to an answer, never more than the 24-hour window.
  const p99 = await p.value('card-e2e-p99');
  assert.ok(p99 > 3_600_000 && p99 <= 86_400_000, `${p99} ms`);
  // The link carries the batch tier and the route.
  const q = new LabPage(await lab.newPage(), lab.url);
  await q.page.goto(p.page.url());
  await q.waitForRun();
  assert.equal(await q.byTestId('batch-api').inputValue(), 'on');
  assert.equal(await q.byTestId('backend-1').inputValue(), 'frontier-batch');
  assert.deepEqual(lab.errors, []);
});

test('a provider incident fails what it answers with errors, and a bad incident is refused by name', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('preset').selectOption('pay-for-speed');
  await p.waitForRun();
  assert.equal(await p.value('card-failed'), 0);
  const fast = await p.value('card-e2e-p50');
  // Every attempt fails for the whole run: every request fails.
  await edit(p, 'api-incidents', async (box) => {
    await box.fill('at 0 for 100000: 100 %');
    await box.press('Enter');
  });
  assert.equal(await p.value('card-failed'), 100);
  // Half of them, three times slower: with the SDK's two retries, a request
  // fails one time in eight (0.5³), and the rest come slower.
  await edit(p, 'api-incidents', async (box) => {
    await box.fill('at 0 for 100000: 50 %, ×3');
    await box.press('Enter');
  });
  const failed = await p.value('card-failed');
  assert.ok(failed > 10 && failed < 15, `${failed} % failed`);
  assert.ok((await p.value('card-e2e-p50')) > 2 * fast, 'answers come slower');
  // A malformed incident says how to write one, under its control.
  await p.byTestId('api-incidents').fill('at 600: 50 %');
  await p.byTestId('api-incidents').press('Enter');
  await p.byTestId('api-incidents-error').waitFor({ timeout: 10_000 });
  assert.match(await p.text('api-incidents-error'), /at START for SECONDS: RATE %, ×SLOWER/);
  assert.deepEqual(lab.errors, []);
});

test('a fallback tier answers what the main tier gave up on', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('preset').selectOption('launch-spike');
  await p.waitForRun();
  const failed = await p.value('card-failed');
  assert.ok(failed > 10, `${failed} % failed before`);
  await edit(p, 'api-fallback', (select) => select.selectOption('small'));
  assert.equal(await p.value('card-failed'), 0);
  // A second step travels in the link.
  await edit(p, 'api-fallback-then', (select) => select.selectOption('self-hosted'));
  const q = new LabPage(await lab.newPage(), lab.url);
  await q.page.goto(p.page.url());
  await q.waitForRun();
  assert.equal(await q.byTestId('api-fallback').inputValue(), 'small');
  assert.equal(await q.byTestId('api-fallback-then').inputValue(), 'self-hosted');
  assert.deepEqual(lab.errors, []);
});

test('a hedge to another tier moves the requests its copies win there, and travels in the link', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('preset').selectOption('launch-spike');
  await p.waitForRun();
  // Before the client hedges, the only target offered is the request's own tier.
  const offered = async () => p.byTestId('api-hedge-to').locator('option').evaluateAll((o) => o.map((x) => x.value));
  assert.deepEqual(await offered(), ['same']);
  await edit(p, 'api-hedge-number', async (box) => {
    await box.fill('1');
    await box.press('Enter');
  });
  assert.ok((await offered()).includes('small'), `${await offered()}`);
  await edit(p, 'api-hedge-to', (select) => select.selectOption('small'));
  const row = p.page.locator('[data-testid="per-tier-frontier"]');
  await row.locator('[data-testid="hedged-away"]').waitFor({ timeout: 10_000 });
  const away = Number(await row.locator('[data-testid="hedged-away"]').getAttribute('data-value'));
  assert.ok(away > 0, `${away} requests hedged away from the frontier tier`);
  const q = new LabPage(await lab.newPage(), lab.url);
  await q.page.goto(p.page.url());
  await q.waitForRun();
  assert.equal(await q.byTestId('api-hedge-to').inputValue(), 'small');
  assert.deepEqual(lab.errors, []);
});

test('list prices from the dated catalogue price the main tier, say when they were read, and travel in the link', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('preset').selectOption('launch-spike');
  await p.waitForRun();
  assert.equal(await p.byTestId('api-price-list').inputValue(), 'as-set');
  const row = p.page.locator('[data-testid="per-tier-frontier"]');
  await row.waitFor({ timeout: 10_000 });
  const cell = async (id) => Number(await row.locator(`[data-testid="${id}"]`).getAttribute('data-value'));
  const [input, output] = [await cell('input'), await cell('output')];
  await edit(p, 'api-price-list', (select) => select.selectOption('anthropic-sonnet-5.5'));
  const label = await p.byTestId('api-price-list').locator('option:checked').textContent();
  assert.match(label, /Claude Sonnet 5\.5.*\$2 in, \$10 out.*2026-12-07/);
  // Prices do not change the run: the output at $10 a million costs what
  // the preset's $10 did, the input at $2 four fifths of its $2.50.
  assert.equal(await cell('output'), output);
  assert.ok(Math.abs((await cell('input')) - 0.8 * input) <= 1e-9 * input, `${await cell('input')} against ${input}`);
  const q = new LabPage(await lab.newPage(), lab.url);
  await q.page.goto(p.page.url());
  await q.waitForRun();
  assert.equal(await q.byTestId('api-price-list').inputValue(), 'anthropic-sonnet-5.5');
  assert.deepEqual(lab.errors, []);
});

test('the bill by tier: each line its tokens, the errors unbilled, the lines the whole', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('preset').selectOption('prompt-caching');
  await p.waitForRun();
  await edit(p, 'prompt-cache', (select) => select.selectOption('explicit_5m'));
  const row = p.page.locator('[data-testid="per-tier-assistant"]');
  await row.waitFor({ timeout: 10_000 });
  const cell = async (id) => Number(await row.locator(`[data-testid="${id}"]`).getAttribute('data-value'));
  const [input, cached, writes, output, total] = [
    await cell('input'), await cell('cached-input'), await cell('cache-writes'), await cell('output'), await cell('usd'),
  ];
  assert.ok(cached > 0 && writes > 0 && input > 0 && output > 0, `${input} ${cached} ${writes} ${output}`);
  assert.ok(Math.abs(input + cached + writes + output - total) <= 1e-9 * total, 'the lines add up');
  assert.equal(await cell('errors'), 0);
  // The month on the card is the tiers' months (no fleet is used).
  assert.equal(await cell('usd-month'), await p.value('card-usd-per-month'));
  assert.deepEqual(lab.errors, []);
});

test('flex halves the long threads\' bill with some refused; provisioned units are a line of their own', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('preset').selectOption('launch-spike');
  await p.waitForRun();
  const row = p.page.locator('[data-testid="per-tier-frontier"]');
  const cell = async (id) => Number(await row.locator(`[data-testid="${id}"]`).getAttribute('data-value'));
  await row.waitFor({ timeout: 10_000 });
  const before = await cell('usd');
  assert.equal(await row.locator('[data-testid="flex-refused"]').count(), 0, 'no column without flex');
  await edit(p, 'api-flex', (select) => select.selectOption('on'));
  // The long threads (the second class) go to the frontier tier's flex service.
  await edit(p, 'backend-1', (select) => select.selectOption('frontier+flex'));
  await row.locator('[data-testid="flex-refused"]').waitFor({ timeout: 10_000 });
  assert.ok((await cell('flex-refused')) > 0, 'some attempts are refused');
  const flexed = await cell('usd');
  assert.ok(flexed < 0.9 * before, `$${flexed} against $${before}`);
  // The link carries the variant and the route.
  const q = new LabPage(await lab.newPage(), lab.url);
  await q.page.goto(p.page.url());
  await q.waitForRun();
  assert.equal(await q.byTestId('api-flex').inputValue(), 'on');
  assert.equal(await q.byTestId('backend-1').inputValue(), 'frontier+flex');
  // Units bought by the hour: their line is the hours' price, and the lines add up.
  await edit(q, 'provisioned-units-number', async (box) => {
    await box.fill('800');
    await box.press('Enter');
  });
  const qrow = q.page.locator('[data-testid="per-tier-frontier"]');
  await qrow.locator('[data-testid="provisioned"]').waitFor({ timeout: 10_000 });
  const qcell = async (id) => Number(await qrow.locator(`[data-testid="${id}"]`).getAttribute('data-value'));
  const units = await qcell('provisioned');
  assert.ok(units > 0, `${units}`);
  const lines = ['input', 'cached-input', 'cache-writes', 'output', 'provisioned'];
  let sum = 0;
  for (const id of lines) sum += await qcell(id);
  assert.ok(Math.abs(sum - (await qcell('usd'))) <= 1e-9 * sum, 'the lines add up');
  // Its settings are refused by name when out of range.
  await q.byTestId('provisioned-tpm-number').fill('0');
  await q.byTestId('provisioned-tpm-number').press('Enter');
  await q.byTestId('provisioned-tpm-error').waitFor({ timeout: 10_000 });
  assert.deepEqual(lab.errors, []);
});
