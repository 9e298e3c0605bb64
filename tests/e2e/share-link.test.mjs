// The scenario lives in the URL: a copied link reproduces the numbers exactly,
// and a bad link explains itself and opens the default.
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

test('a copied link opened in a fresh page shows identical numbers', async () => {
  const a = new LabPage(await lab.newPage(), lab.url);
  await a.page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await a.open();
  const defaultThroughput = await a.text('card-throughput');
  await a.byTestId('preset').selectOption('launch-spike');
  await a.waitForTextChange('card-throughput', defaultThroughput, 30_000);
  await a.waitForRun();
  // Change something so the link is not just a preset.
  const throttled = await a.text('card-throttled');
  await a.byTestId('rate-limit-tier-number').fill('3');
  await a.byTestId('rate-limit-tier-number').press('Enter');
  await a.waitForTextChange('card-throttled', throttled, 30_000);
  await a.waitForRun();
  await a.byTestId('copy-link').click();
  await a.page.getByText('Link copied').waitFor({ timeout: 5_000 });
  const copied = await a.page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, a.page.url());
  assert.match(copied, /#s=v1\.[A-Za-z0-9_-]+$/);
  const numbers = await a.cards();

  const b = new LabPage(await lab.newPage(), lab.url);
  await b.open(new URL(copied).hash);
  assert.deepEqual(await b.cards(), numbers);
  assert.equal(await b.byTestId('rate-limit-tier-number').inputValue(), '3');
  assert.equal(await b.byTestId('link-error').count(), 0);
  assert.deepEqual(lab.errors, []);
});

test('a bad link shows what was wrong and opens the default scenario', async () => {
  const reference = new LabPage(await lab.newPage(), lab.url);
  await reference.open();
  // The capacity cards come from a measurement after the run: wait for them.
  await reference.byTestId('card-capacity').waitFor({ timeout: 30_000 });
  const defaults = await reference.cards();
  const good = new URL(reference.page.url()).hash;
  const cases = [
    ['#s=v1.' + good.slice(6, 40), /cut short|damaged/],
    ['#s=v9.' + good.slice(6), /format v9/],
    ['#s=hello', /no format version/],
    ['#s=v1.<img src=x onerror=alert(1)>', /cannot appear/],
  ];
  for (const [hash, message] of cases) {
    const p = new LabPage(await lab.newPage(), lab.url);
    await p.open(hash);
    const text = await p.text('link-error');
    assert.match(text, message, `${hash.slice(0, 30)}: ${text}`);
    await p.byTestId('card-capacity').waitFor({ timeout: 30_000 });
    assert.deepEqual(await p.cards(), defaults, 'the default scenario runs');
    assert.equal(await p.page.locator('img').count(), 0, 'link content is never HTML');
  }
  assert.deepEqual(lab.errors, []);
});

test('a link made before serving-software profiles keeps its numbers and offers vLLM', async () => {
  // A link from the golden fixtures: written before profiles existed.
  const { readFile } = await import('node:fs/promises');
  const link = (await readFile(new URL('../../sim-core/tests/golden/2026-11-30/chatbot-h100.link', import.meta.url), 'utf8')).trim();
  const report = JSON.parse(
    await readFile(new URL('../../sim-core/tests/golden/2026-11-30/chatbot-h100.report.json', import.meta.url), 'utf8'),
  );
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open(`#s=${link}`);
  assert.match(await p.text('legacy-link'), /TensorRT-LLM's 2023 constants/);
  assert.match(await p.text('calibration-note'), /TensorRT-LLM profile/);
  const tps = await p.value('card-throughput');
  assert.equal(tps, report.throughput.output_tokens_per_s, 'the same number as when it was shared');
  const before = await p.text('card-tpot-p50');
  await p.byTestId('rerun-vllm').click();
  await p.waitForTextChange('card-tpot-p50', before, 30_000);
  await p.waitForRun();
  assert.equal(await p.byTestId('software').inputValue(), 'vllm');
  assert.match(await p.text('calibration-note'), /vLLM profile, fitted to 29 real vLLM/);
  assert.match(await p.text('calibration-note'), /Trust: on H100, dense models of 7–70B at TP 1–4 are within 6–8 %/);
  assert.equal(await p.page.getByTestId('legacy-link').count(), 0);
  assert.deepEqual(lab.errors, []);
});

test('a scenario imported as JSON opens, and a bad one says what is wrong', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  const scenario = JSON.parse(await p.page.evaluate(() => window.wasmBindings.default_scenario_json()));
  scenario.name = 'Imported from a file';
  scenario.workload.arrival.rate_per_s = 3;
  await p.page.locator('[data-testid="import"] summary').click();
  await p.byTestId('import-text').fill(JSON.stringify(scenario));
  const before = await p.text('run-time');
  await p.byTestId('import-open').click();
  await p.waitForTextChange('run-time', before, 15_000);
  await p.waitForRun();
  assert.equal(await p.byTestId('arrival-rate-number').inputValue(), '3.0');
  assert.equal(await p.byTestId('preset').inputValue(), 'custom');
  // The same from a file.
  scenario.workload.arrival.rate_per_s = 5;
  await p.byTestId('import-file').setInputFiles({
    name: 'scenario.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(scenario)),
  });
  await p.page.waitForFunction(() => document.querySelector('[data-testid="arrival-rate-number"]')?.value === '5.0');
  // A bad one: the message names the field, the scenario stays.
  scenario.serving.replicas = 0;
  await p.byTestId('import-text').fill(JSON.stringify(scenario));
  await p.byTestId('import-open').click();
  assert.match(await p.text('import-error'), /imported scenario could not be opened: .*serving\.replicas/);
  assert.equal(await p.byTestId('arrival-rate-number').inputValue(), '5.0');
  assert.deepEqual(lab.errors, []);
});

test('a measured run is imported, replayed strictly and compared on the page', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  const { readFile } = await import('node:fs/promises');
  const dir = new URL('../../sim-core/tests/traces/', import.meta.url);
  const file = async (from, name, mimeType) => ({
    name,
    mimeType,
    buffer: await readFile(new URL(from, dir)),
  });
  await p.page.locator('[data-testid="import"] summary').click();
  const before = await p.text('run-time');
  await p.byTestId('import-file').setInputFiles([
    await file('rtx4090-requests.jsonl', 'requests.jsonl', 'application/json'),
    await file('rtx4090-meta.json', 'meta.json', 'application/json'),
    await file('rtx4090-timeseries.csv', 'timeseries.csv', 'text/csv'),
  ]);
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
  await p.byTestId('measured-table').waitFor({ timeout: 30_000 });
  // The measured side is the run's own (its README: TTFT mean 65.5 s,
  // time per output token mean 32.4 ms); the simulated side is the replay's.
  const table = await p.text('measured-table');
  assert.match(table, /65\.5 s/);
  assert.match(table, /32\.4 ms/);
  assert.match(await p.text('measured-summary'), /Kolmogorov–Smirnov .*TTFT 0\.\d\d/);
  assert.match(await p.text('import-note'), /Measured run opened: requests\.jsonl with meta\.json and timeseries\.csv/);
  // The overlaid distribution chart describes the measured curves too.
  const label = await p.byTestId('chart-measured').getAttribute('aria-label');
  assert.match(label ?? '', /TTFT measured/);
  // The engine's own series against the replay's.
  const queue = await p.byTestId('chart-measured-queue').getAttribute('aria-label');
  assert.match(queue ?? '', /waiting measured/);
  const kv = await p.byTestId('chart-measured-kv').getAttribute('aria-label');
  assert.match(kv ?? '', /KV in use measured/);
  // Forgetting it hides the comparison.
  await p.byTestId('measured-forget').click();
  assert.equal(await p.byTestId('measured').isVisible(), false);
  assert.deepEqual(lab.errors, []);
});

test('a trace is replayed on this fleet, then distilled into a scenario whose sliders work', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  const { readFile } = await import('node:fs/promises');
  const trace = new URL('../../sim-core/tests/traces/azure-code-first-2000.csv', import.meta.url);
  await p.page.locator('[data-testid="import"] summary').click();
  // Taken twice as fast: the same requests in half the time.
  await p.byTestId('trace-speed').fill('2');
  let before = await p.text('run-time');
  await p.byTestId('import-file').setInputFiles({
    name: 'azure-code.csv',
    mimeType: 'text/csv',
    buffer: await readFile(trace),
  });
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
  assert.match(await p.text('import-note'), /Replaying exactly on this fleet: azure-code\.csv: Azure LLM trace CSV, 2,000 requests over 7\.1 min/);
  // Distilled: a short link, and the burstiness slider reads the trace's.
  before = await p.text('run-time');
  await p.byTestId('import-distil').click();
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
  const cv = Number(await p.byTestId('burstiness-number').inputValue());
  assert.ok(cv > 2 && cv < 20, `burstiness ${cv}`);
  const link = await p.page.evaluate(() => location.hash);
  assert.ok(link.length < 5_000, `link ${link.length} characters`);
  // A trace read a slice at a time says which line is wrong, beside the
  // panel, past a byte-order mark and Windows line ends.
  const broken = '\ufeff' + ['TIMESTAMP,ContextTokens,GeneratedTokens', '2023-11-16 18:17:03.9799600,4808,10', '2023-11-16 18:17:04.0319600,many,8'].join('\r\n') + '\r\n';
  await p.byTestId('import-file').setInputFiles({ name: 'broken.csv', mimeType: 'text/csv', buffer: Buffer.from(broken) });
  await p.page.waitForFunction(() => /broken\.csv: Azure LLM trace CSV line 3/.test(document.querySelector('[data-testid="import-error"]')?.textContent ?? ''));
  assert.match(await p.text('import-error'), /Leave out lines that do not read/);
  // Asked to, the page imports the rest and says which line it left out.
  await p.byTestId('trace-skip').check();
  await p.byTestId('import-file').setInputFiles({ name: 'broken.csv', mimeType: 'text/csv', buffer: Buffer.from(broken) });
  await p.page.waitForFunction(() => /1 line left out as unreadable \(line 3\)/.test(document.querySelector('[data-testid="import-note"]')?.textContent ?? ''));
  assert.equal(await p.byTestId('import-error').count(), 0);
  assert.deepEqual(lab.errors, []);
});

test('an exact replay too large for a link is linked by name and hash, and asks for the file', async () => {
  // 40,000 requests of scattered lengths: no link holds them.
  let x = 12345n;
  const next = (m) => {
    x = (x * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    return Number((x >> 33n) % BigInt(m));
  };
  const lines = [];
  for (let i = 0; i < 40000; i++) {
    lines.push(JSON.stringify({ timestamp: i * 90 + next(90), input_length: 1 + next(2000), output_length: 1 + next(300), hash_ids: [] }));
  }
  const big = { name: 'big.jsonl', mimeType: 'application/json', buffer: Buffer.from(lines.join('\n') + '\n') };
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.page.locator('[data-testid="import"] summary').click();
  let before = await p.text('run-time');
  await p.byTestId('import-file').setInputFiles(big);
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
  assert.match(await p.text('import-note'), /would not fit in a link, so it opens distilled/);
  assert.match(await p.text('trace-needed'), /This scenario is distilled from big\.jsonl \(40,000 requests, SHA-256 [0-9a-f]{12}…\)/);
  // The page holds the trace: replay it exactly; the link stays short.
  before = await p.text('run-time');
  await p.byTestId('trace-replay').click();
  await p.waitForTextChange('run-time', before, 60_000);
  await p.waitForRun(60_000);
  assert.match(await p.text('trace-needed'), /Exact replay of big\.jsonl/);
  const hash = await p.page.evaluate(() => location.hash);
  assert.ok(hash.length < 10_000, `link ${hash.length} characters`);
  // Opened elsewhere: the distilled traffic runs, and the file is asked for.
  const q = new LabPage(await lab.newPage(), lab.url);
  await q.open(hash);
  assert.match(await q.text('trace-needed'), /This link was made of an exact replay/);
  await q.byTestId('trace-file').setInputFiles({ name: 'other.jsonl', mimeType: 'application/json', buffer: Buffer.from(lines.slice(1).join('\n') + '\n') });
  await q.page.waitForFunction(() => /is not the trace this scenario names/.test(document.body.innerText));
  before = await q.text('run-time');
  await q.byTestId('trace-file').setInputFiles(big);
  await q.waitForTextChange('run-time', before, 60_000);
  await q.waitForRun(60_000);
  assert.match(await q.text('trace-needed'), /Exact replay of big\.jsonl/);
  assert.deepEqual(lab.errors, []);
});

test('the address always ends on the last change: after a drag, and after two quick edits', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  // A drag's inputs come every frame; the address is written at most every
  // 100 ms, and the last value always.
  await p.dragSlider('arrival-rate', 0.6);
  await p.waitForRun();
  const dragged = await p.byTestId('arrival-rate-number').inputValue();
  const q = new LabPage(await lab.newPage(), lab.url);
  await q.open(new URL(p.page.url()).hash);
  assert.equal(await q.byTestId('arrival-rate-number').inputValue(), dragged, 'the link holds the drag\'s last value');
  // Two edits 20 ms apart: the first is written at once, the second when
  // 100 ms have passed since.
  const hash = await p.page.evaluate(async () => {
    const box = document.querySelector('[data-testid="arrival-rate-number"]');
    const edit = (rate) => {
      box.value = rate;
      box.dispatchEvent(new Event('change', { bubbles: true }));
    };
    const pause = (ms) => new Promise((r) => setTimeout(r, ms));
    edit('12');
    await pause(20);
    edit('13');
    await pause(250);
    return location.hash;
  });
  const r = new LabPage(await lab.newPage(), lab.url);
  await r.open(hash);
  assert.equal(Number(await r.byTestId('arrival-rate-number').inputValue()), 13, 'the second edit is in the address');
  assert.deepEqual(lab.errors, []);
});
