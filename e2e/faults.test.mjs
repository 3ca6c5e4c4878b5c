// The page's view of the faults (web/faults.js), on the reviewed fixture reports (the view
// is plain data), then the page itself in headless Chromium.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { faultsView } from '../web/faults.js';
import { serve, launchChromium } from './serve.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SNAPS = path.join(ROOT, 'crates', 'core', 'tests', 'snapshots');

/** The JSON report of a fixture's reviewed snapshot (the part after insta's header). */
function report(name) {
  const text = readFileSync(path.join(SNAPS, `fixture_snapshots__${name}.snap`), 'utf8');
  return JSON.parse(text.split('\n---\n').slice(1).join('\n---\n'));
}

test('per-rank table and chart for DP ranks', () => {
  const v = faultsView(report('sglang__sglang_41_dp-tp-ep-pd-decode-rank-imbalance-uvicorn'));
  assert.equal(v.ranks.length, 3);
  assert.deepEqual(v.header.length, v.ranks[0].cells.length);
  const running = v.ranks.map((r) => Number(r.cells[1]));
  assert.deepEqual([...running].sort((a, b) => a - b), [6, 8, 11]);
  // The widest rank fills the chart; the others are shorter.
  assert.equal(Math.max(...v.bars.map((b) => b.running + b.queued)), 1);
  assert.ok(v.imbalance.startsWith('The data-parallel ranks run uneven batches'));
});

test('the cost of evictions and what was not assessed', () => {
  const v = faultsView(report('vllm__synthetic_v1-033-dp2-preemptions-startup-ansi'));
  assert.match(v.evictions, /^Recomputing evicted requests took ~10% of prefill work/);
  const s = faultsView(report('vllm__vllm_14_v0-debug-level-stuck-prefill-metrics-scrape'));
  assert.deepEqual(s.notAssessed.map((x) => x.check), ['capacity', 'bursts']);
  assert.equal(s.ranks.length, 0);
});

test('every fixture report gives a sane view', () => {
  for (const f of readdirSync(SNAPS).filter((n) => n.startsWith('fixture_snapshots__') && n.endsWith('.snap'))) {
    const name = f.slice('fixture_snapshots__'.length, -'.snap'.length);
    let r;
    try { r = report(name); } catch { continue; } // client figures, not reports
    const v = faultsView(r);
    if (!v) continue;
    for (const b of v.bars) {
      assert.ok(b.running >= 0 && b.running + b.queued <= 1 + 1e-9, `${name}: ${JSON.stringify(b)}`);
    }
    for (const x of v.notAssessed) assert.ok(x.why.length > 0, name);
  }
});

// The same on the built page (dist/) in headless Chromium: a log dropped on the page shows
// the per-rank table and chart, and a hang's stalled verdict, as the CLI reports them.
describe('the faults on the page, in Chromium', () => {
  const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), process.env.DIST || '../dist');
  const FIX = path.join(ROOT, 'tests', 'fixtures');
  const RANKS = path.join(FIX, 'sglang', 'sglang_41_dp-tp-ep-pd-decode-rank-imbalance-uvicorn.log');
  const HANG = path.join(FIX, 'vllm', 'vllm_39_v0-hang-pending-rising-nothing-runs.log');
  let server;
  let origin;
  let browser;

  function cliJson(file) {
    const bin = [
      process.env.BATCHLENS_BIN,
      path.join(ROOT, 'target', 'debug', 'batchlens'),
      path.join(ROOT, 'target', 'release', 'batchlens'),
    ].filter(Boolean).find((p) => existsSync(p));
    assert.ok(bin, 'the batchlens CLI is not built');
    return JSON.parse(execFileSync(bin, ['diagnose', file, '--format', 'json'], { encoding: 'utf8' }));
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

  /** Opens the page, drops `file` on it and waits for its report; the page and its errors. */
  async function dropped(file) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors = [];
    const requests = [];
    let loaded = false;
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('request', (r) => { if (loaded) requests.push(r.url()); });
    await page.goto(`${origin}/index.html`);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
    loaded = true;
    const name = path.basename(file);
    const dt = await page.evaluateHandle(([n, text]) => {
      const d = new DataTransfer();
      d.items.add(new File([text], n, { type: 'text/plain' }));
      return d;
    }, [name, readFileSync(file, 'utf8')]);
    await page.dispatchEvent('#drop', 'drop', { dataTransfer: dt });
    await page.waitForFunction((n) => document.getElementById('status').textContent.startsWith(`Read ${n}`)
      && document.body.dataset.result, name, { timeout: 20000 });
    return { page, context, errors, requests };
  }

  test('DP ranks: a row and a bar per rank, the imbalance finding, from the dropped log', async () => {
    const report = cliJson(RANKS);
    const ranks = report.diagnosis.facts.ranks;
    assert.equal(ranks.length, 3);
    const { page, context, errors, requests } = await dropped(RANKS);
    await page.waitForSelector('#faults-box table.ranks');
    const rows = await page.$$eval('#faults-box table.ranks tr', (trs) =>
      trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    assert.deepEqual(rows[0], ['rank', 'running', 'waiting', 'KV', 'tok/s', 'balanced tok/s']);
    assert.deepEqual(rows.slice(1).map((r) => r[0]), ranks.map((r) => r.source));
    assert.deepEqual(rows.slice(1).map((r) => Number(r[1])), ranks.map((r) => r.running_requests));
    // The chart: a label and a running and a waiting bar per rank; the widest rank fills it.
    const bars = await page.$$eval('#faults-box svg.rank-chart rect', (rs) =>
      rs.map((r) => ({ w: Number(r.getAttribute('width')), t: r.querySelector('title').textContent })));
    assert.equal(bars.length, 2 * ranks.length);
    const labels = await page.$$eval('#faults-box svg.rank-chart text', (ts) => ts.map((t) => t.textContent));
    assert.deepEqual(labels, ranks.map((r) => r.source));
    const running = bars.filter((b) => b.t.endsWith(': running')).map((b) => b.w);
    const heavy = ranks.findIndex((r) => r.running_requests === Math.max(...ranks.map((x) => x.running_requests)));
    assert.ok(Math.abs(running[heavy] - 420) < 1e-6, `${running}`);
    assert.ok(running.every((w, i) => i === heavy || (w > 0 && w < 420)), `${running}`);
    const finding = report.diagnosis.findings.find((f) => f.kind === 'rank_imbalance');
    assert.ok(finding);
    assert.equal(await page.textContent('#faults-box p'), finding.headline);
    // A capacity verdict offers the what-if (the hang below does not).
    assert.equal(report.diagnosis.primary.kind === 'stalled', false);
    assert.equal(await page.isVisible('#whatif-box'), true);
    assert.deepEqual(requests, []);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('a hang: the stalled verdict and its headline, no per-rank table for one engine', async () => {
    const report = cliJson(HANG);
    assert.equal(report.diagnosis.primary.kind, 'stalled');
    const { page, context, errors } = await dropped(HANG);
    assert.equal(await page.textContent('#kind'), 'stalled');
    const headline = await page.textContent('#headline');
    assert.equal(headline, report.diagnosis.primary.headline);
    assert.match(headline, /^The server is stalled: 22 waiting \(from 12\) while nothing runs/);
    assert.equal(await page.$('#faults-box table.ranks'), null);
    // What the log could not support is listed with it.
    const checks = await page.$$eval('#faults-box li strong', (s) => s.map((x) => x.textContent));
    assert.deepEqual(checks, report.diagnosis.not_assessed.map((x) => x.check));
    // Not a capacity verdict: no lever in the report, and no what-if controls on the page,
    // though the hang's few lines generate something and show requests running.
    assert.equal(report.diagnosis.levers, undefined);
    assert.ok(report.diagnosis.facts.server_gen_tok_s > 0 && report.diagnosis.facts.running_requests > 0);
    assert.equal(await page.isHidden('#whatif-box'), true);
    assert.equal(await page.isVisible('#wi-kv'), false);
    assert.deepEqual(errors, []);
    await context.close();
  });
});
