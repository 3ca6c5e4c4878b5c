// The page: hands files to the worker, shows the report, draws the charts.
// Log-derived text is only ever inserted with textContent, never as HTML.
import init, { Charts } from './batchlens-web.js';
import { initRoofline } from './roofline.js';

const $ = (id) => document.getElementById(id);
const CHARTS = ['throughput', 'concurrency', 'kv_usage', 'prefill'];
const dark = window.matchMedia('(prefers-color-scheme: dark)');

const state = {
  worker: null,
  jobId: 0,
  busy: false,
  name: '',
  json: null,
  markdown: null,
  report: null,
  charts: null,
  blobs: null, // what was read last, to read again for another server run
};

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

// ---- reading -------------------------------------------------------------

/**
 * Reads one blob, or several files in order as one log (as the CLI reads several files).
 * `run`: of a log with restarts, the server run to judge (the last by default).
 */
function start(blobs, name, run) {
  if (!state.worker) return;
  if (!Array.isArray(blobs)) blobs = [blobs];
  state.blobs = blobs;
  const size = blobs.reduce((n, b) => n + b.size, 0);
  if (state.busy) state.worker.postMessage({ type: 'cancel', id: state.jobId });
  state.jobId += 1;
  state.busy = true;
  state.name = name;
  state.fileCount = blobs.length;
  $('progress').value = 0;
  $('progress-text').textContent = '';
  $('progress-box').hidden = false;
  setStatus(`Reading ${name} (${fmtBytes(size)})…`);
  state.worker.postMessage({ type: 'read', id: state.jobId, blobs, run });
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
    state.busy = false;
    $('progress-box').hidden = true;
    const logBytes = fmtBytes(JSON.parse(m.json).input.bytes);
    const packed = state.fileCount > 1 ? 'of files' : 'gzip';
    const size = m.gzip ? `${fmtBytes(m.fileBytes)} ${packed}, ${logBytes} of log` : logBytes;
    setStatus(`Read ${state.name}: ${size} in ${m.seconds.toFixed(2)} s.`);
    show(m.json, m.markdown, null, m.problem);
  } else if (m.type === 'whatif') {
    showPrediction(m);
  } else if (m.type === 'roofline') {
    if (m.json) show(m.json, m.markdown, null, null);
    state.roofline.shown(m);
  } else if (m.type === 'cancelled') {
    state.busy = false;
    $('progress-box').hidden = true;
    setStatus(`Cancelled after ${fmtBytes(m.bytes)}.`);
  } else if (m.type === 'error') {
    state.busy = false;
    $('progress-box').hidden = true;
    setStatus(`Error after ${fmtBytes(m.bytes)}: ${m.message}`);
    if (m.json) show(m.json, m.markdown, `Reading stopped with an error after ${fmtBytes(m.bytes)}; this is what was read so far.`);
  }
}

// ---- the report ----------------------------------------------------------

function show(json, markdown, warning, problem) {
  const r = JSON.parse(json);
  state.json = json;
  state.markdown = markdown;
  state.report = r;
  if (state.charts) { state.charts.free(); state.charts = null; }
  const stats = r.input.stat_lines + r.input.damaged_stat_lines;
  if (stats === 0) {
    showProblem(r, problem);
    return;
  }
  $('problem').hidden = true;
  $('result').hidden = false;
  document.body.dataset.result = 'report';

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
  renderReconciliation(r.reconciliation);
  setupWhatIf(r);
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

  try {
    state.charts = new Charts(json);
  } catch (err) {
    setStatus(`Could not read the report for the charts: ${err.message || err}`);
    return;
  }
  const sources = state.charts.sources();
  const sel = $('source');
  sel.replaceChildren();
  if (sources.length > 0) {
    sel.append(new Option('All combined', ''));
    for (const s of sources) sel.append(new Option(s, s));
  }
  $('source-box').hidden = sources.length === 0;
  drawCharts();
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
}

function renderLines(list, examples) {
  list.replaceChildren();
  for (const ex of examples || []) {
    const li = el('li');
    li.append(el('span', `line ${ex.line}${ex.why ? ` (${ex.why})` : ''}`, 'lineno'), ' ', el('code', ex.text));
    list.append(li);
  }
}

function renderSummary(r) {
  const s = r.summary;
  const rows = [
    ['Engine', r.engine],
    ['Lines read', `${fmtNum(r.input.lines)} (${fmtCount(r.input.stat_lines, 'stats line', 'stats lines')})` +
      (r.input.json_records ? `; ${fmtCount(r.input.json_records, 'line', 'lines')} read from JSON records (Docker, journald, a collector)` : '') +
      (r.input.joined_pieces ? `; ${fmtCount(r.input.joined_pieces, 'piece', 'pieces')} of lines over 16 KiB joined back` : '')],
    ['Span', `${fmtNum(r.span_seconds, 1)} s (busy ${fmtNum(r.busy_seconds, 1)} s)`],
  ];
  const judged = (r.runs || []).find((run) => run.analyzed);
  if (judged) {
    // Several server runs: the figures below are the judged run's.
    rows.push(['Server runs', `${r.runs.length}; run ${judged.run} judged (lines ${judged.first_line}–${judged.last_line}, ` +
      `${fmtCount(judged.stat_lines, 'stats line', 'stats lines')})`]);
  }
  rows.push(
    ['Generation throughput', s.gen_throughput_tok_s ? `mean ${fmtNum(s.gen_throughput_tok_s.mean)} tokens/s, max ${fmtNum(s.gen_throughput_tok_s.max)}` : '–'],
    ['Running requests', s.running_requests ? `mean ${fmtNum(s.running_requests.mean, 1)}, max ${fmtNum(s.running_requests.max)}` : '–'],
    ['Queued requests', s.queued_requests ? `mean ${fmtNum(s.queued_requests.mean, 1)}, max ${fmtNum(s.queued_requests.max)}` : '–'],
    ['KV cache usage', s.kv_usage ? `mean ${fmtNum(s.kv_usage.mean * 100)}%, max ${fmtNum(s.kv_usage.max * 100)}%` : '–'],
    ['Retractions', fmtNum(s.retractions)],
  );
  // Only where the log times its iterations (TensorRT-LLM).
  if (s.prefill_time_share != null) {
    rows.push(['Prefill time', `${fmtNum(s.prefill_time_share * 100)}% of the iterations' time`]);
  }
  const dl = $('summary');
  dl.replaceChildren();
  for (const [k, v] of rows) dl.append(el('dt', k), el('dd', v));
}

/** A log with restarts: a choice of the server run to judge (the log is read again). */
function renderRuns(r) {
  const runs = r.runs || [];
  const sel = $('run');
  sel.replaceChildren();
  for (const run of runs) {
    const o = new Option(`Run ${run.run}: lines ${run.first_line}–${run.last_line}` +
      (run.first_timestamp ? `, from ${run.first_timestamp}` : ''), String(run.run));
    o.selected = run.analyzed;
    sel.append(o);
  }
  $('run-box').hidden = runs.length < 2;
}

function renderEvidence(d) {
  const list = $('evidence');
  list.replaceChildren();
  const items = d ? d.primary.evidence : [];
  for (const ev of items) {
    const li = el('li', ev.statement);
    if (ev.lines && ev.lines.length) {
      li.append(' ', el('span', `(line${ev.lines.length > 1 ? 's' : ''} ${ev.lines.join(', ')})`, 'lineno'));
    }
    list.append(li);
  }
  $('evidence-box').hidden = items.length === 0;
}

function renderActions(d) {
  const list = $('actions');
  list.replaceChildren();
  const items = d ? d.primary.actions : [];
  for (const a of items) {
    const li = el('li');
    const flagRow = el('div', null, 'flag-row');
    const code = el('code', a.flag, 'flag');
    const copy = el('button', 'Copy');
    copy.type = 'button';
    copy.setAttribute('aria-label', `Copy ${a.flag}`);
    copy.addEventListener('click', () => copyText(a.flag, copy));
    flagRow.append(code, copy);
    li.append(flagRow, el('p', a.why), el('p', a.effect, 'effect'));
    list.append(li);
  }
  $('actions-box').hidden = items.length === 0;
}

function renderAlso(d) {
  const list = $('also');
  list.replaceChildren();
  const items = d ? d.findings.filter((f) => f !== d.findings[0] && f.kind !== d.primary.kind) : [];
  for (const f of items) {
    const li = el('li');
    li.append(el('strong', f.headline), ' ', el('span', `(${f.kind}, confidence ${Math.round(f.confidence * 100)}%)`, 'lineno'));
    const flags = f.actions.slice(0, 2).map((a) => a.flag);
    if (flags.length) li.append(el('p', `Flags: ${flags.join(' · ')}`));
    list.append(li);
  }
  $('also-box').hidden = items.length === 0;
}

function renderReconciliation(rc) {
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

function setupWhatIf(r) {
  const f = r.diagnosis && r.diagnosis.facts;
  const ok = f && f.server_gen_tok_s > 0 && f.running_requests > 0;
  $('whatif-box').hidden = !ok;
  if (!ok) return;
  const demand = Math.max(1, Math.round(f.running_requests + (f.queued_requests || 0)));
  const cap = r.config.max_running_requests;
  const capMax = Math.max(64, Math.ceil(4 * f.running_requests), cap && cap <= 4096 ? cap : 0);
  whatif.base = { demand, cap, capMax, capacity: r.config.kv_capacity_tokens };
  $('wi-kv').value = 1;
  $('wi-cap').max = capMax;
  $('wi-cap').value = cap && cap <= capMax ? cap : capMax;
  $('wi-clients').max = Math.max(64, 4 * demand);
  $('wi-clients').value = demand;
  updateWhatIf();
}

function whatIfChanges() {
  const b = whatif.base;
  const changes = [];
  const kv = Number($('wi-kv').value);
  if (kv !== 1) changes.push(`kv_scale=${kv}`);
  const cap = Number($('wi-cap').value);
  const capNow = b.cap && b.cap <= b.capMax ? b.cap : b.capMax;
  if (cap !== capNow) changes.push(`max_running=${cap}`);
  const clients = Number($('wi-clients').value);
  if (clients !== b.demand) changes.push(`client_concurrency=${clients}`);
  return changes;
}

function updateWhatIf() {
  const b = whatif.base;
  if (!b) return;
  const kv = Number($('wi-kv').value);
  $('wi-kv-out').textContent = `×${kv.toFixed(2)}` + (b.capacity ? ` (${fmtNum(b.capacity * kv)} tokens)` : '');
  const cap = Number($('wi-cap').value);
  $('wi-cap-out').textContent = !b.cap && cap === b.capMax ? 'no cap' : fmtNum(cap);
  $('wi-clients-out').textContent = fmtNum(Number($('wi-clients').value));
  clearTimeout(whatif.timer);
  whatif.timer = setTimeout(() => {
    whatif.seq += 1;
    state.worker.postMessage({ type: 'whatif', id: state.jobId, seq: whatif.seq, changes: whatIfChanges().join(',') });
  }, 60);
}

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
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = 'Copied';
  } catch (_) {
    const sel = window.getSelection();
    const range = document.createRange();
    range.selectNodeContents(button.previousSibling);
    sel.removeAllRanges();
    sel.addRange(range);
    button.textContent = 'Selected: press Ctrl+C';
  }
  setTimeout(() => { button.textContent = 'Copy'; }, 2000);
}

// ---- charts --------------------------------------------------------------

function drawCharts() {
  if (!state.charts) return;
  const source = $('source').value || null;
  const scale = window.devicePixelRatio || 1;
  for (const name of CHARTS) {
    const canvas = $(`chart-${name}`);
    const w = Math.max(200, Math.round(canvas.clientWidth * scale));
    const h = Math.max(120, Math.round(canvas.clientHeight * scale));
    if (canvas.width !== w) canvas.width = w;
    if (canvas.height !== h) canvas.height = h;
    try {
      state.charts.draw(canvas, name, dark.matches, source, scale);
      const words = state.charts.describe(name, source);
      canvas.setAttribute('aria-label', words);
      $(`cap-${name}`).textContent = words;
    } catch (err) {
      $(`cap-${name}`).textContent = `Could not draw this chart: ${err.message || err}`;
    }
  }
}

let redrawTimer = 0;
function scheduleRedraw() {
  clearTimeout(redrawTimer);
  redrawTimer = setTimeout(drawCharts, 80);
}

// ---- export --------------------------------------------------------------

function baseName() {
  return (state.name || 'log').replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9._-]+/g, '_') || 'log';
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

// ---- wiring --------------------------------------------------------------

/**
 * Several files (a rotated log: server.log.2, server.log.1, server.log) are read
 * as one log, oldest first: by last modification (rotation keeps a file's time),
 * then by name.
 */
function startFiles(list) {
  const files = [...(list || [])];
  if (files.length === 0) return;
  files.sort((a, b) => (a.lastModified - b.lastModified) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const name = files.length === 1 ? files[0].name : `${files.length} files (${files.map((f) => f.name).join(', ')})`;
  start(files, name);
}

function workerReady() {
  document.body.dataset.ready = '1';
  setStatus('Ready. Drop a log, choose a file, paste text or try an example.');
}

async function main() {
  await init();
  state.worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  state.worker.onmessage = onWorkerMessage;
  state.worker.onerror = (e) => setStatus(`The reader stopped: ${e.message || 'unknown error'}`);
  state.roofline = initRoofline((q) => state.worker.postMessage({ type: 'roofline', id: state.jobId, ...q }));

  const drop = $('drop');
  for (const ev of ['dragenter', 'dragover']) {
    drop.addEventListener(ev, (e) => { e.preventDefault(); drop.classList.add('over'); });
  }
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    startFiles(e.dataTransfer && e.dataTransfer.files);
  });
  // Dropping outside the zone must not navigate away from the page.
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('drop', (e) => e.preventDefault());

  $('run').addEventListener('change', (e) => {
    if (state.blobs) start(state.blobs, state.name, Number(e.target.value));
  });
  $('file').addEventListener('change', (e) => {
    startFiles(e.target.files);
  });
  $('paste-go').addEventListener('click', () => {
    const text = $('paste').value;
    start(new Blob([text], { type: 'text/plain' }), 'pasted text');
  });
  for (const b of document.querySelectorAll('button.example')) {
    b.addEventListener('click', async () => {
      const src = b.dataset.src;
      try {
        const res = await fetch(src);
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        start(await res.blob(), src.split('/').pop());
      } catch (err) {
        setStatus(`Could not load the example: ${err.message || err}`);
      }
    });
  }
  $('cancel').addEventListener('click', () => {
    if (state.busy) state.worker.postMessage({ type: 'cancel', id: state.jobId });
  });
  $('source').addEventListener('change', drawCharts);
  for (const id of ['wi-kv', 'wi-cap', 'wi-clients']) $(id).addEventListener('input', updateWhatIf);
  $('wi-reset').addEventListener('click', () => { if (state.report) setupWhatIf(state.report); });
  $('export-json').addEventListener('click', () => {
    if (state.json) download(new Blob([state.json], { type: 'application/json' }), `${baseName()}.batchlens.json`);
  });
  $('export-md').addEventListener('click', () => {
    if (state.markdown) download(new Blob([state.markdown], { type: 'text/markdown' }), `${baseName()}.batchlens.md`);
  });
  for (const b of document.querySelectorAll('button.png')) {
    b.addEventListener('click', () => {
      $(`chart-${b.dataset.chart}`).toBlob((blob) => {
        if (blob) download(blob, `${baseName()}.${b.dataset.chart}.png`);
      }, 'image/png');
    });
  }
  for (const b of document.querySelectorAll('button.svg')) {
    b.addEventListener('click', () => {
      if (!state.charts) return;
      const svg = state.charts.svg(b.dataset.chart, false, $('source').value || null, 960, 420);
      download(new Blob([svg], { type: 'image/svg+xml' }), `${baseName()}.${b.dataset.chart}.svg`);
    });
  }
  new ResizeObserver(scheduleRedraw).observe($('charts-box'));
  dark.addEventListener('change', drawCharts);
}

main().catch((err) => setStatus(`Could not start: ${err.message || err}`));
