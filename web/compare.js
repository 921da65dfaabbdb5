// The compare panel: the chosen variants run on the same inputs, each against softmax (max |Δy|,
// NMSE, time), with small heatmaps of A, y and the difference. Results go to store.compare.
// It computes in a worker of its own, so the main run never waits behind it; a comparison made
// stale by a change is stopped (cancelCompare terminates that worker).

import { $, el, elapsedIndicator, adapterName, BUILD_LABEL } from './dom.js';
import { fmt, paren, describeWeight, describeOutput } from './explain.js';
import { flopCount, gflops } from '../dist/reference.js';
import { WEIGHTS_MAX_N, requirements, resolveDims } from './gen.js';
import { Heatmap } from './heatmap.js';
import { fmtMs } from './chart.js';
import { store, effectiveOpts, dimsState, requestFor, validateDims, commit, subscribe, on } from './store.js';
import { WorkerClient, cloneInputs } from './worker-client.js';

const COMPARE_MAX_VALUES = 4 * 1024 * 1024;
const cards = new Map(); // id -> { card, A, y, diff, ... }: this panel's heatmaps
const job = { client: null, token: 0, busy: false }; // this panel's worker and its current comparison

/** True while a comparison is computing. */
export function compareBusy() {
  return job.busy;
}

/** Stops the comparison in progress (its inputs changed): terminates its worker. */
export function cancelCompare() {
  job.token++;
  if (job.busy && job.client) {
    job.client.terminate();
    job.client = null;
    store.ui.compareCancels++;
  }
  job.busy = false;
}

function buildComparePicks() {
  const box = $('#compare-picks');
  box.replaceChildren();
  for (const v of store.lab.variants) {
    const id = `cmp-${v.id}`;
    const cb = el('input', { type: 'checkbox', id, checked: store.state.compare.includes(v.id), dataset: { variant: v.id } });
    cb.addEventListener('change', () => {
      const set = new Set(store.state.compare);
      if (cb.checked) set.add(v.id);
      else set.delete(v.id);
      store.state.compare = store.lab.variants.map((x) => x.id).filter((x) => set.has(x));
      commit({ now: true });
    });
    box.append(el('label', { class: 'check', for: id }, cb, ` ${v.label}`));
  }
}

function renderComparePicks() {
  for (const cb of document.querySelectorAll('#compare-picks input')) cb.checked = store.state.compare.includes(cb.dataset.variant);
}

/** Runs the comparison; stops early when it is cancelled or isCurrent() turns false. */
export async function runCompare(isCurrent) {
  cancelCompare();
  const token = job.token;
  job.client ??= new WorkerClient();
  job.busy = true;
  const stop = elapsedIndicator($('#compare-status'), 'comparing');
  try {
    await compareAll(job.client, () => token === job.token && isCurrent());
  } finally {
    stop();
    if (token === job.token) job.busy = false;
  }
}

async function compareAll(worker, isCurrent) {
  const { byId, state } = store;
  const ids = state.compare.slice();
  const baseId = byId.softmax ? 'softmax' : ids[0];
  const wanted = baseId && !ids.includes(baseId) ? [baseId, ...ids] : ids;
  const results = {};
  if (validateDims()) return;
  for (const id of wanted) {
    let req;
    try {
      const dims = resolveDims(dimsState());
      const big = requirements(id, byId, effectiveOpts(id)).inputs.find((s) => s.shape.reduce((p, x) => p * dims[x], 1) > COMPARE_MAX_VALUES);
      if (big) throw new Error(`skipped: ${big.name} (${big.shape.join('×')}) would hold more than ${COMPARE_MAX_VALUES.toLocaleString()} values at this size`);
      req = requestFor(id);
    } catch (err) {
      results[id] = { id, error: { code: 'SIZE', message: err.message } };
      continue;
    }
    const { inputs, transfer } = cloneInputs(req.inputs);
    try {
      const res = await worker.call('run', { variant: id, inputs, options: req.options, weights: req.dims.n <= WEIGHTS_MAX_N, build: state.build, timing: { budgetMs: 25, minSamples: 3, maxSamples: 10 } }, transfer);
      results[id] = { id, info: byId[id], inputs: req.inputs, options: req.options, dims: req.dims, output: res.output, weights: res.weights ?? null, timing: res.timing, build: res.build };
    } catch (err) {
      if (err.code === 'CANCELLED' || !isCurrent()) return;
      results[id] = { id, error: { code: err.code, message: err.message } };
    }
    if (!isCurrent()) return; // superseded
  }
  const base = results[baseId];
  for (const r of Object.values(results)) {
    if (!r.output || !base?.output || r.output.length !== base.output.length) continue;
    let mx = 0, se = 0, ss = 0;
    const diff = new Float32Array(r.output.length);
    for (let t = 0; t < r.output.length; t++) {
      const dd = r.output[t] - base.output[t];
      diff[t] = dd;
      mx = Math.max(mx, Math.abs(dd));
      se += dd * dd;
      ss += base.output[t] * base.output[t];
    }
    r.diff = diff;
    r.maxAbs = mx;
    r.nmse = ss > 0 ? se / ss : NaN;
  }
  store.compare = { baseId, ids, results };
  renderCompare();
  await compareBuilds(worker, isCurrent);
}

/**
 * Where WebGPU runs: the chosen variant on WebGPU and on the WebAssembly build side by side (the
 * Build menu's, or auto's when that is WebGPU), with max |Δy| between them.
 */
async function compareBuilds(worker, isCurrent) {
  const line = $('#compare-builds');
  if (!store.webgpu?.available) {
    line.hidden = true;
    return;
  }
  const id = store.state.variant;
  const wasm = store.state.build === 'webgpu' ? 'auto' : store.state.build;
  const runs = {};
  for (const build of ['webgpu', wasm]) {
    let req;
    try {
      req = requestFor(id);
    } catch {
      line.hidden = true;
      return;
    }
    const { inputs, transfer } = cloneInputs(req.inputs);
    try {
      runs[build] = await worker.call('run', { variant: id, inputs, options: req.options, weights: false, build, timing: { budgetMs: 25, minSamples: 3, maxSamples: 10 } }, transfer);
    } catch (err) {
      if (err.code === 'CANCELLED' || !isCurrent()) return;
      runs[build] = { error: err };
    }
    if (!isCurrent()) return;
  }
  const g = runs.webgpu, w = runs[wasm];
  line.hidden = false;
  if (g.error || w.error) {
    line.textContent = `WebGPU against WebAssembly: ${(g.error ?? w.error).code}: ${(g.error ?? w.error).message}`;
    return;
  }
  let mx = 0;
  for (let t = 0; t < g.output.length; t++) mx = Math.max(mx, Math.abs(g.output[t] - w.output[t]));
  line.dataset.maxAbs = String(mx);
  line.textContent = `${store.byId[id].label} on WebGPU (${adapterName(g.adapter) || 'adapter'}) against the ${BUILD_LABEL[w.build] ?? w.build} build: ` +
    `max |Δy| ${fmt(mx)} · ${fmtMs(g.timing.median)} against ${fmtMs(w.timing.median)} a call`;
}

/** The summary table's column heads, against baseline variant baseId. */
const COLUMNS = (baseId) => ['variant', 'family', `max |y − y_${baseId}|`, `NMSE vs ${baseId}`, 'median time', 'GFLOP/s'];

function renderTable() {
  const { baseId, ids, results } = store.compare;
  const columns = COLUMNS(baseId);
  const table = el('table', { class: 'stats compare-table', id: 'compare-table' },
    el('caption', { class: 'visually-hidden', text: 'Comparison against softmax' }),
    el('thead', {}, el('tr', {}, columns.map((t) => el('th', { scope: 'col', text: t })))));
  // each cell names its column too: on a phone the rows stack and the header row is not shown
  const cell = (k, text) => el('td', { text, dataset: { label: columns[k] } });
  const tb = el('tbody');
  for (const id of ids) {
    const r = results[id];
    if (!r) continue;
    if (r.error) {
      tb.append(el('tr', { dataset: { variant: id } }, el('th', { scope: 'row', text: store.byId[id].label }), el('td', { colspan: '5', class: 'error-text', text: `${r.error.code}: ${r.error.message}` })));
      continue;
    }
    const f = flopCount(id, r.dims, r.options);
    tb.append(el('tr', { dataset: { variant: id, maxAbs: String(r.maxAbs ?? ''), nmse: String(r.nmse ?? '') } },
      el('th', { scope: 'row', text: `${r.info.label}${r.info.learnedLogits ? ' *' : ''}` }),
      cell(1, r.info.learnedLogits ? `${r.info.family} (random, untrained parameters)` : r.info.family),
      cell(2, id === baseId ? '— (baseline)' : fmt(r.maxAbs)),
      cell(3, id === baseId ? '—' : fmt(r.nmse)),
      cell(4, `${fmtMs(r.timing.median)} (${r.build})`),
      cell(5, fmt(gflops(f.flops, r.timing.median), 3))));
  }
  table.append(tb);
  const untrained = ids.filter((id) => store.byId[id]?.learnedLogits && results[id] && !results[id].error);
  const caveat = untrained.length
    ? el('p', { class: 'note', id: 'compare-caveat', text: `* ${untrained.map((id) => store.byId[id].label).join(', ')}: ${untrained.length > 1 ? 'their' : 'its'} attention comes ` +
      `${untrained.some((id) => store.byId[id].composite) ? '(a mixture\'s in part) ' : ''}from parameters drawn at random from the seed (a Synthesizer learns them in training: the Experiment view trains them) rather than from q and k, ` +
      `so ${untrained.length > 1 ? 'their' : 'its'} difference from softmax here does not measure how well ${untrained.length > 1 ? 'they approximate' : 'it approximates'} softmax.` })
    : null;
  $('#compare-summary').replaceChildren(table, ...(caveat ? [caveat] : []));
}

function dropMaps(set) {
  for (const k of ['A', 'y', 'diff']) {
    set[k]?.release();
    set[k]?.ro.disconnect();
    set[k] = null;
  }
}

function buildCard(set, id, r, baseId) {
  const card = set.card;
  card.replaceChildren();
  const head = el('h3', { text: r.info.label });
  const stat = el('p', { class: 'note cmp-stat' });
  const hostA = el('div', { class: 'map-host' });
  const hostY = el('div', { class: 'map-host' });
  const hostD = el('div', { class: 'map-host' });
  const aCaption = el('figcaption', { text: 'A' });
  const row = el('div', { class: 'cmp-maps' },
    el('figure', { class: 'mini cmp-a' }, aCaption, hostA),
    el('figure', { class: 'mini' }, el('figcaption', { text: 'y' }), hostY),
    el('figure', { class: 'mini diff-fig' }, el('figcaption', { text: `y − y_${baseId}` }), hostD));
  card.append(head, stat, row);
  const getR = () => store.compare.results[id];
  const small = { maxHeight: 170, cellMax: 12 };
  set.stat = stat;
  set.hostA = hostA;
  set.aCaption = aCaption;
  set.diffFig = row.querySelector('.diff-fig');
  const tok = { rowName: 'token i', colName: 'channel c', rowAxis: 'tokens', colAxis: 'ch →' };
  set.A = new Heatmap(hostA, { maxHeight: 300, cellMax: 20, name: `cmp-A-${id}`, title: `A(${id})`, kind: 'sequential', maxWidth: 300, legendWidth: 160, describe: (i, j) => (getR().weights ? describeWeight(getR(), i, j) : { lines: [] }), rowName: 'query i', colName: 'key j', rowAxis: 'queries', colAxis: 'keys →' });
  set.y = new Heatmap(hostY, { ...small, ...tok, name: `cmp-y-${id}`, title: `y(${id})`, kind: 'diverging', maxWidth: 96, legendWidth: 96, describe: (i, c) => describeOutput(getR(), i, c) });
  set.diff = new Heatmap(hostD, {
    ...small, ...tok, name: `cmp-diff-${id}`, title: `Δy(${id})`, kind: 'diverging', maxWidth: 96, legendWidth: 96, legendLabel: 'difference',
    describe: (i, c) => {
      const rr = getR();
      const bId = store.compare.baseId;
      const b = store.compare.results[bId];
      const k = i * rr.dims.dv + c;
      return { lines: [`Δ = y_${id}[${i},${c}] − y_${bId}[${i},${c}] = ${fmt(rr.output[k])} − ${paren(b.output[k])} = ${fmt(rr.output[k] - b.output[k])}`] };
    },
  });
}

/**
 * A map on its own scale in the shared view: a pattern of the positions (inputFree: weights up to
 * 1 that would wash the others out) or a signed A (signedWeights: drawn diverging, around 0).
 */
const ownScale = (info) => Boolean(info && (info.inputFree || info.signedWeights));

/**
 * With the shared scale on: one range for every A, one for every y, one for every Δy. A map
 * whose weights reach far above the rest (fixed: one-hot rows of weight 1) would wash every
 * other A out to the bottom of the scale, so it keeps its own range and says so (ownA).
 */
function sharedRanges(ids, results, baseId) {
  if (!store.ui.sharedScale) return null;
  let y = 0, d = 0;
  const amax = new Map();
  for (const id of ids) {
    const r = results[id];
    if (!r || r.error) continue;
    const n = r.dims.n;
    let a = 0;
    if (r.weights) for (let t = 0; t < r.weights.length; t++) if (!(r.options.causal && t % n > Math.floor(t / n)) && r.weights[t] > a) a = r.weights[t];
    if (r.weights) amax.set(id, a);
    for (const x of r.output) y = Math.max(y, Math.abs(x));
    if (r.diff && id !== baseId) for (const x of r.diff) d = Math.max(d, Math.abs(x));
  }
  // fixed patterns put all of a row's weight on one key (or spread it evenly over a window): a
  // pattern, not a distribution over the keys, whose 1s would set everyone's scale
  const ownA = new Set([...amax.keys()].filter((id) => amax.size > 1 && ownScale(store.byId[id])));
  const a = Math.max(0, ...[...amax].filter(([id]) => !ownA.has(id)).map(([, x]) => x));
  return { A: { vmin: 0, vmax: a || 1, shared: true }, ownA, y: { vmin: -(y || 1), vmax: y || 1, shared: true }, diff: { vmin: -(d || 1e-12), vmax: d || 1e-12, shared: true } };
}

function renderCompare() {
  const { baseId, ids, results } = store.compare;
  if (!ids) return;
  renderTable();
  const shared = sharedRanges(ids, results, baseId);
  const grid = $('#compare-grid');
  const keep = new Set(ids);
  for (const [id, set] of cards) {
    if (!keep.has(id)) {
      dropMaps(set);
      set.card.remove();
      cards.delete(id);
    }
  }
  for (const id of ids) {
    const r = results[id];
    if (!r) continue;
    let set = cards.get(id);
    if (!set) {
      set = { card: el('article', { class: 'compare-card', dataset: { variant: id } }) };
      cards.set(id, set);
    }
    grid.append(set.card); // keep DOM order = ids order
    if (r.error) {
      dropMaps(set);
      set.card.replaceChildren(el('h3', { text: store.byId[id].label }), el('p', { class: 'error-text', role: 'alert', text: `${r.error.code}: ${r.error.message}` }));
      continue;
    }
    if (!set.y) buildCard(set, id, r, baseId);
    const { n, dv } = r.dims;
    // a variant causal by construction runs causal whatever the box says: Δy then also holds the
    // baseline's look-ahead, so say so
    const base = results[baseId], causal = !!r.options?.causal;
    const mismatch = id !== baseId && base?.options && causal !== !!base.options.causal
      ? ` · ${causal ? 'causal' : 'not causal'}, ${baseId} ${base.options.causal ? 'causal' : 'not causal'}` : '';
    set.stat.textContent = id === baseId ? `baseline · ${fmtMs(r.timing.median)}` : `max |Δy| ${fmt(r.maxAbs)} · NMSE ${fmt(r.nmse)} · ${fmtMs(r.timing.median)}${mismatch}`;
    if (r.weights) {
      set.hostA.closest('figure').hidden = false;
      const own = shared?.ownA.has(id);
      // the recurrent family's A is implicit and takes either sign: its own diverging scale
      const signed = r.info.signedWeights;
      set.aCaption.textContent = signed ? 'A (implicit, computed for display; its own colour scale: entries take either sign)'
        : own ? 'A (its own colour scale: a fixed pattern\'s weights of 1 would wash out the other maps)' : 'A';
      set.A.set({ rows: n, cols: n, data: r.weights, mask: r.options.causal ? (i, j) => j > i : null, vmin: signed ? undefined : 0, ...(own || signed ? {} : shared?.A), rowNorm: store.ui.rowNorm, kind: signed ? 'diverging' : 'sequential' });
    } else {
      set.A.release();
      set.hostA.closest('figure').hidden = true;
    }
    set.y.set({ rows: n, cols: dv, data: r.output, ...shared?.y });
    if (r.diff && id !== baseId) {
      set.diffFig.hidden = false;
      set.diff.set({ rows: n, cols: dv, data: r.diff, ...shared?.diff });
    } else set.diffFig.hidden = true;
  }
}

export function initCompare() {
  buildComparePicks();
  const sharedBox = $('#cmp-shared-scale');
  sharedBox.checked = store.ui.sharedScale;
  sharedBox.addEventListener('change', () => {
    store.ui.sharedScale = sharedBox.checked;
    renderCompare();
  });
  on('row-norm', renderCompare);
  subscribe((what) => {
    if (what.all) renderComparePicks();
  });
  on('theme', () => {
    for (const set of cards.values()) for (const k of ['A', 'y', 'diff']) set[k]?.retheme();
  });
}
