// Faults no lever explains, on the page: each data-parallel rank's figures (a table and
// a chart of its running and waiting requests), the cost of evictions, and the checks the
// log could not support. Log-derived text is only ever inserted with textContent.
//
// `faultsView` is the data, free of the DOM (node tests read it); `renderFaults` draws it.

const SVG = 'http://www.w3.org/2000/svg';

function fmt(v, digits = 0) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return v.toLocaleString('en-US', { maximumFractionDigits: digits });
}

function pct(v) {
  return v === null || v === undefined || !Number.isFinite(v) ? '–' : `${Math.round(v * 100)}%`;
}

/** What the page shows of the faults, or null where there is nothing to show. */
export function faultsView(report) {
  const d = report && report.diagnosis;
  if (!d) return null;
  const f = d.facts || {};
  const ranks = (f.ranks || []).map((r) => ({
    source: r.source,
    cells: [
      r.source,
      fmt(r.running_requests, 1),
      fmt(r.queued_requests, 1),
      pct(r.kv_usage),
      fmt(r.gen_tok_s),
      fmt(r.balanced_gen_tok_s),
    ],
    running: r.running_requests || 0,
    queued: r.queued_requests || 0,
  }));
  const top = Math.max(1, ...ranks.map((r) => r.running + r.queued));
  // Bars as shares of the widest rank: running first, waiting after it.
  const bars = ranks.map((r) => ({
    source: r.source,
    running: r.running / top,
    queued: r.queued / top,
  }));
  const imbalance = d.findings.find((x) => x.kind === 'rank_imbalance') || null;
  let balance = null;
  if (Number.isFinite(f.rank_balance_gain) && ranks.length) {
    balance = `Spread evenly, the ranks would generate ${f.rank_balance_gain >= 0 ? '+' : '-'}${pct(Math.abs(f.rank_balance_gain))}`;
  }
  let evictions = null;
  if (Number.isFinite(f.recomputed_tokens)) {
    evictions = Number.isFinite(f.recompute_token_share)
      ? `Recomputing evicted requests took ~${pct(f.recompute_token_share)} of prefill work (~${fmt(f.recomputed_tokens)} tokens)`
      : `~${fmt(f.recomputed_tokens)} tokens were prefilled again for evicted requests`;
  }
  const notAssessed = (d.not_assessed || []).map((x) => ({ check: x.check, why: x.why }));
  if (!ranks.length && !evictions && !notAssessed.length) return null;
  return {
    header: ['rank', 'running', 'waiting', 'KV', 'tok/s', 'balanced tok/s'],
    ranks,
    bars,
    imbalance: imbalance && imbalance.headline,
    balance,
    evictions,
    notAssessed,
  };
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function chart(bars) {
  const row = 22;
  const label = 110;
  const width = 420;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${label + width + 10} ${row * bars.length + 6}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', 'Running and waiting requests per rank');
  svg.setAttribute('width', '100%');
  svg.classList.add('rank-chart');
  bars.forEach((b, i) => {
    const y = 3 + i * row;
    const t = document.createElementNS(SVG, 'text');
    t.setAttribute('x', '0');
    t.setAttribute('y', String(y + 14));
    t.textContent = b.source;
    svg.append(t);
    const parts = [['running', b.running, 'currentColor', '1'], ['waiting', b.queued, 'currentColor', '0.35']];
    let x = label;
    for (const [name, share, fill, opacity] of parts) {
      const w = Math.max(0, share * width);
      const r = document.createElementNS(SVG, 'rect');
      r.setAttribute('x', String(x));
      r.setAttribute('y', String(y));
      r.setAttribute('width', String(w));
      r.setAttribute('height', String(row - 6));
      r.setAttribute('fill', fill);
      r.setAttribute('fill-opacity', opacity);
      const title = document.createElementNS(SVG, 'title');
      title.textContent = `${b.source}: ${name}`;
      r.append(title);
      svg.append(r);
      x += w;
    }
  });
  return svg;
}

/** Draws the faults in a section of their own after `anchor` (replaced on each report). */
export function renderFaults(report, anchor) {
  const old = document.getElementById('faults-box');
  if (old) old.remove();
  const v = faultsView(report);
  if (!v || !anchor) return;
  const box = el('section');
  box.id = 'faults-box';
  if (v.ranks.length) {
    box.append(el('h3', 'Data-parallel ranks'));
    if (v.imbalance) box.append(el('p', v.imbalance));
    const table = el('table', null, 'ranks');
    const head = el('tr');
    for (const h of v.header) head.append(el('th', h));
    table.append(head);
    for (const r of v.ranks) {
      const tr = el('tr');
      for (const c of r.cells) tr.append(el('td', c));
      table.append(tr);
    }
    box.append(table, chart(v.bars));
    if (v.balance) box.append(el('p', v.balance, 'effect'));
  }
  if (v.evictions) box.append(el('h3', 'Cost of evictions'), el('p', v.evictions));
  if (v.notAssessed.length) {
    box.append(el('h3', 'Not assessed'));
    const ul = el('ul');
    for (const x of v.notAssessed) {
      const li = el('li');
      li.append(el('strong', x.check), ': ', x.why);
      ul.append(li);
    }
    box.append(ul);
  }
  anchor.after(box);
}
