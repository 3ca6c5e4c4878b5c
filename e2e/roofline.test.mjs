// The roofline on the page, in headless Chromium: a GPU and a model chosen on the
// page for a bundled log give the CLI's `roofline` for the same inputs, and the
// throughput chart carries the decode ceiling as a dashed line.
// Run: (cd e2e && DIST=../dist node --test roofline.test.mjs); needs `trunk build
// --release` and the CLI binary (target/debug/batchlens, or BATCHLENS_BIN).
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
const STEPS = path.join(ROOT, 'tests', 'fixtures', 'vllm', 'synthetic_v1-iteration-details-llama8b-steady-decode.log');

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

/** The CLI's JSON report for `file` measured against `gpu` and `model`. */
function cliReport(file, gpu, model) {
  return JSON.parse(execFileSync(cliBinary(), ['diagnose', file, '--gpu', gpu, '--model', model, '--format', 'json'], { encoding: 'utf8' }));
}

before(async () => {
  assert.ok(existsSync(path.join(DIST, 'index.html')), `no ${DIST}/index.html: run trunk build --release first`);
  ({ proc: server, origin } = await serve(DIST));
  browser = await launchChromium();
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.kill();
});

async function openPage() {
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const rec = { errors: [], requests: [], loaded: false };
  page.on('console', (m) => { if (m.type() === 'error') rec.errors.push(m.text()); });
  page.on('pageerror', (e) => rec.errors.push(String(e)));
  page.on('request', (r) => { if (rec.loaded) rec.requests.push(r.url()); });
  await page.goto(`${origin}/index.html`);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
  rec.loaded = true;
  return { page, rec, context };
}

async function waitForReport(page, name) {
  await page.waitForFunction((n) => {
    const s = document.getElementById('status').textContent;
    return s.startsWith(`Read ${n}`) && document.body.dataset.result;
  }, name, { timeout: 20000 });
}

/** Picks the GPU and the model in the roofline box, measures, and waits for the answer. */
async function measure(page, gpu, model) {
  await page.fill('#roofline-gpu', gpu);
  await page.fill('#roofline-model', model);
  await page.click('#roofline-box button');
  await page.waitForFunction(() => document.getElementById('roofline-box').dataset.state === 'shown', null, { timeout: 20000 });
  return page.evaluate(() => ({ ...document.getElementById('roofline-box').dataset, text: document.getElementById('roofline-out').textContent }));
}

async function downloadText(page, selector) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return readFileSync(await download.path(), 'utf8');
}

/** The ceiling as the chart's legend writes it (`short` in render/charts). */
function short(v) {
  if (v >= 1e6) return `${(v / 1e6).toFixed(1)}M`;
  if (v >= 1e4) return `${(v / 1e3).toFixed(0)}k`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(1)}k`;
  return v >= 10 ? v.toFixed(0) : v.toFixed(1);
}

test('a GPU and a model chosen on the page give the CLI\'s roofline; the throughput chart draws the ceiling dashed', async () => {
  const { page, rec, context } = await openPage();
  await page.click('button.example[data-src="examples/sglang-kv-bound.log"]');
  await waitForReport(page, 'sglang-kv-bound.log');
  // Before a choice: no ceiling on the chart.
  assert.doesNotMatch(await downloadText(page, 'button.svg[data-chart="throughput"]'), /decode ceiling/);

  // The log's own model on a GPU whose ceiling lies near the data (an H200's is far
  // above it: the legend says so and no line is drawn).
  const shown = await measure(page, 'L40S', 'Llama-3.1-8B');
  const cli = cliReport(path.join(DIST, 'examples', 'sglang-kv-bound.log'), 'l40s', 'Llama-3.1-8B');
  const r = cli.roofline;
  assert.ok(r && r.mbu > 0 && r.decode_ceiling_tok_s > 0, JSON.stringify(r));
  assert.equal(shown.gpu, r.gpu);
  assert.equal(shown.model, r.model);
  assert.equal(Number(shown.mbu), r.mbu);
  assert.equal(Number(shown.ceiling), r.decode_ceiling_tok_s);
  assert.match(shown.text, new RegExp(`${(r.mbu * 100).toFixed(0)}% MBU`));
  // The page's report is the CLI's, roofline and all (the verdict is judged again with it).
  const json = JSON.parse(await downloadText(page, '#export-json'));
  assert.deepEqual(json.roofline, r);
  assert.deepEqual(json.diagnosis, cli.diagnosis);

  // The throughput chart's SVG (the page's own export): the ceiling's legend and its
  // dashes, 60 short segments at one height across the plot.
  const svg = await downloadText(page, 'button.svg[data-chart="throughput"]');
  assert.ok(svg.includes(`decode ceiling at peak bandwidth (${short(r.decode_ceiling_tok_s)}, ${(r.mbu * 100).toFixed(0)}% MBU`), svg.slice(0, 2000));
  const segments = [...svg.matchAll(/<polyline[^>]*points="([\d.]+),([\d.]+) ([\d.]+),([\d.]+) ?"/g)]
    .filter((m) => m[2] === m[4] && Number(m[3]) > Number(m[1]));
  const byY = new Map();
  for (const m of segments) byY.set(m[2], (byY.get(m[2]) || 0) + 1);
  assert.ok([...byY.values()].some((n) => n >= 50), `no dashed line: ${JSON.stringify([...byY])}`);
  // Nothing was fetched but the example.
  assert.deepEqual(rec.requests, [`${origin}/examples/sglang-kv-bound.log`]);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('a vLLM log with step lines is measured from the engine\'s own step times on the page as in the CLI', async () => {
  const { page, rec, context } = await openPage();
  await page.setInputFiles('#file', STEPS);
  await waitForReport(page, path.basename(STEPS));
  const shown = await measure(page, 'H100 SXM', 'Llama-3.1-8B');
  const r = cliReport(STEPS, 'h100', 'Llama-3.1-8B').roofline;
  assert.equal(r.steps_from, 'iteration_times');
  assert.equal(shown.stepsFrom, 'iteration_times');
  assert.equal(Number(shown.steps), r.steps_per_s);
  assert.equal(Number(shown.mbu), r.mbu);
  assert.match(shown.text, new RegExp(`${r.step_time_ms} ms a decode step`));
  assert.deepEqual(JSON.parse(await downloadText(page, '#export-json')).roofline, r);
  assert.deepEqual(rec.requests, []);
  assert.deepEqual(rec.errors, []);
  await context.close();
});
