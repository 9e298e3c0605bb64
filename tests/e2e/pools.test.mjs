// Pools and routing rules on the page: a pool added and a rule written in
// their boxes, the by-pool table from the run, and both in the share link.
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

async function poolRows(p) {
  return p.page.$$eval('[data-testid="per-pool"] tbody tr', (rows) =>
    rows.map((r) => ({
      pool: r.dataset.testid,
      completed: Number(r.querySelector('[data-testid="completed"]').dataset.value),
      usd: r.querySelector('[data-testid="usd-month"]').dataset.value,
    })),
  );
}

test('a pool and a routing rule added on the page split the run, and the link keeps both', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await p.open();
  const pools = p.byTestId('pools');
  await pools.fill('small');
  await pools.press('Enter');
  // A pool nothing routes to is not billed and takes no request.
  await p.byTestId('per-pool').waitFor({ timeout: 30_000 });
  await p.waitForRun();
  let rows = await poolRows(p);
  assert.deepEqual(rows.map((r) => r.pool), ['per-pool-self-hosted', 'per-pool-small']);
  assert.equal(rows[1].completed, 0);
  assert.equal(rows[1].usd, '0');
  // A rule that does not parse is named under its box.
  const routing = p.byTestId('routing');
  await routing.fill('cheap -> small');
  await routing.press('Enter');
  const error = p.byTestId('routing-error');
  await error.waitFor({ timeout: 10_000 });
  assert.match(await error.textContent(), /unknown condition "cheap"/);
  // Half the tasks to the new pool: both serve, and the cost card is both pools'.
  const before = await p.text('run-time');
  await routing.fill('50% -> small');
  await routing.press('Enter');
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
  rows = await poolRows(p);
  assert.ok(rows[0].completed > 0 && rows[1].completed > 0, JSON.stringify(rows));
  const month = await p.value('card-usd-per-month');
  const byPool = Number(rows[0].usd) + Number(rows[1].usd);
  assert.ok(Math.abs(month - byPool) <= 1e-6 * month, `${month} against ${byPool}`);
  await p.byTestId('copy-link').click();
  await p.page.getByText('Link copied').waitFor({ timeout: 5_000 });
  const link = await p.page.evaluate(() => navigator.clipboard.readText());
  const numbers = await p.cards();

  const q = new LabPage(await lab.newPage(), lab.url);
  await q.open(new URL(link).hash);
  await q.byTestId('per-pool').waitFor({ timeout: 30_000 });
  await q.waitForRun();
  assert.deepEqual(await q.cards(), numbers);
  assert.deepEqual(await poolRows(q), rows);
  assert.equal(await q.byTestId('pools').inputValue(), 'small');
  assert.equal(await q.byTestId('routing').inputValue(), '50% -> small');
  assert.deepEqual(lab.errors, []);
});

test('autoscaling a pool shows its replicas up and keeps them in the link', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await p.open();
  await p.byTestId('autoscale').selectOption('queue_per_replica');
  await p.byTestId('per-pool').waitFor({ timeout: 30_000 });
  await p.waitForRun();
  const max = p.byTestId('autoscale-max-number');
  await max.fill('3');
  await max.press('Enter');
  await p.waitForRun();
  const peak = Number(await p.page.getAttribute('[data-testid="per-pool"] [data-testid="replicas"]', 'data-peak'));
  assert.ok(peak >= 1 && peak <= 3, `peak ${peak}`);
  // The queue chart says it draws replicas too.
  await p.page.waitForFunction(
    () => /replicas up/.test(document.querySelector('[data-testid="chart-queue"]')?.getAttribute('aria-label') ?? ''),
    null,
    { timeout: 30_000 },
  );
  await p.byTestId('copy-link').click();
  await p.page.getByText('Link copied').waitFor({ timeout: 5_000 });
  const link = await p.page.evaluate(() => navigator.clipboard.readText());
  const q = new LabPage(await lab.newPage(), lab.url);
  await q.open(new URL(link).hash);
  assert.equal(await q.byTestId('autoscale').inputValue(), 'queue_per_replica');
  assert.equal(await q.byTestId('autoscale-max-number').inputValue(), '3');
  assert.deepEqual(lab.errors, []);
});

test('a pool card edits that pool alone and removes it with its rules', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  const pools = p.byTestId('pools');
  await pools.fill('small');
  await pools.press('Enter');
  await p.byTestId('pool-card-small').waitFor({ timeout: 10_000 });
  const routing = p.byTestId('routing');
  await routing.fill('all -> small');
  await routing.press('Enter');
  await p.byTestId('per-pool').waitFor({ timeout: 30_000 });
  await p.waitForRun();
  // Three replicas on the card: the small pool has them, the first keeps its own.
  const firstReplicas = await p.byTestId('replicas-number').inputValue();
  const replicas = p.byTestId('pool-small-replicas');
  await replicas.fill('3');
  await replicas.press('Enter');
  await p.page.waitForFunction(
    () => document.querySelector('[data-testid="per-pool-small"] [data-testid="replicas"]')?.dataset.peak === '3',
    null,
    { timeout: 30_000 },
  );
  assert.equal(await p.byTestId('replicas-number').inputValue(), firstReplicas);
  // A GPU chosen on the card is that pool's.
  await p.byTestId('pool-small-gpu').selectOption('l40s');
  await p.page.waitForFunction(
    () => /L40S/.test(document.querySelector('[data-testid="per-pool-small"]')?.textContent ?? ''),
    null,
    { timeout: 30_000 },
  );
  assert.equal(await p.byTestId('gpu').inputValue(), 'h100');
  // Every other setting of a pool's own is under More settings: the small
  // pool's GPU price, doubled, doubles its cost and leaves the first's.
  await p.byTestId('pool-card-small-more').locator('summary').click();
  const price = p.byTestId('pool-small-gpu-price');
  const was = Number(await price.inputValue());
  const cost = () => Number(document.querySelector('[data-testid="per-pool-small"] [data-testid="usd-month"]')?.dataset.value);
  const before = await p.page.evaluate(cost);
  const firstPrice = await p.byTestId('gpu-price-number').inputValue();
  await price.fill(String(was * 2));
  await price.press('Enter');
  await p.page.waitForFunction(
    (b) => Math.abs(Number(document.querySelector('[data-testid="per-pool-small"] [data-testid="usd-month"]')?.dataset.value) - 2 * b) < 1e-6 * b,
    before,
    { timeout: 30_000 },
  );
  assert.equal(await p.byTestId('gpu-price-number').inputValue(), firstPrice);
  // Out of range on the card: refused, said, nothing changed.
  await replicas.fill('5000');
  await replicas.press('Enter');
  await p.byTestId('input-error').waitFor({ timeout: 10_000 });
  assert.match(await p.text('input-error'), /Pool small: .*replicas/i);
  // Removing the pool drops the rule that named it.
  await p.byTestId('pool-card-small-remove').click();
  await p.byTestId('pool-card-small').waitFor({ state: 'detached', timeout: 10_000 });
  assert.equal(await p.byTestId('pools').inputValue(), '');
  assert.equal(await p.byTestId('routing').inputValue(), '');
  assert.deepEqual(lab.errors, []);
});
