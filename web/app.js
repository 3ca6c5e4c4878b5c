// The page: one log at a time, as a viewer. It hands files to the worker, shows
// the report, draws the charts and keeps the view (never the data) in the URL's hash.
// Log-derived text is only ever inserted with textContent, never as HTML.
//
// Each part of the report is drawn by a function of its own, called in order by
// `show()`; another module adds a part with `addSection(fn)` (fn gets the parsed
// report and the page state) without touching the others.
import init, { Charts } from './batchlens-web.js';
import { renderFaults } from './faults.js';
import { setupFormats, takeFormatFiles, formatFile } from './formats.js';
import { initRoofline } from './roofline.js';

const $ = (id) => document.getElementById(id);
const CHARTS = ['throughput', 'concurrency', 'kv_usage', 'prefill'];
const dark = window.matchMedia('(prefers-color-scheme: dark)');
const TITLE = document.title;

export const state = {
  worker: null,
  jobId: 0,
  busy: false,
  name: '',
  json: null,
  markdown: null,
  report: null,
  charts: null,
  blobs: null, // what was read last: another server run is judged from it, not picked again
  example: null, // the bundled example shown, named in the hash
  range: null, // [t0, t1] of the charts, seconds from the first stats line; null: all
  zoom: null, // the window drawn, re-bucketed by the worker: { t0, t1, bucket_seconds, points, per_source }
  windowSeq: 0, // the latest window asked of the worker
  runsKept: null, // runs the worker judges from what it read (others are read again)
  frames: {}, // chart name → where its plot lies (from the wasm)
  hover: null, // the time under the crosshair
  pending: null, // hash state waiting for the report it describes
};

const extraSections = [];
/** Adds a part of the report: `fn(report, state)` runs after the page's own parts. */
export function addSection(fn) { extraSections.push(fn); }

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function setStatus(text) { $('status').textContent = text; }

function fmtBytes(n) {
  if (n >= 1e9) return (n / 1e9).toFixed(2) + ' GB';
  if (n >= 1e6) return (n / 1e6).toFixed(1) + ' MB';
  if (n >= 1e3) return (n / 1e3).toFixed(1) + ' kB';
  return n + ' bytes';
}

/** A count and its noun, singular for exactly one: `1 stats line`, `2,048 stats lines`. */
function fmtCount(n, one, many) {
  return `${fmtNum(n)} ${n === 1 ? one : many}`;
}

function fmtNum(v, digits = 0) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return v.toLocaleString('en-US', { maximumFractionDigits: digits });
}

/** A gain over today's throughput (0.34 → "+34 %"), to one decimal below 10 %. */
function fmtGain(g) {
  const pct = g * 100;
  const digits = Math.abs(pct) < 10 ? 1 : 0;
  const s = pct.toFixed(digits);
  return `${pct > 0 && Number(s) !== 0 ? '+' : ''}${Number(s) === 0 ? '0' : s} %`;
}

/** A duration for people: 45 s, 12.5 min, 3.2 h, 82 days. */
function fmtSpan(s) {
  if (!Number.isFinite(s)) return '–';
  if (s >= 3 * 86400) return `${fmtNum(s / 86400, 1)} days`;
  if (s >= 3 * 3600) return `${fmtNum(s / 3600, 1)} h`;
  if (s >= 15 * 60) return `${fmtNum(s / 60, 1)} min`;
  return `${fmtNum(s, 1)} s`;
}

// ---- the hash: the view, never the data -------------------------------------

/** The view in the hash: example, run, rank, chart window and what-if values. */
function readHash() {
  const h = new URLSearchParams(location.hash.replace(/^#/, ''));
  const range = (h.get('range') || '').split('-').map(Number);
  const wi = {};
  for (const part of (h.get('wi') || '').split(',')) {
    const [k, v] = part.split(':');
    if (k && Number.isFinite(Number(v))) wi[k] = Number(v);
  }
  return {
    example: h.get('example'),
    run: h.get('run') ? Number(h.get('run')) : null,
    rank: h.get('rank'),
    range: range.length === 2 && range.every(Number.isFinite) && range[1] > range[0] ? range : null,
    wi,
  };
}

let hashTimer = 0;
/** Writes the view into the hash (replacing the history entry: a view is not a page). */
export function writeHash() {
  clearTimeout(hashTimer);
  hashTimer = setTimeout(() => {
    const h = new URLSearchParams();
    if (state.example) h.set('example', state.example);
    const judged = state.report && (state.report.runs || []).find((r) => r.analyzed);
    if (judged && state.report.runs.length > 1) h.set('run', String(judged.run));
    if ($('source').value) h.set('rank', $('source').value);
    if (state.range) h.set('range', state.range.map((t) => t.toFixed(1)).join('-'));
    const wi = whatIfSettings().filter(([k]) => k !== 'kv_scale' || true).map(([k, v]) => `${k}:${v}`);
    if (wi.length) h.set('wi', wi.join(','));
    const text = h.toString().replace(/%3A/g, ':').replace(/%2C/g, ',');
    history.replaceState(null, '', text ? `#${text}` : location.pathname + location.search);
  }, 50);
}

// ---- reading ---------------------------------------------------------------

/**
 * Reads one blob, or several files in order as one log (as the CLI reads several files).
 * `run`: of a log with restarts, the server run to judge (the last by default).
 */
export function start(blobs, name, run, example = null) {
  if (!state.worker) return;
  if (!Array.isArray(blobs)) blobs = [blobs];
  state.blobs = blobs;
  const size = blobs.reduce((n, b) => n + b.size, 0);
  if (state.busy) state.worker.postMessage({ type: 'cancel', id: state.jobId });
  state.jobId += 1;
  state.busy = true;
  if (!run) {
    // A new log: its own view, unless a link asked for one.
    state.example = example;
    state.range = null;
  }
  state.name = name;
  state.fileCount = blobs.length;
  // The old result is hidden while another is read: it would describe another file.
  $('result').hidden = true;
  $('problem').hidden = true;
  document.body.dataset.result = '';
  $('progress').value = 0;
  $('progress-text').textContent = '';
  $('progress-box').hidden = false;
  setStatus(`Reading ${name} (${fmtBytes(size)})…`);
  state.worker.postMessage({ type: 'read', id: state.jobId, blobs, run, formats: formatFile() });
}

function stopped() {
  state.busy = false;
  $('progress-box').hidden = true;
  $('file').value = ''; // the same file can be opened again
}

export function cancel() {
  if (state.busy) state.worker.postMessage({ type: 'cancel', id: state.jobId });
}

function onWorkerMessage(e) {
  const m = e.data;
  if (m.type === 'ready') { workerReady(); return; }
  if (m.type === 'fatal') { setStatus(`Could not start: ${m.message}`); return; }
  if (m.id !== state.jobId) return; // a cancelled job
  if (m.type === 'progress') {
    const pct = m.total > 0 ? (100 * m.bytes) / m.total : 100;
    $('progress').value = pct;
    const rate = m.seconds > 0 ? m.bytes / 1e6 / m.seconds : 0;
    $('progress-text').textContent =
      `${fmtBytes(m.bytes)} of ${fmtBytes(m.total)} (${pct.toFixed(1)}%) · ${rate.toFixed(0)} MB/s · ${fmtCount(m.lines, 'line', 'lines')}`;
  } else if (m.type === 'done') {
    stopped();
    state.runsKept = m.runsKept || null;
    document.body.dataset.fileReads = String(m.reads);
    const logBytes = fmtBytes(JSON.parse(m.json).input.bytes);
    const packed = state.fileCount > 1 ? 'of files' : 'gzip';
    const size = m.gzip ? `${fmtBytes(m.fileBytes)} ${packed}, ${logBytes} of log` : logBytes;
    setStatus(`Read ${state.name}: ${size} in ${m.seconds.toFixed(2)} s.`);
    show(m.json, m.markdown, null, m.problem);
  } else if (m.type === 'judged') {
    document.body.dataset.fileReads = String(m.reads);
    if (m.json) {
      setStatus(`Read ${state.name}: run ${m.run} judged from what was read (the file was not read again).`);
      show(m.json, m.markdown, null, m.problem);
    } else if (state.blobs) {
      // That run was let go for memory: it is judged by reading the file again.
      start(state.blobs, state.name, m.run);
    }
  } else if (m.type === 'window') {
    if (m.seq !== state.windowSeq || !m.json || !state.charts || !state.range) return;
    state.zoom = { ...JSON.parse(m.json), t0: m.t0, t1: m.t1 };
    state.charts.zoom(m.json);
    drawCharts();
  } else if (m.type === 'whatif') {
    showPrediction(m);
  } else if (m.type === 'roofline') {
    if (m.json) show(m.json, m.markdown, null, null);
    state.roofline.shown(m);
  } else if (m.type === 'cancelled') {
    stopped();
    setStatus(`Cancelled after ${fmtBytes(m.bytes)}.`);
    document.title = TITLE;
  } else if (m.type === 'error') {
    stopped();
    setStatus(`Error after ${fmtBytes(m.bytes)}: ${m.message}`);
    if (m.json) show(m.json, m.markdown, `Reading stopped with an error after ${fmtBytes(m.bytes)}; this is what was read so far.`);
  }
}

// ---- the report --------------------------------------------------------------

function show(json, markdown, warning, problem) {
  const r = JSON.parse(json);
  state.json = json;
  state.markdown = markdown;
  state.report = r;
  state.frames = {};
  document.body.dataset.reads = String(Number(document.body.dataset.reads || 0) + 1);
  if (state.charts) { state.charts.free(); state.charts = null; }
  state.zoom = null;
  document.title = `${state.name} · batchlens`;
  const stats = r.input.stat_lines + r.input.damaged_stat_lines;
  if (stats === 0) {
    showProblem(r, problem);
    return;
  }
  $('problem').hidden = true;
  $('result').hidden = false;
  document.body.dataset.result = 'report';
  $('result-file').textContent = state.name;

  const d = r.diagnosis;
  if (d) {
    $('headline').textContent = d.primary.headline;
    $('kind').textContent = d.primary.kind;
    $('confidence').textContent = `confidence ${Math.round(d.primary.confidence * 100)}%`;
  } else {
    $('headline').textContent = warning ||
      `Read ${fmtNum(r.input.stat_lines)} ${r.engine} stats lines; no verdict could be drawn from them.`;
    $('kind').textContent = 'no diagnosis';
    $('confidence').textContent = '';
  }
  if (warning && d) $('headline').textContent = `${warning} ${d.primary.headline}`;

  renderSummary(r);
  renderRuns(r);
  renderEvidence(d);
  renderActions(d);
  renderAlso(d);
  renderFaults(r, $('also-box'));
  renderReconciliation(r.reconciliation);
  renderUnrecognized(r);
  setupCharts(json);
  setupWhatIf(r);
  for (const fn of extraSections) {
    try { fn(r, state); } catch (err) { console.warn(err); }
  }
  applyPending();
  writeHash();
  $('verdict').focus({ preventScroll: false });
}

// `problem`: the sentence the CLI prints for this input (rendered by the wasm, so the
// two never differ); the title and the example lines are the page's.
function showProblem(r, problem) {
  $('result').hidden = true;
  $('problem').hidden = false;
  document.body.dataset.result = 'problem';
  let examples = r.input.unrecognized_examples;
  if (r.input.bytes === 0) {
    $('problem-title').textContent = 'Empty input';
  } else if (r.input.looks_binary && r.input.binary_format && r.input.binary_format.unpack) {
    $('problem-title').textContent = `A ${r.input.binary_format.name} file`;
  } else if (r.input.looks_binary) {
    $('problem-title').textContent = 'Not a text file';
  } else if (r.input.stats_disabled) {
    $('problem-title').textContent = 'Stats lines turned off';
    examples = [r.input.stats_disabled];
  } else if (r.input.other_server) {
    const o = r.input.other_server;
    $('problem-title').textContent = `${o.a_name[0].toUpperCase()}${o.a_name.slice(1)} log`;
    examples = [{ line: o.first_line, text: o.text }];
  } else {
    $('problem-title').textContent = 'No stats lines recognised';
  }
  const text = problem || '';
  $('problem-text').textContent = text ? text[0].toUpperCase() + text.slice(1) : '';
  renderLines($('problem-examples'), examples);
  $('problem-title').setAttribute('tabindex', '-1');
  $('problem-title').focus();
}

function renderLines(list, examples) {
  list.replaceChildren();
  for (const ex of examples || []) {
    const li = el('li');
    li.append(el('span', `line ${ex.line}${ex.why ? ` (${ex.why})` : ''}`, 'lineno'), ' ', el('code', ex.text));
    list.append(li);
  }
}

function renderUnrecognized(r) {
  const other = r.input.other_server;
  const odd = [
    ...r.input.damaged_examples.map((e) => ({ ...e, why: 'damaged stats line' })),
    ...r.input.unrecognized_examples.map((e) => ({ ...e, why: 'not recognised' })),
    ...(other ? [{ line: other.first_line, text: other.text, why: `${other.name} line` }] : []),
  ].sort((a, b) => a.line - b.line);
  renderLines($('unrecognized'), odd);
  $('unrecognized-count').textContent =
    `${fmtCount(r.input.damaged_stat_lines, 'damaged stats line', 'damaged stats lines')} (their clean fields are used), ` +
    `${fmtCount(r.input.unrecognized_lines, 'unrecognised line', 'unrecognised lines')}` +
    (other ? `, ${fmtCount(other.lines, 'line', 'lines')} of ${other.a_name} server (${other.note})` : '') +
    '. Examples:';
  $('unrecognized-box').hidden = odd.length === 0;
}

export function renderSummary(r) {
  const s = r.summary;
  const f = r.diagnosis && r.diagnosis.facts;
  const rows = [];
  // One headline figure: the steady state the verdict judges; the others say what they are.
  if (f && f.server_gen_tok_s) {
    rows.push(['Throughput (steady state)', `${fmtNum(f.server_gen_tok_s)} tokens/s generated, over the window the verdict judges` +
      (f.steady_start_s != null ? ` (${fmtSpan(f.steady_start_s)} to ${fmtSpan(f.steady_end_s)} into the log)` : ''), 'headline-figure']);
  }
  rows.push(
    ['Engine', r.engine],
    ['Lines read', `${fmtNum(r.input.lines)} (${fmtCount(r.input.stat_lines, 'stats line', 'stats lines')})` +
      (r.input.json_records ? `; ${fmtCount(r.input.json_records, 'line', 'lines')} read from JSON records (Docker, journald, a collector)` : '') +
      (r.input.joined_pieces ? `; ${fmtCount(r.input.joined_pieces, 'piece', 'pieces')} of lines over 16 KiB joined back` : '')],
    ['Span', `${fmtSpan(r.span_seconds)} (busy ${fmtSpan(r.busy_seconds)})` +
      (r.first_timestamp ? `, from ${r.first_timestamp}` : '')],
  );
  const judged = (r.runs || []).find((run) => run.analyzed);
  if (judged) {
    // Several server runs: the figures below are the judged run's.
    rows.push(['Server runs', `${r.runs.length}; run ${judged.run} judged (lines ${judged.first_line}–${judged.last_line}, ` +
      `${fmtCount(judged.stat_lines, 'stats line', 'stats lines')})`]);
  }
  rows.push(
    ['Throughput over the whole log', s.gen_throughput_tok_s ? `mean ${fmtNum(s.gen_throughput_tok_s.mean)} tokens/s of the stats lines, highest ${fmtNum(s.gen_throughput_tok_s.max)}` : '–'],
    ['Running requests', s.running_requests ? `mean ${fmtNum(s.running_requests.mean, 1)}, max ${fmtNum(s.running_requests.max)}` : '–'],
    ['Queued requests', s.queued_requests ? `mean ${fmtNum(s.queued_requests.mean, 1)}, max ${fmtNum(s.queued_requests.max)}` : '–'],
    ['KV cache usage', s.kv_usage ? `mean ${fmtNum(s.kv_usage.mean * 100)}%, max ${fmtNum(s.kv_usage.max * 100)}%` : '–'],
    [eventsWord(r)[0].toUpperCase() + eventsWord(r).slice(1), fmtNum(s.retractions)],
  );
  // Only where the log times its iterations (TensorRT-LLM).
  if (s.prefill_time_share != null) {
    rows.push(['Prefill time', `${fmtNum(s.prefill_time_share * 100)}% of the iterations' time`]);
  }
  const dl = $('summary');
  dl.replaceChildren();
  for (const [k, v, cls] of rows) dl.append(el('dt', k, cls), el('dd', v, cls));
}

/** The engine's word for evicting a running request, plural. */
function eventsWord(r) {
  return r.engine === 'sglang' ? 'retractions' : r.engine === 'trtllm' ? 'pauses' : 'preemptions';
}

/** A log with restarts: a choice of the server run to judge (every run, newest last). */
export function renderRuns(r) {
  const runs = r.runs || [];
  const sel = $('run');
  sel.replaceChildren();
  for (const run of runs) {
    const o = new Option(`Run ${run.run}: lines ${run.first_line}–${run.last_line}` +
      (run.first_timestamp ? `, from ${run.first_timestamp}` : ''), String(run.run));
    o.selected = run.analyzed;
    sel.append(o);
  }
  // A crash-looping server: the report lists only the latest runs; say so.
  const restarts = (r.events && r.events.restarts) ?? (r.summary && r.summary.restarts) ?? 0;
  const total = Math.max(runs.length, restarts + 1);
  const more = runs.length > 1 && total > runs.length;
  const notes = [];
  if (more) notes.push(`${fmtNum(runs.length)} of ${fmtNum(total)} runs listed (the latest)`);
  // The worker keeps each run it read, up to a memory cap: the oldest past it are read again.
  const kept = new Set(state.runsKept || []);
  const again = state.runsKept ? runs.filter((x) => !kept.has(x.run)).length : 0;
  if (again > 0) notes.push(`${fmtNum(again)} of the oldest runs are read again from the file when chosen (the page keeps the latest in memory)`);
  $('run-note').textContent = notes.join('; ');
  $('run-box').hidden = runs.length < 2;
}

/** Line numbers as links: each moves the charts' crosshair to that line's time. */
function lineLinks(lines) {
  const span = el('span', null, 'lineno');
  span.append(`(line${lines.length > 1 ? 's' : ''} `);
  lines.forEach((n, i) => {
    if (i) span.append(', ');
    const a = el('a', fmtNum(n));
    a.href = '#';
    a.dataset.line = String(n);
    a.title = 'Show this line\'s time on the charts';
    a.addEventListener('click', (e) => { e.preventDefault(); showLine(n); });
    span.append(a);
  });
  span.append(')');
  return span;
}

const LONG_LIST = 8;
export function renderEvidence(d) {
  const list = $('evidence');
  list.replaceChildren();
  const items = d ? d.primary.evidence : [];
  for (const ev of items) {
    const li = el('li', ev.statement);
    const lines = ev.lines || [];
    if (lines.length > LONG_LIST) {
      // A long list collapses: "64 lines — show them".
      const det = el('details', null, 'lines-more');
      det.append(el('summary', `${fmtNum(lines.length)} lines — show them`), lineLinks(lines));
      li.append(' ', det);
    } else if (lines.length) {
      li.append(' ', lineLinks(lines));
    }
    list.append(li);
  }
  $('evidence-box').hidden = items.length === 0;
}

/** Client advice (not a server flag): the client's concurrency, flags named `client:…`. */
function isClientAction(a) {
  return a.id === 'client_concurrency' || /^client:/.test(a.flag || '');
}

const BOUND = { kv_cache: 'the KV cache', max_running: 'the running cap', client: 'the client' };

/** An action's predicted gain and what binds next, coloured only when it improves. */
function gainBadge(a) {
  const p = el('p', null, 'gain');
  if (a.predicted_gain == null) {
    p.textContent = 'no prediction (the model cannot be fitted to this log)';
    p.classList.add('gain-none');
    return p;
  }
  const g = a.predicted_gain;
  const better = g >= 0.005;
  p.classList.add(better ? 'gain-up' : g <= -0.005 ? 'gain-down' : 'gain-flat');
  p.append(el('strong', better || g <= -0.005 ? fmtGain(g) : 'no change', 'gain-pct'), ' predicted throughput');
  if (a.predicted) {
    p.append(` (~${fmtNum(a.predicted.gen_throughput_tok_s)} tok/s); then bound by ${BOUND[a.predicted.bound_by] || a.predicted.bound_by}`);
  }
  p.dataset.gain = String(g);
  return p;
}

export function renderActions(d) {
  const list = $('actions');
  const client = $('client');
  list.replaceChildren();
  client.replaceChildren();
  const all = d ? d.primary.actions : [];
  // Ranked by predicted gain; actions without a prediction keep their order after them.
  const ranked = all.map((a, i) => ({ a, i }))
    .sort((x, y) => ((y.a.predicted_gain ?? -Infinity) - (x.a.predicted_gain ?? -Infinity)) || (x.i - y.i))
    .map((x) => x.a);
  for (const a of ranked) {
    const li = el('li');
    if (isClientAction(a)) {
      li.append(el('p', a.flag.replace(/^client:\s*/, ''), 'client-advice'), el('p', a.why), gainBadge(a));
      client.append(li);
      continue;
    }
    const flagRow = el('div', null, 'flag-row');
    const code = el('code', a.flag, 'flag');
    const copy = el('button', 'Copy', 'copy');
    copy.type = 'button';
    copy.setAttribute('aria-label', `Copy ${a.flag}`);
    copy.addEventListener('click', () => copyText(a.flag, copy, code));
    flagRow.append(code, copy);
    const up = a.predicted_gain != null && a.predicted_gain >= 0.005;
    li.append(flagRow, gainBadge(a), el('p', a.why), el('p', a.effect, up ? 'effect gain-up' : 'effect'));
    list.append(li);
  }
  $('actions-box').hidden = list.children.length === 0;
  $('client-box').hidden = client.children.length === 0;
}

export function renderAlso(d) {
  const list = $('also');
  list.replaceChildren();
  const items = d ? d.findings.filter((f) => f !== d.findings[0] && f.kind !== d.primary.kind) : [];
  for (const f of items) {
    const li = el('li');
    li.append(el('strong', f.headline), ' ', el('span', `(${f.kind}, confidence ${Math.round(f.confidence * 100)}%` +
      (f.predicted_gain != null ? `, ${fmtGain(f.predicted_gain)} predicted` : '') + ')', 'lineno'));
    const flags = f.actions.filter((a) => !isClientAction(a)).slice(0, 2).map((a) => a.flag);
    if (flags.length) li.append(el('p', `Flags: ${flags.join(' · ')}`));
    list.append(li);
  }
  $('also-box').hidden = items.length === 0;
}

export function renderReconciliation(rc) {
  $('reconcile-box').hidden = !rc;
  if (!rc) return;
  $('reconcile-summary').textContent =
    `The server generated ~${fmtNum(rc.server_gen_tok_s)} tok/s while busy; the client measured ` +
    `${fmtNum(rc.client_tok_s)} tok/s (${fmtNum(rc.gap_fraction * 100)}% less). Where the gap goes:`;
  const list = $('reconcile-parts');
  list.replaceChildren();
  for (const p of rc.parts) list.append(el('li', `${fmtNum(p.tok_s)} tok/s — ${p.cause}: ${p.evidence}`));
  list.append(el('li', `unexplained: ${fmtNum(rc.unexplained_fraction * 100, 1)}% of the server rate`));
  $('reconcile-advice').textContent = rc.advice || '';
}

// ---- what if -------------------------------------------------------------

const whatif = { seq: 0, timer: 0, base: null };

/** A logarithmic slider: position 0…1000 over lo…hi, whole numbers. */
function logValue(input) {
  // At the position it was set to, the value it was set to (not a rounding of it).
  if (input.dataset.at === input.value) return Number(input.dataset.exact);
  const lo = Math.log(Number(input.dataset.lo));
  const hi = Math.log(Number(input.dataset.hi));
  return Math.max(1, Math.round(Math.exp(lo + ((hi - lo) * Number(input.value)) / 1000)));
}
function setLog(input, v) {
  const lo = Math.log(Number(input.dataset.lo));
  const hi = Math.log(Number(input.dataset.hi));
  input.value = String(Math.round((1000 * (Math.log(Math.max(1, v)) - lo)) / (hi - lo)));
  input.dataset.at = input.value;
  input.dataset.exact = String(Math.round(v));
}

export function setupWhatIf(r) {
  const f = r.diagnosis && r.diagnosis.facts;
  // A stalled server is not a capacity verdict: no setting of the batch moves it, so no
  // what-if is offered (the CLI withholds it too).
  const stalled = r.diagnosis && r.diagnosis.primary && r.diagnosis.primary.kind === 'stalled';
  const ok = f && !stalled && f.server_gen_tok_s > 0 && f.running_requests > 0;
  $('whatif-box').hidden = !ok;
  whatif.base = null;
  if (!ok) return;
  const demand = Math.max(1, Math.round(f.running_requests + (f.queued_requests || 0)));
  const cap = r.config.max_running_requests;
  // What the cap is now: the configured one, or (none logged) what runs.
  const capNow = cap || Math.max(1, Math.round(f.running_requests));
  const cons = r.config.schedule_conservativeness ?? 1;
  whatif.base = { demand, cap, capNow, capacity: r.config.kv_capacity_tokens, cons, engine: r.engine };
  const capIn = $('wi-cap');
  capIn.dataset.lo = '1';
  capIn.dataset.hi = String(Math.max(64, 4 * capNow, 4 * Math.ceil(f.running_requests)));
  setLog(capIn, capNow);
  const cl = $('wi-clients');
  cl.dataset.lo = '1';
  cl.dataset.hi = String(Math.max(64, 4 * demand));
  setLog(cl, demand);
  $('wi-kv').value = 1;
  $('wi-cons').value = cons;
  $('wi-prefill').value = 1;
  // Schedule conservativeness is SGLang's own setting.
  for (const id of ['wi-cons']) {
    const show = r.engine === 'sglang';
    $(id).hidden = !show;
    $(`${id}-out`).parentElement.hidden = !show;
  }
  updateWhatIf(false);
}

/** The what-if settings that differ from today's, as [parameter, value]. */
export function whatIfSettings() {
  const b = whatif.base;
  if (!b) return [];
  const out = [];
  const kv = Number($('wi-kv').value);
  if (kv !== 1) out.push(['kv_scale', kv]);
  const cap = logValue($('wi-cap'));
  if (cap !== b.capNow) out.push(['max_running', cap]);
  const clients = logValue($('wi-clients'));
  if (clients !== b.demand) out.push(['client_concurrency', clients]);
  const cons = Number($('wi-cons').value);
  if (!$('wi-cons').hidden && Math.abs(cons - b.cons) > 1e-9) out.push(['schedule_conservativeness', cons]);
  const pf = Number($('wi-prefill').value);
  if (pf !== 1) out.push(['prefill_cost_scale', pf]);
  return out;
}

/** Sets the sliders from the hash's what-if values. */
function applyWhatIf(wi) {
  const b = whatif.base;
  if (!b) return;
  if (wi.kv_scale != null) $('wi-kv').value = wi.kv_scale;
  if (wi.max_running != null) setLog($('wi-cap'), wi.max_running);
  if (wi.client_concurrency != null) setLog($('wi-clients'), wi.client_concurrency);
  if (wi.schedule_conservativeness != null) $('wi-cons').value = wi.schedule_conservativeness;
  if (wi.prefill_cost_scale != null) $('wi-prefill').value = wi.prefill_cost_scale;
  updateWhatIf(false);
}

function updateWhatIf(toHash = true) {
  const b = whatif.base;
  if (!b) return;
  const kv = Number($('wi-kv').value);
  $('wi-kv-out').textContent = `×${kv.toFixed(2)}` + (b.capacity ? ` (${fmtNum(b.capacity * kv)} tokens)` : '');
  const cap = logValue($('wi-cap'));
  $('wi-cap-out').textContent = fmtNum(cap) + (cap === b.capNow ? (b.cap ? ' (now)' : ' (running now; no cap logged)') : '');
  const clients = logValue($('wi-clients'));
  $('wi-clients-out').textContent = fmtNum(clients) + (clients === b.demand ? ' (in flight now)' : '');
  $('wi-cons-out').textContent = Number($('wi-cons').value).toFixed(2);
  $('wi-prefill-out').textContent = `×${Number($('wi-prefill').value).toFixed(2)}`;
  clearTimeout(whatif.timer);
  whatif.timer = setTimeout(() => {
    whatif.seq += 1;
    const settings = whatIfSettings();
    state.worker.postMessage({
      type: 'whatif', id: state.jobId, seq: whatif.seq,
      changes: settings.map(([k, v]) => `${k}=${v}`).join(','), settings,
    });
  }, 60);
  if (toHash) writeHash();
}

const LEVER_NAMES = {
  kv_scale: 'KV', max_running: 'cap', client_concurrency: 'clients',
  schedule_conservativeness: 'conservativeness', prefill_cost_scale: 'prefill cost',
};

function showPrediction(m) {
  if (m.id !== state.jobId || m.seq !== whatif.seq) return;
  const out = $('whatif-result');
  if (m.error) { out.textContent = `Could not predict: ${m.error}`; return; }
  const w = JSON.parse(m.json);
  if (!w) { out.textContent = 'The log has too little to fit the model to.'; return; }
  const p = w.predicted;
  // The CLI's sentence for the prediction, rendered by the wasm.
  out.textContent = `Predicted: ${m.text}.`;
  out.dataset.tokS = String(p.gen_throughput_tok_s);
  const base = w.baseline && w.baseline.gen_throughput_tok_s;
  out.className = base && p.gen_throughput_tok_s > base * 1.005 ? 'prediction gain-up' : 'prediction';
  // Each value as the setting that makes it.
  const flags = $('whatif-flags');
  flags.replaceChildren();
  for (const [k, v, flag] of m.flags || []) {
    const li = el('span', null, 'setting');
    const what = k === 'kv_scale' || k === 'prefill_cost_scale' ? `${LEVER_NAMES[k]} ×${v}` : `${LEVER_NAMES[k]} ${v}`;
    li.append(`${what} → `);
    if (flag) li.append(el('code', flag));
    else if (k === 'client_concurrency') li.append(`keep ~${fmtNum(v)} requests in flight at the client`);
    else if (k === 'kv_scale') li.append(`a pool of ${fmtNum((whatif.base.capacity || 0) * v)} tokens (the log does not say how much memory that takes)`);
    else li.append('no single flag (chunked prefill, a smaller prompt share)');
    flags.append(li);
  }
}

async function copyText(text, button, code) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = 'Copied';
  } catch (_) {
    const sel = window.getSelection();
    const range = document.createRange();
    range.selectNodeContents(code);
    sel.removeAllRanges();
    sel.addRange(range);
    button.textContent = 'Selected: press Ctrl+C';
  }
  setTimeout(() => { button.textContent = 'Copy'; }, 2000);
}

// ---- charts --------------------------------------------------------------

function setupCharts(json) {
  try {
    state.charts = new Charts(json);
  } catch (err) {
    setStatus(`Could not read the report for the charts: ${err.message || err}`);
    return;
  }
  // Series without a rank name are part of the combined one, not an entry of their own.
  const sources = state.charts.sources().filter((s) => s.trim() !== '');
  const sel = $('source');
  sel.replaceChildren();
  if (sources.length > 0) {
    sel.append(new Option('All combined', ''));
    for (const s of sources) sel.append(new Option(s, s));
  }
  $('source-box').hidden = sources.length === 0;
  drawCharts();
  requestWindow();
}

/** The series the charts show (a rank's, or the combined one), of the window drawn while zoomed. */
function series(timeline = state.zoom || (state.report && state.report.timeline)) {
  if (!timeline) return [];
  const src = $('source').value;
  const per = src && (timeline.per_source || []).find((s) => s.source === src);
  return per ? per.points : timeline.points;
}

/** The report's own series (the whole run). */
function fullSeries() {
  return state.report ? series(state.report.timeline) : [];
}

/** Asks the worker for the window shown, re-bucketed from the whole run's finer series. */
function requestWindow() {
  state.windowSeq += 1;
  if (!state.range || !state.report || state.busy || !state.worker) return;
  state.worker.postMessage({ type: 'window', id: state.jobId, seq: state.windowSeq, t0: state.range[0], t1: state.range[1] });
}

function fullSpan() {
  const pts = fullSeries();
  const b = state.report ? state.report.timeline.bucket_seconds || 0 : 0;
  return pts.length ? Math.max(1, pts[pts.length - 1].t_s + b) : 1;
}

export function drawCharts() {
  if (!state.charts) return;
  const source = $('source').value || null;
  const scale = window.devicePixelRatio || 1;
  const [t0, t1] = state.range || [null, null];
  for (const name of CHARTS) {
    const canvas = $(`chart-${name}`);
    const w = Math.max(200, Math.round(canvas.clientWidth * scale));
    const h = Math.max(120, Math.round(canvas.clientHeight * scale));
    if (canvas.width !== w) canvas.width = w;
    if (canvas.height !== h) canvas.height = h;
    try {
      const f = state.charts.draw_window(canvas, name, dark.matches, source, scale, t0, t1, null);
      const fr = { left: f[0] / scale, top: f[1] / scale, right: f[2] / scale, bottom: f[3] / scale, t0: f[4], t1: f[5], yTop: f[6] };
      state.frames[name] = fr;
      // Where the plot lies, on its element: what a test (or a hook) maps a time to.
      Object.assign(canvas.parentElement.dataset, { left: fr.left, right: fr.right, top: fr.top, bottom: fr.bottom, t0: fr.t0, t1: fr.t1 });
      // What is drawn there: buckets with data in the window, and their width.
      Object.assign(canvas.parentElement.dataset, {
        buckets: state.charts.buckets_in(source, fr.t0, fr.t1), bucketSeconds: state.charts.bucket_seconds(),
      });
      const words = state.charts.describe(name, source);
      canvas.setAttribute('aria-label', words);
      $(`cap-${name}`).textContent = words;
    } catch (err) {
      $(`cap-${name}`).textContent = `Could not draw this chart: ${err.message || err}`;
    }
  }
  const r = state.range;
  $('range-text').textContent = r ? `Showing ${fmtSpan(r[0])} to ${fmtSpan(r[1])} into the log` : 'Drag across a chart to zoom';
  $('range-reset').hidden = !r;
  if (state.hover != null) crosshair(state.hover, null);
}

let redrawTimer = 0;
function scheduleRedraw() {
  clearTimeout(redrawTimer);
  redrawTimer = setTimeout(drawCharts, 80);
}

/** The window shown; null: the whole log. */
export function setRange(range) {
  const span = fullSpan();
  if (range) {
    let [a, b] = range;
    a = Math.max(0, a);
    b = Math.min(span, b);
    range = b - a >= Math.max(1e-3, span / 2000) && (a > 0 || b < span) ? [a, b] : null;
  }
  state.range = range;
  // The window drawn so far serves while the worker re-buckets this one, if it covers it.
  const z = state.zoom;
  if (!range || (z && (range[0] < z.t0 || range[1] > z.t1))) {
    state.zoom = null;
    if (state.charts) state.charts.unzoom();
  }
  drawCharts();
  requestWindow();
  writeHash();
}

/** The wall-clock time of a point: the first stats line's stamp plus its offset. */
function wallClock(t) {
  const r = state.report;
  const stamp = r && r.first_timestamp;
  const m = stamp && stamp.match(/(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)/);
  if (!m) return null;
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) + t * 1000);
  return d.toISOString().replace('T', ' ').slice(0, 19);
}

const VALUES = {
  throughput: (p) => [['generated', p.gen_tok_s, 'tok/s']],
  concurrency: (p) => [['running', p.running, ''], ['queued', p.queued, '']],
  kv_usage: (p) => [['KV usage', p.kv_usage != null ? p.kv_usage * 100 : null, '%']],
  prefill: (p) => [['input', p.input_tok_s, 'tok/s']],
};

/** The bucket nearest to `t` in the series shown. */
function pointAt(t) {
  const pts = series();
  if (!pts.length) return null;
  let lo = 0;
  let hi = pts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (pts[mid].t_s < t) lo = mid + 1; else hi = mid;
  }
  if (lo > 0 && Math.abs(pts[lo - 1].t_s - t) <= Math.abs(pts[lo].t_s - t)) lo -= 1;
  return pts[lo];
}

/** The crosshair at time `t` on every chart, the values on `on` (the chart under the pointer). */
function crosshair(t, on) {
  state.hover = t;
  const p = pointAt(t);
  for (const name of CHARTS) {
    const f = state.frames[name];
    const plot = document.querySelector(`.plot[data-chart="${name}"]`);
    const cross = plot.querySelector('.cross');
    const tip = plot.querySelector('.tip');
    if (!f || !p || p.t_s < f.t0 || p.t_s > f.t1) { cross.hidden = true; tip.hidden = true; continue; }
    const x = f.left + ((p.t_s - f.t0) / (f.t1 - f.t0)) * (f.right - f.left);
    cross.hidden = false;
    cross.style.left = `${x}px`;
    cross.style.top = `${f.top}px`;
    cross.style.height = `${f.bottom - f.top}px`;
    if (on && on !== name) { tip.hidden = true; continue; }
    if (!on && name !== (crosshair.last || 'throughput')) { tip.hidden = true; continue; }
    const vals = VALUES[name](p).map(([k, v, u]) => `${k} ${v == null ? '–' : fmtNum(v, v < 10 ? 1 : 0)}${u ? ' ' + u : ''}`);
    if (name === 'kv_usage' && p.retractions) vals.push(`${fmtNum(p.retractions)} ${eventsWord(state.report)}`);
    const when = wallClock(p.t_s);
    tip.replaceChildren(el('strong', vals.join(' · ')), el('br'),
      `${when ? when + ' · ' : ''}${fmtSpan(p.t_s)} in · line ${fmtNum(p.line)}`);
    tip.hidden = false;
    tip.dataset.t = String(p.t_s);
    const w = plot.clientWidth;
    tip.style.left = `${Math.min(Math.max(0, x + 8), Math.max(0, w - tip.offsetWidth))}px`;
    tip.style.top = `${f.top + 4}px`;
  }
  if (on) crosshair.last = on;
}

function hideCrosshair() {
  state.hover = null;
  for (const e of document.querySelectorAll('.plot .cross, .plot .tip')) e.hidden = true;
}

/** An evidence line: the crosshair at the bucket holding it, the window widened to show it. */
function showLine(n) {
  const pts = fullSeries();
  let best = null;
  for (const p of pts) { if (p.line <= n) best = p; else break; }
  if (!best) best = pts[0];
  if (!best) return;
  if (state.range && (best.t_s < state.range[0] || best.t_s > state.range[1])) setRange(null);
  $('charts-box').scrollIntoView({ block: 'start' });
  crosshair(best.t_s, 'throughput');
}

function timeAt(name, clientX) {
  const f = state.frames[name];
  const plot = document.querySelector(`.plot[data-chart="${name}"]`);
  const x = clientX - plot.getBoundingClientRect().left;
  const u = Math.min(1, Math.max(0, (x - f.left) / (f.right - f.left)));
  return f.t0 + u * (f.t1 - f.t0);
}

function wireChart(name) {
  const plot = document.querySelector(`.plot[data-chart="${name}"]`);
  const canvas = $(`chart-${name}`);
  const brush = plot.querySelector('.brush');
  let from = null;
  plot.addEventListener('pointermove', (e) => {
    if (!state.frames[name]) return;
    const t = timeAt(name, e.clientX);
    crosshair(t, name);
    if (from != null) {
      const f = state.frames[name];
      const x0 = f.left + ((Math.min(from, t) - f.t0) / (f.t1 - f.t0)) * (f.right - f.left);
      const x1 = f.left + ((Math.max(from, t) - f.t0) / (f.t1 - f.t0)) * (f.right - f.left);
      brush.hidden = false;
      brush.style.left = `${x0}px`;
      brush.style.width = `${x1 - x0}px`;
      brush.style.top = `${f.top}px`;
      brush.style.height = `${f.bottom - f.top}px`;
    }
  });
  plot.addEventListener('pointerleave', () => { if (from == null) hideCrosshair(); });
  plot.addEventListener('pointerdown', (e) => {
    if (!state.frames[name] || e.button !== 0) return;
    from = timeAt(name, e.clientX);
    plot.setPointerCapture(e.pointerId);
    e.preventDefault();
  });
  plot.addEventListener('pointerup', (e) => {
    if (from == null) return;
    const to = timeAt(name, e.clientX);
    const a = Math.min(from, to);
    const b = Math.max(from, to);
    from = null;
    brush.hidden = true;
    const f = state.frames[name];
    // A click, not a drag: only the crosshair moves.
    if ((b - a) / (f.t1 - f.t0) > 0.01) setRange([a, b]);
  });
  canvas.addEventListener('keydown', (e) => {
    const f = state.frames[name];
    if (!f) return;
    const w = f.t1 - f.t0;
    const t = state.hover ?? (f.t0 + f.t1) / 2;
    const bucket = (state.zoom || state.report.timeline).bucket_seconds || 0;
    const step = series().length ? Math.max(bucket, w / 100) : w / 100;
    if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
      const dir = e.key === 'ArrowLeft' ? -1 : 1;
      if (e.shiftKey) setRange([f.t0 + (dir * w) / 4, f.t1 + (dir * w) / 4]);
      else crosshair(Math.min(f.t1, Math.max(f.t0, t + dir * step)), name);
    } else if (e.key === '+' || e.key === '=') {
      setRange([t - w / 4, t + w / 4]);
    } else if (e.key === '-') {
      setRange([t - w, t + w]);
    } else if (e.key === '0') {
      setRange(null);
    } else {
      return;
    }
    e.preventDefault();
  });
  canvas.addEventListener('blur', hideCrosshair);
}

// ---- export --------------------------------------------------------------

function baseName() {
  return (state.name || 'log').replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9._-]+/g, '_') || 'log';
}

/** What an exported chart says of itself: the file, the verdict, the window. */
function exportCaption() {
  const r = state.report;
  const d = r && r.diagnosis;
  const f = state.frames.throughput;
  const win = f ? `${fmtSpan(f.t0)}–${fmtSpan(f.t1)}` : 'whole log';
  const src = $('source').value;
  return `${state.name} · ${d ? d.primary.kind : 'no diagnosis'} · window ${win}${src ? ' · ' + src : ''} · batchlens`;
}

function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** A chart at twice its size on the screen, with the caption in the image. */
function exportPng(name) {
  if (!state.charts) return;
  const shown = $(`chart-${name}`);
  const c = document.createElement('canvas');
  c.width = Math.max(960, shown.clientWidth * 2);
  c.height = Math.round((c.width * Math.max(120, shown.clientHeight)) / Math.max(200, shown.clientWidth));
  const [t0, t1] = state.range || [null, null];
  state.charts.draw_window(c, name, false, $('source').value || null, c.width / Math.max(200, shown.clientWidth), t0, t1, exportCaption());
  c.toBlob((blob) => { if (blob) download(blob, `${baseName()}.${name}.png`); }, 'image/png');
}

function exportSvg(name) {
  if (!state.charts) return;
  const [t0, t1] = state.range || [null, null];
  const svg = state.charts.svg_window(name, false, $('source').value || null, 960, 440, t0, t1, exportCaption());
  download(new Blob([svg], { type: 'image/svg+xml' }), `${baseName()}.${name}.svg`);
}

// ---- wiring --------------------------------------------------------------

/**
 * Several files (a rotated log: server.log.2, server.log.1, server.log) are read
 * as one log, oldest first: by last modification (rotation keeps a file's time),
 * then by name.
 */
export function startFiles(list) {
  const all = [...(list || [])];
  // Format files among them are read first (a file's text is a promise); a log alone
  // starts at once.
  if (all.some((f) => /\.(toml|json)$/i.test(f.name || ''))) {
    takeFormatFiles(all, rerun).then(readFiles);
  } else {
    readFiles(all);
  }
}

function readFiles(files) {
  if (files.length === 0) return;
  files.sort((a, b) => (a.lastModified - b.lastModified) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const name = files.length === 1 ? files[0].name : `${files.length} files (${files.map((f) => f.name).join(', ')})`;
  start(files, name);
}

/** The current log read again (a format file was set or changed). */
function rerun() {
  if (state.blobs) start(state.blobs, state.name);
}

async function openExample(src, keepHash = false) {
  try {
    const res = await fetch(src);
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const name = src.split('/').pop();
    if (!keepHash) state.pending = null;
    start(await res.blob(), name, null, name);
  } catch (err) {
    setStatus(`Could not load the example: ${err.message || err}`);
  }
}

/** The hash's view, applied once to the report it was made for. */
function applyPending() {
  const p = state.pending;
  if (!p) return;
  const r = state.report;
  const judged = (r.runs || []).find((x) => x.analyzed);
  if (p.run && judged && p.run !== judged.run && r.runs.some((x) => x.run === p.run)) {
    // Another run: judged from what was read (the hash stays pending).
    const run = p.run;
    p.run = null;
    judgeRun(run);
    return;
  }
  state.pending = null;
  if (p.rank && [...$('source').options].some((o) => o.value === p.rank)) {
    $('source').value = p.rank;
  }
  state.range = null;
  if (p.range) setRange(p.range); else drawCharts();
  applyWhatIf(p.wi || {});
}

/** Another server run of the log read: the worker judges it from what it kept, or reads the file again. */
function judgeRun(run) {
  if (!state.report || state.busy) {
    if (state.blobs) start(state.blobs, state.name, run);
    return;
  }
  setStatus(`Judging run ${run} of ${state.name}…`);
  state.worker.postMessage({ type: 'judge', id: state.jobId, run });
}

function toggleHelp(show) {
  const help = $('help');
  help.hidden = show === undefined ? !help.hidden : !show;
  $('help-button').setAttribute('aria-expanded', String(!help.hidden));
}

function workerReady() {
  document.body.dataset.ready = '1';
  setStatus('Ready. Open a log (or drop it anywhere), paste text or try an example.');
  const h = readHash();
  if (h.example || h.run || h.rank || h.range || Object.keys(h.wi).length) state.pending = h;
  if (h.example) {
    const b = [...document.querySelectorAll('button.example')].find((x) => x.dataset.src.endsWith(`/${h.example}`));
    if (b) openExample(b.dataset.src, true);
  }
}

function wireDrop() {
  // Dropped anywhere on the window: an overlay says so while a file is over it.
  const overlay = $('drop-overlay');
  let depth = 0;
  const hasFiles = (e) => e.dataTransfer && [...(e.dataTransfer.types || [])].includes('Files');
  window.addEventListener('dragenter', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    depth += 1;
    overlay.hidden = false;
  });
  window.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (depth === 0) overlay.hidden = true;
  });
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('drop', (e) => {
    e.preventDefault();
    depth = 0;
    overlay.hidden = true;
    state.pending = state.pending && !state.report ? state.pending : null;
    startFiles(e.dataTransfer && e.dataTransfer.files);
  });
}

function wireKeys() {
  document.addEventListener('keydown', (e) => {
    const t = e.target;
    const typing = t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
    if (e.key === 'Escape') {
      if (state.busy) cancel();
      toggleHelp(false);
      return;
    }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === 'o') { e.preventDefault(); $('file').click(); }
    else if (e.key === '?') { e.preventDefault(); toggleHelp(); }
  });
}

async function main() {
  await init();
  state.worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  state.worker.onmessage = onWorkerMessage;
  state.worker.onerror = (e) => setStatus(`The reader stopped: ${e.message || 'unknown error'}`);
  state.roofline = initRoofline((q) => state.worker.postMessage({ type: 'roofline', id: state.jobId, ...q }));

  setupFormats($('input'), rerun);
  wireDrop();
  wireKeys();
  for (const id of ['open', 'open-big']) $(id).addEventListener('click', () => $('file').click());
  $('help-button').addEventListener('click', () => toggleHelp());
  $('run').addEventListener('change', (e) => {
    // Another run of the same log: judged from what was read, not read again.
    if (state.blobs) judgeRun(Number(e.target.value));
  });
  $('file').addEventListener('change', (e) => {
    state.pending = state.pending && !state.report ? state.pending : null;
    startFiles(e.target.files);
  });
  $('paste-go').addEventListener('click', () => {
    const text = $('paste').value;
    start(new Blob([text], { type: 'text/plain' }), 'pasted text');
  });
  for (const b of document.querySelectorAll('button.example')) {
    b.addEventListener('click', () => openExample(b.dataset.src));
  }
  $('cancel').addEventListener('click', cancel);
  $('source').addEventListener('change', () => { drawCharts(); writeHash(); });
  $('range-reset').addEventListener('click', () => setRange(null));
  for (const id of ['wi-kv', 'wi-cap', 'wi-clients', 'wi-cons', 'wi-prefill']) $(id).addEventListener('input', () => updateWhatIf());
  $('wi-reset').addEventListener('click', () => { if (state.report) { setupWhatIf(state.report); writeHash(); } });
  $('export-json').addEventListener('click', () => {
    if (state.json) download(new Blob([state.json], { type: 'application/json' }), `${baseName()}.batchlens.json`);
  });
  $('export-md').addEventListener('click', () => {
    if (state.markdown) download(new Blob([state.markdown], { type: 'text/markdown' }), `${baseName()}.batchlens.md`);
  });
  for (const b of document.querySelectorAll('button.png')) b.addEventListener('click', () => exportPng(b.dataset.chart));
  for (const b of document.querySelectorAll('button.svg')) b.addEventListener('click', () => exportSvg(b.dataset.chart));
  for (const name of CHARTS) wireChart(name);
  new ResizeObserver(scheduleRedraw).observe($('charts-box'));
  dark.addEventListener('change', drawCharts);
  window.addEventListener('hashchange', () => {
    // A link pasted into this tab: the same file's view.
    const h = readHash();
    if (h.example && h.example !== state.example) {
      state.pending = h;
      const b = [...document.querySelectorAll('button.example')].find((x) => x.dataset.src.endsWith(`/${h.example}`));
      if (b) openExample(b.dataset.src, true);
    } else if (state.report) {
      state.pending = h;
      applyPending();
    }
  });
}

main().catch((err) => setStatus(`Could not start: ${err.message || err}`));
