// A share link made in Python (`throughput_lab.link`) opens on the page with
// the numbers Python computed. The Python tests leave the link and their
// numbers in tests/artifacts/python-link.json; `cargo xtask test` runs them
// first (TLAB_REQUIRE_ALL: the file must be there).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startLab } from './support/harness.mjs';
import { LabPage } from './support/lab-page.mjs';

const artifact = new URL('../artifacts/python-link.json', import.meta.url);

let lab;
before(async () => {
  lab = await startLab();
});
after(async () => {
  await lab?.close();
});

test('a link made in Python opens on the page with the same numbers', async (t) => {
  let made;
  try {
    made = JSON.parse(await readFile(artifact, 'utf8'));
  } catch (e) {
    if (process.env.TLAB_REQUIRE_ALL) throw new Error(`no link from the Python tests: ${e.message}`);
    t.skip('no link from the Python tests (run cargo xtask test, or pytest python/tests first)');
    return;
  }
  const p = new LabPage(await lab.newPage(), lab.url);
  await p.open(made.fragment);
  assert.equal(await p.byTestId('link-error').count(), 0);
  assert.equal(await p.value('card-throughput'), made.output_tokens_per_s);
  assert.equal(await p.value('card-ttft-p99'), made.ttft_p99_ms);
  assert.equal(await p.value('card-e2e-p50'), made.e2e_p50_ms);
  assert.equal(await p.value('card-usd-per-month'), made.usd_per_month);
  assert.equal(await p.byTestId('arrival-rate-number').inputValue(), '12.0');
  assert.deepEqual(lab.errors, []);
});
