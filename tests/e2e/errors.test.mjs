// Errors where the eye is: next to the control or panel that caused them,
// with the results marked as the last valid scenario's until one replaces them.
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

/** Whether the element's box lies inside the viewport. */
async function inViewport(locator) {
  return locator.evaluate((el) => {
    const r = el.getBoundingClientRect();
    // Within a pixel: scrolling aligns to fractional positions.
    return r.top >= 0 && r.bottom <= window.innerHeight + 1 && r.height > 0;
  });
}

test('a model that does not fit says so under its menu, and the results say they are stale', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  assert.equal(await p.page.locator('section.results').getAttribute('data-stale'), 'false');
  await p.byTestId('model').selectOption('deepseek-v3');
  const error = p.byTestId('model-error');
  await error.waitFor({ timeout: 10_000 });
  assert.ok(await inViewport(error), 'the error is on screen, under the menu that caused it');
  assert.match(await error.textContent(), /DeepSeek|memory|GPU/i);
  assert.equal(await p.page.locator('section.results').getAttribute('data-stale'), 'true');
  assert.match(await p.text('results-stale'), /still the last valid scenario's/);
  await saveScreenshot(p.page, 'error-under-control-1280x800');
  // From the results' banner, a link goes to where the error is.
  await p.page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await p.byTestId('results-stale').scrollIntoViewIfNeeded();
  await p.byTestId('results-stale-go').click();
  await p.page.waitForFunction(() => {
    const r = document.querySelector('[data-testid="model-error"]').getBoundingClientRect();
    return r.top >= 0 && r.bottom <= window.innerHeight + 1;
  }, null, { timeout: 5_000 });
  assert.equal(await p.page.evaluate(() => document.activeElement?.id), 'model', 'the menu that caused it has the focus');
  // A valid choice replaces the message and the stale mark.
  await p.byTestId('model').selectOption('llama-3.1-8b');
  await p.page.waitForFunction(
    () => document.querySelector('section.results')?.dataset.stale === 'false',
    null,
    { timeout: 10_000 },
  );
  assert.equal(await p.byTestId('model-error').count(), 0);
  assert.deepEqual(lab.errors, []);
});

test('a bad import shows its error beside the import panel', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('import').locator('summary').click();
  await p.byTestId('import-text').fill('{"version": 1, "seed": "x"}');
  await p.byTestId('import-open').click();
  const error = p.byTestId('import-error');
  await error.waitFor({ timeout: 10_000 });
  assert.ok(await inViewport(error), 'the error is on screen, beside the import panel');
  assert.match(await error.textContent(), /could not be opened/);
  assert.deepEqual(lab.errors, []);
});

test('a change that implies another says so under its control', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('model').selectOption('llama-3.1-70b');
  const note = p.byTestId('model-change');
  await note.waitFor({ timeout: 10_000 });
  assert.ok(await inViewport(note), 'the note is on screen, under the menu');
  assert.match(await note.textContent(), /^Also changed: .*GPUs per replica: 1 → \d/);
  assert.deepEqual(lab.errors, []);
});

test('latency cards are coloured against the targets they are held to', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  const card = (id) => p.page.locator(`.card:has([data-testid="${id}"])`);
  assert.equal(await card('card-ttft-p99').getAttribute('data-target'), 'met');
  assert.equal(await card('card-throughput').getAttribute('data-target'), 'none');
  const before = await p.text('run-time');
  await p.byTestId('arrival-rate-number').fill('60');
  await p.byTestId('arrival-rate-number').press('Enter');
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
  assert.equal(await card('card-ttft-p99').getAttribute('data-target'), 'missed');
  assert.deepEqual(lab.errors, []);
});

test('load stages, timeouts and shared prompts have controls, and no edit rewrites another silently', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  const stages = p.byTestId('stages');
  let before = await p.text('run-time');
  await stages.fill('8 for 100, 24 for 100');
  await stages.press('Enter');
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
  assert.equal(await p.value('duration-number'), 200, 'the run covers the stages');
  assert.match(await p.text('stages-change'), /Also changed: Simulated time: 300 s → 200 s/);
  // The arrival rate scales the stages, and says so under itself.
  before = await p.text('run-time');
  await p.byTestId('arrival-rate-number').fill('12');
  await p.byTestId('arrival-rate-number').press('Enter');
  await p.waitForTextChange('run-time', before, 30_000);
  assert.match(await p.text('arrival-rate-change'), /Load stages: 8 for 100, 24 for 100 → 12 for 100, 36 for 100/);
  assert.equal(await stages.inputValue(), '12 for 100, 36 for 100');
  // A stage that does not parse is named under the stages box.
  await stages.fill('12 for 100, 36 fro 100');
  await stages.press('Enter');
  const error = p.byTestId('stages-error');
  await error.waitFor({ timeout: 10_000 });
  assert.match(await error.textContent(), /stage 2 \("36 fro 100"\) must read RATE for SECONDS/);
  assert.ok(await inViewport(error));
  // A timeout counts its victims in the same card as every other unanswered request.
  await stages.fill('');
  await stages.press('Enter');
  await p.byTestId('timeout-number').fill('5');
  await p.byTestId('timeout-number').press('Enter');
  await p.byTestId('arrival-rate-number').fill('60');
  await p.byTestId('arrival-rate-number').press('Enter');
  await p.page.waitForFunction(
    () => Number(document.querySelector('[data-testid="card-failed"]')?.dataset.value) > 0,
    null,
    { timeout: 60_000 },
  );
  assert.match(await p.text('card-goodput-note'), /failed, refused or timed out/);
  // Prefix caching says why it changes nothing without a shared prompt, and stops saying so with one.
  await p.byTestId('prefix-caching-inert').waitFor();
  await p.byTestId('shared-prompt-number').fill('2000');
  await p.byTestId('shared-prompt-number').press('Enter');
  await p.page.waitForFunction(() => !document.querySelector('[data-testid="prefix-caching-inert"]'), null, { timeout: 10_000 });
  assert.deepEqual(lab.errors, []);
});
