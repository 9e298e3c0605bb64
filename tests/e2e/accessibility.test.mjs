// Usable without a mouse and on a phone.
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

test('a slider works from the keyboard alone', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  const before = await p.byTestId('arrival-rate-number').inputValue();
  const tp = await p.text('card-throughput');
  // Tab to the slider, as a keyboard user would, then press keys.
  let focused = '';
  for (let i = 0; i < 40 && focused !== 'arrival-rate'; i++) {
    await p.page.keyboard.press('Tab');
    focused = await p.page.evaluate(() => document.activeElement?.dataset?.testid ?? '');
  }
  assert.equal(focused, 'arrival-rate', 'Tab reaches the arrival-rate slider');
  for (let i = 0; i < 60; i++) await p.page.keyboard.press('ArrowRight');
  await p.waitForTextChange('card-throughput', tp, 15_000);
  const after = await p.byTestId('arrival-rate-number').inputValue();
  assert.ok(Number(after) > Number(before), `${before} → ${after}`);
  assert.equal(await p.byTestId('arrival-rate').getAttribute('aria-valuetext'), `${after} req/s`);
  assert.ok((await p.byTestId('arrival-rate').getAttribute('aria-describedby'))?.length > 0);
});

test('a typed value out of range is refused with a message', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('replicas-number').fill('5000');
  await p.byTestId('replicas-number').press('Enter');
  assert.match(await p.text('replicas-error'), /Replicas must be between 1 and 1024 servers, got 5000/);
  assert.deepEqual(lab.errors, []);
});

test('the phone layout has no horizontal scroll', async () => {
  const p = new LabPage(await lab.newPage({ width: 390, height: 844 }), lab.url);
  await p.open();
  // Measured once everything under the cards is there ("How sure" comes
  // about half a second after the run).
  await p.byTestId('ranges-verdict').waitFor({ timeout: 60_000 });
  const overflow = await p.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the phone`);
  // Results first: the headline numbers on the first screen, the controls a tap away.
  const card = await p.byTestId('card-ttft-p50').boundingBox();
  const controls = await p.page.locator('#controls').boundingBox();
  assert.ok(card.y < 844, `the first number is ${card.y}px down`);
  assert.ok(controls.y > card.y, 'controls come after the results');
  // The story and the controls within two screens, before the charts and
  // the planner; a slider as wide as the screen allows, so a 27 px swipe
  // moves it by under a tenth of its range.
  const story = await p.byTestId('story').boundingBox();
  assert.ok(story.y < 2 * 844, `the story starts ${story.y}px down`);
  assert.ok(controls.y < 2 * 844, `the controls start ${controls.y}px down`);
  const chart = await p.byTestId('chart-queue').boundingBox();
  assert.ok(chart.y > controls.y, 'the charts come after the controls');
  const slider = await p.byTestId('arrival-rate').boundingBox();
  assert.ok(27 / slider.width < 0.1, `the rate slider is ${slider.width}px wide`);
  await p.byTestId('to-controls').click();
  await p.page.waitForFunction(() => document.getElementById('controls').getBoundingClientRect().top < 100);
  assert.match(p.page.url(), /#s=v1\./, 'the link still holds the scenario');
  await saveScreenshot(p.page, 'phone-390');
  assert.deepEqual(lab.errors, []);
});

test('a loading screen shows until the simulator is up, then goes', async () => {
  const html = await (await fetch(lab.url)).text();
  assert.match(html, /data-testid="loading"[\s\S]*Loading the simulator/);
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  assert.equal(await p.byTestId('loading').count(), 0);
});

test('a skip link takes the keyboard straight to the results, keeping the link', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  const url = p.page.url();
  await p.page.keyboard.press('Tab');
  const first = await p.page.evaluate(() => document.activeElement?.dataset?.testid ?? '');
  assert.equal(first, 'skip-to-results', 'the first Tab stop is the skip link');
  assert.ok(await p.byTestId('skip-to-results').isVisible(), 'it shows when focused');
  await p.page.keyboard.press('Enter');
  const focused = await p.page.evaluate(() => document.activeElement?.id ?? '');
  assert.equal(focused, 'results', 'Enter moves focus to the results');
  assert.equal(p.page.url(), url, 'the scenario stays in the address bar');
  assert.deepEqual(lab.errors, []);
});

test('a control\'s "?" is a button that opens its help with Enter, and the help describes the control', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  const button = p.byTestId('gpu-help-button');
  const help = p.byTestId('gpu-help');
  assert.equal(await button.evaluate((b) => b.tagName), 'BUTTON');
  assert.equal(await button.getAttribute('aria-expanded'), 'false');
  assert.equal(await help.isVisible(), false, 'the help starts closed');
  await button.focus();
  await p.page.keyboard.press('Enter');
  assert.equal(await button.getAttribute('aria-expanded'), 'true');
  assert.ok(await help.isVisible(), 'Enter opens it');
  const text = (await help.textContent()).trim();
  assert.ok(text.length > 20, text);
  // Read with the control, open or not.
  const described = await p.byTestId('gpu').evaluate((el) => {
    const ids = (el.getAttribute('aria-describedby') ?? '').split(/\s+/);
    return ids.map((id) => document.getElementById(id)?.textContent?.trim() ?? '').join(' ');
  });
  assert.equal(described, text);
  await p.page.keyboard.press('Enter');
  assert.equal(await help.isVisible(), false, 'Enter again closes it');
  assert.deepEqual(lab.errors, []);
});

test('on a phone the results stay in view while a control moves, and sliders step finely', async () => {
  const p = new LabPage(await lab.newPage({ width: 390, height: 844 }), lab.url);
  await p.open();
  const slider = p.byTestId('arrival-rate');
  await slider.scrollIntoViewIfNeeded();
  const summary = p.byTestId('live-summary');
  const before = await p.text('live-summary');
  assert.match(before, /TTFT p99 .* tok\/s/);
  // One press of "+" moves the rate by a step a finger can aim (1 % of the slider).
  await p.byTestId('arrival-rate-more').click();
  const rate = await p.value('arrival-rate-number');
  assert.ok(rate > 8 && rate < 9, `one step moved the rate from 8 to ${rate}`);
  await p.waitForTextChange('live-summary', before, 30_000);
  // The headline numbers are on screen beside the control that moved.
  const box = await summary.boundingBox();
  const control = await slider.boundingBox();
  assert.ok(box && box.y >= 0 && box.y + box.height <= 844, `the summary is at ${box?.y}px`);
  assert.ok(control.y >= 0 && control.y < box.y, 'the control is on screen above it');
  await p.byTestId('arrival-rate-less').click();
  assert.equal(await p.value('arrival-rate-number'), 8);
  await saveScreenshot(p.page, 'phone-390-live-summary');
  assert.deepEqual(lab.errors, []);
});
