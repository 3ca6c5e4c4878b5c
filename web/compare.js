// The compare page: reads a before and an after log into two wasm Sessions, asks the
// core to compare them (the same JSON as `batchlens compare BEFORE AFTER --format json`),
// and shows its sentences, tables and the two runs' charts overlaid. Log text is
// untrusted: it only ever reaches the page as textContent.
import init, { Session, compare_json, compare_markdown } from './batchlens-web.js';

const SLICE = 16 << 20;
const SVG = 'http://www.w3.org/2000/svg';
const $ = (id) => document.getElementById(id);
const sides = { before: null, after: null }; // { name, session, report }
let last = null; // { json, markdown }

function status(text) { $('status').textContent = text; }

async function read(side, name, blob) {
  status(`Reading ${name}…`);
  const session = new Session();
  try {
    for (let at = 0; at < blob.size; at += SLICE) {
      session.feed(new Uint8Array(await blob.slice(at, at + SLICE).arrayBuffer()));
    }
    const report = JSON.parse(session.finish());
    const problem = session.problem(name, 1);
    if (problem) {
      session.free();
      status(`${side}: ${problem}`);
      return false;
    }
    if (sides[side]) sides[side].session.free();
    sides[side] = { name, session, report };
    $(`name-${side}`).textContent = name;
    return true;
  } catch (e) {
    try { session.free(); } catch (_) { /* already gone */ }
    status(`${side}: ${name} could not be read: ${e.message || e}`);
    return false;
  }
}

function cell(row, tag, text) {
  const c = document.createElement(tag);
  c.textContent = text;
  row.appendChild(c);
}

function table(id, head, rows) {
  const t = $(id);
  t.replaceChildren();
  const h = t.createTHead().insertRow();
  head.forEach((x) => cell(h, 'th', x));
  const b = t.createTBody();
  rows.forEach((r) => { const tr = b.insertRow(); r.forEach((x) => cell(tr, 'td', x)); });
}

const fmt = (v, digits = 0) => (v === null || v === undefined ? '–'
  : Number(v).toLocaleString('en-US', { maximumFractionDigits: digits }));
const pct = (v) => (v === null || v === undefined ? '–' : `${(v * 100).toFixed(0)}%`);
const signed = (r) => `${r >= 1 ? '+' : '−'}${Math.abs((r - 1) * 100).toFixed(1)} %`;

/** One overlaid chart: each side's series over seconds from its run's first point. */
function chart(id, series) {
  const W = 640, H = 260, L = 56, R = 12, T = 22, B = 30;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const all = series.flatMap((s) => s.points);
  const xmax = Math.max(1, ...all.map((p) => p[0]));
  const ymax = Math.max(1e-9, ...all.map((p) => p[1]));
  const x = (v) => L + (v / xmax) * (W - L - R);
  const y = (v) => H - B - (v / ymax) * (H - T - B);
  const el = (tag, attrs, text) => {
    const e = document.createElementNS(SVG, tag);
    Object.entries(attrs).forEach(([k, v]) => e.setAttribute(k, v));
    if (text !== undefined) e.textContent = text;
    svg.appendChild(e);
    return e;
  };
  el('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, class: 'axis' });
  el('line', { x1: L, y1: T, x2: L, y2: H - B, class: 'axis' });
  el('text', { x: L - 4, y: T + 4, 'text-anchor': 'end' }, fmt(ymax, ymax < 2 ? 2 : 0));
  el('text', { x: L - 4, y: H - B, 'text-anchor': 'end' }, '0');
  el('text', { x: W - R, y: H - 8, 'text-anchor': 'end' }, `${fmt(xmax)} s`);
  el('text', { x: L, y: H - 8 }, '0 s');
  series.forEach((s) => {
    if (s.points.length === 0) return;
    const d = s.points.map((p, i) => `${i ? 'L' : 'M'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join('');
    el('path', { d, class: s.cls, 'data-side': s.side, 'data-points': String(s.points.length) });
  });
  el('rect', { x: L + 8, y: 6, width: 10, height: 10, class: 'key-before' });
  el('text', { x: L + 22, y: 15 }, 'before');
  el('rect', { x: L + 72, y: 6, width: 10, height: 10, class: 'key-after' });
  el('text', { x: L + 86, y: 15 }, 'after');
  $(id).replaceChildren(svg);
}

function series(side, field, cls = side) {
  const pts = sides[side].report.timeline.points;
  const t0 = pts.length ? pts[0].t_s : 0;
  return {
    side, cls,
    points: pts.filter((p) => p[field] !== null && p[field] !== undefined)
      .map((p) => [p.t_s - t0, field === 'kv_usage' ? p[field] * 100 : p[field]]),
  };
}

function show(c) {
  const ex = $('explanation');
  ex.replaceChildren();
  c.explanation.forEach((s, i) => {
    const p = document.createElement('p');
    if (i === 0) p.className = 'headline';
    p.textContent = s;
    ex.appendChild(p);
  });
  const side = (f) => [f(c.before), f(c.after)];
  table('figures', ['', 'before', 'after'], [
    ['engine', ...side((s) => s.engine + (s.config.engine_version ? ` ${s.config.engine_version}` : ''))],
    ['gen tok/s', ...side((s) => fmt(s.gen_throughput_tok_s))],
    ['running', ...side((s) => fmt(s.running_requests, 1))],
    ['queued', ...side((s) => fmt(s.queued_requests, 1))],
    ['KV usage', ...side((s) => pct(s.kv_usage))],
    ['in flight', ...side((s) => fmt(s.in_flight_requests))],
    ['prompt tok/request', ...side((s) => fmt(s.per_request.prompt_tokens))],
    ['output tok/request', ...side((s) => fmt(s.per_request.output_tokens))],
    ['verdict', ...side((s) => s.verdict || '–')],
  ]);
  table('settings', ['setting', 'before', 'after'],
    c.changes.length ? c.changes.map((x) => [x.setting, x.before, x.after]) : [['none that the logs state', '', '']]);
  $('workload-title').textContent = `Workload: ${c.workload.similar ? 'similar' : 'differs'}`;
  const wl = $('workload');
  wl.replaceChildren();
  c.workload.notes.forEach((n) => { const li = document.createElement('li'); li.textContent = n; wl.appendChild(li); });
  const pc = c.prediction_check;
  $('prediction').textContent = pc
    ? `Predicted ~${fmt(pc.predicted_gen_tok_s)} tok/s (${fmt(pc.low)}–${fmt(pc.high)}), measured ${fmt(pc.measured_gen_tok_s)}`
      + (pc.error === null ? '' : `, error ${signed(1 + pc.error)}`)
    : 'No model: the before log has no steady state to fit it to.';
  chart('chart-throughput', [series('before', 'gen_tok_s'), series('after', 'gen_tok_s')]);
  chart('chart-concurrency', [series('before', 'running'), series('after', 'running'),
    series('before', 'queued', 'before waiting'), series('after', 'queued', 'after waiting')]);
  chart('chart-kv_usage', [series('before', 'kv_usage'), series('after', 'kv_usage')]);
  $('result').hidden = false;
}

function compareNow() {
  if (!sides.before || !sides.after) {
    status(sides.before ? 'Now the after log.' : sides.after ? 'Now the before log.' : 'Choose a before and an after log.');
    return;
  }
  const json = compare_json(sides.before.session, sides.after.session);
  last = { json, markdown: compare_markdown(sides.before.session, sides.after.session) };
  const c = JSON.parse(json);
  show(c);
  document.body.dataset.result = c.attribution;
  status(`Compared ${sides.before.name} with ${sides.after.name}.`);
}

function download(name, text, type) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type }));
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

async function take(side, file) {
  delete document.body.dataset.result;
  if (await read(side, file.name, file)) compareNow();
}

async function main() {
  await init();
  for (const side of ['before', 'after']) {
    $(`file-${side}`).addEventListener('change', (e) => { if (e.target.files[0]) take(side, e.target.files[0]); });
    const drop = $(`drop-${side}`);
    drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
    drop.addEventListener('dragleave', () => drop.classList.remove('over'));
    drop.addEventListener('drop', (e) => {
      e.preventDefault();
      drop.classList.remove('over');
      const f = e.dataTransfer.files[0];
      if (f) take(side, f);
    });
  }
  $('example-pair').addEventListener('click', async () => {
    delete document.body.dataset.result;
    for (const [side, src] of [['before', 'examples/sglang-kv-bound.log'], ['after', 'examples/sglang-kv-bound-larger-pool.log']]) {
      const blob = await (await fetch(src)).blob();
      if (!(await read(side, src.split('/').pop(), blob))) return;
    }
    compareNow();
  });
  $('export-json').addEventListener('click', () => last && download('batchlens-compare.json', last.json, 'application/json'));
  $('export-md').addEventListener('click', () => last && download('batchlens-compare.md', last.markdown, 'text/markdown'));
  status('Choose a before and an after log.');
  document.body.dataset.ready = '1';
}

main().catch((e) => status(`The page could not start: ${e.message || e}`));
