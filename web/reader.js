// Reads a file in slices for the worker that parses it (worker.js), in a worker
// of its own: a Blob's read goes on only while the thread that asked for it is
// free, so on the parsing thread each read would wait for a parse to end and
// the two would take turns. Slices are handed over without a copy (transferred), at most
// `ahead` of them before the parser has taken the first. Started with the page
// (the page fetches nothing once loaded), it serves one read at a time: a new
// read, or `stop`, ends the one under way.
let current = null; // { id, taken, wake }

self.onmessage = (e) => {
  const m = e.data;
  if (m.type === 'read') {
    stop();
    current = { id: m.id, taken: 0, wake: null };
    read(current, m.blob, m.sliceBytes, m.ahead);
  } else if (current && current.id === m.id) {
    if (m.type === 'taken') {
      current.taken += 1;
      wakeUp(current);
    } else if (m.type === 'stop') {
      stop();
    }
  }
};

function stop() {
  const job = current;
  current = null;
  if (job) wakeUp(job);
}

function wakeUp(job) {
  const w = job.wake;
  job.wake = null;
  if (w) w();
}

async function read(job, blob, sliceBytes, ahead) {
  let sent = 0;
  try {
    for (let at = 0; at < blob.size; at += sliceBytes) {
      while (current === job && sent - job.taken >= ahead) {
        await new Promise((r) => { job.wake = r; });
      }
      if (current !== job) return;
      const buf = await blob.slice(at, at + sliceBytes).arrayBuffer();
      if (current !== job) return;
      postMessage({ type: 'slice', id: job.id, buf }, [buf]);
      sent += 1;
    }
    if (current === job) postMessage({ type: 'end', id: job.id });
  } catch (err) {
    if (current === job) postMessage({ type: 'error', id: job.id, message: String(err && err.message || err) });
  }
}

postMessage({ type: 'up' });
