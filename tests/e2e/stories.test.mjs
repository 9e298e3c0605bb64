// Every preset's story runs to its end on the page's own controls: each step's
// button makes its change, and every claim the step states is checked against
// the run on screen — and equals the card that shows the same number.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startLab, saveScreenshot } from './support/harness.mjs';
import { LabPage } from './support/lab-page.mjs';

let lab;
let page;
before(async () => {
  lab = await startLab();
  page = new LabPage(await lab.newPage(), lab.url);
  await page.open();
});
after(async () => {
  await lab?.close();
});

/** Wait (bounded) until every claim of the step on screen is checked. */
async function claimsChecked(timeout = 60_000) {
  await page.page.waitForFunction(
    () => {
      const claims = [...document.querySelectorAll('[data-testid="story-claim"]')];
      return claims.length > 0 && claims.every((c) => c.dataset.holds !== 'pending');
    },
    null,
    { timeout },
  );
  return page.page.$$eval('[data-testid="story-claim"]', (els) =>
    els.map((e) => ({
      text: e.textContent.trim(),
      holds: e.dataset.holds,
      value: Number(e.dataset.value),
      card: e.dataset.card,
      cls: e.dataset.class,
      quantity: e.dataset.quantity,
    })),
  );
}

/** The number the page shows elsewhere for a claim: its card, its class's row, or the banner. */
async function shownElsewhere(claim) {
  if (claim.quantity === 'Overloaded') return (await page.byTestId('overload').count()) > 0 ? 1 : 0;
  const id = claim.card.replace(/^card-/, '');
  const el = claim.cls
    ? page.page.locator(`[data-testid="per-class-${claim.cls}"] [data-testid="${id}"]`)
    : page.byTestId(claim.card);
  await el.waitFor({ timeout: 30_000 });
  return Number(await el.getAttribute('data-value'));
}

async function choose(id) {
  if ((await page.byTestId('preset').inputValue()) === id) return;
  await page.byTestId('preset').selectOption(id);
  await page.page.waitForFunction(
    (want) => document.querySelector('[data-testid="story-say"]')?.textContent.startsWith('Step 1 of'),
    id,
    { timeout: 30_000 },
  );
}

/** Every text and control value on the page with more than 6 decimals. */
async function floatNoise() {
  return page.page.evaluate(() => {
    const noise = /\d\.\d{7,}/;
    const found = [];
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walk.nextNode()) {
      const t = walk.currentNode.textContent;
      if (noise.test(t)) found.push(t.trim().slice(0, 120));
    }
    // Boxes a person reads (a range slider's position is not shown as text).
    for (const el of document.querySelectorAll('input:not([type="range"]), textarea, select')) {
      if (noise.test(el.value)) found.push(`${el.dataset.testid ?? el.id}: ${el.value.slice(0, 120)}`);
    }
    return found;
  });
}

const PRESETS = ['self-hosted-tuning', 'chatbot-h100', 'launch-spike', 'thinking-agent', 'pay-for-speed', 'overnight-batch', 'classification', 'chat-and-batch', 'two-models', 'launch-day-gpus', 'prompt-caching', 'bad-hour'];

for (const id of PRESETS) {
  test(`the ${id} story runs to its end, every claim as the run shows`, async () => {
    await choose(id);
    const steps = await page.page.locator('[data-testid^="story-go-"]').count();
    assert.ok(steps >= 2, `${id}: ${steps} steps`);
    for (let k = 1; k <= steps; k++) {
      if (k > 1) {
        await page.byTestId('story-next').click();
      }
      await page.page.waitForFunction(
        (want) => document.querySelector('[data-testid="story-say"]')?.textContent.startsWith(want),
        `Step ${k} of ${steps}`,
        { timeout: 30_000 },
      );
      const claims = await claimsChecked();
      const wrong = claims.filter((c) => c.holds !== 'true').map((c) => c.text);
      assert.deepEqual(wrong, [], `${id} step ${k}: claims the run does not show`);
      for (const c of claims) {
        const shown = await shownElsewhere(c);
        assert.ok(
          Math.abs(shown - c.value) <= 1e-9 * Math.max(1, Math.abs(c.value)),
          `${id} step ${k}: ${c.text} — the page shows ${shown} elsewhere`,
        );
      }
      // On the story's path the banner says so, never "you have changed them".
      assert.equal(await page.byTestId('preset-edited').count(), 0, `${id} step ${k}`);
      // Numbers as people write them: no float noise in any text or box.
      assert.deepEqual(await floatNoise(), [], `${id} step ${k}: numbers with more than 6 decimals`);
    }
    assert.equal(await page.byTestId('story-next').count(), 0, 'no step after the last');
    await page.byTestId('story-end').waitFor();
    await page.byTestId('story').scrollIntoViewIfNeeded();
    await saveScreenshot(page.page, `story-${id}-end-1280x800`);
  });
}

test('an edit off the story path says so, and the story restarts', async () => {
  await choose('chatbot-h100');
  await page.byTestId('arrival-rate-number').fill('9');
  await page.byTestId('arrival-rate-number').press('Enter');
  await page.byTestId('story-off-path').waitFor({ timeout: 10_000 });
  await page.byTestId('preset-edited').waitFor();
  await page.byTestId('story-restart').click();
  await page.page.waitForFunction(
    () => document.querySelector('[data-testid="story-say"]')?.textContent.startsWith('Step 1 of'),
    null,
    { timeout: 10_000 },
  );
  assert.equal(await page.value('arrival-rate-number'), 8);
  assert.equal(await page.byTestId('preset').inputValue(), 'chatbot-h100');
  assert.deepEqual(lab.errors, [], 'the page logged errors');
});
