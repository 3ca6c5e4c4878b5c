// End-to-end tests of the compare page (dist/compare.html) in headless Chromium.
// Run: (cd e2e && DIST=../dist node --test). Needs `trunk build --release` and the CLI
// binary (target/debug/batchlens, or BATCHLENS_BIN) for the byte-for-byte JSON check.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, launchChromium } from './serve.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const DIST = path.resolve(HERE, process.env.DIST || '../dist');
const BEFORE = path.join(ROOT, 'examples', 'sglang-kv-bound.log');
const AFTER = path.join(ROOT, 'examples', 'sglang-kv-bound-larger-pool.log');
const HOSTILE = path.join(ROOT, 'tests', 'fixtures', 'hostile', 'markup-in-lines.log');

let server;
let origin;
let browser;

function cliBinary() {
  const candidates = [
    process.env.BATCHLENS_BIN,
    process.env.CARGO_TARGET_DIR && path.join(path.resolve(ROOT, process.env.CARGO_TARGET_DIR), 'debug', 'batchlens'),
    path.join(ROOT, 'target', 'debug', 'batchlens'),
    path.join(ROOT, 'target', 'release', 'batchlens'),
  ].filter(Boolean);
  const bin = candidates.find((p) => existsSync(p));
  assert.ok(bin, `the batchlens CLI is not built (looked for ${candidates.join(', ')})`);
  return bin;
}

const cliCompare = (a, b) => execFileSync(cliBinary(), ['compare', a, b, '--format', 'json'], { encoding: 'utf8' });

before(async () => {
  assert.ok(existsSync(path.join(DIST, 'compare.html')), `no ${DIST}/compare.html: run trunk build --release first`);
  ({ proc: server, origin } = await serve(DIST));
  browser = await launchChromium();
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.kill();
});

async function openCompare() {
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${origin}/compare.html`);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
  return { page, errors, context };
}

async function dropFile(page, target, name, content) {
  const dt = await page.evaluateHandle(([n, text]) => {
    const d = new DataTransfer();
    d.items.add(new File([text], n, { type: 'text/plain' }));
    return d;
  }, [name, content]);
  await page.dispatchEvent(target, 'drop', { dataTransfer: dt });
}

async function downloadText(page, selector) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return readFileSync(await download.path(), 'utf8');
}

test('the diagnose page links to the compare page', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${origin}/index.html`);
  assert.equal(await page.getAttribute('#compare-link', 'href'), 'compare.html');
  await context.close();
});

test('two dropped logs are compared as the CLI compares them, with charts overlaid', async () => {
  const { page, errors, context } = await openCompare();
  await dropFile(page, '#drop-before', 'before.log', readFileSync(BEFORE, 'utf8'));
  await page.waitForFunction(() => document.getElementById('name-before').textContent === 'before.log');
  assert.equal(await page.getAttribute('body', 'data-result'), null);
  await page.setInputFiles('#file-after', AFTER);
  await page.waitForSelector('body[data-result]', { timeout: 20000 });
  assert.equal(await page.getAttribute('body', 'data-result'), 'setting');
  assert.match(await page.textContent('#explanation'), /^The larger pool did it: \+\d+ %.*as predicted/);
  const settings = await page.$$eval('#settings tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
  assert.deepEqual(settings, [['KV pool (tokens)', '116,171', '159,000']]);
  // Each chart holds both runs, drawn from their own timelines.
  for (const chart of ['throughput', 'concurrency', 'kv_usage']) {
    const paths = await page.$$eval(`#chart-${chart} path`, (ps) => ps.map((p) => [p.dataset.side, Number(p.dataset.points)]));
    const sides = new Set(paths.filter(([, n]) => n > 10).map(([s]) => s));
    assert.deepEqual([...sides].sort(), ['after', 'before'], chart);
  }
  // The export is the CLI's JSON byte for byte.
  assert.equal(await downloadText(page, '#export-json'), cliCompare(BEFORE, AFTER));
  const md = await downloadText(page, '#export-md');
  assert.match(md, /\| KV pool \(tokens\) \| 116,171 \| 159,000 \|/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the example pair loads and a log that is not one says so', async () => {
  const { page, errors, context } = await openCompare();
  await page.click('#example-pair');
  await page.waitForSelector('body[data-result]', { timeout: 20000 });
  assert.equal(await page.getAttribute('body', 'data-result'), 'setting');
  // Markup in a log stays text.
  await dropFile(page, '#drop-after', '<img src=x onerror=alert(1)>.log', readFileSync(HOSTILE, 'utf8'));
  await page.waitForSelector('body[data-result]', { timeout: 20000 });
  assert.equal(await page.$$eval('#result img, #result script', (e) => e.length), 0);
  await dropFile(page, '#drop-after', 'notes.txt', 'hello\nworld\n');
  await page.waitForFunction(() => /after: .*no scheduler stats lines/i.test(document.getElementById('status').textContent), null, { timeout: 20000 });
  assert.deepEqual(errors, []);
  await context.close();
});
