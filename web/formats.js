// A format file beside the log (docs/formats.md): chosen, dropped with the log
// (a .toml file, or a .json one that reads as a format file), pasted, or one of
// the built-in ones. Kept in this browser's localStorage only when asked. The
// analysis reads it in the worker (Session.with_formats); here it is checked,
// so a bad file is named with its line before any log is read.
import { check_format_file, builtin_formats } from './batchlens-web.js';

const KEY = 'batchlens.formatFile';
let current = '';
let ui = null;

/** The format file's text (or a built-in name) to read logs with; '' for none. */
export function formatFile() { return current; }

function stored() {
  try { return localStorage.getItem(KEY) || ''; } catch (_) { return ''; }
}

function store(text) {
  try {
    if (text && ui && ui.keep.checked) localStorage.setItem(KEY, text);
    else localStorage.removeItem(KEY);
  } catch (_) { /* storage blocked: kept for this visit only */ }
}

/** Sets the format file; returns '' or the error naming its line. */
function use(text, onChange) {
  const t = (text || '').trim();
  if (!t) {
    current = '';
    show('No format file: only SGLang, vLLM, LMDeploy and TensorRT-LLM lines are read.', false);
    store('');
    if (onChange) onChange();
    return '';
  }
  try {
    const names = check_format_file(t);
    current = t;
    show(`Reading with the format file (${names}).`, false);
    store(t);
    if (onChange) onChange();
    return '';
  } catch (err) {
    const msg = String(err && err.message || err);
    show(msg, true);
    return msg;
  }
}

function show(text, bad) {
  if (!ui) return;
  ui.status.textContent = text; // log and format text is only ever inserted as text
  ui.status.classList.toggle('bad', bad);
}

/**
 * Takes the format files out of dropped or chosen files: the rest are the log.
 * A file that does not read as a format file stays with the log.
 */
export async function takeFormatFiles(files, onChange) {
  const rest = [];
  for (const f of files) {
    if (/\.(toml|json)$/i.test(f.name || '')) {
      const text = await f.text();
      try {
        check_format_file(text);
        if (ui) ui.text.value = text;
        use(text, null);
        continue;
      } catch (err) {
        if (/\.toml$/i.test(f.name)) { use(text, null); continue; }
      }
    }
    rest.push(f);
  }
  if (rest.length === 0 && onChange) onChange();
  return rest;
}

function el(tag, props, ...kids) {
  const e = document.createElement(tag);
  Object.assign(e, props || {});
  for (const k of kids) e.append(k);
  return e;
}

/** Adds the format-file box to `container`; `onChange` re-reads the current log. */
export function setupFormats(container, onChange) {
  const text = el('textarea', { id: 'format-text', rows: 6, spellcheck: false, placeholder: '[[format]]\nname = "mygateway"\nregex = \'…(?P<running>\\d+)…\'' });
  const file = el('input', { type: 'file', id: 'format-file', accept: '.toml,.json' });
  file.setAttribute('aria-label', 'Format file');
  const pick = el('select', { id: 'format-builtin' }, el('option', { value: '', textContent: 'Built-in…' }));
  pick.setAttribute('aria-label', 'Built-in format');
  for (const n of builtin_formats().split(',')) pick.append(el('option', { value: n, textContent: n }));
  const keep = el('input', { type: 'checkbox', id: 'format-keep' });
  const apply = el('button', { type: 'button', id: 'format-apply', textContent: 'Use format file' });
  const clear = el('button', { type: 'button', id: 'format-clear', textContent: 'None' });
  const status = el('p', { id: 'format-status', className: 'format-status' });
  const box = el('details', { id: 'format-box' },
    el('summary', { textContent: 'Format file (another server\'s log)' }),
    el('label', { htmlFor: 'format-text', textContent: 'Format file (TOML or JSON), or choose one: ' }),
    file, pick, text,
    el('label', { htmlFor: 'format-keep' }, keep, ' keep it in this browser'),
    apply, clear, status);
  container.append(box);
  ui = { text, keep, status, box };

  apply.addEventListener('click', () => use(text.value, onChange));
  clear.addEventListener('click', () => { text.value = ''; pick.value = ''; use('', onChange); });
  pick.addEventListener('change', () => { if (pick.value) { text.value = pick.value; use(pick.value, onChange); } });
  file.addEventListener('change', async () => {
    const f = file.files && file.files[0];
    if (f) { text.value = await f.text(); use(text.value, onChange); }
  });
  keep.addEventListener('change', () => store(current));

  const saved = stored();
  if (saved) {
    keep.checked = true;
    text.value = saved;
    box.open = true;
    use(saved, null);
  } else {
    show('No format file: only SGLang, vLLM, LMDeploy and TensorRT-LLM lines are read.', false);
  }
}
