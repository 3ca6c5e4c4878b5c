// End-to-end: the page's worker keeps what it read. A brushed window is re-bucketed
// from the whole run's finer series (not the report's buckets stretched), and another
// server run is judged from what was read, without reading the file again.
// Run: (cd e2e && DIST=../dist node --test zoom.test.mjs); needs dist/ and the CLI.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, launchChromium } from './serve.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const DIST = path.resolve(HERE, process.env.DIST || '../dist');
const OUT = path.join(ROOT, 'target', 'e2e');
const CHARTS = ['throughput', 'concurrency', 'kv_usage', 'prefill'];

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

/** The CLI's JSON report of `file`, of server run `run` when given (`--run N`). */
function cliJson(file, run) {
  const args = ['diagnose', file, '--format', 'json', ...(run ? ['--run', String(run)] : [])];
  return execFileSync(cliBinary(), args, { encoding: 'utf8', maxBuffer: 64 << 20 });
}

before(async () => {
  assert.ok(existsSync(path.join(DIST, 'index.html')), `no ${DIST}/index.html: run trunk build --release first`);
  ({ proc: server, origin } = await serve(DIST));
  browser = await launchChromium();
  mkdirSync(OUT, { recursive: true });
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.kill();
});

async function openPage(url = `${origin}/index.html`) {
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const rec = { errors: [], requests: [], loaded: false };
  page.on('console', (m) => { if (m.type() === 'error') rec.errors.push(m.text()); });
  page.on('pageerror', (e) => rec.errors.push(String(e)));
  page.on('request', (r) => { if (rec.loaded) rec.requests.push(r.url()); });
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
  rec.loaded = true;
  return { page, rec, context };
}

async function waitForReport(page, name) {
  await page.waitForFunction((n) => document.getElementById('status').textContent.startsWith(`Read ${n}`) &&
    document.body.dataset.result, name, { timeout: 60000 });
}

async function downloadText(page, selector) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return readFileSync(await download.path(), 'utf8');
}

/** The page x of time `t` on a chart, from where the page says its plot lies. */
async function xOf(page, chart, t) {
  return page.$eval(`.plot[data-chart="${chart}"]`, (p, time) => {
    const d = p.dataset;
    const box = p.getBoundingClientRect();
    return box.left + Number(d.left) + ((time - Number(d.t0)) / (Number(d.t1) - Number(d.t0))) * (Number(d.right) - Number(d.left));
  }, t);
}

/** What a chart draws, as the wasm says: its window, its buckets with data there, and their width. */
async function drawn(page, chart) {
  return page.$eval(`.plot[data-chart="${chart}"]`, (p) => ({
    t0: Number(p.dataset.t0), t1: Number(p.dataset.t1),
    buckets: Number(p.dataset.buckets), bucketSeconds: Number(p.dataset.bucketSeconds),
  }));
}

test('a small window brushed on a long log is re-bucketed from the whole run: far more buckets there than the report has; reset restores it', async () => {
  // Six hours of a simulated SGLang server: 512 report buckets of 64 s.
  const file = path.join(OUT, 'long-run.log');
  writeFileSync(file, execFileSync(cliBinary(), ['simulate', '--preset', 'kv_bound', '--duration', '21600', '--seed', '7'], { maxBuffer: 512 << 20 }));
  const report = JSON.parse(cliJson(file));
  const coarse = report.timeline.bucket_seconds;
  assert.ok(coarse >= 32, `${coarse}-s buckets`);
  const { page, rec, context } = await openPage();
  await page.setInputFiles('#file', file);
  await waitForReport(page, 'long-run.log');
  await page.$eval('#charts-box', (e) => e.scrollIntoView());
  const whole = await drawn(page, 'concurrency');
  assert.equal(whole.bucketSeconds, coarse);
  const span = whole.t1;
  // 2 % of the run, in the middle.
  const [a, b] = [span * 0.5, span * 0.52];
  const y = await page.$eval('#chart-concurrency', (c) => { const r = c.getBoundingClientRect(); return r.top + r.height / 2; });
  await page.mouse.move(await xOf(page, 'concurrency', a), y);
  await page.mouse.down();
  await page.mouse.move(await xOf(page, 'concurrency', b), y, { steps: 4 });
  await page.mouse.up();
  await page.waitForFunction((w) => Number(document.querySelector('.plot[data-chart="concurrency"]').dataset.bucketSeconds) < w, coarse);
  const inReport = (t0, t1) => report.timeline.points.filter((p) => p.t_s >= t0 && p.t_s < t1).length;
  for (const n of CHARTS) {
    const z = await drawn(page, n);
    assert.ok(Math.abs(z.t0 - a) < span * 0.005 && Math.abs(z.t1 - b) < span * 0.005, `${n}: ${z.t0}–${z.t1}`);
    assert.ok(z.bucketSeconds <= coarse / 8, `${n}: ${z.bucketSeconds}-s buckets zoomed`);
    const before = inReport(z.t0, z.t1);
    assert.ok(z.buckets >= 4 * Math.max(1, before), `${n}: ${z.buckets} buckets zoomed, the report has ${before} there`);
  }
  await page.waitForFunction(() => /range=\d/.test(location.hash));
  const hash = await page.evaluate(() => location.hash);
  // Reset: the whole run in the report's own buckets again.
  await page.click('#range-reset');
  const back = await drawn(page, 'concurrency');
  assert.deepEqual(back, whole);
  await page.waitForFunction(() => !location.hash.includes('range='));
  await context.close();

  // The window in a link is re-bucketed as well once the same file is opened.
  const linked = await openPage(`${origin}/index.html${hash}`);
  await linked.page.setInputFiles('#file', file);
  await waitForReport(linked.page, 'long-run.log');
  await linked.page.waitForFunction((w) => Number(document.querySelector('.plot[data-chart="throughput"]').dataset.bucketSeconds) < w, coarse);
  const z = await drawn(linked.page, 'throughput');
  assert.ok(Math.abs(z.t0 - a) < span * 0.005, `${z.t0} from the link`);
  assert.ok(z.buckets >= 4 * Math.max(1, inReport(z.t0, z.t1)));
  assert.deepEqual([...rec.requests, ...linked.rec.requests], []);
  assert.deepEqual([...rec.errors, ...linked.rec.errors], []);
  await linked.context.close();
});

test('another server run is judged from what was read: the file is not read again, and the JSON is the CLI\'s --run N', async () => {
  // Three runs: the KV-bound example, a restart with a bigger pool, then a client-limited run.
  const file = path.join(OUT, 'three-runs.log');
  writeFileSync(file, Buffer.concat(['sglang-kv-bound.log', 'sglang-kv-bound-larger-pool.log', 'sglang-client-limited.log']
    .map((f) => readFileSync(path.join(ROOT, 'examples', f)))));
  const { page, rec, context } = await openPage();
  await page.setInputFiles('#file', file);
  await waitForReport(page, 'three-runs.log');
  assert.equal(await page.getAttribute('body', 'data-file-reads'), '1');
  assert.equal(await downloadText(page, '#export-json'), cliJson(file));
  for (const run of [1, 2, 3, 1]) {
    await page.selectOption('#run', String(run));
    await page.waitForFunction((n) => document.getElementById('status').textContent.includes(`run ${n} judged from what was read`) &&
      location.hash.includes(`run=${n}`), run);
    assert.equal(await downloadText(page, '#export-json'), cliJson(file, run), `run ${run}`);
    assert.equal(await page.getAttribute('body', 'data-file-reads'), '1', `run ${run}: the file was read again`);
  }
  assert.match(await page.textContent('#evidence'), /this diagnosis is of run 1 .*as asked/);
  // A zoom after the switch is of the run judged.
  const t1 = Number(await page.getAttribute('.plot[data-chart="concurrency"]', 'data-t1'));
  await page.$eval('#charts-box', (e) => e.scrollIntoView());
  const y = await page.$eval('#chart-concurrency', (c) => { const r = c.getBoundingClientRect(); return r.top + r.height / 2; });
  await page.mouse.move(await xOf(page, 'concurrency', t1 * 0.2), y);
  await page.mouse.down();
  await page.mouse.move(await xOf(page, 'concurrency', t1 * 0.3), y, { steps: 4 });
  await page.mouse.up();
  const coarse = JSON.parse(cliJson(file, 1)).timeline.bucket_seconds;
  await page.waitForFunction((w) => Number(document.querySelector('.plot[data-chart="concurrency"]').dataset.bucketSeconds) < w, coarse);
  assert.equal(await page.getAttribute('body', 'data-file-reads'), '1');
  assert.deepEqual(rec.requests, []);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('a crash loop: every run is judged from what was read, as the CLI judges it', async () => {
  const file = path.join(OUT, 'crash-loop-kept.log');
  const head = readFileSync(path.join(ROOT, 'examples', 'sglang-client-limited.log'), 'utf8').split('\n').slice(0, 80).join('\n') + '\n';
  writeFileSync(file, head.repeat(40));
  const { page, rec, context } = await openPage();
  await page.setInputFiles('#file', file);
  await waitForReport(page, 'crash-loop-kept.log');
  assert.equal(await page.locator('#run option').count(), 40);
  for (const run of [1, 17, 39]) {
    await page.selectOption('#run', String(run));
    await page.waitForFunction((n) => document.getElementById('status').textContent.includes(`run ${n} judged from what was read`), run);
    assert.equal(await downloadText(page, '#export-json'), cliJson(file, run), `run ${run}`);
  }
  assert.equal(await page.getAttribute('body', 'data-file-reads'), '1');
  assert.equal(await page.textContent('#run-note'), '');
  assert.deepEqual(rec.requests, []);
  assert.deepEqual(rec.errors, []);
  await context.close();
});
