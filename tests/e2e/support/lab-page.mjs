// Page object for the Throughput Lab page: the specs talk to it, not to selectors.

export class LabPage {
  constructor(page, baseUrl) {
    this.page = page;
    this.baseUrl = baseUrl;
  }

  byTestId(id) {
    return this.page.locator(`[data-testid="${id}"]`);
  }

  /** Open the page and wait until the WebAssembly app has finished its first run. */
  async open(hash = '') {
    await this.page.goto(this.baseUrl + hash);
    await this.waitForRun();
  }

  /** Wait (bounded) until the run in progress is done and its numbers shown. */
  async waitForRun(timeout = 30_000) {
    await this.byTestId('run-time').waitFor({ state: 'visible', timeout });
    await this.byTestId('card-throughput').waitFor({ state: 'visible', timeout });
    // Charts draw on the frame after the numbers: let two frames pass.
    await this.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  }

  /** All summary cards' texts, by id. */
  async cards() {
    return this.page.$$eval('[data-testid^="card-"]', (els) =>
      Object.fromEntries(els.map((e) => [e.dataset.testid, e.textContent.trim()])),
    );
  }

  async text(id) {
    return (await this.byTestId(id).textContent())?.trim() ?? '';
  }

  /** The raw number behind a card (its data-value attribute) or in a number box. */
  async value(id) {
    const el = this.byTestId(id);
    const v = id.endsWith('-number') ? await el.inputValue() : await el.getAttribute('data-value');
    const n = Number(v);
    if (v === null || v === '' || !Number.isFinite(n)) throw new Error(`${id} has no numeric data-value: ${v}`);
    return n;
  }

  /** The pixels of a canvas, as a data URL. */
  async canvasPixels(id) {
    return this.byTestId(id).evaluate((c) => c.toDataURL('image/png'));
  }

  /**
   * Drag a range slider's thumb with the real mouse to `fraction` (0..1) of its width.
   * Starts on the thumb's current position, so this is a genuine drag.
   */
  async dragSlider(id, fraction) {
    const slider = this.byTestId(id);
    await slider.scrollIntoViewIfNeeded();
    const box = await slider.boundingBox();
    if (!box) throw new Error(`slider ${id} is not visible`);
    const { value, min, max } = await slider.evaluate((s) => ({
      value: Number(s.value),
      min: Number(s.min),
      max: Number(s.max),
    }));
    const y = box.y + box.height / 2;
    // The thumb is inset by half its width (about 8 px) at each end.
    const inset = 8;
    const xAt = (f) => box.x + inset + f * (box.width - 2 * inset);
    await this.page.mouse.move(xAt((value - min) / (max - min)), y);
    await this.page.mouse.down();
    await this.page.mouse.move(xAt(fraction), y, { steps: 12 });
    await this.page.mouse.up();
  }

  /** Wait (bounded) until the pixels of canvas `id` differ from `before`. */
  async waitForCanvasChange(id, before, timeout = 10_000) {
    await this.page.waitForFunction(
      ([sel, old]) => document.querySelector(sel)?.toDataURL('image/png') !== old,
      [`[data-testid="${id}"]`, before],
      { timeout },
    );
    return this.canvasPixels(id);
  }

  /** Wait (bounded) until the text of `id` differs from `before`. */
  async waitForTextChange(id, before, timeout = 5_000) {
    await this.page.waitForFunction(
      ([sel, old]) => document.querySelector(sel)?.textContent.trim() !== old,
      [`[data-testid="${id}"]`, before],
      { timeout },
    );
    return this.text(id);
  }
}
