// End-to-end tests of the built page (dist/) in headless Chromium.
// Run: (cd e2e && DIST=../dist node --test). Needs `trunk build --release` and the CLI
// binary (target/debug/batchlens, or BATCHLENS_BIN) for the byte-for-byte JSON check.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, launchChromium } from './serve.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const DIST = path.resolve(HERE, process.env.DIST || '../dist');
const FIX = path.join(ROOT, 'tests', 'fixtures');
const RETRACT = path.join(FIX, 'sglang', 'sglang_23_deepseek-v3-kv-full-decode-oom-retract.log');
const RANKS = path.join(FIX, 'sglang', 'sglang_41_dp-tp-ep-pd-decode-rank-imbalance-uvicorn.log');
const HOSTILE = path.join(FIX, 'hostile', 'markup-in-lines.log');
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

/** The CLI's JSON for a file, or several read in order (exit code 2 still prints the JSON). */
function cliJson(file) {
  try {
    return execFileSync(cliBinary(), ['diagnose', ...[file].flat(), '--format', 'json'], { encoding: 'utf8' });
  } catch (e) {
    if (e.status === 2 && e.stdout) return e.stdout;
    throw e;
  }
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

/** A fresh page, loaded and ready, recording errors, dialogs and requests. */
async function openPage(options = {}, url = `${origin}/index.html`) {
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 }, ...options });
  const page = await context.newPage();
  const rec = { errors: [], dialogs: [], requests: [], loaded: false };
  page.on('console', (m) => { if (m.type() === 'error') rec.errors.push(m.text()); });
  page.on('pageerror', (e) => rec.errors.push(String(e)));
  page.on('dialog', (d) => { rec.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.on('request', (r) => { if (rec.loaded) rec.requests.push(r.url()); });
  page.on('requestfailed', (r) => rec.errors.push(`request failed: ${r.url()}`));
  await page.goto(url);
  await Promise.race([
    page.waitForSelector('body[data-ready="1"]', { timeout: 20000 }),
    new Promise((_, reject) => page.once('pageerror', reject)),
  ]);
  rec.loaded = true;
  return { page, rec, context };
}

async function dropFile(page, name, content) {
  const dt = await page.evaluateHandle(([n, text]) => {
    const d = new DataTransfer();
    d.items.add(new File([text], n, { type: 'text/plain' }));
    return d;
  }, [name, content]);
  await page.dispatchEvent('#drop', 'drop', { dataTransfer: dt });
}

async function waitForReport(page, name) {
  await page.waitForFunction((n) => {
    const s = document.getElementById('status').textContent;
    return s.startsWith(`Read ${n}`) && document.body.dataset.result;
  }, name, { timeout: 20000 });
}

/** Pixels of each chart canvas that differ from its corner (background) pixel. */
async function drawnPixels(page) {
  return page.evaluate((names) => Object.fromEntries(names.map((n) => {
    const c = document.getElementById(`chart-${n}`);
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let count = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i] !== d[0] || d[i + 1] !== d[1] || d[i + 2] !== d[2]) count++;
    }
    return [n, count];
  })), CHARTS);
}

async function downloadText(page, buttonSelector) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(buttonSelector)]);
  return readFileSync(await download.path(), 'utf8');
}

test('the page loads under its CSP with no console errors and states that the file stays local', async () => {
  const { page, rec, context } = await openPage();
  const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /connect-src 'self'/);
  assert.match(await page.textContent('#privacy'), /never leaves your machine/);
  // Every form control has a label.
  const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, select, textarea')]
    .filter((e) => e.labels.length === 0 && !e.getAttribute('aria-label')).map((e) => e.id));
  assert.deepEqual(unlabelled, []);
  // No script or style from another origin.
  const foreign = await page.evaluate(() => [...document.querySelectorAll('script[src], link[href]')]
    .map((e) => e.src || e.href).filter((u) => u && !u.startsWith(location.origin) && !u.startsWith('data:')));
  assert.deepEqual(foreign, []);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('a dropped log shows the verdict, charts with pixels, and the JSON equals the CLI byte for byte; no network after load', async () => {
  const { page, rec, context } = await openPage();
  const text = readFileSync(RETRACT, 'utf8');
  await dropFile(page, 'retract.log', text);
  await waitForReport(page, 'retract.log');
  const expected = cliJson(RETRACT);
  const report = JSON.parse(expected);
  assert.equal(await page.isVisible('#result'), true);
  if (report.diagnosis) {
    assert.equal(await page.textContent('#kind'), report.diagnosis.primary.kind);
    assert.equal(await page.textContent('#headline'), report.diagnosis.primary.headline);
  } else {
    assert.equal(await page.textContent('#kind'), 'no diagnosis');
    assert.match(await page.textContent('#headline'), new RegExp(`Read ${report.input.stat_lines} sglang stats lines`));
  }
  const summary = await page.textContent('#summary');
  assert.match(summary, /Engine\s*sglang/);
  assert.match(summary, new RegExp(`Retractions\\s*${report.summary.retractions}`));
  const pixels = await drawnPixels(page);
  for (const n of CHARTS) assert.ok(pixels[n] > 3000, `${n}: only ${pixels[n]} pixels drawn`);
  for (const n of CHARTS) {
    const words = await page.getAttribute(`#chart-${n}`, 'aria-label');
    assert.ok(words.length > 20, `${n} has no text alternative`);
    assert.equal(await page.textContent(`#cap-${n}`), words);
  }
  assert.match(await page.textContent('#cap-kv_usage'), /retraction/);
  // Nothing was fetched after load: the file stayed in the tab.
  assert.deepEqual(rec.requests, []);
  const json = await downloadText(page, '#export-json');
  assert.equal(json, expected);
  const md = await downloadText(page, '#export-md');
  assert.match(md, /^#/);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('a file picked through the input is read; per-rank series get a selector', async () => {
  const { page, rec, context } = await openPage();
  await page.setInputFiles('#file', RANKS);
  const name = path.basename(RANKS);
  await waitForReport(page, name);
  const report = JSON.parse(cliJson(RANKS));
  assert.ok(report.timeline.per_source.length > 0);
  assert.equal(await page.isVisible('#source'), true);
  const options = await page.$$eval('#source option', (os) => os.map((o) => o.value));
  assert.deepEqual(options, ['', ...report.timeline.per_source.map((s) => s.source)]);
  const source = report.timeline.per_source[0].source;
  await page.selectOption('#source', source);
  await page.waitForFunction((s) => document.getElementById('cap-throughput').textContent.includes(s), source);
  const pixels = await drawnPixels(page);
  for (const n of CHARTS) assert.ok(pixels[n] > 3000, `${n}: only ${pixels[n]} pixels drawn`);
  assert.equal(await downloadText(page, '#export-json'), cliJson(RANKS));
  assert.deepEqual(rec.requests, []);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('an example button loads a bundled log (screenshot saved to target/e2e/screenshot.png)', async () => {
  const { page, rec, context } = await openPage();
  await page.click('button.example[data-src="examples/sglang-kv-bound.log"]');
  await waitForReport(page, 'sglang-kv-bound.log');
  const expected = cliJson(path.join(DIST, 'examples', 'sglang-kv-bound.log'));
  assert.equal(await downloadText(page, '#export-json'), expected);
  const report = JSON.parse(expected);
  if (report.diagnosis) {
    assert.equal(await page.textContent('#kind'), report.diagnosis.primary.kind);
    const flags = await page.$$eval('#actions code.flag', (cs) => cs.map((c) => c.textContent));
    assert.deepEqual(flags, report.diagnosis.primary.actions.map((a) => a.flag));
    const evidence = await page.textContent('#evidence');
    for (const ev of report.diagnosis.primary.evidence) assert.ok(evidence.includes(ev.statement));
  }
  const pixels = await drawnPixels(page);
  for (const n of CHARTS) assert.ok(pixels[n] > 3000, `${n}: only ${pixels[n]} pixels drawn`);
  // The only request after load is the example itself, from the page's own origin.
  assert.deepEqual(rec.requests, [`${origin}/examples/sglang-kv-bound.log`]);
  assert.deepEqual(rec.errors, []);
  mkdirSync(path.join(ROOT, 'target', 'e2e'), { recursive: true });
  await page.screenshot({ path: path.join(ROOT, 'target', 'e2e', 'screenshot.png'), fullPage: true });
  await context.close();
});

test('log text with markup is shown as text: no dialog, no element injected', async () => {
  const { page, rec, context } = await openPage();
  const before = await page.evaluate(() => ({
    scripts: document.querySelectorAll('script').length,
    imgs: document.querySelectorAll('img').length,
  }));
  await dropFile(page, 'hostile.log', readFileSync(HOSTILE, 'utf8'));
  await waitForReport(page, 'hostile.log');
  await page.waitForTimeout(300);
  const after = await page.evaluate(() => ({
    scripts: document.querySelectorAll('script').length,
    imgs: document.querySelectorAll('img').length,
  }));
  assert.deepEqual(after, before);
  assert.deepEqual(rec.dialogs, []);
  const shown = await page.textContent('#unrecognized');
  assert.ok(shown.includes('<script>alert(1)</script>'), shown);
  assert.ok(shown.includes('<img src=x onerror=alert(1)>'), shown);
  assert.ok(shown.includes('javascript:alert(1)'), shown);
  assert.equal(await page.$$eval('a[href^="javascript:"]', (as) => as.length), 0);
  assert.equal(await downloadText(page, '#export-json'), cliJson(HOSTILE));
  assert.deepEqual(rec.requests, []);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('a log that also holds another server\'s lines names that server beside the verdict', async () => {
  const { page, rec, context } = await openPage();
  const kv = readFileSync(path.join(ROOT, 'examples', 'sglang-kv-bound.log'), 'utf8');
  const tgi = readFileSync(path.join(FIX, 'other', 'tgi_01_xpu-connected-chat-completions-success.log'), 'utf8');
  await dropFile(page, 'mixed.log', kv + tgi);
  await waitForReport(page, 'mixed.log');
  assert.equal(await page.isVisible('#result'), true);
  assert.equal(await page.isVisible('#unrecognized-box'), true);
  assert.match(await page.textContent('#unrecognized-count'), /2 lines of a TGI server \(TGI logs one line per finished request/);
  assert.match(await page.textContent('#unrecognized'), /\(TGI line\) .*text_generation_router::server/);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('text with no stats lines and binary data are explained', async () => {
  const { page, rec, context } = await openPage();
  await dropFile(page, 'notes.txt', 'hello\nDecode batch something odd\nworld\n');
  await waitForReport(page, 'notes.txt');
  assert.equal(await page.isVisible('#problem'), true);
  assert.equal(await page.isVisible('#result'), false);
  assert.match(await page.textContent('#problem-text'), /No scheduler stats lines found in '.*' \(3 lines read/);
  assert.match(await page.textContent('#formats'), /Decode batch/);
  assert.match(await page.textContent('#formats'), /Avg prompt throughput/);

  // Another inference server's log: the server is named, with what its log holds.
  const tgi = readFileSync(path.join(FIX, 'other', 'tgi_01_xpu-connected-chat-completions-success.log'), 'utf8');
  await dropFile(page, 'tgi.log', tgi);
  await waitForReport(page, 'tgi.log');
  assert.equal(await page.textContent('#problem-title'), 'A TGI log');
  assert.match(await page.textContent('#problem-text'), /looks like a TGI log, not an SGLang, vLLM, LMDeploy or TensorRT-LLM one \(line 2: .*\)\. TGI logs one line per finished request/);
  assert.match(await page.textContent('#problem-examples'), /line 2 .*INFO text_generation_router::server: router/);

  // A vLLM log that says it turned its stats off: the reason, and the line.
  await dropFile(page, 'vllm.log', '(APIServer pid=1) INFO 05-19 10:13:00 [api_server.py:1885] vLLM API server version 0.10.2\n' +
    '(APIServer pid=1) WARNING 05-19 10:13:01 [async_llm.py:139] AsyncLLM created with api_server_count more than 1; disabling stats logging to avoid incomplete stats.\n');
  await waitForReport(page, 'vllm.log');
  assert.equal(await page.textContent('#problem-title'), 'Stats lines turned off');
  assert.match(await page.textContent('#problem-text'), /more than one API server \(--api-server-count above 1\)/);
  assert.match(await page.textContent('#problem-examples'), /line 2 .*AsyncLLM created with api_server_count/);

  const binary = await page.evaluateHandle(() => {
    const bytes = new Uint8Array(4096);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 256;
    const d = new DataTransfer();
    d.items.add(new File([bytes], 'blob.bin'));
    return d;
  });
  await page.dispatchEvent('#drop', 'drop', { dataTransfer: binary });
  await waitForReport(page, 'blob.bin');
  assert.equal(await page.textContent('#problem-title'), 'Not a text file');

  // A log packed with another tool than gzip: the tool is named with its unpack command.
  const zst = await page.evaluateHandle(() => {
    const bytes = new Uint8Array(4096);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 256;
    bytes.set([0x28, 0xb5, 0x2f, 0xfd]);
    const d = new DataTransfer();
    d.items.add(new File([bytes], 'server.log.zst'));
    return d;
  });
  await page.dispatchEvent('#drop', 'drop', { dataTransfer: zst });
  await waitForReport(page, 'server.log.zst');
  assert.equal(await page.textContent('#problem-title'), 'A zstd file');
  assert.match(await page.textContent('#problem-text'), /Unpack it first \(zstd -dc server\.log\.zst > server\.log\)/);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('a second file dropped while a large one is read cancels the first; Cancel stops a read', async () => {
  const { page, rec, context } = await openPage();
  const line = readFileSync(RETRACT, 'utf8');
  // A 96 MB log assembled in the page, read in slices with progress.
  const big = () => page.evaluateHandle((text) => {
    const parts = [];
    let size = 0;
    while (size < 96e6) { parts.push(text); size += text.length; }
    const d = new DataTransfer();
    d.items.add(new File(parts, 'big.log'));
    return d;
  }, line);
  await page.dispatchEvent('#drop', 'drop', { dataTransfer: await big() });
  await page.waitForFunction(() => document.getElementById('progress').value > 0, null, { timeout: 20000 });
  assert.match(await page.textContent('#progress-text'), /MB of 96\.\d MB .*MB\/s/);
  await dropFile(page, 'small.log', line);
  await waitForReport(page, 'small.log');
  assert.equal(await downloadText(page, '#export-json'), cliJson(RETRACT));

  // Cancel pressed in the same task as the drop: the read has started (its
  // progress box is up) and cannot have ended, however fast the machine reads
  // 96 MB (a click sent after the first progress report could arrive late).
  await page.evaluate((d) => {
    document.getElementById('drop').dispatchEvent(new DragEvent('drop', { dataTransfer: d, bubbles: true, cancelable: true }));
    if (document.getElementById('progress-box').hidden) throw new Error('no read in progress');
    document.getElementById('cancel').click();
  }, await big());
  await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('Cancelled'));
  assert.match(await page.textContent('#status'), /^Cancelled after /);
  assert.doesNotMatch(await page.textContent('#status'), /96\.\d MB/);
  assert.equal(await page.isVisible('#progress-box'), false);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('charts follow the dark colour scheme', async () => {
  const { page, rec, context } = await openPage({ colorScheme: 'dark' });
  await dropFile(page, 'retract.log', readFileSync(RETRACT, 'utf8'));
  await waitForReport(page, 'retract.log');
  const corner = await page.evaluate(() => [...document.getElementById('chart-throughput').getContext('2d').getImageData(2, 2, 1, 1).data]);
  assert.ok(corner[0] < 60 && corner[1] < 60 && corner[2] < 60, `background ${corner} is not dark`);
  await page.emulateMedia({ colorScheme: 'light' });
  await page.waitForFunction(() => document.getElementById('chart-throughput').getContext('2d').getImageData(2, 2, 1, 1).data[0] > 200);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('a Docker json-file log reads like the plain log, and says its lines came from JSON records', async () => {
  const { page, rec, context } = await openPage();
  const kv = readFileSync(path.join(ROOT, 'examples', 'sglang-kv-bound.log'), 'utf8');
  const docker = kv.split('\n').filter((l) => l).map((l) =>
    JSON.stringify({ log: `${l}\n`, stream: 'stderr', time: '2026-02-24T18:00:00.123456789Z' })).join('\n') + '\n';
  await dropFile(page, 'container-json.log', docker);
  await waitForReport(page, 'container-json.log');
  const json = JSON.parse(await downloadText(page, '#export-json'));
  const plain = JSON.parse(cliJson(path.join(ROOT, 'examples', 'sglang-kv-bound.log')));
  assert.equal(json.input.json_records, plain.input.lines);
  assert.equal(json.input.stat_lines, plain.input.stat_lines);
  assert.equal(json.diagnosis.primary.kind, plain.diagnosis.primary.kind);
  assert.match(await page.textContent('#summary'), /read from JSON records/);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('pasted text is read; the controls are reachable with the keyboard', async () => {
  const { page, rec, context } = await openPage();
  // Tab order reaches the file input, the paste box and every example button.
  const reached = new Set();
  for (let i = 0; i < 20; i++) {
    await page.keyboard.press('Tab');
    reached.add(await page.evaluate(() => document.activeElement.id || document.activeElement.textContent.trim()));
  }
  assert.ok(reached.has('file'), [...reached].join(' | '));
  assert.ok(reached.has('SGLang, KV-bound queue'), [...reached].join(' | '));
  await page.click('#paste-box summary');
  await page.fill('#paste', readFileSync(RETRACT, 'utf8'));
  await page.click('#paste-go');
  await waitForReport(page, 'pasted text');
  assert.equal(await downloadText(page, '#export-json'), cliJson(RETRACT));
  assert.deepEqual(rec.requests, []);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('an error mid-way shows what was read so far', async () => {
  const { page, rec, context } = await openPage();
  // Slices are read by reader.js, in a worker of the parsing worker's.
  const worker = page.workers().find((w) => w.url().endsWith('/reader.js'));
  assert.ok(worker, `the reader worker is running: ${page.workers().map((w) => w.url())}`);
  // The second slice of the next file fails to read, as a file removed mid-read would.
  await worker.evaluate(() => {
    const read = Blob.prototype.arrayBuffer;
    let n = 0;
    Blob.prototype.arrayBuffer = function () {
      n += 1;
      return n === 2 ? Promise.reject(new Error('the file could not be read')) : read.call(this);
    };
  });
  const dt = await page.evaluateHandle((text) => {
    const parts = [];
    let size = 0;
    while (size < 20e6) { parts.push(text); size += text.length; }
    const d = new DataTransfer();
    d.items.add(new File(parts, 'cut.log'));
    return d;
  }, readFileSync(RETRACT, 'utf8'));
  await page.dispatchEvent('#drop', 'drop', { dataTransfer: dt });
  await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('Error after'));
  assert.match(await page.textContent('#status'), /Error after 16\.8 MB: the file could not be read/);
  assert.match(await page.textContent('#headline'), /Reading stopped with an error after 16\.8 MB/);
  assert.equal(await page.isVisible('#result'), true);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('a gzip log is inflated in the page: the same report as the CLI gives for the .gz; a cut .gz says so', async () => {
  const { page, rec, context } = await openPage();
  const dir = path.join(ROOT, 'target', 'e2e');
  mkdirSync(dir, { recursive: true });
  // Several slices of 16 MiB, so members and lines cross slice boundaries.
  const text = readFileSync(RETRACT);
  const big = Buffer.concat(Array.from({ length: Math.ceil(40e6 / text.length) }, () => text));
  const gz = path.join(dir, 'retract.log.gz');
  writeFileSync(gz, Buffer.concat([gzipSync(big.subarray(0, 7e6)), gzipSync(big.subarray(7e6))]));
  await page.setInputFiles('#file', gz);
  await waitForReport(page, 'retract.log.gz');
  assert.match(await page.textContent('#status'), /gzip, 4\d\.\d MB of log/);
  assert.equal(await downloadText(page, '#export-json'), cliJson(gz));

  const cut = path.join(dir, 'cut.log.gz');
  const whole = gzipSync(text);
  writeFileSync(cut, whole.subarray(0, Math.floor(whole.length / 2)));
  await page.setInputFiles('#file', cut);
  await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('Error after'));
  assert.match(await page.textContent('#status'), /the gzip file is damaged or cut short/);
  assert.match(await page.textContent('#headline'), /Reading stopped with an error/);
  assert.deepEqual(rec.requests, []);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('several files dropped are read oldest first as one log, each gzip or not: the CLI\'s report for them in that order', async () => {
  const { page, rec, context } = await openPage();
  const dir = path.join(ROOT, 'target', 'e2e');
  mkdirSync(dir, { recursive: true });
  const text = readFileSync(RETRACT);
  const cut = text.indexOf(10, Math.floor(text.length / 2)) + 1;
  const older = path.join(dir, 'server.log.1.gz');
  const newer = path.join(dir, 'server.log');
  writeFileSync(older, gzipSync(text.subarray(0, cut)));
  writeFileSync(newer, text.subarray(cut));
  // Listed newest first; the older file's modification time puts it first.
  const dt = await page.evaluateHandle(([a, b]) => {
    const d = new DataTransfer();
    d.items.add(new File([new Uint8Array(b)], 'server.log', { lastModified: 2000 }));
    d.items.add(new File([new Uint8Array(a)], 'server.log.1.gz', { lastModified: 1000 }));
    return d;
  }, [[...readFileSync(older)], [...readFileSync(newer)]]);
  await page.dispatchEvent('#drop', 'drop', { dataTransfer: dt });
  await waitForReport(page, '2 files (server.log.1.gz, server.log)');
  assert.equal(await downloadText(page, '#export-json'), cliJson([older, newer]));
  assert.equal(cliJson([older, newer]), cliJson(RETRACT).replace(/"bytes": \d+/, `"bytes": ${text.length}`));
  assert.deepEqual(rec.requests, []);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('a log with a restart is judged on its last run: the summary names the runs, the evidence compares them', async () => {
  const { page, rec, context } = await openPage();
  const dir = path.join(ROOT, 'target', 'e2e');
  mkdirSync(dir, { recursive: true });
  // Two server runs: the KV-bound example, then a restart with a bigger pool.
  const file = path.join(dir, 'restarted.log');
  writeFileSync(file, Buffer.concat(['sglang-kv-bound.log', 'sglang-client-limited.log']
    .map((f) => readFileSync(path.join(ROOT, 'examples', f)))));
  await page.setInputFiles('#file', file);
  await waitForReport(page, 'restarted.log');
  const report = JSON.parse(cliJson(file));
  assert.equal(report.runs.length, 2);
  const judged = report.runs.find((r) => r.analyzed);
  assert.match(await page.textContent('#summary'), new RegExp(`Server runs2; run ${judged.run} judged \\(lines ${judged.first_line}–`));
  assert.match(await page.textContent('#evidence'), /The log holds 2 server runs/);
  assert.equal(await downloadText(page, '#export-json'), cliJson(file));
  // Another run is judged on request: the page reads the log again, as `--run 1` does.
  assert.equal(await page.isVisible('#run'), true);
  assert.deepEqual(await page.$$eval('#run option', (os) => os.map((o) => [o.value, o.selected])),
    [['1', false], ['2', true]]);
  await page.selectOption('#run', '1');
  await page.waitForFunction(() => document.getElementById('run').selectedOptions[0]?.value === '1' &&
    document.getElementById('status').textContent.startsWith('Read restarted.log'));
  const run1 = execFileSync(cliBinary(), ['diagnose', file, '--run', '1', '--format', 'json'], { encoding: 'utf8' });
  assert.equal(await downloadText(page, '#export-json'), run1);
  assert.match(await page.textContent('#evidence'), /this diagnosis is of run 1 .*as asked/);
  assert.deepEqual(rec.requests, []);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('charts export as PNG and SVG and follow the window size', async () => {
  const { page, rec, context } = await openPage();
  await dropFile(page, 'retract.log', readFileSync(RETRACT, 'utf8'));
  await waitForReport(page, 'retract.log');
  const [png] = await Promise.all([page.waitForEvent('download'), page.click('button.png[data-chart="kv_usage"]')]);
  assert.equal(png.suggestedFilename(), 'retract.kv_usage.png');
  assert.deepEqual([...readFileSync(await png.path()).subarray(1, 4)], [0x50, 0x4e, 0x47]); // "PNG"
  const [svg] = await Promise.all([page.waitForEvent('download'), page.click('button.svg[data-chart="concurrency"]')]);
  const text = readFileSync(await svg.path(), 'utf8');
  assert.ok(text.startsWith('<svg') && text.includes('Running vs queued requests'), text.slice(0, 200));
  const wide = await page.$eval('#chart-throughput', (c) => c.width);
  await page.setViewportSize({ width: 600, height: 900 });
  await page.waitForFunction((w) => document.getElementById('chart-throughput').width !== w, wide);
  const pixels = await drawnPixels(page);
  for (const n of CHARTS) assert.ok(pixels[n] > 3000, `${n}: only ${pixels[n]} pixels drawn after resizing`);
  assert.deepEqual(rec.requests.filter((u) => !u.startsWith('blob:')), []);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('dist/ works from a sub-path (relative URLs only)', async () => {
  const parent = await serve(path.dirname(DIST));
  try {
    const { page, rec, context } = await openPage({}, `${parent.origin}/${path.basename(DIST)}/`);
    await page.click('button.example[data-src="examples/sglang-retractions.log"]');
    await waitForReport(page, 'sglang-retractions.log');
    const pixels = await drawnPixels(page);
    for (const n of CHARTS) assert.ok(pixels[n] > 3000, `${n}: only ${pixels[n]} pixels drawn`);
    assert.deepEqual(rec.errors, []);
    await context.close();
  } finally {
    parent.proc.kill();
  }
});

test('what-if sliders predict from the log: a bigger KV pool on a KV-bound run means more throughput', async () => {
  const { page, rec, context } = await openPage();
  await page.click('button.example[data-src="examples/sglang-kv-bound.log"]');
  await waitForReport(page, 'sglang-kv-bound.log');
  await page.waitForSelector('#whatif-box:not([hidden])');
  await page.waitForFunction(() => document.getElementById('whatif-result').dataset.tokS);
  const base = Number(await page.getAttribute('#whatif-result', 'data-tok-s'));
  assert.match(await page.textContent('#whatif-result'), /running \(.*\) and ~.* tok\/s \(.*\) instead of .*; admission bound by /);
  await page.$eval('#wi-kv', (e) => { e.value = '2'; e.dispatchEvent(new Event('input')); });
  await page.waitForFunction((b) => Number(document.getElementById('whatif-result').dataset.tokS) > b * 1.15, base);
  assert.match(await page.textContent('#wi-kv-out'), /×2\.00 \(232,342 tokens\)/);
  // Fewer clients than the server runs now: predicted throughput falls.
  await page.$eval('#wi-kv', (e) => { e.value = '1'; e.dispatchEvent(new Event('input')); });
  await page.$eval('#wi-clients', (e) => { e.value = '10'; e.dispatchEvent(new Event('input')); });
  await page.waitForFunction((b) => Number(document.getElementById('whatif-result').dataset.tokS) < b * 0.5, base);
  // The secondary finding (retractions) is listed; predictions made no network request.
  assert.match(await page.textContent('#also'), /kv_retraction/);
  assert.deepEqual(rec.requests, [`${origin}/examples/sglang-kv-bound.log`]);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('a log with a benchmark summary shows the client-versus-server reconciliation', async () => {
  const { page, rec, context } = await openPage();
  const log = readFileSync(path.join(DIST, 'examples', 'sglang-kv-bound.log'), 'utf8') +
    readFileSync(path.join(FIX, 'client', 'sglang_bench_serving_0.4.0.txt'), 'utf8');
  await dropFile(page, 'with-bench.log', log);
  await waitForReport(page, 'with-bench.log');
  await page.waitForSelector('#reconcile-box:not([hidden])');
  assert.match(await page.textContent('#reconcile-summary'), /the client measured 500 tok\/s/);
  assert.match(await page.textContent('#reconcile-advice'), /capacity planning/);
  assert.ok((await page.$$('#reconcile-parts li')).length >= 2);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

// A log of `engine` (a fixture) dropped on the page: the CLI's verdict, and
// the actions name `flags` and none of `foreign`.
async function engineLogInPage(fixture, engine, flags, foreign) {
  const { page, rec, context } = await openPage();
  const file = path.join(FIX, ...fixture.split('/'));
  const name = `${engine}.log`;
  await dropFile(page, name, readFileSync(file, 'utf8'));
  await waitForReport(page, name);
  const report = JSON.parse(cliJson(file));
  assert.equal(report.engine, engine);
  assert.equal(await page.textContent('#kind'), report.diagnosis.primary.kind);
  const summary = await page.textContent('#summary');
  assert.match(summary, new RegExp(`Engine\\s*${engine}`));
  // The share of time in prefill, where the log times its iterations, and only there.
  const share = report.summary.prefill_time_share;
  if (share == null) assert.doesNotMatch(summary, /Prefill time/);
  else assert.match(summary, new RegExp(`Prefill time\\s*${Math.round(share * 100)}% of the iterations' time`));
  const actions = await page.textContent('#actions');
  for (const f of flags) assert.match(actions, f);
  assert.doesNotMatch(actions, foreign);
  assert.deepEqual(rec.errors, []);
  await context.close();
}

test('a TensorRT-LLM iteration log is diagnosed in the page with its own flags, as the CLI does', async () => {
  await engineLogInPage(
    'trtllm/synthetic_serve-kv-reserved-queue.log',
    'trtllm',
    [/capacity_scheduler_policy: MAX_UTILIZATION/, /--kv_cache_free_gpu_memory_fraction 0\.95/],
    /--gpu-memory-utilization|--mem-fraction-static|--max-num-seqs/,
  );
});

test('an LMDeploy metrics log is diagnosed in the page with LMDeploy\'s flags, as the CLI does', async () => {
  await engineLogInPage(
    'lmdeploy/synthetic_grouped-kv-full-queue.log',
    'lmdeploy',
    [/--cache-max-entry-count 0\.90/, /--quant-policy 8/],
    /--gpu-memory-utilization|--mem-fraction-static/,
  );
});
