// The outputs panel: timing, the heatmaps of A and y (with tooltips), the intermediates a linear
// variant keeps instead of A, row statistics of A and the numbers table. Renders store.last.

import { $, el, download, fmtCell, BUILD_LABEL, adapterName, softwareAdapter } from './dom.js';
import { fmt, describeWeight, describeOutput } from './explain.js';
import { flopCount, gflops } from '../dist/reference.js';
import { WEIGHTS_MAX_N } from './gen.js';
import { Heatmap } from './heatmap.js';
import { fmtMs } from './chart.js';
import { store, on, emit } from './store.js';

const TABLE_ROWS = 64;
const maps = {}; // this panel's heatmaps: weights, output
const interMaps = new Map(); // `${id}:${name}` -> Heatmap

function ensureMaps() {
  if (maps.weights) return;
  maps.weights = new Heatmap($('#weights-map'), { name: 'weights', title: 'A', kind: 'sequential', rowName: 'query i', colName: 'key j', rowAxis: 'queries i', colAxis: 'keys j →', describe: (i, j) => describeWeight(store.last, i, j), maxHeight: 440, legendLabel: 'weight A[i,j]' });
  maps.output = new Heatmap($('#output-map'), { name: 'output', title: 'y', kind: 'diverging', rowName: 'token i', colName: 'channel c', rowAxis: 'tokens i', colAxis: 'channels c →', describe: (i, c) => describeOutput(store.last, i, c), maxHeight: 440, maxWidth: 360, legendLabel: 'y (signed)' });
}

export function renderOutputs() {
  ensureMaps();
  const r = store.last;
  const { n, dv } = r.dims;
  // a variant that keeps a state instead of A (lab.variants: the linear family) never builds A for y
  const linear = r.info.keepsState;
  renderTiming(r);
  const wt = $('#weights-title');
  wt.replaceChildren(linear ? 'A — implicit: computed for display ' : 'Effective attention A ', el('span', { class: 'muted', text: `(${n}×${n})` }));
  const wcard = $('#weights-card');
  const png = wcard.querySelector('[data-export="weights"]');
  png.disabled = !r.weights;
  png.title = r.weights ? 'Save A as a PNG image' : `No PNG: A is drawn only for n ≤ ${WEIGHTS_MAX_N}`;
  // row normalisation scales 0 → a row's largest value: meaningless for entries of either sign
  $('#row-norm').disabled = !r.weights || r.info.signedWeights;
  if (r.weights) {
    wcard.classList.remove('no-weights');
    // the recurrent family's A (W) is no average: its entries take either sign, drawn diverging
    const signed = r.info.signedWeights;
    maps.weights.set({ rows: n, cols: n, data: r.weights, mask: r.options.causal ? (i, j) => j > i : null, vmin: signed ? undefined : 0, rowNorm: store.ui.rowNorm, kind: signed ? 'diverging' : 'sequential' });
    maps.weights.root.hidden = false;
    $('#weights-note').textContent = signed
      ? `${r.info.label} never builds A to compute y (cost ${r.info.cost}): a state is updated token by token. A[i,j] = ` +
        'scale·β_j·q_iᵀ(the transitions between j and i)k_j is computed only to draw it; its entries take either sign and its rows need not sum to 1.'
      : linear
      ? `${r.info.label} never builds A to compute y (cost ${r.info.cost}); the page asks for it (weights: true) only to draw it.`
      : r.info.inputFree ? 'A fixed pattern: no softmax, no dependence on the input.' : 'Rows are softmax distributions: non-negative, summing to 1.';
  } else {
    wcard.classList.add('no-weights');
    maps.weights.release();
    maps.weights.root.hidden = true;
    $('#weights-note').textContent = `A is drawn only for n ≤ ${WEIGHTS_MAX_N} (it has n² = ${(n * n).toLocaleString()} values), so there is no PNG of it; y is complete and its PNG works.`;
  }
  maps.output.set({ rows: n, cols: dv, data: r.output });
  renderIntermediates(r);
  renderRowStats(r);
  renderOutputTable(r);
}

function renderTiming(r) {
  const t = r.timing;
  const f = flopCount(r.id, r.dims, r.options);
  const box = $('#timing');
  box.replaceChildren();
  box.dataset.build = r.build;
  // the header's badge names the build that ran (the Build menu can choose another than auto's)
  const badge = $('#build-badge');
  const gpu = r.build === 'webgpu';
  const label = gpu ? `WebGPU on ${adapterName(r.adapter) || 'an unnamed adapter'}` : `${BUILD_LABEL[r.build] ?? r.build} build`;
  badge.textContent = label;
  badge.dataset.build = r.build;
  // tests (and anyone reading the DOM) wait on this, not on the text's unit (µs or ms)
  box.dataset.median = String(t.median);
  box.append(
    el('span', { class: `badge build-${r.build}`, text: label }),
    el('span', {}, el('span', { class: 'muted', text: 'median ' }), el('strong', { text: fmtMs(t.median) })),
    el('span', { class: 'muted', text: `${spreadText(t)}${t.samples} sample${t.samples > 1 ? 's' : ''}${t.batch > 1 ? ` × ${t.batch} calls` : ''}${t.samples > 1 ? '' : ' (a slow call is timed once)'}` }),
    el('span', {}, el('strong', { text: `${fmt(gflops(f.flops, t.median), 3)} GFLOP/s` }), el('span', { class: 'muted', text: ` (${f.formula} = ${f.flops.toLocaleString()} flop)` })),
    el('span', { class: 'muted small-text', text: 'timed without weights; A is requested once, for display' }),
  );
  if (gpu) {
    // a first call that compiled shaders is shown as that, not as a call's time
    box.append(el('span', { class: 'muted small-text', dataset: { compile: String(t.compileMs) },
      text: `each call uploads its inputs and reads the output back` +
        (t.gpuMs != null ? ` (the kernels' own time on the GPU: ${fmtMs(t.gpuMs)}, from timestamp queries)` : '') +
        (t.compileMs != null ? `; the first call compiled its shaders (compiling shaders: ${fmtMs(t.compileMs)}, not a sample)` : '; its shaders were compiled by an earlier call') +
        (softwareAdapter(r.adapter) ? '; this is a software adapter (on the CPU): its speed says nothing about GPUs' : '') }));
  }
}

/** "spread min – max (IQR q1 – q3), " for two samples or more; nothing for one. */
export function spreadText(t) {
  return t.samples > 1 ? `spread ${fmtMs(t.min)} – ${fmtMs(t.max)} (IQR ${fmtMs(t.q1)} – ${fmtMs(t.q3)}), ` : '';
}

function renderIntermediates(r) {
  const sec = $('#intermediates');
  const list = r.intermediates ?? [];
  if (!list.length) {
    sec.hidden = true;
    return;
  }
  sec.hidden = false;
  $('#intermediates-note').textContent = `These are what ${r.info.label} computes instead of A: O(n·d·dv) work, no n×n matrix. ` +
    (!r.info.keepsNormalizer ? 'The state is updated token by token (it forgets and overwrites); shown here after the last token. '
      : r.options.causal ? 'With causal they are prefix sums over j ≤ i; shown here at i = n−1 (the full sums). ' : '') +
    'As the library computed them (float32; attention(..., { state: true })).';
  const host = $('#intermediates-maps');
  const keep = new Set();
  for (const m of list) {
    const key = `${r.id}:${m.name}`;
    keep.add(key);
    let hm = interMaps.get(key);
    if (!hm) {
      const fig = el('figure', { class: 'map-card small-map', dataset: { key } }, el('figcaption', { text: m.label }));
      const div = el('div', { class: 'map-host' });
      fig.append(div);
      host.append(fig);
      hm = new Heatmap(div, { name: m.name, title: m.name, legendLabel: 'value', kind: m.signed ? 'diverging' : 'sequential', rowName: m.rows === 1 ? 'row' : 'feature', colName: m.rows === 1 ? 'index' : 'channel', maxHeight: 220, maxWidth: 280, cellMax: 22 });
      hm.fig = fig;
      interMaps.set(key, hm);
    }
    hm.set({ rows: m.rows, cols: m.cols, data: m.data });
  }
  for (const [key, hm] of interMaps) {
    if (!keep.has(key)) {
      hm.ro.disconnect();
      hm.fig.remove();
      interMaps.delete(key);
    }
  }
}

function rowStats(W, n, causal) {
  const out = [];
  for (let i = 0; i < n; i++) {
    let h = 0, mx = -1, arg = 0;
    for (let j = 0; j < n; j++) {
      const a = W[i * n + j];
      if (a > 0) h -= a * Math.log(a);
      if (a > mx) {
        mx = a;
        arg = j;
      }
    }
    const support = causal ? i + 1 : n;
    out.push({ i, h, hn: support > 1 ? h / Math.log(support) : 0, mx, arg });
  }
  return out;
}

function renderRowStats(r) {
  const box = $('#row-stats');
  const sum = $('#row-stats-summary');
  if (!r.weights) {
    box.replaceChildren();
    sum.textContent = `Row statistics need A (n ≤ ${WEIGHTS_MAX_N}).`;
    return;
  }
  const n = r.dims.n;
  const st = rowStats(r.weights, n, r.options.causal);
  const meanH = st.reduce((p, s) => p + s.h, 0) / n;
  const meanM = st.reduce((p, s) => p + s.mx, 0) / n;
  sum.textContent = `Mean entropy ${fmt(meanH)} nats (uniform over n would be ln n = ${fmt(Math.log(n))}); mean max weight ${fmt(meanM)}. Normalised entropy H / ln(#allowed columns): 1 = uniform, 0 = one-hot.`;
  const table = el('table', { class: 'stats' },
    el('thead', {}, el('tr', {}, ['row i', 'entropy H (nats)', 'H normalised', 'max weight', 'argmax j'].map((t) => el('th', { scope: 'col', text: t })))));
  const tb = el('tbody');
  const bar = (x, cls) => el('span', { class: cls, style: `--w:${Math.max(0, Math.min(1, x)) * 100}%` });
  for (const s of st) {
    tb.append(el('tr', {},
      el('th', { scope: 'row', text: String(s.i) }),
      el('td', { dataset: { value: String(s.h) } }, bar(s.hn, 'bar'), fmt(s.h)),
      el('td', { text: fmt(s.hn, 3) }),
      el('td', { dataset: { value: String(s.mx) } }, bar(s.mx, 'bar alt'), fmt(s.mx)),
      el('td', { text: String(s.arg) })));
  }
  table.append(tb);
  box.replaceChildren(table);
}

function renderOutputTable(r) {
  const { n, dv } = r.dims;
  const rows = Math.min(n, TABLE_ROWS);
  const table = el('table', { class: 'numbers', id: 'output-numbers', 'aria-label': `y, first ${rows} of ${n} rows` });
  table.append(el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'i \\ c' }), Array.from({ length: dv }, (_, c) => el('th', { scope: 'col', text: String(c) })))));
  const tb = el('tbody');
  for (let i = 0; i < rows; i++) {
    const tr = el('tr', {}, el('th', { scope: 'row', text: String(i) }));
    for (let c = 0; c < dv; c++) {
      const x = r.output[i * dv + c];
      tr.append(el('td', { text: fmtCell(x), dataset: { value: String(x), row: String(i), col: String(c) } }));
    }
    tb.append(tr);
  }
  table.append(tb);
  const box = $('#output-table');
  box.replaceChildren(table);
  if (n > rows) box.append(el('p', { class: 'note', text: `First ${rows} of ${n} rows; Export JSON has all of them.` }));
}

export function initOutputs() {
  for (const b of document.querySelectorAll('[data-export]')) {
    b.addEventListener('click', async () => {
      const m = maps[b.dataset.export];
      if (!m?.data) return;
      download(`attnlab-${store.state.variant}-${b.dataset.export === 'weights' ? 'A' : 'y'}.png`, await m.toPngBlob());
    });
  }
  const rowNorm = $('#row-norm');
  rowNorm.addEventListener('change', () => {
    store.ui.rowNorm = rowNorm.checked;
    if (store.last) renderOutputs();
    emit('row-norm');
  });
  on('theme', () => {
    for (const m of Object.values(maps)) m.retheme();
    for (const m of interMaps.values()) m.retheme();
  });
}
