// Reads a log in slices inside a Web Worker and feeds them to the wasm Session
// (which inflates gzip files as they come), so the page never freezes and files
// of any size work (never read whole).
import init, { Session } from './batchlens-web.js';

const SLICE_BYTES = 16 * 1024 * 1024;
const ready = init();

ready.then(
  () => postMessage({ type: 'ready' }),
  (e) => postMessage({ type: 'fatal', message: String(e && e.message || e) }),
);

let current = null; // { id, cancelled }
let finished = null; // { id, session }: the last report, kept for what-if predictions

self.onmessage = (e) => {
  const m = e.data;
  if (m.type === 'cancel') {
    if (current && current.id === m.id) current.cancelled = true;
  } else if (m.type === 'whatif') {
    let json = 'null';
    let error = null;
    try {
      if (finished && finished.id === m.id) json = finished.session.what_if(m.changes);
    } catch (err) { error = String(err && err.message || err); }
    postMessage({ type: 'whatif', id: m.id, seq: m.seq, json, error });
  } else if (m.type === 'read') {
    if (current) current.cancelled = true;
    const job = { id: m.id, cancelled: false };
    current = job;
    read(job, m.blobs, m.run).finally(() => { if (current === job) current = null; });
  }
};

// Several files are read in the order given as one log, as the CLI reads them.
// `run`: of a log with restarts, the server run to judge (1-based; the last when absent).
async function read(job, blobs, run) {
  await ready;
  const session = run ? Session.judging(run) : new Session();
  const started = performance.now();
  const total = blobs.reduce((n, b) => n + b.size, 0);
  let offset = 0; // over all files
  let lastPost = 0;
  let reading = blobs[0]; // named in an error when there are several files
  try {
    for (const [k, blob] of blobs.entries()) {
      if (k > 0) session.next_file();
      reading = blob;
      let at = 0;
      // The next slice is read while this one is parsed.
      const sliceAt = (a) => (a < blob.size ? blob.slice(a, a + SLICE_BYTES).arrayBuffer() : null);
      let next = sliceAt(0);
      while (at < blob.size) {
        if (job.cancelled) { postMessage({ type: 'cancelled', id: job.id, bytes: offset }); return; }
        const buf = new Uint8Array(await next);
        if (job.cancelled) { postMessage({ type: 'cancelled', id: job.id, bytes: offset }); return; }
        if (buf.length === 0) break;
        next = sliceAt(at + buf.length);
        session.feed(buf);
        at += buf.length;
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
    }
    const json = session.finish();
    const markdown = session.markdown();
    if (finished) { try { finished.session.free(); } catch (_) { /* already gone */ } }
    finished = { id: job.id, session };
    postMessage({
      type: 'done', id: job.id, json, markdown, gzip: session.gzip(), fileBytes: total,
      seconds: (performance.now() - started) / 1000,
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
    if (!finished || finished.session !== session) {
      try { session.free(); } catch (_) { /* already gone */ }
    }
  }
}
