// Reads a log in slices inside a Web Worker and feeds them to the wasm Session
// (which inflates gzip files as they come), so the page never freezes and files
// of any size work (never read whole). The slices are read by reader.js, in a
// worker of its own, while the ones before them are parsed here.
import init, { Session } from './batchlens-web.js';

const SLICE_BYTES = 16 * 1024 * 1024;
// Slices read ahead of the one being parsed (memory: up to this many more).
const SLICES_AHEAD = 3;
// The slices' reader, started now: the page fetches nothing once loaded.
const reader = new Worker(new URL('./reader.js', import.meta.url));
// The reader's own error (its script failed to load, or threw), as an Error.
const readerError = (e, what) => {
  e.preventDefault();
  return new Error(e.message || what);
};
const readerUp = new Promise((resolve, reject) => {
  reader.onmessage = (e) => { if (e.data.type === 'up') resolve(); };
  reader.onerror = (e) => reject(readerError(e, 'the file reader did not start'));
});
const ready = Promise.all([init(), readerUp]);

ready.then(
  () => postMessage({ type: 'ready' }),
  (e) => postMessage({ type: 'fatal', message: String(e && e.message || e) }),
);

let current = null; // { id, cancelled }
// The last read, kept: what-if predictions, another run judged and chart windows
// re-bucketed from it without reading the file again. { id, session, name, files }
let finished = null;
// Files read since the worker started (a test reads it: switching runs reads none).
let fileReads = 0;

self.onmessage = (e) => {
  const m = e.data;
  if (m.type === 'cancel') {
    if (current && current.id === m.id) current.cancelled = true;
  } else if (m.type === 'whatif') {
    let json = 'null';
    let text = '';
    let error = null;
    let flags = [];
    try {
      if (finished && finished.id === m.id) {
        json = finished.session.what_if(m.changes);
        text = finished.session.what_if_sentence(m.changes);
        // Each value as the engine's flag that sets it ('' where none does).
        flags = (m.settings || []).map(([k, v]) => [k, v, finished.session.setting_flag(k, v)]);
      }
    } catch (err) { error = String(err && err.message || err); }
    postMessage({ type: 'whatif', id: m.id, seq: m.seq, json, text, error, flags });
  } else if (m.type === 'judge') {
    // Another server run of what was read; `json` null: it was let go for memory.
    let out = { type: 'judged', id: m.id, run: m.run, json: null, reads: fileReads };
    try {
      if (finished && finished.id === m.id) {
        const s = finished.session;
        const json = s.judge(m.run);
        if (json) {
          out = { ...out, json, markdown: s.markdown(), problem: s.problem(finished.name, finished.files) };
        }
      }
    } catch (err) { out.error = String(err && err.message || err); }
    postMessage(out);
  } else if (m.type === 'window') {
    // The judged run's series over t0..t1, re-bucketed from the finer ones kept.
    let json = null;
    let error = null;
    try {
      if (finished && finished.id === m.id) json = finished.session.window(m.t0, m.t1);
    } catch (err) { error = String(err && err.message || err); }
    postMessage({ type: 'window', id: m.id, seq: m.seq, t0: m.t0, t1: m.t1, json, error });
  } else if (m.type === 'roofline') {
    let json = null;
    let markdown = null;
    let error = null;
    try {
      if (finished && finished.id === m.id) {
        json = finished.session.roofline(m.gpu, m.model, m.config);
        markdown = finished.session.markdown();
      }
    } catch (err) { error = String(err && err.message || err); }
    postMessage({ type: 'roofline', id: m.id, json, markdown, error });
  } else if (m.type === 'read') {
    if (current) current.cancelled = true;
    const job = { id: m.id, cancelled: false };
    current = job;
    read(job, m.blobs, m.run, m.formats).finally(() => { if (current === job) current = null; });
  }
};

// A file's slices in order, read by reader.js: `next()` gives the next slice
// (null at the end) or throws the read's error. A read started stops the one
// before it, whose `next()` then gives null.
let readId = 0;
let stopActive = null;
function sliceReader(blob) {
  if (stopActive) stopActive();
  const id = ++readId;
  const queue = [];
  let end = false;
  let failed = null;
  let wake = null;
  const woken = () => { const w = wake; wake = null; if (w) w(); };
  const stop = () => { end = true; woken(); };
  stopActive = stop;
  reader.onmessage = (e) => {
    const m = e.data;
    if (m.id !== id) return;
    if (m.type === 'slice') queue.push(new Uint8Array(m.buf));
    else if (m.type === 'end') end = true;
    else if (m.type === 'error') failed = new Error(m.message);
    woken();
  };
  reader.onerror = (e) => {
    failed = readerError(e, 'the file could not be read');
    woken();
  };
  fileReads += 1;
  reader.postMessage({ type: 'read', id, blob, sliceBytes: SLICE_BYTES, ahead: SLICES_AHEAD });
  let closed = false;
  return {
    async next() {
      while (!queue.length && !end && !failed) await new Promise((r) => { wake = r; });
      if (queue.length) {
        reader.postMessage({ type: 'taken', id });
        return queue.shift();
      }
      if (failed) throw failed;
      return null;
    },
    close() {
      if (closed) return;
      closed = true;
      reader.postMessage({ type: 'stop', id });
      if (stopActive === stop) stopActive = null;
    },
  };
}

// Several files are read in the order given as one log, as the CLI reads them.
// `run`: of a log with restarts, the server run to judge (1-based; the last when absent).
async function read(job, blobs, run, formats) {
  await ready;
  let session;
  try {
    session = formats ? Session.with_formats(run || undefined, formats) : run ? Session.judging(run) : new Session();
  } catch (err) {
    postMessage({ type: 'error', id: job.id, message: String(err && err.message || err), bytes: 0, json: null, markdown: null });
    return;
  }
  const started = performance.now();
  const total = blobs.reduce((n, b) => n + b.size, 0);
  let offset = 0; // over all files
  let lastPost = 0;
  let reading = blobs[0]; // named in an error when there are several files
  let slices = null;
  try {
    for (const [k, blob] of blobs.entries()) {
      if (k > 0) session.next_file();
      reading = blob;
      // The next slices are read (by another worker) while this one is parsed.
      slices = sliceReader(blob);
      for (;;) {
        if (job.cancelled) { postMessage({ type: 'cancelled', id: job.id, bytes: offset }); return; }
        const buf = await slices.next();
        if (job.cancelled) { postMessage({ type: 'cancelled', id: job.id, bytes: offset }); return; }
        if (!buf) break;
        session.feed(buf);
        offset += buf.length;
        const now = performance.now();
        if (now - lastPost > 100 || offset >= total) {
          lastPost = now;
          postMessage({
            type: 'progress', id: job.id, bytes: offset, total,
            lines: session.lines_read(), seconds: (now - started) / 1000,
          });
        }
      }
      slices.close();
    }
    const json = session.finish();
    const markdown = session.markdown();
    // The CLI's words for a log with nothing to judge (empty when there is a verdict).
    const name = blobs.length === 1 ? blobs[0].name || 'the file' : '';
    const problem = session.problem(name, blobs.length);
    if (finished) { try { finished.session.free(); } catch (_) { /* already gone */ } }
    finished = { id: job.id, session, name, files: blobs.length };
    postMessage({
      type: 'done', id: job.id, json, markdown, problem, gzip: session.gzip(), fileBytes: total,
      seconds: (performance.now() - started) / 1000,
      runsKept: [...session.runs_kept()], runsLetGo: session.runs_let_go(), reads: fileReads,
    });
  } catch (err) {
    // An error mid-way: report what was read so far, if the session can still say.
    let json = null;
    let markdown = null;
    try { json = session.finish(); markdown = session.markdown(); } catch (_) { /* unusable */ }
    const where = blobs.length > 1 && reading && reading.name ? `${reading.name}: ` : '';
    const message = where + String(err && err.message || err);
    postMessage({ type: 'error', id: job.id, message, bytes: offset, json, markdown });
  } finally {
    if (slices) slices.close();
    if (!finished || finished.session !== session) {
      try { session.free(); } catch (_) { /* already gone */ }
    }
  }
}
