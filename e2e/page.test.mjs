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

/** Moves a logarithmic what-if slider to `v`, as dragging it there would. */
async function setLever(page, selector, v) {
  await page.$eval(selector, (e, value) => {
    const lo = Math.log(Number(e.dataset.lo));
    const hi = Math.log(Number(e.dataset.hi));
    e.value = String(Math.round((1000 * (Math.log(value) - lo)) / (hi - lo)));
    e.dispatchEvent(new Event('input'));
  }, v);
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
    // Server flags ranked by predicted gain; client advice is not among them.
    const flags = await page.$$eval('#actions code.flag', (cs) => cs.map((c) => c.textContent));
    const server = report.diagnosis.primary.actions.filter((a) => a.id !== 'client_concurrency' && !a.flag.startsWith('client:'));
    assert.deepEqual([...flags].sort(), server.map((a) => a.flag).sort());
    const gains = await page.$$eval('#actions .gain', (ps) => ps.map((p) => (p.dataset.gain ? Number(p.dataset.gain) : null)));
    const known = gains.filter((g) => g !== null);
    assert.deepEqual(known, [...known].sort((a, b) => b - a), 'actions are ranked by predicted gain');
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
  assert.ok(reached.has('open'), [...reached].join(' | '));
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
  // Another run is judged on request, from what was read, as `--run 1` judges it.
  assert.equal(await page.isVisible('#run'), true);
  assert.deepEqual(await page.$$eval('#run option', (os) => os.map((o) => [o.value, o.selected])),
    [['1', false], ['2', true]]);
  await page.selectOption('#run', '1');
  await page.waitForFunction(() => document.getElementById('run').selectedOptions[0]?.value === '1' &&
    document.getElementById('status').textContent.startsWith('Read restarted.log: run 1 judged'));
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
  await setLever(page, '#wi-clients', 10);
  assert.match(await page.textContent('#wi-clients-out'), /^10\b/);
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

// ---- the page as a viewer: one file at a time, state in the hash, charts to ask ----

const SHOTS = path.join(HERE, 'screenshots');
const reads = (page) => page.evaluate(() => Number(document.body.dataset.reads || 0));

test('the same file opened again is read again; the result names it in its header and the tab title', async () => {
  const { page, rec, context } = await openPage();
  const name = path.basename(RETRACT);
  await page.setInputFiles('#file', RETRACT);
  await waitForReport(page, name);
  assert.equal(await page.inputValue('#file'), '', 'the input is cleared after a read');
  assert.equal(await page.textContent('#result-file'), name);
  assert.equal(await page.title(), `${name} · batchlens`);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'verdict', 'focus moves to the verdict');
  const before = await reads(page);
  await page.setInputFiles('#file', RETRACT);
  await page.waitForFunction((n) => Number(document.body.dataset.reads) === n + 1, before);
  assert.equal(await downloadText(page, '#export-json'), cliJson(RETRACT));
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('open, cancel with Escape, open: the old result is hidden while reading and after the cancel', async () => {
  const { page, rec, context } = await openPage();
  const line = readFileSync(RETRACT, 'utf8');
  await dropFile(page, 'first.log', line);
  await waitForReport(page, 'first.log');
  const big = await page.evaluateHandle((text) => {
    const parts = [];
    for (let size = 0; size < 96e6; size += text.length) parts.push(text);
    const d = new DataTransfer();
    d.items.add(new File(parts, 'big.log'));
    return d;
  }, line);
  await page.evaluate((d) => {
    document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: d, bubbles: true, cancelable: true }));
    if (!document.getElementById('result').hidden) throw new Error('the old result is still shown while reading');
    document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
  }, big);
  await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('Cancelled'));
  assert.equal(await page.isVisible('#result'), false, 'no result after Cancel');
  await dropFile(page, 'second.log', line);
  await waitForReport(page, 'second.log');
  assert.equal(await page.textContent('#result-file'), 'second.log');
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('a file dropped anywhere on the page is read; an overlay shows while it is dragged over', async () => {
  const { page, rec, context } = await openPage();
  const dt = await page.evaluateHandle((text) => {
    const d = new DataTransfer();
    d.items.add(new File([text], 'on-body.log', { type: 'text/plain' }));
    return d;
  }, readFileSync(RETRACT, 'utf8'));
  await page.dispatchEvent('footer', 'dragenter', { dataTransfer: dt });
  assert.equal(await page.isVisible('#drop-overlay'), true);
  await page.dispatchEvent('footer', 'drop', { dataTransfer: dt });
  await waitForReport(page, 'on-body.log');
  assert.equal(await page.isVisible('#drop-overlay'), false);
  assert.equal(await downloadText(page, '#export-json'), cliJson(RETRACT));
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('a link with a hash restores the run, the rank, the chart window and the what-if values', async () => {
  const dir = path.join(ROOT, 'target', 'e2e');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'restarted-hash.log');
  writeFileSync(file, Buffer.concat(['sglang-kv-bound.log', 'sglang-client-limited.log']
    .map((f) => readFileSync(path.join(ROOT, 'examples', f)))));
  const { page, rec, context } = await openPage({}, `${origin}/index.html#run=1&range=30.0-300.0&wi=kv_scale:1.5,client_concurrency:40`);
  await page.setInputFiles('#file', file);
  await page.waitForFunction(() => document.getElementById('run').value === '1' &&
    document.getElementById('status').textContent.startsWith('Read restarted-hash.log') && document.body.dataset.result === 'report');
  const run1 = execFileSync(cliBinary(), ['diagnose', file, '--run', '1', '--format', 'json'], { encoding: 'utf8' });
  assert.equal(await downloadText(page, '#export-json'), run1);
  await page.waitForFunction(() => document.getElementById('wi-kv').value === '1.5');
  assert.match(await page.textContent('#wi-clients-out'), /^40\b/);
  assert.match(await page.textContent('#range-text'), /30 s to 300 s/);
  assert.equal(Number(await page.getAttribute('.plot[data-chart="throughput"]', 'data-t0')), 30);
  await page.waitForFunction(() => location.hash.includes('run=1') && location.hash.includes('kv_scale:1.5') &&
    location.hash.includes('range=30.0-300.0'));
  await context.close();

  // A rank, and an example opened straight from the link.
  const rankReport = JSON.parse(cliJson(RANKS));
  const rank = rankReport.timeline.per_source[1].source;
  const second = await openPage({}, `${origin}/index.html#rank=${encodeURIComponent(rank)}`);
  await second.page.setInputFiles('#file', RANKS);
  await waitForReport(second.page, path.basename(RANKS));
  await second.page.waitForFunction((s) => document.getElementById('source').value === s, rank);
  assert.ok((await second.page.textContent('#cap-throughput')).includes(rank));
  const blank = await second.page.$$eval('#source option', (os) => os.filter((o) => o.textContent.trim() === '').length);
  assert.equal(blank, 0, 'no blank entry in the rank selector');
  await second.context.close();

  const third = await openPage({}, `${origin}/index.html#example=sglang-kv-bound.log&range=60.0-600.0`);
  await waitForReport(third.page, 'sglang-kv-bound.log');
  await third.page.waitForFunction(() => document.getElementById('range-text').textContent.startsWith('Showing 60 s to 600 s'));
  // Nothing but the example itself (fetched as the page became ready).
  assert.deepEqual(third.rec.requests.filter((u) => u !== `${origin}/examples/sglang-kv-bound.log`), []);
  assert.deepEqual([...rec.errors, ...second.rec.errors, ...third.rec.errors], []);
  await third.context.close();
});

/** The page x of time `t` on a chart, from where the page says its plot lies. */
async function xOf(page, chart, t) {
  return page.$eval(`.plot[data-chart="${chart}"]`, (p, time) => {
    const d = p.dataset;
    const box = p.getBoundingClientRect();
    return box.left + Number(d.left) + ((time - Number(d.t0)) / (Number(d.t1) - Number(d.t0))) * (Number(d.right) - Number(d.left));
  }, t);
}

test('hovering a chart shows the value, the wall-clock time and the log line at that time, on every chart', async () => {
  const { page, rec, context } = await openPage();
  await page.setInputFiles('#file', RETRACT);
  await waitForReport(page, path.basename(RETRACT));
  const report = JSON.parse(cliJson(RETRACT));
  const pts = report.timeline.points;
  const p = pts[Math.floor(pts.length / 2)];
  await page.$eval('#charts-box', (e) => e.scrollIntoView());
  const box = await page.$eval('#chart-throughput', (c) => { const b = c.getBoundingClientRect(); return { y: b.top + b.height / 2 }; });
  await page.mouse.move(await xOf(page, 'throughput', p.t_s), box.y);
  const tip = await page.textContent('.plot[data-chart="throughput"] .tip');
  const value = p.gen_tok_s.toLocaleString('en-US', { maximumFractionDigits: p.gen_tok_s < 10 ? 1 : 0 });
  assert.ok(tip.includes(`generated ${value} tok/s`), tip);
  assert.ok(tip.includes(`line ${p.line.toLocaleString('en-US')}`), tip);
  assert.match(tip, /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
  // The crosshair is linked: the other charts show it at the same time.
  assert.equal(await page.isVisible('.plot[data-chart="kv_usage"] .cross'), true);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('dragging across a chart zooms every chart to that window; reset shows the whole log', async () => {
  const { page, rec, context } = await openPage();
  await page.click('button.example[data-src="examples/sglang-retractions.log"]');
  await waitForReport(page, 'sglang-retractions.log');
  await page.$eval('#charts-box', (e) => e.scrollIntoView());
  const t1 = Number(await page.getAttribute('.plot[data-chart="concurrency"]', 'data-t1'));
  const y = await page.$eval('#chart-concurrency', (c) => { const b = c.getBoundingClientRect(); return b.top + b.height / 2; });
  await page.mouse.move(await xOf(page, 'concurrency', t1 * 0.25), y);
  await page.mouse.down();
  await page.mouse.move(await xOf(page, 'concurrency', t1 * 0.5), y, { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction(() => !document.getElementById('range-reset').hidden);
  for (const n of CHARTS) {
    const [a, b] = await page.$eval(`.plot[data-chart="${n}"]`, (p) => [Number(p.dataset.t0), Number(p.dataset.t1)]);
    assert.ok(Math.abs(a - t1 * 0.25) < t1 * 0.01 && Math.abs(b - t1 * 0.5) < t1 * 0.01, `${n}: ${a}–${b} of ${t1}`);
  }
  await page.waitForFunction(() => /range=\d/.test(location.hash));
  const pixels = await drawnPixels(page);
  for (const n of CHARTS) assert.ok(pixels[n] > 3000, `${n}: only ${pixels[n]} pixels drawn zoomed`);
  await page.click('#range-reset');
  assert.equal(Number(await page.getAttribute('.plot[data-chart="concurrency"]', 'data-t0')), 0);
  assert.equal(Number(await page.getAttribute('.plot[data-chart="concurrency"]', 'data-t1')), t1);
  await page.waitForFunction(() => !location.hash.includes('range='));
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('at 360 px the page has no horizontal scroll', async () => {
  const { page, rec, context } = await openPage({ viewport: { width: 360, height: 740 } });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), 'before a report');
  for (const ex of ['sglang-retractions.log', 'vllm-kv-bound.log']) {
    await page.click(`button.example[data-src="examples/${ex}"]`);
    await waitForReport(page, ex);
    const [doc, view] = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
    assert.ok(doc <= view, `${ex}: the document is ${doc} px wide in a ${view} px viewport`);
  }
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('keyboard only: open a log, reach the first action and copy its flag', async () => {
  const { page, rec, context } = await openPage({ permissions: ['clipboard-read', 'clipboard-write'] });
  const example = path.join(ROOT, 'examples', 'sglang-kv-bound.log');
  // The chooser is intercepted once Playwright has told the browser to (a round trip).
  const choosing = page.waitForEvent('filechooser');
  await page.waitForTimeout(200);
  await page.keyboard.press('o');
  const chooser = await choosing;
  await chooser.setFiles(example);
  await waitForReport(page, 'sglang-kv-bound.log');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'verdict');
  let found = false;
  for (let i = 0; i < 40 && !found; i++) {
    await page.keyboard.press('Tab');
    found = await page.evaluate(() => document.activeElement === document.querySelector('#actions button.copy'));
  }
  assert.ok(found, 'Tab reaches the first action\'s Copy');
  const flag = await page.textContent('#actions code.flag');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /^(Copied|Selected)/.test(document.querySelector('#actions button.copy').textContent));
  if ((await page.textContent('#actions button.copy')) === 'Copied') {
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), flag);
  }
  // `?` opens the help, Escape closes it.
  await page.keyboard.press('?');
  assert.equal(await page.isVisible('#help'), true);
  await page.keyboard.press('Escape');
  assert.equal(await page.isVisible('#help'), false);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('exported charts name the file, the verdict and the window; PNGs are twice the screen size', async () => {
  const { page, rec, context } = await openPage();
  await page.click('button.example[data-src="examples/vllm-kv-bound.log"]');
  await waitForReport(page, 'vllm-kv-bound.log');
  const report = JSON.parse(cliJson(path.join(DIST, 'examples', 'vllm-kv-bound.log')));
  const svg = await downloadText(page, 'button.svg[data-chart="kv_usage"]');
  assert.ok(svg.includes('vllm-kv-bound.log'), 'the SVG names the file');
  assert.ok(svg.includes(report.diagnosis.primary.kind), 'the SVG names the verdict');
  assert.match(svg, /window 0 s–/);
  // vLLM's word for an eviction, and counts per bar rather than a line per event.
  assert.ok(svg.includes('preemptions per bar'), 'preemptions, not retractions');
  assert.ok(!svg.includes('retractions per bar'));
  const [png] = await Promise.all([page.waitForEvent('download'), page.click('button.png[data-chart="throughput"]')]);
  assert.equal(png.suggestedFilename(), 'vllm-kv-bound.throughput.png');
  const head = readFileSync(await png.path());
  const width = head.readUInt32BE(16);
  const shown = await page.$eval('#chart-throughput', (c) => c.clientWidth);
  assert.ok(width >= 2 * shown, `PNG ${width} px for a ${shown} px chart`);
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('actions show their predicted gain and what binds next; only gains are coloured; client advice stands apart', async () => {
  const { page, rec, context } = await openPage();
  for (const ex of ['sglang-kv-bound.log', 'sglang-client-limited.log', 'sglang-retractions.log']) {
    await page.click(`button.example[data-src="examples/${ex}"]`);
    await waitForReport(page, ex);
    const report = JSON.parse(cliJson(path.join(DIST, 'examples', ex)));
    const actions = report.diagnosis.primary.actions;
    const shown = await page.$$eval('#actions > li', (lis) => lis.map((li) => ({
      flag: li.querySelector('code.flag').textContent,
      gain: li.querySelector('.gain').textContent,
      up: li.querySelector('.gain').classList.contains('gain-up'),
    })));
    for (const s of shown) {
      const a = actions.find((x) => x.flag === s.flag);
      if (a.predicted_gain == null) continue;
      const pct = a.predicted_gain * 100;
      if (Math.abs(pct) >= 0.5) assert.ok(s.gain.includes(`${pct.toFixed(Math.abs(pct) < 10 ? 1 : 0)} %`), `${s.gain} for ${a.predicted_gain}`);
      assert.ok(s.gain.includes('bound by'), s.gain);
      assert.equal(s.up, a.predicted_gain >= 0.005, `${s.flag}: coloured only when it improves`);
    }
    const client = actions.filter((a) => a.id === 'client_concurrency' || a.flag.startsWith('client:'));
    assert.equal(await page.$$eval('#client > li', (l) => l.length), client.length);
    assert.equal(await page.$$eval('#client code, #client button', (l) => l.length), 0, 'client advice has no copyable flag');
  }
  // Every lever the CLI knows has a slider; the cap reaches 4× today's and shows the flag to set.
  for (const id of ['#wi-kv', '#wi-cap', '#wi-clients', '#wi-cons', '#wi-prefill']) assert.equal(await page.isVisible(id), true, id);
  const cap = await page.$eval('#wi-cap', (e) => Number(e.dataset.exact));
  assert.ok(Number(await page.getAttribute('#wi-cap', 'data-hi')) >= 4 * cap);
  await setLever(page, '#wi-cap', 48);
  await page.waitForFunction(() => document.getElementById('whatif-flags').textContent.includes('--max-running-requests 48'));
  await page.$eval('#wi-cons', (e) => { e.value = '0.5'; e.dispatchEvent(new Event('input')); });
  await page.waitForFunction(() => document.getElementById('whatif-flags').textContent.includes('--schedule-conservativeness 0.50'));
  assert.deepEqual(rec.errors, []);
  await context.close();
});

test('screenshots of the light, dark and phone layouts are written for review (e2e/screenshots/)', async () => {
  mkdirSync(SHOTS, { recursive: true });
  const layouts = [
    ['light', { viewport: { width: 1280, height: 900 } }],
    ['dark', { viewport: { width: 1280, height: 900 }, colorScheme: 'dark' }],
    ['phone', { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true }],
  ];
  for (const [name, options] of layouts) {
    const { page, rec, context } = await openPage(options, `${origin}/index.html#example=sglang-retractions.log`);
    await waitForReport(page, 'sglang-retractions.log');
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
    assert.ok(existsSync(path.join(SHOTS, `${name}.png`)));
    assert.deepEqual(rec.errors, []);
    await context.close();
  }
});

test('a log of many restarts lists every run; another run is judged from what was read', async () => {
  const dir = path.join(ROOT, 'target', 'e2e');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'crash-loop.log');
  // 70 short runs of a real log's start: startup lines, then its first stats lines.
  const head = readFileSync(path.join(ROOT, 'examples', 'sglang-client-limited.log'), 'utf8').split('\n').slice(0, 80).join('\n') + '\n';
  writeFileSync(file, head.repeat(70));
  const report = JSON.parse(cliJson(file));
  assert.equal(report.runs.length, 70, `the report lists ${report.runs.length} runs`);
  const { page, rec, context } = await openPage();
  await page.setInputFiles('#file', file);
  await waitForReport(page, 'crash-loop.log');
  assert.equal(await page.locator('#run option').count(), 70);
  const other = report.runs[report.runs.length - 2].run;
  await page.selectOption('#run', String(other));
  await page.waitForFunction((n) => document.body.dataset.result === 'report' &&
    document.getElementById('status').textContent.startsWith('Read crash-loop.log') && location.hash.includes(`run=${n}`), other);
  const judged = execFileSync(cliBinary(), ['diagnose', file, '--run', String(other), '--format', 'json'], { encoding: 'utf8' });
  assert.equal(await downloadText(page, '#export-json'), judged);
  assert.deepEqual(rec.requests, []);
  assert.deepEqual(rec.errors, []);
  await context.close();
});
