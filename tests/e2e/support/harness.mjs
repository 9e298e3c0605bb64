// Shared set-up for the browser end-to-end tests: a static server for dist/ on a
// free loopback port, the system Chromium driven by playwright-core, and a record
// of every console error and uncaught exception the page produced.
import { createServer } from 'node:http';
import { readFile, mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { chromium } from 'playwright-core';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
export const DIST = process.env.TLAB_DIST ?? join(ROOT, 'dist');
export const ARTIFACTS = join(ROOT, 'tests', 'artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};

/** Serve `dir` on 127.0.0.1 at a port the OS picks. Resolves to { url, close }. */
export async function serveStatic(dir = DIST) {
  if (!existsSync(join(dir, 'index.html'))) {
    throw new Error(`${dir}/index.html is missing: build first (cargo xtask test does)`);
  }
  const root = resolve(dir);
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      const file = normalize(join(root, path === '/' ? 'index.html' : path));
      if (file !== root && !file.startsWith(root + sep)) {
        res.writeHead(403).end();
        return;
      }
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': MIME[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', ok);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((ok) => server.close(() => ok())),
  };
}

/** Launch headless Chromium with the flags this machine needs and a fresh profile. */
export async function launchBrowser() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/**
 * Everything a spec needs: call in `before`, and `close()` in `after` (which node's
 * test runner runs even when a test fails). `errors` collects console errors and
 * uncaught exceptions of every page opened through `newPage`.
 */
export async function startLab() {
  const server = await serveStatic();
  let browser;
  try {
    browser = await launchBrowser();
  } catch (e) {
    await server.close();
    throw e;
  }
  const errors = [];
  return {
    url: server.url,
    errors,
    async newPage(viewport = { width: 1280, height: 800 }) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      page.on('console', (msg) => {
        if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
      });
      page.on('pageerror', (err) => errors.push(`page: ${err.message}`));
      return page;
    },
    async close() {
      await browser?.close().catch(() => {});
      await server.close();
    },
  };
}

/** Save a screenshot under tests/artifacts/ (kept by CI as a test artefact). */
export async function saveScreenshot(page, name) {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
}
