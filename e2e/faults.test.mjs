// The page's view of the faults (web/faults.js), on the reviewed fixture reports: no
// browser needed, the view is plain data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { faultsView } from '../web/faults.js';

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
