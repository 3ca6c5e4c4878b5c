// The roofline on the page: pick the GPU and the model (searchable lists, or a
// dropped config.json) and the worker recomputes the report with them; MBU and
// the decode ceiling show beside the throughput chart (the chart draws the
// ceiling dashed). Log text and config names are shown as text, never as HTML.
import { roofline_gpus, roofline_models } from './batchlens-web.js';

const el = (tag, props = {}, ...children) => {
  const e = document.createElement(tag);
  Object.assign(e, props);
  e.append(...children);
  return e;
};

/**
 * Adds the form before the throughput chart. `ask(msg)` posts a roofline request
 * for the current report to the worker.
 */
export function initRoofline(ask) {
  const figure = document.getElementById('chart-throughput')?.closest('figure') ||
    document.getElementById('chart-throughput')?.parentElement;
  if (!figure) return { shown() {} };
  const gpus = el('datalist', { id: 'roofline-gpus' }, ...roofline_gpus().map((g) => el('option', { value: g })));
  const models = el('datalist', { id: 'roofline-models' }, ...roofline_models().map((m) => el('option', { value: m })));
  const gpu = el('input', { id: 'roofline-gpu', type: 'search', placeholder: 'GPU (H100 SXM, H200 SXM, MI300X…)' });
  gpu.setAttribute('list', 'roofline-gpus');
  const model = el('input', { id: 'roofline-model', type: 'search', placeholder: 'model (default: the log\'s)' });
  model.setAttribute('list', 'roofline-models');
  const file = el('input', { id: 'roofline-config', type: 'file', accept: '.json,application/json', title: 'a Hugging Face config.json' });
  const apply = el('button', { type: 'button', textContent: 'Measure against the hardware' });
  const out = el('p', { id: 'roofline-out', className: 'roofline-out' });
  const box = el('div', { id: 'roofline-box', className: 'roofline' },
    gpus, models,
    el('label', {}, 'GPU ', gpu), ' ',
    el('label', {}, 'Model ', model), ' ',
    el('label', {}, 'or config.json ', file), ' ',
    apply, out);
  figure.parentElement.insertBefore(box, figure);

  let config = null;
  const readConfig = async (f) => { config = f ? await f.text() : null; if (f) model.value = ''; };
  file.addEventListener('change', () => readConfig(file.files && file.files[0]));
  box.addEventListener('dragover', (e) => e.preventDefault());
  box.addEventListener('drop', async (e) => {
    const f = e.dataTransfer && e.dataTransfer.files && e.dataTransfer.files[0];
    if (!f || !/\.json$/i.test(f.name)) return;
    e.preventDefault();
    e.stopPropagation();
    await readConfig(f);
    out.textContent = `Using ${f.name}.`;
  });
  model.addEventListener('input', () => { if (model.value) config = null; });
  apply.addEventListener('click', () => {
    out.textContent = 'Measuring…';
    box.dataset.state = 'measuring';
    ask({ gpu: gpu.value, model: model.value || null, config });
  });

  return {
    /** Shows the worker's answer: the report's roofline in words, or the error. */
    shown(m) {
      // The figures shown, on the box as numbers (what a test or a hook reads).
      for (const k of ['gpu', 'model', 'mbu', 'ceiling', 'steps', 'stepsFrom']) delete box.dataset[k];
      box.dataset.state = m.error ? 'error' : 'shown';
      if (m.error) { out.textContent = m.error; return; }
      const r = JSON.parse(m.json).roofline;
      if (!r) { out.textContent = 'No model: the log names none batchlens knows; pick one or drop its config.json.'; return; }
      Object.assign(box.dataset, { gpu: r.gpu, model: r.model });
      if (r.mbu != null) box.dataset.mbu = String(r.mbu);
      if (r.decode_ceiling_tok_s != null) box.dataset.ceiling = String(r.decode_ceiling_tok_s);
      if (r.steps_per_s != null) Object.assign(box.dataset, { steps: String(r.steps_per_s), stepsFrom: r.steps_from || '' });
      const pct = (v) => `${(v * 100).toFixed(0)}%`;
      const parts = [`${r.model} on ${r.gpu}`];
      if (r.mbu != null) parts.push(`decode reads ${(r.achieved_hbm_gb_s / 1000).toFixed(2)} of ${(r.peak_hbm_gb_s / 1000).toFixed(2)} TB/s: ${pct(r.mbu)} MBU`);
      if (r.decode_ceiling_tok_s != null) parts.push(`ceiling ${Math.round(r.decode_ceiling_tok_s).toLocaleString()} tok/s at this batch`);
      if (r.prefill_mfu != null) parts.push(`prefill ${pct(r.prefill_mfu)} MFU`);
      if (r.steps_from === 'iteration_times' && r.step_time_ms != null) parts.push(`${r.step_time_ms} ms a decode step, as the engine times it`);
      if (r.tokens_per_step != null) parts.push(`${r.tokens_per_step} tokens a speculative step`);
      if (r.lower_bound_reasons.length) parts.push(`a lower bound (${r.lower_bound_reasons.join(', ')})`);
      if ((r.upper_bound_reasons || []).length) parts.push(`perhaps too high (${r.upper_bound_reasons.join(', ')})`);
      out.textContent = parts.join(' · ');
    },
  };
}
