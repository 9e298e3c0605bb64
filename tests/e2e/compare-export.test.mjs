// Compare A/B, exports, cost curves, and the same numbers in the browser as natively.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { startLab, saveScreenshot } from './support/harness.mjs';
import { LabPage } from './support/lab-page.mjs';

let lab;
before(async () => {
  lab = await startLab();
});
after(async () => {
  await lab?.close();
});

test('pinning A and changing B shows deltas and overlays', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  const latency = await p.canvasPixels('chart-latency');
  await p.byTestId('pin').click();
  await p.byTestId('pinned-note').waitFor();
  assert.equal(await p.text('pinned-note'), 'Comparing with A: Chatbot on one H100');
  assert.equal(await p.text('card-throughput-delta'), 'same as A');
  const before = await p.text('card-throughput');
  await p.byTestId('arrival-rate-number').fill('16');
  await p.byTestId('arrival-rate-number').press('Enter');
  await p.waitForTextChange('card-throughput', before, 15_000);
  await p.waitForRun();
  // Differences in the number's own unit, then relative to A.
  assert.match(await p.text('card-throughput-delta'), /^\+[\d,]+ tok\/s \(\+\d+(\.\d)? %\) vs A — better$/);
  assert.equal(await p.byTestId('card-throughput-delta').getAttribute('data-judged'), 'better');
  assert.match(await p.text('card-ttft-p99-delta'), /^[+-][\d.]+ (ms|s|min) \([+-][\d.]+ %\) vs A — (better|worse)$/);
  assert.match(await p.text('card-goodput-delta'), /^([+-][\d.]+ points vs A — (better|worse)|(about )?the same as A|same as A)$/);
  assert.notEqual(await p.waitForCanvasChange('chart-latency', latency), latency);
  await saveScreenshot(p.page, 'compare-1280x800');

  // A travels with the link: a fresh page opens B with A pinned.
  assert.match(p.page.url(), /#s=v1\.[\w-]+&a=v1\./);
  const other = new LabPage(await lab.newPage(), lab.url);
  await other.open(new URL(p.page.url()).hash);
  await other.byTestId('pinned-note').waitFor({ timeout: 30_000 });
  const expected = await p.text('card-throughput-delta');
  await other.page.waitForFunction(
    (want) => document.querySelector('[data-testid="card-throughput-delta"]')?.textContent === want,
    expected,
    { timeout: 30_000 },
  );
  assert.equal(await other.text('card-throughput-delta'), await p.text('card-throughput-delta'));

  // The comparison as CSV: every headline number of A and B.
  const compare = await downloadText(p, 'export-compare');
  assert.equal(compare.name, 'throughput-lab-compare.csv');
  const rows = compare.text.trim().split('\n').map((l) => l.split(','));
  assert.deepEqual(rows[0], ['metric', 'unit', 'A', 'B', 'difference', 'relative_change']);
  const tput = rows.find((r) => r[0] === 'Output throughput');
  assert.ok(tput && Number(tput[3]) > Number(tput[2]), `${tput}`);
  assert.ok(Math.abs(Number(tput[4]) - (Number(tput[3]) - Number(tput[2]))) < 1e-6);

  await p.byTestId('unpin').click();
  assert.equal(await p.byTestId('card-throughput-delta').count(), 0);
  assert.doesNotMatch(p.page.url(), /&a=/, 'clearing A drops it from the link');
  assert.deepEqual(lab.errors, []);
});

async function downloadText(p, testid) {
  const [download] = await Promise.all([p.page.waitForEvent('download'), p.byTestId(testid).click()]);
  const path = await download.path();
  return { name: download.suggestedFilename(), text: await readFile(path, 'utf8'), path };
}

test('exports download and parse, and the scenario runs in the CLI with the same numbers', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('preset').selectOption('launch-spike');
  await p.waitForTextChange('card-throughput', '2238 tok/s', 30_000);
  await p.waitForRun();

  const summary = await downloadText(p, 'export-summary');
  assert.equal(summary.name, 'throughput-lab-summary.csv');
  const rows = summary.text.trim().split('\n').map((l) => l.split(','));
  assert.deepEqual(rows[0], ['scope', 'metric', 'value', 'unit']);
  assert.ok(rows.length > 50 && rows.every((r) => r.length >= 4));

  const series = await downloadText(p, 'export-series');
  const lines = series.text.trim().split('\n');
  const width = lines[0].split(',').length;
  assert.ok(lines.length > 100 && lines.every((l) => l.split(',').length === width));
  // The page says why windowed numbers differ from the summary's.
  assert.match(await p.byTestId('export-series-note').getAttribute('title'), /per window .* differ from the summary/);
  assert.ok(lines[0].includes('gpu_prefill_tokens_per_s'), 'the column says what it counts');

  const scenario = await downloadText(p, 'export-scenario');
  const parsed = JSON.parse(scenario.text);
  assert.equal(parsed.name, 'Launch spike: email summarisation');

  const png = await Promise.all([p.page.waitForEvent('download'), p.byTestId('chart-queue-png').click()]);
  const bytes = await readFile(await png[0].path());
  assert.deepEqual([...bytes.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'a PNG file');

  // Same scenario, natively: the CLI's report must equal the browser's, byte for byte.
  const dir = await mkdtemp(join(tmpdir(), 'tlab-'));
  const file = join(dir, 'scenario.json');
  await writeFile(file, scenario.text);
  const native = execFileSync('cargo', ['run', '--quiet', '-p', 'tlab', '--', 'run', file, '--json'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const browser = await p.page.evaluate((json) => window.wasmBindings.report_json(json), scenario.text);
  // Both sides print each f64 in its shortest round-trip form and JS parses it
  // back to the same double, so equal re-serialisations mean every number is
  // bit-identical.
  assert.equal(JSON.stringify(JSON.parse(browser)), JSON.stringify(JSON.parse(native)), 'bit-identical reports');
  assert.deepEqual(lab.errors, []);
});

test('a GPU run under KV pressure, with preemptions, is bit-identical natively and in the browser', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  const scenario = JSON.parse(await p.page.evaluate(() => window.wasmBindings.default_scenario_json()));
  // A small KV cache and long answers: the GPU step model, KV blocks and
  // recompute preemption all run on both targets.
  scenario.duration_s = 60;
  scenario.serving.gpu_memory_utilisation = 0.26;
  scenario.workload.arrival = { kind: 'poisson', rate_per_s: 12 };
  scenario.workload.classes[0].output_tokens = { kind: 'log_normal', median: 600, p90: 1000 };
  const text = JSON.stringify(scenario);
  const dir = await mkdtemp(join(tmpdir(), 'tlab-'));
  const file = join(dir, 'kv-pressure.json');
  await writeFile(file, text);
  const native = execFileSync('cargo', ['run', '--quiet', '-p', 'tlab', '--', 'run', file, '--json'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const browser = await p.page.evaluate((json) => window.wasmBindings.report_json(json), text);
  const report = JSON.parse(native);
  assert.ok(report.utilisation.preemptions > 100, `${report.utilisation.preemptions} preemptions`);
  assert.equal(JSON.stringify(JSON.parse(browser)), JSON.stringify(report), 'bit-identical reports');
  assert.deepEqual(lab.errors, []);
});

test('near the knee, the ranges on the page are the native ranges, bit for bit, and say where they were measured', async () => {
  // Issue 45: a shared link gives everyone the same ranges. The page runs
  // them in slices beside the capacity measurement; the CLI in one go.
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  const before = await p.text('run-time');
  await p.byTestId('arrival-rate-number').fill('32');
  await p.byTestId('arrival-rate-number').press('Enter');
  await p.waitForTextChange('run-time', before, 30_000);
  await p.waitForRun();
  const fleet = p.page.locator('[data-testid="range-replicas_for_targets"]');
  await fleet.waitFor({ state: 'attached', timeout: 60_000 });
  const scenario = await downloadText(p, 'export-scenario');
  const dir = await mkdtemp(join(tmpdir(), 'tlab-'));
  const file = join(dir, 'knee.json');
  await writeFile(file, scenario.text);
  const native = JSON.parse(
    execFileSync('cargo', ['run', '--quiet', '-p', 'tlab', '--', 'run', file, '--ranges', '--json'], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    }),
  ).ranges;
  assert.equal(native.verdict, 'near_the_knee');
  const browser = JSON.parse(await p.page.evaluate((json) => window.wasmBindings.ranges_json(json), scenario.text));
  assert.equal(JSON.stringify(browser), JSON.stringify(native), 'bit-identical ranges');
  // What the panel shows is the same runs: every figure's three numbers.
  const names = Object.keys(native.figures);
  assert.ok(names.includes('replicas_for_targets') && names.includes('ttft_p99_ms'), names.join());
  for (const name of names) {
    const row = p.page.locator(`[data-testid="range-${name}"]`);
    const shown = await Promise.all(['data-value', 'data-low', 'data-high'].map(async (a) => Number(await row.getAttribute(a))));
    const f = native.figures[name];
    assert.deepEqual(shown, [f.value, f.low, f.high], name);
  }
  assert.equal(await p.byTestId('ranges-verdict').getAttribute('data-value'), native.verdict);
  // Where the band was measured: the chatbot's model and lengths lie inside
  // the vLLM runs, but at 32 req/s its queue holds more requests than any
  // measured run had in flight.
  assert.match(await p.text('ranges-where'), /^Up to [\d.]+× beyond the measured runs\.$/);
  assert.equal(await p.byTestId('ranges-where').getAttribute('data-inside'), 'false');
  await p.page.locator('[data-testid="ranges-detail"] summary').click();
  assert.match(await p.text('ranges-provenance'), /^Extrapolated, up to [\d.]+× beyond the measured: 49 rows of vLLM/);
  const outside = [];
  for (const axis of native.provenance.axes) {
    const inside = await p.byTestId(`provenance-${axis.name}`).getAttribute('data-inside');
    if (inside === 'false') outside.push(axis.name);
  }
  assert.deepEqual(outside, ['in_flight']);
  assert.deepEqual(lab.errors, []);
});

test('cost curves appear, with the API crossover when there is an API', async () => {
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open();
  await p.byTestId('chart-cost-mtok').waitFor({ state: 'visible', timeout: 15_000 });
  await p.byTestId('preset').selectOption('pay-for-speed');
  await p.byTestId('chart-cost-month').waitFor({ state: 'visible', timeout: 30_000 });
  await saveScreenshot(p.page, 'costs-1280x800');
  assert.deepEqual(lab.errors, []);
});
