// Browser benchmark (`cargo xtask bench-web`): the release bundle in headless
// Chromium. Prints a table and exits non-zero if a target is missed.
//
//   first render      page load → first run's numbers on screen     < 1500 ms
//   recompute         median of 20 runs of the default scenario     <   30 ms
//   100k requests     one run of 100,000 requests                   < 1000 ms
//   planner           default scenario, default search space: on the page's
//                     thread (< 30000 ms), and as the page runs it in Web
//                     Workers, click to results (< 3000 ms), and to its
//                     answer checked over the model's error (< 3000 ms)
//   preset switches   longest frame gap while switching presets     <   67 ms
//   planning frames   longest frame gap while the planner runs      <  100 ms
//   drag              long tasks, frame gaps and input-to-numbers while each
//                     preset's load slider (arrival rate, or think time) is
//                     dragged (targets: no task over 50 ms, p95 gap ≤ 33 ms,
//                     full numbers ≤ 100 ms after the last move on the
//                     default, ≤ 1 s on every preset; the "How sure"
//                     ranges ≤ 500 ms after the last move on the default)
//   planner, presets  click → results on every preset (< 3000 ms)
//                     and every move followed by new numbers within 100 ms
//                     (a preview or the full run)
//   bundle            gzipped size of the wasm                      <  600 KB
//                     (was 500 KB; mixture-of-experts physics, reasoning,
//                     the planner's API answers and import grew it to ≈ 520)
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startLab, DIST } from '../e2e/support/harness.mjs';

// BENCH_ONLY=drag,bundle runs only those parts (render, recompute, switch,
// planner, drag, bundle); BENCH_PRESETS=thinking-agent only those presets'
// drags and plans ("default" is the page's own scenario).
const ONLY = process.env.BENCH_ONLY?.split(',');
const want = (part) => !ONLY || ONLY.includes(part);
const ONLY_PRESETS = process.env.BENCH_PRESETS?.split(',');
const wantPreset = (id) => !ONLY_PRESETS || ONLY_PRESETS.includes(id ?? 'default');

const PRESETS = ['launch-spike', 'self-hosted-tuning', 'overnight-batch', 'pay-for-speed', 'classification', 'thinking-agent', 'chatbot-h100', 'chat-and-batch', 'two-models', 'launch-day-gpus', 'prompt-caching', 'bad-hour'];
const lab = await startLab();
const rows = [];
let failed = false;
function record(name, value, unit, target) {
  const ok = value < target;
  failed ||= !ok;
  rows.push({ name, value: Number(value.toFixed(1)), unit, target, ok });
}

try {
  if (want('render')) {
    // First render: a fresh page, timed from navigation start by the browser itself.
    const firsts = [];
    for (let i = 0; i < 5; i++) {
      const page = await lab.newPage();
      await page.goto(lab.url);
      await page.locator('[data-testid="run-time"]').waitFor({ timeout: 30_000 });
      firsts.push(await page.evaluate(() => performance.now()));
      await page.close();
    }
    firsts.sort((a, b) => a - b);
    record('first render (median of 5)', firsts[2], 'ms', 1500);
  }
  if (want('recompute')) {
    const page = await lab.newPage();
    await page.goto(lab.url);
    await page.locator('[data-testid="run-time"]').waitFor({ timeout: 30_000 });
    const times = await page.evaluate(() => {
      const b = window.wasmBindings;
      return b.bench_run_ms(b.default_scenario_json(), 20);
    });
    const sorted = [...times].sort((a, b) => a - b);
    record('recompute default scenario (median of 20)', (sorted[9] + sorted[10]) / 2, 'ms', 30);

    const big = await page.evaluate(() => {
      const b = window.wasmBindings;
      const s = JSON.parse(b.default_scenario_json());
      // 100,000 requests at the default's 8 req/s.
      s.duration_s = 100000 / s.workload.arrival.rate_per_s;
      const json = JSON.stringify(s);
      const report = JSON.parse(b.report_json(json));
      return { ms: b.bench_run_ms(json, 3).sort((x, y) => x - y)[1], requests: report.requests.arrived };
    });
    record(`run of ${big.requests} requests (median of 3)`, big.ms, 'ms', 1000);

    const plan = await page.evaluate(() => {
      const b = window.wasmBindings;
      const t0 = performance.now();
      const p = JSON.parse(b.plan_json(b.default_scenario_json()));
      return { ms: performance.now() - t0, candidates: p.candidates, simulations: p.simulations };
    });
    record(`planner on the page's thread: ${plan.simulations} runs`, plan.ms, 'ms', 30_000);
  }

  // Responsiveness: the longest gap between animation frames while a page
  // switches through the presets, and while the planner works.
  const frames = (ms) =>
    new Promise((resolve) => {
      let last = performance.now();
      let worst = 0;
      const end = last + ms;
      const tick = (t) => {
        worst = Math.max(worst, t - last);
        last = t;
        if (t < end) requestAnimationFrame(tick);
        else resolve(worst);
      };
      requestAnimationFrame(tick);
    });
  if (want('switch')) {
    const ui = await lab.newPage();
    await ui.goto(lab.url);
    await ui.locator('[data-testid="run-time"]').waitFor({ timeout: 30_000 });
    let worstSwitch = 0;
    for (const id of PRESETS) {
      const gap = await ui.evaluate(
        async ([id, measure]) => {
          const watch = new Function(`return (${measure})`)()(2500);
          const select = document.querySelector('[data-testid="preset"]');
          select.value = id;
          select.dispatchEvent(new Event('change'));
          return watch;
        },
        [id, frames.toString()],
      );
      worstSwitch = Math.max(worstSwitch, gap);
    }
    record('longest frame gap switching presets', worstSwitch, 'ms', 67);
    // The planner as the page runs it: in Web Workers, one per core.
    const t0 = Date.now();
    await ui.locator('[data-testid="plan-run"]').click();
    await ui.locator('[data-testid="planner-progress"]').waitFor({ timeout: 10_000 });
    const workers = await ui.locator('[data-testid="planner-progress"]').getAttribute('data-workers');
    const planGap = await ui.evaluate(
      (measure) => new Function(`return (${measure})`)()(1500),
      frames.toString(),
    );
    record('longest frame gap while planning', planGap, 'ms', 100);
    await ui.locator('[data-testid="plan-results"]').waitFor({ timeout: 120_000 });
    record(`planner in the page (${workers} workers), click → results`, Date.now() - t0, 'ms', 3000);
    // Then its answer checked over the model's error (issue 45: ≤ 3 s with it).
    await ui.waitForFunction(() => document.querySelector('[data-testid="plan-confidence"]')?.dataset.done === 'true', null, { timeout: 120_000 });
    record('planner, click → checked over the model\'s error', Date.now() - t0, 'ms', 3000);
    await ui.close();
  }
  // The planner on every other preset, as the page runs it (API tiers only
  // for API presets, as the panel's default asks).
  if (want('planner')) for (const id of PRESETS.filter((p) => p !== 'chatbot-h100' && wantPreset(p))) {
    const pp = await lab.newPage();
    await pp.goto(lab.url);
    await pp.locator('[data-testid="run-time"]').waitFor({ timeout: 30_000 });
    await pp.locator('[data-testid="preset"]').selectOption(id);
    await pp.waitForTimeout(2000);
    const t = Date.now();
    await pp.locator('[data-testid="plan-run"]').click();
    await pp.locator('[data-testid="plan-results"]').waitFor({ timeout: 300_000 });
    record(`planner on ${id}, click → results`, Date.now() - t, 'ms', 3000);
    await pp.close();
  }

  // Dragging: the arrival-rate slider dragged in 40 pointer moves over 2 s,
  // on the default scenario and on the heaviest preset. Long main-thread
  // tasks (PerformanceObserver), gaps between animation frames, and the time
  // from the last input event until the TTFT card shows its final number.
  async function dragRate(preset) {
    const drag = await lab.newPage();
    await drag.goto(lab.url);
    await drag.locator('[data-testid="run-time"]').waitFor({ timeout: 30_000 });
    if (preset) {
      await drag.locator('[data-testid="preset"]').selectOption(preset);
      await drag.waitForTimeout(3000);
    }
    await drag.evaluate(() => {
      window.__bench = { long: [], frames: [], changes: [], inputs: [], shown: [], ranges: [] };
      // Each move, with how many scenarios the page had submitted before it:
      // the move's own scenario (or a later one) is the next number.
      const progress = () => window.wasmBindings.run_progress();
      document.addEventListener('input', () => window.__bench.inputs.push([performance.now(), progress()[0]]), true);
      new PerformanceObserver((l) => {
        for (const e of l.getEntries()) window.__bench.long.push(e.duration);
      }).observe({ type: 'longtask', buffered: false });
      const card = document.querySelector('[data-testid="card-ttft-p50"]');
      new MutationObserver(() => window.__bench.changes.push(performance.now())).observe(card, {
        subtree: true,
        childList: true,
        characterData: true,
      });
      let shown = -1;
      const tick = (t) => {
        window.__bench.frames.push(t);
        const now = progress()[1];
        if (now !== shown) window.__bench.shown.push([t, (shown = now)]);
        // The "How sure" panel: cleared by each new run, back with its ranges.
        const ranged = document.querySelector('[data-testid="ranges-verdict"]') !== null;
        if (ranged && !window.__bench.ranged) window.__bench.ranges.push(t);
        window.__bench.ranged = ranged;
        if (!window.__bench.stop) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    // The preset's load control: its arrival rate, or its users' think time.
    let slider = drag.locator('[data-testid="arrival-rate"]');
    if ((await slider.count()) === 0) slider = drag.locator('[data-testid="think-time"]');
    await slider.scrollIntoViewIfNeeded();
    const box = await slider.boundingBox();
    const y = box.y + box.height / 2;
    await drag.mouse.move(box.x + box.width * 0.3, y);
    await drag.mouse.down();
    for (let i = 1; i <= 40; i++) {
      await drag.mouse.move(box.x + box.width * (0.3 + (0.35 * i) / 40), y);
      await drag.waitForTimeout(50);
    }
    await drag.mouse.up();
    await drag.waitForTimeout(3000);
    const d = await drag.evaluate(() => {
      window.__bench.stop = true;
      return window.__bench;
    });
    await drag.close();
    const gaps = d.frames.slice(1).map((t, i) => t - d.frames[i]).sort((a, b) => a - b);
    const pct = (v, q) => v[Math.min(v.length - 1, Math.floor(q * v.length))] ?? 0;
    const lastInput = d.inputs[d.inputs.length - 1]?.[0] ?? 0;
    const label = preset ?? 'default';
    record(`drag ${label}: ${d.inputs.length} inputs, ${d.long.length} long tasks, longest`, Math.max(0, ...d.long), 'ms', 51);
    record(`drag ${label}: frame gap p95`, pct(gaps, 0.95), 'ms', 34);
    // Following: after each move, the time until the frame showing numbers
    // of its scenario or a later one (a preview's or a full run's); a move
    // whose value the page refused has none, and counts as the drag's end.
    const follow = d.inputs.map(([t, before]) => {
      const next = d.shown.find(([at, seq]) => at >= t && seq > before);
      return next === undefined ? NaN : next[0] - t;
    });
    const followed = follow.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
    rows.push({ name: `drag ${label}: move → its numbers, median`, value: Number(pct(followed, 0.5).toFixed(1)), unit: 'ms', target: '', ok: true });
    record(`drag ${label}: move → its numbers, p95`, pct(followed, 0.95), 'ms', 101);
    rows.push({ name: `drag ${label}: move → its numbers, slowest`, value: Number(Math.max(0, ...followed).toFixed(1)), unit: 'ms', target: '', ok: true });
    // The full run after the drag, shown with its preview meanwhile: within
    // 100 ms on the default, within 1 s on every preset.
    const final = Math.max(0, (d.changes[d.changes.length - 1] ?? lastInput) - lastInput);
    record(`drag ${label}: last input → final numbers`, final, 'ms', label === 'default' ? 100 : 1001);
    // The ranges after the drag (issue 45: within 500 ms on the default);
    // on the other presets reported, within the 3 s watched.
    const ranged = d.ranges.find((at) => at > lastInput);
    const toRanges = ranged === undefined ? NaN : ranged - lastInput;
    if (label === 'default') record(`drag ${label}: last input → its ranges`, Number.isNaN(toRanges) ? Infinity : toRanges, 'ms', 501);
    else rows.push({ name: `drag ${label}: last input → its ranges`, value: Number.isNaN(toRanges) ? 'over 3 s' : Number(toRanges.toFixed(1)), unit: 'ms', target: '', ok: true });
  }
  if (want('drag')) {
    if (wantPreset(null)) await dragRate(null);
    for (const id of PRESETS.filter((p) => p !== 'chatbot-h100' && wantPreset(p))) await dragRate(id);
  }

  if (want('bundle')) {
    const files = await readdir(DIST);
    const wasm = files.find((f) => f.endsWith('.wasm') && f.startsWith('web-'));
    const bytes = await readFile(join(DIST, wasm));
    const worker = await readFile(join(DIST, files.find((f) => f.startsWith('plan-worker') && f.endsWith('.wasm'))));
    rows.push({ name: 'planner worker wasm, gzipped (loaded on first plan)', value: Number((gzipSync(worker, { level: 9 }).length / 1024).toFixed(1)), unit: 'KB', target: '', ok: true });
    record('wasm bundle, gzipped', gzipSync(bytes, { level: 9 }).length / 1024, 'KB', 600);
    rows.push({ name: 'wasm bundle, raw', value: Number((bytes.length / 1024).toFixed(1)), unit: 'KB', target: '', ok: true });
  }

  if (lab.errors.length) {
    console.error('page errors:', lab.errors);
    failed = true;
  }
} finally {
  await lab.close();
}

for (const r of rows) {
  console.log(`${r.ok ? 'ok  ' : 'MISS'} ${r.name.padEnd(44)} ${String(r.value).padStart(9)} ${r.unit.padEnd(3)} ${r.target === '' ? '(no target)' : `target < ${r.target} ${r.unit}`}`);
}
process.exit(failed ? 1 : 0);
