// attnlab page: controls, rendering and the test hook. All attention calls go to web/worker.js.
// The list of variants, their inputs, dims and options come from `lab.variants` (via the worker),
// so a variant added in C appears here without changes.

import {
  PRESETS, MAX_N, MAX_WIDTH, WEIGHTS_MAX_N, buildRequest, defaultOptions, mixableIds, resolveDims,
  generateArray, f32str, requirements,
} from './gen.js';
import { defaultState, decodeHash, encodeHash, EXTRA_DIMS } from './state.js';
import { Heatmap, fmtFull, showTooltip, hideTooltip, tooltipState, unlockTooltip } from './heatmap.js';
import { explainWeight, explainOutput, fmt } from './explain.js';
import { flopCount, gflops } from './flops.js';
import { drawChart, crossings, slope, PALETTE, fmtMs, fmtN } from './chart.js';

const $ = (sel) => document.querySelector(sel);
const el = (tag, props = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v == null) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k in e && typeof v !== 'string') e[k] = v;
    else e.setAttribute(k, v);
  }
  for (const kid of kids.flat()) if (kid != null) e.append(kid);
  return e;
};

const WORKER_URL = new URL('./worker.js', import.meta.url);
const DEBOUNCE_MS = 150;
const EDITOR_ROWS = 32;
const COMPARE_MAX_VALUES = 4 * 1024 * 1024;
const TABLE_ROWS = 64;
const PATTERNS = ['current', 'previous', 'next', 'left', 'right', 'first', 'last'];
const FAMILY_LABEL = { softmax: 'softmax (token-to-token)', synthesizer: 'Synthesizer (no token-to-token)', linear: 'linear (no softmax, O(n))', fixed: 'fixed pattern' };
const DIM_HELP = { h: 'hidden width', L: 'parameter length', a: 'factor a', b: 'factor b', rank: 'rank' };

// ------------------------------------------------------------------------------------ worker client

class WorkerClient {
  constructor() {
    this.w = new Worker(WORKER_URL, { type: 'module' });
    this.next = 1;
    this.pending = new Map();
    this.w.onmessage = (e) => {
      const m = e.data;
      const p = this.pending.get(m.id);
      if (!p) return;
      if (m.type === 'progress') return p.onProgress?.(m.point);
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m);
      else p.reject(Object.assign(new Error(m.error.message), m.error));
    };
    this.w.onerror = (e) => {
      e.preventDefault?.();
      const err = Object.assign(new Error(`the worker failed: ${e.message || 'could not start (is dist/attnlab.js built?)'}`), { code: 'LOAD' });
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
  }
  call(type, payload = {}, transfer = [], onProgress = null) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      this.w.postMessage({ id, type, ...payload }, transfer);
    });
  }
  terminate() {
    this.w.terminate();
    const err = Object.assign(new Error('cancelled'), { code: 'CANCELLED' });
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

// ------------------------------------------------------------------------------------ globals

let state = defaultState();
let lab = null; // { build, simd, version, variants, features }
let byId = {};
let worker = null;
const ui = { activeArray: null, editorRow: 0, lastHash: '' };
let last = null; // last good main result
let lastError = null;
let stale = false;
const maps = {};
const interMaps = new Map();
const compareMaps = new Map();
let compareResults = {};
const scaling = { running: false, client: null, points: [], done: false, cancelled: false, error: null, plan: null };

function info() {
  return byId[state.variant];
}

function effectiveOpts(id) {
  const i = byId[id];
  if (!i) return {};
  return { ...defaultOptions(i, lab.variants), ...(state.opts[id] ?? {}) };
}

function dimsState() {
  return { n: state.n, d: state.d, dv: state.dv, h: state.h, L: state.L, a: state.a, b: state.b, rank: state.rank };
}

function requestFor(id) {
  return buildRequest({ id, dimsState: dimsState(), seed: state.seed, preset: state.preset, edits: state.edits, opts: effectiveOpts(id), causal: state.causal }, byId);
}

function cloneInputs(inputs) {
  const out = {};
  const transfer = [];
  for (const [k, v] of Object.entries(inputs)) {
    if (v instanceof Float32Array) {
      const c = v.slice();
      out[k] = c;
      transfer.push(c.buffer);
    } else out[k] = v;
  }
  return { inputs: out, transfer };
}

function toast(msg) {
  const t = $('#global-status');
  t.textContent = msg;
  t.classList.add('show');
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.remove('show'), 2600);
}

// ------------------------------------------------------------------------------------ theme

const THEMES = ['auto', 'light', 'dark'];
function currentTheme() {
  return document.documentElement.dataset.theme ?? 'auto';
}
function setTheme(t) {
  if (t === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
  try {
    localStorage.setItem('attnlab-theme', t);
  } catch {
    /* private mode */
  }
  const b = $('#theme-toggle');
  const label = { auto: '◐ Auto', light: '☀ Light', dark: '☾ Dark' }[t];
  b.textContent = label;
  b.setAttribute('aria-label', `Colour theme: ${t}${t === 'auto' ? ' (follows the system)' : ''}. Click to change.`);
  retheme();
}
function retheme() {
  const root = document.documentElement;
  root.dataset.scheme = root.dataset.theme ?? (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
  for (const m of Object.values(maps)) m.retheme();
  for (const m of interMaps.values()) m.retheme();
  for (const set of compareMaps.values()) for (const m of Object.values(set)) if (m instanceof Heatmap) m.retheme();
  drawScaling();
}

// ------------------------------------------------------------------------------------ hash

function writeHash() {
  const h = encodeHash(state);
  ui.lastHash = h;
  history.replaceState(null, '', `#${h}`);
}

function loadHash() {
  state = decodeHash(location.hash);
  if (!byId[state.variant]) state.variant = lab.variants[0].id;
  state.compare = state.compare.filter((x) => byId[x]);
  ui.lastHash = location.hash.replace(/^#/, '');
}

// ------------------------------------------------------------------------------------ controls

function buildVariantSelect() {
  const sel = $('#variant');
  sel.replaceChildren();
  const fams = [];
  for (const v of lab.variants) if (!fams.includes(v.family)) fams.push(v.family);
  for (const f of fams) {
    const g = el('optgroup', { label: FAMILY_LABEL[f] ?? f });
    for (const v of lab.variants.filter((x) => x.family === f)) g.append(el('option', { value: v.id, text: v.label }));
    sel.append(g);
  }
  sel.disabled = false;
  sel.addEventListener('change', () => {
    state.variant = sel.value;
    ui.activeArray = null;
    ui.editorRow = 0;
    commit({ options: true, arrays: true, dims: true, variant: true });
  });
  const list = $('#variant-list');
  list.replaceChildren();
  for (const v of lab.variants) {
    list.append(el('dt', {}, el('strong', { text: v.label }), ' ', el('code', { text: v.id })));
    list.append(el('dd', {}, el('span', { text: v.summary }), el('br'), el('code', { class: 'formula-inline', text: v.formula })));
  }
}

function renderVariantInfo() {
  const v = info();
  $('#variant').value = v.id;
  $('#variant-summary').textContent = v.summary;
  $('#variant-formula').textContent = v.formula;
  $('#variant-cost').textContent = v.cost;
  $('#variant-family').textContent = FAMILY_LABEL[v.family] ?? v.family;
}

function buildPresetSelect() {
  const sel = $('#preset');
  for (const [k, p] of Object.entries(PRESETS)) sel.append(el('option', { value: k, text: p.label }));
  sel.addEventListener('change', () => {
    const p = PRESETS[sel.value];
    state.preset = sel.value;
    state.n = p.n;
    state.d = p.d;
    state.dv = p.dv;
    state.causal = p.causal;
    for (const k of EXTRA_DIMS) state[k] = null;
    state.edits = {};
    ui.editorRow = 0;
    commit({ dims: true, options: true, arrays: true });
  });
}

function intOrNull(str) {
  if (str === '' || str == null) return null;
  const x = Number(str);
  return x;
}

function bindDims() {
  for (const k of ['n', 'd', 'dv']) {
    const inp = $(`#dim-${k}`);
    inp.addEventListener('input', () => {
      const x = intOrNull(inp.value);
      state[k] = x;
      commit({ arrays: true, light: true });
    });
  }
  const seed = $('#seed');
  seed.addEventListener('input', () => {
    const x = Number(seed.value);
    if (seed.value !== '' && Number.isFinite(x)) {
      state.seed = Math.trunc(x);
      commit({ arrays: true, light: true });
    }
  });
  $('#new-seed').addEventListener('click', () => {
    state.seed = 1 + Math.floor(Math.random() * 999999);
    seed.value = state.seed;
    commit({ arrays: true });
  });
}

function renderDims() {
  $('#preset').value = state.preset;
  for (const k of ['n', 'd', 'dv']) {
    const inp = $(`#dim-${k}`);
    if (document.activeElement !== inp) inp.value = state[k] ?? '';
  }
  const used = new Set(requirements(state.variant, byId, effectiveOpts(state.variant)).dims);
  $('#dim-d').closest('.field').classList.toggle('unused', !used.has('d'));
  $('#dim-d').title = used.has('d') ? '' : `${info().label} does not read d (q, k and x are not used)`;
  if (document.activeElement !== $('#seed')) $('#seed').value = state.seed;
  const sc = $('#opt-scale');
  if (sc) sc.placeholder = `default 1/√d = ${fmt(1 / Math.sqrt(state.d || 1))}`;
  const box = $('#extra-dims');
  const extras = EXTRA_DIMS.filter((k) => used.has(k));
  const auto = resolveDims(dimsState());
  const have = [...box.querySelectorAll('input')].map((x) => x.dataset.dim).join(',');
  if (have !== extras.join(',')) {
    box.replaceChildren();
    for (const k of extras) {
      const id = `dim-${k}`;
      const inp = el('input', { id, type: 'number', min: '1', step: '1', inputmode: 'numeric', dataset: { dim: k } });
      inp.addEventListener('input', () => {
        state[k] = intOrNull(inp.value);
        commit({ arrays: true, light: true });
      });
      box.append(el('div', { class: 'field' }, el('label', { for: id }, `${k} `, el('span', { class: 'muted', text: `(${DIM_HELP[k] ?? k})` })), inp));
    }
  }
  for (const inp of box.querySelectorAll('input')) {
    const k = inp.dataset.dim;
    inp.placeholder = `auto: ${auto[k]}`;
    if (document.activeElement !== inp) inp.value = state[k] ?? '';
  }
}

/** Page-level checks the binding cannot do for us (we need whole, bounded sizes to build arrays). */
function validateDims() {
  const used = requirements(state.variant, byId, effectiveOpts(state.variant)).dims;
  const limits = { n: MAX_N, d: MAX_WIDTH, dv: MAX_WIDTH, h: 4096, L: 65536, a: 65536, b: 65536, rank: 4096 };
  for (const k of ['n', 'd', 'dv', ...EXTRA_DIMS]) {
    if (!used.includes(k) && !['n', 'dv'].includes(k)) continue;
    const x = k in state ? state[k] : null;
    if (x == null && (k === 'n' || k === 'dv' || (k === 'd' && used.includes('d')))) return { target: 'dims', message: `${k} is empty: enter a whole number ≥ 1` };
    if (x == null) continue;
    if (!Number.isInteger(x) || x < 1) return { target: 'dims', message: `${k} must be a whole number ≥ 1 (got ${x})` };
    if (x > limits[k]) return { target: 'dims', message: `${k} = ${x} is larger than the page allows (${limits[k]}); the scaling chart goes up to n = 16384` };
  }
  const dims = resolveDims(dimsState());
  const req = requirements(state.variant, byId, effectiveOpts(state.variant));
  let total = 0;
  for (const s of req.inputs) total += s.shape.reduce((p, x) => p * dims[x], 1);
  if (total > 32 * 1024 * 1024) return { target: 'dims', message: `the inputs would hold ${total.toLocaleString()} values; choose smaller sizes` };
  return null;
}

// ---- options

function renderOptions() {
  const v = info();
  $('#causal').checked = state.causal;
  const box = $('#variant-options');
  box.replaceChildren();
  const o = effectiveOpts(v.id);
  const set = (name, val) => {
    (state.opts[v.id] ??= {})[name] = val;
    if (val == null || val === '') delete state.opts[v.id][name];
  };
  const numberField = (name, labelText, placeholder, attrs = {}) => {
    const id = `opt-${name}`;
    const inp = el('input', { id, type: 'number', step: 'any', placeholder, ...attrs });
    inp.value = state.opts[v.id]?.[name] ?? '';
    inp.addEventListener('input', () => {
      set(name, inp.value === '' ? null : Number(inp.value));
      commit({ light: true });
    });
    return el('div', { class: 'field' }, el('label', { for: id }, labelText), inp);
  };
  // `state` asks for an extra output, which the page always requests for display: not a control
  const settable = v.options.filter((name) => name !== 'state');
  for (const name of settable) {
    if (name === 'scale') {
      box.append(numberField('scale', 'scale (logit multiplier)', `default 1/√d = ${fmt(1 / Math.sqrt(state.d || 1))}`));
    } else if (name === 'eps') {
      box.append(numberField('eps', 'eps (denominator)', 'default 1e-6', { min: '0' }));
    } else if (name === 'window') {
      box.append(numberField('window', 'window w (left / right)', 'default 3', { min: '1', step: '1' }));
    } else if (name === 'tiling') {
      const id = 'opt-tiling';
      const sel = el('select', { id }, el('option', { value: 'kronecker', text: 'kronecker (default): all a·b products' }), el('option', { value: 'tile', text: 'tile: F_A[j mod a]·F_B[j mod b]' }));
      sel.value = o.tiling ?? 'kronecker';
      sel.addEventListener('change', () => {
        set('tiling', sel.value === 'kronecker' ? null : sel.value);
        commit({ light: true });
      });
      box.append(el('div', { class: 'field' }, el('label', { for: id, text: 'tiling' }), sel, el('p', { class: 'note', text: '"tile" repeats columns with period lcm(a, b): fully expressive only when gcd(a, b) = 1.' })));
    } else if (name === 'pattern') {
      const id = 'opt-pattern';
      const sel = el('select', { id }, PATTERNS.map((p) => el('option', { value: p, text: p })));
      sel.value = o.pattern ?? 'current';
      sel.addEventListener('change', () => {
        set('pattern', sel.value);
        commit({ light: true });
      });
      box.append(el('div', { class: 'field' }, el('label', { for: id, text: 'pattern' }), sel));
    } else if (name === 'components') {
      const mix = mixableIds(v, lab.variants);
      const comps = o.components ?? [];
      const fs = el('fieldset', { class: 'sub' }, el('legend', { text: 'components (logits to mix)' }));
      for (const c of mix) {
        const id = `opt-comp-${c}`;
        const cb = el('input', { type: 'checkbox', id, checked: comps.includes(c) });
        cb.addEventListener('change', () => {
          const cur = effectiveOpts(v.id);
          const chosen = new Set(cur.components ?? []);
          if (cb.checked) chosen.add(c);
          else chosen.delete(c);
          const list = mix.filter((x) => chosen.has(x));
          const alpha = list.map((x) => {
            const i = (cur.components ?? []).indexOf(x);
            return i >= 0 && cur.alpha && cur.alpha[i] != null ? cur.alpha[i] : 1;
          });
          set('components', list);
          set('alpha', alpha);
          commit({ options: true, arrays: true, dims: true });
        });
        fs.append(el('label', { class: 'check', for: id }, cb, ` ${byId[c].label}`));
      }
      box.append(fs);
    } else if (name === 'alpha') {
      const comps = o.components ?? [];
      const raw = o.alpha ?? comps.map(() => 1);
      const sum = raw.reduce((p, t) => p + t, 0);
      const fs = el('fieldset', { class: 'sub' }, el('legend', { text: 'α (mixing weights, normalised to sum 1)' }));
      comps.forEach((c, i) => {
        const id = `opt-alpha-${c}`;
        const out = el('output', { for: id, text: sum > 0 ? fmt(raw[i] / sum, 3) : '—' });
        const r = el('input', { type: 'range', id, min: '0', max: '1', step: '0.01', value: String(raw[i] ?? 1), 'aria-label': `α for ${c}` });
        r.addEventListener('input', () => {
          const cur = effectiveOpts(v.id);
          const a = (cur.alpha ?? cur.components.map(() => 1)).slice();
          a[i] = Number(r.value);
          set('alpha', a);
          const s = a.reduce((p, t) => p + t, 0);
          fs.querySelectorAll('output').forEach((op, k) => (op.textContent = s > 0 ? fmt(a[k] / s, 3) : '—'));
          commit({ light: true });
        });
        fs.append(el('div', { class: 'slider' }, el('label', { for: id, text: byId[c]?.label ?? c }), r, out));
      });
      if (!comps.length) fs.append(el('p', { class: 'note', text: 'Pick at least one component.' }));
      box.append(fs);
    } else if (name === 'alphaLogits') {
      // The sliders above set alpha; alphaLogits is the API's alternative form of the same weights.
    } else {
      const id = `opt-${name}`;
      const inp = el('input', { id, type: 'text', placeholder: 'default' });
      inp.value = state.opts[v.id]?.[name] ?? '';
      inp.addEventListener('change', () => {
        let val = inp.value.trim();
        try {
          val = val === '' ? null : JSON.parse(val);
        } catch {
          /* keep the text */
        }
        set(name, val);
        commit({ light: true });
      });
      box.append(el('div', { class: 'field' }, el('label', { for: id, text: name }), inp));
    }
  }
  if (!settable.length) box.append(el('p', { class: 'note', text: `${v.label} has no options besides causal.` }));
}

// ---- input matrices

function currentArrays() {
  try {
    return requestFor(state.variant);
  } catch {
    return null;
  }
}

function fmtCell(x) {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const a = Math.abs(x);
  return a >= 1e4 || a < 1e-3 ? x.toExponential(2) : String(Number(x.toPrecision(4)));
}

function renderArrays() {
  const tabs = $('#array-tabs');
  const panel = $('#array-panel');
  if (validateDims()) {
    tabs.replaceChildren();
    panel.replaceChildren(el('p', { class: 'note', text: 'Fix the sizes above to see the inputs.' }));
    return;
  }
  const req = currentArrays();
  if (!req) return;
  const names = req.arrays.map((a) => a.name);
  if (!names.includes(ui.activeArray)) {
    ui.activeArray = names[0];
    ui.editorRow = 0;
  }
  tabs.replaceChildren();
  for (const a of req.arrays) {
    const sel = a.name === ui.activeArray;
    const nEdits = Object.keys(state.edits[a.name]?.cells ?? {}).length;
    const t = el('button', {
      type: 'button', role: 'tab', id: `tab-${a.name}`, 'aria-selected': String(sel), 'aria-controls': 'array-panel', tabIndex: sel ? 0 : -1,
      class: `tab${nEdits ? ' edited' : ''}`, dataset: { array: a.name },
    }, a.name, el('span', { class: 'muted', text: ` ${a.shape.join('×')}` }));
    t.addEventListener('click', () => {
      ui.activeArray = a.name;
      ui.editorRow = 0;
      renderArrays();
      $(`#tab-${a.name}`)?.focus();
    });
    t.addEventListener('keydown', (e) => {
      const i = names.indexOf(a.name);
      let j = null;
      if (e.key === 'ArrowRight') j = (i + 1) % names.length;
      if (e.key === 'ArrowLeft') j = (i - 1 + names.length) % names.length;
      if (j != null) {
        e.preventDefault();
        ui.activeArray = names[j];
        ui.editorRow = 0;
        renderArrays();
        $(`#tab-${names[j]}`)?.focus();
      }
    });
    tabs.append(t);
  }
  panel.setAttribute('aria-labelledby', `tab-${ui.activeArray}`);
  const spec = req.arrays.find((a) => a.name === ui.activeArray);
  if (!spec) return;
  renderMatrixEditor(panel, spec, req.inputs[spec.name], req.dims);
}

function renderMatrixEditor(panel, spec, values, dims) {
  const { name, rows, cols } = spec;
  const gen = generateArray(name, spec.shape, dims, state.seed, state.preset);
  const edits = state.edits[name];
  const editedCells = edits && edits.len === values.length ? edits.cells : {};
  const nEdits = Object.keys(editedCells).length;
  const start = Math.min(ui.editorRow, Math.max(0, rows - 1));
  const end = Math.min(rows, start + EDITOR_ROWS);
  const head = el('div', { class: 'editor-head' },
    el('span', {}, el('strong', { text: name }), ` — ${spec.shape.join('×')} = ${rows}×${cols}`, el('span', { class: 'muted edit-count', text: editCountText(nEdits) })),
    el('button', {
      type: 'button', class: 'small reset-array', text: `Reset ${name}`, hidden: !nEdits, onclick: () => {
        delete state.edits[name];
        commit({ arrays: true });
      },
    }),
  );
  const frag = [head];
  if (rows > EDITOR_ROWS) {
    const pager = el('div', { class: 'pager', role: 'group', 'aria-label': `Rows of ${name}` },
      el('button', { type: 'button', class: 'small', text: '◀ Previous rows', disabled: start === 0, onclick: () => { ui.editorRow = Math.max(0, start - EDITOR_ROWS); renderArrays(); } }),
      el('span', { text: ` rows ${start}–${end - 1} of ${rows} ` }),
      el('button', { type: 'button', class: 'small', text: 'Next rows ▶', disabled: end >= rows, onclick: () => { ui.editorRow = end; renderArrays(); } }),
    );
    frag.push(pager);
  }
  const table = el('table', { class: 'matrix', 'aria-label': `${name} values (${rows}×${cols})` });
  const thead = el('thead', {}, el('tr', {}, el('th', { scope: 'col', class: 'corner', text: 'i \\ j' }), Array.from({ length: cols }, (_, j) => el('th', { scope: 'col', text: String(j) }))));
  const tbody = el('tbody');
  for (let i = start; i < end; i++) {
    const tr = el('tr', {}, el('th', { scope: 'row', text: String(i) }));
    for (let j = 0; j < cols; j++) {
      const idx = i * cols + j;
      const x = values[idx];
      const edited = idx in editedCells;
      const inp = el('input', {
        type: 'text', inputmode: 'decimal', class: `cell${edited ? ' edited' : ''}`, value: fmtCell(x), title: f32str(x),
        'aria-label': `${name}[${i}, ${j}]`, dataset: { index: String(idx), array: name, row: String(i), col: String(j) }, spellcheck: false, autocomplete: 'off',
      });
      if (!Number.isFinite(x)) inp.setAttribute('aria-invalid', 'true');
      inp.addEventListener('change', () => editCell(name, values.length, idx, inp, gen[idx]));
      inp.addEventListener('keydown', (e) => {
        if (e.key !== 'Enter' && e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
        e.preventDefault();
        const ni = i + (e.key === 'ArrowUp' ? -1 : 1);
        const sel = `#array-panel input.cell[data-row="${ni}"][data-col="${j}"]`;
        // Apply the edit, then move to the cell below / above (Enter and ↓ move down).
        if (inp.value !== inp.defaultValue) editCell(name, values.length, idx, inp, gen[idx]);
        const next = $(sel);
        if (next) {
          next.focus();
          next.select();
        }
      });
      tr.append(el('td', {}, inp));
    }
    tbody.append(tr);
  }
  table.append(thead, tbody);
  frag.push(el('div', { class: 'table-scroll matrix-scroll' }, table));
  // paste box
  const pid = `paste-${name}`;
  const ta = el('textarea', { id: pid, rows: '4', spellcheck: false, placeholder: `${rows} rows × ${cols} columns, e.g.\n0.1, -0.2, ...\nor JSON: [[0.1, -0.2, ...], ...]` });
  const perr = el('p', { class: 'inline-error', role: 'alert', hidden: true, id: `paste-error-${name}` });
  const apply = el('button', { type: 'button', text: `Apply to ${name}`, onclick: () => applyPaste(name, spec, values.length, ta.value, perr, gen) });
  const copy = el('button', {
    type: 'button', text: `Copy ${name} as CSV`, onclick: () => copyText(toCsv(values, rows, cols), `${name} copied as CSV`),
  });
  frag.push(el('details', { class: 'paste' }, el('summary', { text: 'Paste CSV / JSON' }),
    el('label', { for: pid, text: `Values for ${name} (${rows}×${cols}): one row per line, separated by commas or spaces; or a JSON array (nested or flat).` }),
    ta, el('div', { class: 'inline' }, apply, copy), perr));
  panel.replaceChildren(...frag);
}

function toCsv(values, rows, cols) {
  const lines = [];
  for (let i = 0; i < rows; i++) lines.push(Array.from(values.subarray(i * cols, (i + 1) * cols), f32str).join(','));
  return lines.join('\n');
}

function editCountText(k) {
  return k ? ` · ${k} cell${k > 1 ? 's' : ''} edited` : '';
}

/** Applies one typed cell. Updates the editor in place (no re-render, so focus and clicks stay). */
function editCell(name, len, idx, inp, genValue) {
  const t = inp.value.trim();
  let e = state.edits[name];
  if (!e || e.len !== len) e = state.edits[name] = { len, cells: {} };
  let value;
  if (t === '') {
    delete e.cells[idx];
    value = genValue;
    inp.value = fmtCell(genValue);
  } else {
    value = Math.fround(Number(t));
    if (Number.isFinite(value) && value === genValue) delete e.cells[idx];
    else e.cells[idx] = value; // NaN / Infinity stay: the binding reports them (AttnError VALUE)
  }
  const k = Object.keys(e.cells).length;
  if (!k) delete state.edits[name];
  inp.defaultValue = inp.value;
  inp.title = f32str(value);
  inp.classList.toggle('edited', idx in e.cells);
  if (Number.isFinite(value)) inp.removeAttribute('aria-invalid');
  else inp.setAttribute('aria-invalid', 'true');
  const panel = $('#array-panel');
  panel.querySelector('.edit-count').textContent = editCountText(k);
  panel.querySelector('.reset-array').hidden = !k;
  $(`#tab-${name}`)?.classList.toggle('edited', k > 0);
  commit({});
}

/** Parses CSV or JSON into numbers. Throws only for JSON syntax; bad numbers become NaN. */
export function parseMatrixText(text) {
  const t = text.trim();
  if (!t) throw new Error('nothing to apply: the box is empty');
  if (t.startsWith('[') || t.startsWith('{')) {
    let j;
    try {
      j = JSON.parse(t);
    } catch (err) {
      throw new Error(`JSON: ${err.message}`);
    }
    if (!Array.isArray(j)) j = j.values ?? j.data ?? Object.values(j)[0];
    if (!Array.isArray(j)) throw new Error('JSON: expected an array of numbers (flat or nested)');
    return j.flat(Infinity).map((x) => (x === null ? NaN : Number(x)));
  }
  const out = [];
  for (const line of t.split(/\r?\n/)) {
    const s = line.trim();
    if (!s || s.startsWith('#')) continue;
    for (const f of s.split(/[,;\s]+/)) if (f !== '') out.push(Number(f));
  }
  return out;
}

async function applyPaste(name, spec, len, text, perr, gen) {
  perr.hidden = true;
  let nums;
  try {
    nums = parseMatrixText(text);
  } catch (err) {
    perr.textContent = err.message;
    perr.hidden = false;
    return;
  }
  if (nums.length !== len) {
    // Let the binding say what is wrong, in its own words (AttnError SHAPE).
    const req = requestFor(state.variant);
    req.inputs[name] = Float32Array.from(nums);
    const { inputs, transfer } = cloneInputs(req.inputs);
    try {
      await worker.call('run', { variant: state.variant, inputs, options: req.options, weights: false, build: state.build }, transfer);
      perr.textContent = `${name} has ${nums.length} values, expected ${len}`;
    } catch (err) {
      perr.textContent = `${err.code}: ${err.message}`;
    }
    perr.hidden = false;
    return;
  }
  const cells = {};
  nums.forEach((x, i) => {
    const f = Math.fround(x);
    if (!(Number.isFinite(f) && f === gen[i])) cells[i] = f;
  });
  if (Object.keys(cells).length) state.edits[name] = { len, cells };
  else delete state.edits[name];
  commit({ arrays: true });
  toast(`Applied ${len} values to ${name}`);
}

// ------------------------------------------------------------------------------------ commit + run

let debounceTimer = null;
let inflight = false;
let queued = false;
let runSeq = 0;

function commit(what = {}) {
  writeHash();
  if (what.variant) renderVariantInfo();
  if (what.options) renderOptions();
  renderDims();
  if (what.arrays) renderArrays();
  scheduleRun();
}

function scheduleRun(delay = DEBOUNCE_MS) {
  clearTimeout(debounceTimer);
  debounceTimer = setTimeout(() => {
    debounceTimer = null;
    startRun();
  }, delay);
}

async function startRun() {
  if (inflight) {
    queued = true;
    return;
  }
  inflight = true;
  try {
    const ok = await runMain();
    if (ok && !queued) await runCompare();
  } catch (err) {
    console.warn(err);
  } finally {
    inflight = false;
    if (queued) {
      queued = false;
      startRun();
    }
  }
}

function busy() {
  return !!debounceTimer || inflight || queued;
}

const ERROR_TARGETS = () => {
  const arrays = new Set(lab.variants.flatMap((v) => v.inputs.map((x) => x.name)));
  const options = new Set([...lab.variants.flatMap((v) => v.options), 'causal', 'weights']);
  const dims = new Set(['n', 'd', 'dv', ...EXTRA_DIMS]);
  return { arrays, options, dims };
};

/** Which control an AttnError message is about: the first input, option or dimension it names. */
function errorTarget(message) {
  const { arrays, options, dims } = ERROR_TARGETS();
  for (const m of message.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
    const w = m[0];
    if (arrays.has(w)) return { target: 'inputs', name: w };
    if (options.has(w)) return { target: 'options', name: w };
    if (dims.has(w)) return { target: 'dims', name: w };
  }
  return { target: 'run', name: null };
}

function clearInlineErrors() {
  for (const id of ['#dims-error', '#options-error', '#inputs-error', '#run-error']) {
    const e = $(id);
    e.hidden = true;
    e.textContent = '';
  }
  document.querySelectorAll('.tab.invalid').forEach((t) => t.classList.remove('invalid'));
}

function showError(err, where) {
  clearInlineErrors();
  lastError = { code: err.code ?? 'ERROR', message: err.message };
  const t = where ?? errorTarget(err.message);
  const text = `${err.code ? err.code + ': ' : ''}${err.message}`;
  const box = { inputs: '#inputs-error', options: '#options-error', dims: '#dims-error' }[t.target];
  if (box) {
    $(box).textContent = text;
    $(box).hidden = false;
  }
  if (t.target === 'inputs' && t.name) $(`#tab-${t.name}`)?.classList.add('invalid');
  const banner = $('#run-error');
  banner.replaceChildren(el('strong', { text: last ? 'Showing the last good output (stale). ' : 'No output yet. ' }), el('span', { text }));
  banner.hidden = false;
  setStale(true);
}

function setStale(s) {
  stale = s && !!last;
  $('#outputs').classList.toggle('stale', stale);
  $('#stale-badge').hidden = !stale;
  $('#outputs').dataset.stale = String(stale);
}

async function runMain() {
  const seq = ++runSeq;
  const v = info();
  const dimErr = validateDims();
  if (dimErr) {
    showError({ code: 'SIZE', message: dimErr.message }, { target: 'dims' });
    return false;
  }
  let req;
  try {
    req = requestFor(v.id);
  } catch (err) {
    showError({ code: 'SIZE', message: err.message }, { target: 'dims' });
    return false;
  }
  const wantWeights = req.dims.n <= WEIGHTS_MAX_N;
  const { inputs, transfer } = cloneInputs(req.inputs);
  let res;
  try {
    res = await worker.call('run', { variant: v.id, inputs, options: req.options, weights: wantWeights, build: state.build, timing: { budgetMs: 80, minSamples: 3, maxSamples: 25 }, extras: true }, transfer);
  } catch (err) {
    if (seq !== runSeq) return false;
    showError(err);
    return false;
  }
  if (seq !== runSeq) return false;
  last = { seq, id: v.id, info: v, req, inputs: req.inputs, options: req.options, dims: req.dims, output: res.output, weights: res.weights ?? null, timing: res.timing, build: res.build, simd: res.simd, intermediates: res.intermediates ?? [] };
  lastError = null;
  clearInlineErrors();
  setStale(false);
  renderOutputs();
  return true;
}

// ------------------------------------------------------------------------------------ outputs

function ctxOf(r) {
  return { id: r.id, family: r.info.family, inputs: r.inputs, dims: r.dims, options: r.options, weights: r.weights, output: r.output };
}

function weightDescribe(getR) {
  return (i, j) => {
    const r = getR();
    const ex = explainWeight(ctxOf(r), i, j);
    const lines = ex.lines.slice();
    const row = r.weights.subarray(i * r.dims.n, (i + 1) * r.dims.n);
    let s = 0;
    for (const x of row) s += x;
    lines.push(`row ${i} sums to ${fmt(s, 6)}`);
    return { lines, computed: ex.computed };
  };
}

function outputDescribe(getR) {
  return (i, c) => explainOutput(ctxOf(getR()), i, c);
}

function ensureMaps() {
  if (maps.weights) return;
  maps.weights = new Heatmap($('#weights-map'), { name: 'weights', title: 'A', kind: 'sequential', rowName: 'query i', colName: 'key j', describe: weightDescribe(() => last), maxHeight: 440, legendLabel: 'weight A[i,j]' });
  maps.output = new Heatmap($('#output-map'), { name: 'output', title: 'y', kind: 'diverging', rowName: 'token i', colName: 'channel c', describe: outputDescribe(() => last), maxHeight: 440, maxWidth: 360, legendLabel: 'y (signed)' });
}

function renderOutputs() {
  ensureMaps();
  const r = last;
  const { n, dv } = r.dims;
  const linear = r.info.family === 'linear';
  const causalMask = r.options.causal ? (i, j) => j > i : null;
  // timing
  renderTiming(r);
  // A
  const wt = $('#weights-title');
  wt.replaceChildren(linear ? 'A — implicit: computed for display ' : 'Effective attention A ', el('span', { class: 'muted', text: `(${n}×${n})` }));
  const wcard = $('#weights-card');
  if (r.weights) {
    wcard.classList.remove('no-weights');
    maps.weights.set({ rows: n, cols: n, data: r.weights, mask: causalMask, vmin: 0 });
    $('#weights-note').textContent = linear
      ? `${r.info.label} never builds A to compute y (cost ${r.info.cost}); the page asks for it (weights: true) only to draw it.`
      : r.info.family === 'fixed' ? 'A fixed pattern: no softmax, no dependence on the input.' : 'Rows are softmax distributions: non-negative, summing to 1.';
  } else {
    wcard.classList.add('no-weights');
    maps.weights.root.hidden = true;
    $('#weights-note').textContent = `A is drawn only for n ≤ ${WEIGHTS_MAX_N} (it has n² = ${(n * n).toLocaleString()} values); y is complete.`;
  }
  if (r.weights) maps.weights.root.hidden = false;
  maps.output.set({ rows: n, cols: dv, data: r.output });
  renderIntermediates(r);
  renderRowStats(r);
  renderOutputTable(r);
}

function renderTiming(r) {
  const t = r.timing;
  const f = flopCount(r.info, r.dims, r.options);
  const box = $('#timing');
  box.replaceChildren();
  box.dataset.build = r.build;
  const buildName = r.build === 'scalar' ? 'scalar' : r.build === 'relaxed' ? 'relaxed SIMD' : 'SIMD';
  const parts = [
    el('span', { class: `badge build-${r.build}`, text: `${buildName} build` }),
    el('span', {}, el('span', { class: 'muted', text: 'median ' }), el('strong', { text: fmtMs(t.median) })),
    el('span', { class: 'muted', text: `spread ${fmtMs(t.min)} – ${fmtMs(t.max)} (IQR ${fmtMs(t.q1)} – ${fmtMs(t.q3)}), ${t.samples} sample${t.samples > 1 ? 's' : ''}${t.batch > 1 ? ` × ${t.batch} calls` : ''}` }),
    el('span', {}, el('strong', { text: `${fmt(gflops(f.flops, t.median), 3)} GFLOP/s` }), el('span', { class: 'muted', text: ` (${f.formula} = ${f.flops.toLocaleString()} flop)` })),
  ];
  for (const p of parts) box.append(p);
  box.append(el('span', { class: 'muted small-text', text: 'timed without weights; A is requested once, for display' }));
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
    (r.options.causal ? 'With causal they are prefix sums over j ≤ i; shown here at i = n−1 (the full sums). ' : '') +
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
  for (const s of st) {
    tb.append(el('tr', {},
      el('th', { scope: 'row', text: String(s.i) }),
      el('td', { dataset: { value: String(s.h) } }, el('span', { class: 'bar', style: `--w:${Math.max(0, Math.min(1, s.hn)) * 100}%` }), fmt(s.h)),
      el('td', { text: fmt(s.hn, 3) }),
      el('td', { dataset: { value: String(s.mx) } }, el('span', { class: 'bar alt', style: `--w:${Math.max(0, Math.min(1, s.mx)) * 100}%` }), fmt(s.mx)),
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

// ------------------------------------------------------------------------------------ compare

function buildComparePicks() {
  const box = $('#compare-picks');
  box.replaceChildren();
  for (const v of lab.variants) {
    const id = `cmp-${v.id}`;
    const cb = el('input', { type: 'checkbox', id, checked: state.compare.includes(v.id), dataset: { variant: v.id } });
    cb.addEventListener('change', () => {
      const set = new Set(state.compare);
      if (cb.checked) set.add(v.id);
      else set.delete(v.id);
      state.compare = lab.variants.map((x) => x.id).filter((x) => set.has(x));
      writeHash();
      scheduleRun(0);
    });
    box.append(el('label', { class: 'check', for: id }, cb, ` ${v.label}`));
  }
}

function renderComparePicks() {
  for (const cb of document.querySelectorAll('#compare-picks input')) cb.checked = state.compare.includes(cb.dataset.variant);
}

async function runCompare() {
  const ids = state.compare.slice();
  const baseId = byId.softmax ? 'softmax' : ids[0];
  const wanted = baseId && !ids.includes(baseId) ? [baseId, ...ids] : ids;
  const seq = runSeq;
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
      results[id] = { id, error: { code: err.code, message: err.message } };
    }
    if (seq !== runSeq || queued) return; // superseded
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
  compareResults = { baseId, ids, results };
  renderCompare();
}

function renderCompare() {
  const { baseId, ids, results } = compareResults;
  const sumBox = $('#compare-summary');
  const table = el('table', { class: 'stats compare-table', id: 'compare-table' },
    el('caption', { class: 'visually-hidden', text: 'Comparison against softmax' }),
    el('thead', {}, el('tr', {}, ['variant', 'family', `max |y − y_${baseId}|`, `NMSE vs ${baseId}`, 'median time', 'GFLOP/s'].map((t) => el('th', { scope: 'col', text: t })))));
  const tb = el('tbody');
  for (const id of ids) {
    const r = results[id];
    if (!r) continue;
    if (r.error) {
      tb.append(el('tr', { dataset: { variant: id } }, el('th', { scope: 'row', text: byId[id].label }), el('td', { colspan: '5', class: 'error-text', text: `${r.error.code}: ${r.error.message}` })));
      continue;
    }
    const f = flopCount(r.info, r.dims, r.options);
    tb.append(el('tr', { dataset: { variant: id, maxAbs: String(r.maxAbs ?? ''), nmse: String(r.nmse ?? '') } },
      el('th', { scope: 'row', text: r.info.label }),
      el('td', { text: r.info.family }),
      el('td', { text: id === baseId ? '— (baseline)' : fmt(r.maxAbs) }),
      el('td', { text: id === baseId ? '—' : fmt(r.nmse) }),
      el('td', { text: `${fmtMs(r.timing.median)} (${r.build})` }),
      el('td', { text: fmt(gflops(f.flops, r.timing.median), 3) })));
  }
  table.append(tb);
  sumBox.replaceChildren(table);

  const grid = $('#compare-grid');
  const keep = new Set(ids);
  for (const [id, set] of compareMaps) {
    if (!keep.has(id)) {
      for (const m of Object.values(set)) if (m instanceof Heatmap) m.ro.disconnect();
      set.card.remove();
      compareMaps.delete(id);
    }
  }
  for (const id of ids) {
    const r = results[id];
    if (!r) continue;
    let set = compareMaps.get(id);
    if (!set) {
      const card = el('article', { class: 'compare-card', dataset: { variant: id } });
      grid.append(card);
      set = { card };
      compareMaps.set(id, set);
    }
    const card = set.card;
    // keep DOM order = ids order
    grid.append(card);
    if (r.error) {
      for (const k of ['A', 'y', 'diff']) {
        set[k]?.ro.disconnect();
        set[k] = null;
      }
      card.replaceChildren(el('h3', { text: byId[id].label }), el('p', { class: 'error-text', role: 'alert', text: `${r.error.code}: ${r.error.message}` }));
      continue;
    }
    if (!set.y) {
      card.replaceChildren();
      const head = el('h3', { text: r.info.label });
      const stat = el('p', { class: 'note cmp-stat' });
      const hostA = el('div', { class: 'map-host' });
      const hostY = el('div', { class: 'map-host' });
      const hostD = el('div', { class: 'map-host' });
      const row = el('div', { class: 'cmp-maps' },
        el('figure', { class: 'mini' }, el('figcaption', { text: 'A' }), hostA),
        el('figure', { class: 'mini' }, el('figcaption', { text: 'y' }), hostY),
        el('figure', { class: 'mini diff-fig' }, el('figcaption', { text: `y − y_${baseId}` }), hostD));
      card.append(head, stat, row);
      const getR = () => compareResults.results[id];
      set.stat = stat;
      set.hostA = hostA;
      set.diffFig = row.querySelector('.diff-fig');
      set.A = new Heatmap(hostA, { name: `cmp-A-${id}`, title: `A(${id})`, kind: 'sequential', maxHeight: 170, maxWidth: 140, cellMax: 12, legendWidth: 130, describe: (i, j) => (getR().weights ? weightDescribe(getR)(i, j) : { lines: [] }), rowName: 'query i', colName: 'key j' });
      set.y = new Heatmap(hostY, { name: `cmp-y-${id}`, title: `y(${id})`, kind: 'diverging', maxHeight: 170, maxWidth: 96, cellMax: 12, legendWidth: 96, describe: outputDescribe(getR), rowName: 'token i', colName: 'channel c' });
      set.diff = new Heatmap(hostD, {
        name: `cmp-diff-${id}`, title: `Δy(${id})`, kind: 'diverging', maxHeight: 170, maxWidth: 96, cellMax: 12, legendWidth: 96, rowName: 'token i', colName: 'channel c', legendLabel: 'difference',
        describe: (i, c) => {
          const rr = getR();
          const b = compareResults.results[compareResults.baseId];
          const k = i * rr.dims.dv + c;
          return { lines: [`Δ = y_${id}[${i},${c}] − y_${compareResults.baseId}[${i},${c}] = ${fmt(rr.output[k])} − ${paren(b.output[k])} = ${fmt(rr.output[k] - b.output[k])}`] };
        },
      });
    }
    const { n, dv } = r.dims;
    set.stat.textContent = id === baseId ? `baseline · ${fmtMs(r.timing.median)}` : `max |Δy| ${fmt(r.maxAbs)} · NMSE ${fmt(r.nmse)} · ${fmtMs(r.timing.median)}`;
    if (r.weights) {
      set.hostA.closest('figure').hidden = false;
      set.A.set({ rows: n, cols: n, data: r.weights, mask: r.options.causal ? (i, j) => j > i : null, vmin: 0 });
    } else set.hostA.closest('figure').hidden = true;
    set.y.set({ rows: n, cols: dv, data: r.output });
    if (r.diff && id !== baseId) {
      set.diffFig.hidden = false;
      set.diff.set({ rows: n, cols: dv, data: r.diff });
    } else set.diffFig.hidden = true;
  }
}

function paren(x) {
  return x < 0 ? `(${fmt(x)})` : fmt(x);
}

// ------------------------------------------------------------------------------------ scaling

const BUILD_LABEL = { relaxed: 'relaxed SIMD', simd: 'SIMD', scalar: 'scalar' };

function buildScalingControls() {
  const vbox = $('#scale-variants');
  for (const v of lab.variants) {
    const id = `sv-${v.id}`;
    const cb = el('input', { type: 'checkbox', id, checked: v.id === 'softmax' || v.id === 'linear', dataset: { variant: v.id } });
    vbox.append(el('label', { class: 'check', for: id }, cb, ` ${v.label}`));
  }
  const bbox = $('#scale-builds');
  const feats = lab.features ?? { simd: true, relaxedSimd: false };
  const builds = [];
  if (feats.relaxedSimd) builds.push('relaxed');
  if (feats.simd !== false) builds.push('simd');
  builds.push('scalar');
  for (const b of builds) {
    const id = `sb-${b}`;
    const cb = el('input', { type: 'checkbox', id, checked: b === 'simd' || b === 'scalar' || (b === 'relaxed' && !feats.simd), dataset: { build: b } });
    bbox.append(el('label', { class: 'check', for: id }, cb, ` ${BUILD_LABEL[b]}`));
  }
  $('#scale-run').addEventListener('click', startScaling);
  $('#scale-cancel').addEventListener('click', cancelScaling);
  const chart = $('#scale-chart');
  chart.addEventListener('mousemove', (ev) => {
    if (!scaling.hits?.length) return;
    const r = chart.getBoundingClientRect();
    const x = ev.clientX - r.left, y = ev.clientY - r.top;
    let best = null, bd = 144;
    for (const h of scaling.hits) {
      const dd = (h.x - x) ** 2 + (h.y - y) ** 2;
      if (dd < bd) {
        bd = dd;
        best = h;
      }
    }
    if (!best) return hideTooltip(chart);
    const p = best.p;
    showTooltip(chart, ev.clientX, ev.clientY, { title: `${best.s.label}: n = ${p.n}`, lines: [`median ${fmtMs(p.ms)} (spread ${fmtMs(p.point.timing.min)} – ${fmtMs(p.point.timing.max)})`, `${fmt(p.gflops, 3)} GFLOP/s`] });
  });
  chart.addEventListener('mouseleave', () => hideTooltip(chart));
  const f = lab.variants.map((v) => {
    const fc = flopCount(v, { n: 1, d: 1, dv: 1, h: 8, L: 1, a: 1, b: 1, rank: 4 }, effectiveOpts(v.id));
    return `${v.id}: ${fc.formula}`;
  });
  $('#flop-note').textContent = `GFLOP/s = flop count / median time (a multiply-add is 2 flop; exp and the causal saving are not counted). Counts: ${f.join('; ')}.`;
}

function scalePlan() {
  const variants = [...document.querySelectorAll('#scale-variants input:checked')].map((x) => ({ id: x.dataset.variant, opts: effectiveOpts(x.dataset.variant) }));
  const builds = [...document.querySelectorAll('#scale-builds input:checked')].map((x) => x.dataset.build);
  const maxN = Number($('#scale-max').value);
  const ns = [];
  for (let n = 64; n <= maxN; n *= 2) ns.push(n);
  const d = Math.max(1, Math.min(MAX_WIDTH, Math.trunc(Number($('#scale-d').value) || 32)));
  const dv = Math.max(1, Math.min(MAX_WIDTH, Math.trunc(Number($('#scale-dv').value) || 32)));
  return { variants, builds, ns, d, dv, seed: state.seed, causal: $('#scale-causal').checked };
}

async function startScaling() {
  if (scaling.running) return;
  const plan = scalePlan();
  if (!plan.variants.length || !plan.builds.length) {
    $('#scale-status').textContent = 'Pick at least one variant and one build.';
    return;
  }
  scaling.plan = plan;
  scaling.points = [];
  scaling.done = false;
  scaling.cancelled = false;
  scaling.error = null;
  scaling.running = true;
  const total = plan.ns.length * plan.variants.length * plan.builds.length;
  const prog = $('#scale-progress');
  prog.max = total;
  prog.value = 0;
  $('#scale-run').disabled = true;
  $('#scale-cancel').disabled = false;
  $('#scale-status').textContent = `Running 0 / ${total}…`;
  drawScaling();
  scaling.client = new WorkerClient();
  const client = scaling.client;
  try {
    await client.call('scale', { plan }, [], (point) => {
      if (client !== scaling.client) return;
      scaling.points.push(point);
      prog.value = scaling.points.length;
      const tail = point.timing ? `n = ${point.n}, ${point.variant} (${point.actualBuild ?? point.build}): ${fmtMs(point.timing.median)}` : `n = ${point.n}, ${point.variant} (${point.build}): ${point.skipped ?? point.error?.message}`;
      $('#scale-status').textContent = `Running ${scaling.points.length} / ${total} — ${tail}`;
      drawScaling();
    });
    if (client === scaling.client) {
      scaling.done = true;
      $('#scale-status').textContent = `Done: ${scaling.points.filter((p) => p.timing).length} timings${scaling.points.some((p) => p.skipped || p.error) ? ', some sizes skipped (see the table)' : ''}.`;
    }
  } catch (err) {
    if (err.code !== 'CANCELLED' && client === scaling.client) {
      scaling.error = err;
      $('#scale-status').textContent = `Failed: ${err.code ?? ''} ${err.message}`;
    }
  } finally {
    if (client === scaling.client) {
      client.terminate(); // frees the instances' memory
      scaling.client = null;
      scaling.running = false;
      $('#scale-run').disabled = false;
      $('#scale-cancel').disabled = true;
      drawScaling();
    }
  }
}

function cancelScaling() {
  if (!scaling.running || !scaling.client) return;
  const client = scaling.client;
  scaling.client = null;
  client.terminate();
  scaling.running = false;
  scaling.cancelled = true;
  $('#scale-run').disabled = false;
  $('#scale-cancel').disabled = true;
  $('#scale-status').textContent = `Cancelled after ${scaling.points.length} point${scaling.points.length === 1 ? '' : 's'}; the worker was stopped.`;
  drawScaling();
}

function scalingSeries() {
  const plan = scaling.plan;
  if (!plan) return [];
  const series = [];
  plan.variants.forEach((v, vi) => {
    const colorIdx = lab.variants.findIndex((x) => x.id === v.id);
    for (const b of plan.builds) {
      const pts = scaling.points.filter((p) => p.variant === v.id && p.build === b && p.timing);
      const actual = pts[0]?.actualBuild ?? b;
      const f = (p) => flopCount(byId[v.id], p.dims, p.options).flops;
      series.push({
        key: `${v.id}/${b}`, variant: v.id, family: byId[v.id]?.family, build: actual, label: `${v.id} · ${BUILD_LABEL[actual] ?? actual}`,
        color: PALETTE[(colorIdx >= 0 ? colorIdx : vi) % PALETTE.length], dashed: actual === 'scalar',
        points: pts.map((p) => ({ n: p.n, ms: p.timing.median, gflops: gflops(f(p), p.timing.median), point: p })),
      });
    }
  });
  return series;
}

function drawScaling() {
  const canvas = $('#scale-chart');
  const plan = scaling.plan;
  const series = scalingSeries();
  const range = { nMin: 64, nMax: plan ? plan.ns[plan.ns.length - 1] : 16384 };
  // crossings between different variants on the same build
  const byBuild = {};
  for (const s of series) (byBuild[s.build] ??= []).push(s);
  const cross = Object.values(byBuild).flatMap((list) => crossings(list));
  scaling.crossings = cross;
  scaling.hits = drawChart(canvas, series, range, { crossList: cross });
  canvas.setAttribute('aria-label', series.length ? `Scaling chart: ${series.map((s) => `${s.label} ${s.points.length} points`).join('; ')}` : 'Scaling chart: no data yet');
  const lg = $('#scale-legend');
  lg.replaceChildren();
  for (const s of series) {
    const sl = slope(s.points);
    lg.append(el('li', {}, el('span', { class: `line-swatch${s.dashed ? ' dashed' : ''}`, style: `--c:${s.color}` }), ` ${s.label}`,
      el('span', { class: 'muted', text: Number.isFinite(sl) ? ` — slope ${sl.toFixed(2)} (last sizes; 1 = O(n), 2 = O(n²))` : '' })));
  }
  if (series.length) lg.append(el('li', { class: 'muted' }, el('span', { class: 'line-swatch dotted', style: '--c:var(--muted)' }), ' reference slopes ∝ n and ∝ n²'));
  $('#scale-crossings').textContent = cross.length
    ? 'Crossings: ' + cross.map((c) => `${c.a.label} and ${c.b.label} cross near n ≈ ${Math.round(c.n)} (${fmtMs(c.ms)}); above it ${c.faster} is faster`).join('; ') + '.'
    : series.some((s) => s.points.length > 1) ? 'No crossings between different variants in this range.' : '';
  // table
  const box = $('#scale-table');
  if (!scaling.points.length) {
    box.replaceChildren();
    return;
  }
  const table = el('table', { class: 'stats', id: 'scale-results' },
    el('thead', {}, el('tr', {}, ['n', 'variant', 'build', 'median', 'spread (min – max)', 'GFLOP/s', 'flop count'].map((t) => el('th', { scope: 'col', text: t })))));
  const tb = el('tbody');
  for (const p of scaling.points) {
    if (p.timing) {
      const f = flopCount(byId[p.variant], p.dims, p.options);
      tb.append(el('tr', { dataset: { n: String(p.n), variant: p.variant, build: p.actualBuild ?? p.build, median: String(p.timing.median) } },
        el('td', { text: fmtN(p.n) }), el('td', { text: p.variant }), el('td', { text: BUILD_LABEL[p.actualBuild ?? p.build] ?? p.build }),
        el('td', { text: fmtMs(p.timing.median) }), el('td', { text: `${fmtMs(p.timing.min)} – ${fmtMs(p.timing.max)} (${p.timing.samples}×${p.timing.batch ?? 1})` }),
        el('td', { text: fmt(gflops(f.flops, p.timing.median), 3) }), el('td', { text: `${f.formula} = ${f.flops.toExponential(2)}` })));
    } else {
      tb.append(el('tr', { dataset: { n: String(p.n), variant: p.variant, build: p.build } },
        el('td', { text: fmtN(p.n) }), el('td', { text: p.variant }), el('td', { text: BUILD_LABEL[p.build] ?? p.build }),
        el('td', { colspan: '4', class: p.error ? 'error-text' : 'muted', text: p.error ? `${p.error.code}: ${p.error.message}` : `skipped: ${p.skipped}` })));
    }
  }
  table.append(tb);
  box.replaceChildren(table);
}

// ------------------------------------------------------------------------------------ share / export

async function copyText(text, okMsg) {
  try {
    await navigator.clipboard.writeText(text);
    toast(okMsg);
    return true;
  } catch {
    // Clipboard not allowed (insecure context or denied): fall back to a selectable box.
    const ta = el('textarea', { class: 'copy-fallback', readonly: true, 'aria-label': 'Copy this text' });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    ta.remove();
    toast(ok ? okMsg : 'Could not copy: select the text and copy it by hand');
    return ok;
  }
}

function download(name, blob) {
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 5000);
}

function exportJson() {
  if (!last) return;
  const r = last;
  const arr = (x) => (x ? Array.from(x) : null);
  const inputs = {};
  for (const [k, v] of Object.entries(r.inputs)) inputs[k] = v instanceof Float32Array ? arr(v) : v;
  const data = {
    attnlab: lab.version, build: r.build, variant: r.id, options: r.options, seed: state.seed, preset: state.preset, link: location.href,
    inputs, output: arr(r.output), weights: arr(r.weights), timing: r.timing,
  };
  download(`attnlab-${r.id}-n${r.dims.n}.json`, new Blob([JSON.stringify(data)], { type: 'application/json' }));
}

export function codeSnippet(r) {
  const lines = ["import { init } from 'attnlab';", '', 'const lab = await init();'];
  const dimNames = Object.keys(r.inputs).filter((k) => !(r.inputs[k] instanceof Float32Array));
  lines.push(`const ${dimNames.map((k) => `${k} = ${r.inputs[k]}`).join(', ')};`);
  const arrays = Object.keys(r.inputs).filter((k) => r.inputs[k] instanceof Float32Array);
  for (const k of arrays) {
    const spec = r.req.arrays.find((a) => a.name === k);
    const cols = spec?.cols ?? r.inputs[k].length;
    const rows = [];
    for (let i = 0; i < r.inputs[k].length; i += cols) rows.push('  ' + Array.from(r.inputs[k].subarray(i, i + cols), f32str).join(', ') + ',');
    lines.push(`const ${k} = new Float32Array([ // ${spec ? spec.shape.join('×') : ''}`, ...rows, ']);');
  }
  const opts = { ...r.options };
  if (r.weights) opts.weights = true;
  lines.push(`const { output${r.weights ? ', weights' : ''} } = lab.attention(${JSON.stringify(r.id)}, { ${[...dimNames, ...arrays].join(', ')} }, ${JSON.stringify(opts)});`);
  lines.push(`console.log(output); // y: ${r.dims.n}×${r.dims.dv}, row-major`);
  return lines.join('\n');
}

function openCode() {
  if (!last) return;
  const dlg = $('#code-dialog');
  $('#code-text').value = codeSnippet(last);
  if (dlg.showModal) dlg.showModal();
  else dlg.setAttribute('open', '');
  $('#code-copy').focus();
}

// ------------------------------------------------------------------------------------ boot

function bindGlobal() {
  $('#theme-toggle').addEventListener('click', () => setTheme(THEMES[(THEMES.indexOf(currentTheme()) + 1) % THEMES.length]));
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => retheme());
  const copyLink = () => copyText(location.href, 'Link copied');
  $('#copy-link').addEventListener('click', copyLink);
  $('#copy-link-2').addEventListener('click', copyLink);
  $('#causal').addEventListener('change', () => {
    state.causal = $('#causal').checked;
    commit({});
  });
  $('#reset-edits').addEventListener('click', () => {
    state.edits = {};
    commit({ arrays: true });
  });
  $('#export-json').addEventListener('click', exportJson);
  $('#copy-code').addEventListener('click', openCode);
  $('#code-copy').addEventListener('click', () => copyText($('#code-text').value, 'Code copied'));
  $('#code-close').addEventListener('click', () => $('#code-dialog').close());
  for (const b of document.querySelectorAll('[data-export]')) {
    b.addEventListener('click', async () => {
      const m = maps[b.dataset.export];
      if (!m?.data) return;
      download(`attnlab-${state.variant}-${b.dataset.export === 'weights' ? 'A' : 'y'}.png`, await m.toPngBlob());
    });
  }
  window.addEventListener('hashchange', () => {
    if (location.hash.replace(/^#/, '') === ui.lastHash) return;
    loadHash();
    renderAll();
    scheduleRun(0);
  });
  let rt = null;
  window.addEventListener('resize', () => {
    clearTimeout(rt);
    rt = setTimeout(drawScaling, 150);
  });
}

function buildBuildSelect() {
  const sel = $('#build-select');
  const feats = lab.features ?? { simd: true, relaxedSimd: false };
  sel.replaceChildren(el('option', { value: 'auto', text: `auto (${BUILD_LABEL[lab.build] ?? lab.build})` }));
  if (feats.relaxedSimd) sel.append(el('option', { value: 'relaxed', text: BUILD_LABEL.relaxed }));
  if (feats.simd !== false) sel.append(el('option', { value: 'simd', text: BUILD_LABEL.simd }));
  sel.append(el('option', { value: 'scalar', text: BUILD_LABEL.scalar }));
  sel.addEventListener('change', () => {
    state.build = sel.value;
    commit({});
  });
}

function renderAll() {
  const bs = $('#build-select');
  if (![...bs.options].some((o) => o.value === state.build)) state.build = 'auto';
  bs.value = state.build;
  renderVariantInfo();
  renderOptions();
  renderDims();
  renderArrays();
  renderComparePicks();
}

async function boot() {
  setTheme(currentTheme());
  bindGlobal();
  worker = new WorkerClient();
  try {
    lab = await worker.call('hello', { build: 'auto' });
  } catch (err) {
    const box = $('#load-error');
    box.replaceChildren(el('strong', { text: 'The attention library did not load. ' }), el('span', { text: `${err.code ?? ''} ${err.message}` }));
    box.hidden = false;
    $('#build-badge').textContent = 'not loaded';
    window.__attnlab.loadError = { code: err.code, message: err.message };
    return;
  }
  byId = Object.fromEntries(lab.variants.map((v) => [v.id, v]));
  const badge = $('#build-badge');
  badge.textContent = `${BUILD_LABEL[lab.build] ?? lab.build} build`;
  badge.dataset.build = lab.build;
  $('#version').textContent = `v${lab.version}`;
  buildVariantSelect();
  buildPresetSelect();
  bindDims();
  buildComparePicks();
  buildScalingControls();
  buildBuildSelect();
  loadHash();
  renderAll();
  drawScaling();
  writeHash();
  window.__attnlab.ready = true;
  scheduleRun(0);
}

// ------------------------------------------------------------------------------------ test hook

const plain = (x) => (x instanceof Float32Array ? Array.from(x) : x);
window.__attnlab = {
  ready: false,
  get variants() {
    return lab?.variants ?? [];
  },
  get build() {
    return lab?.build;
  },
  get stale() {
    return stale;
  },
  get lastError() {
    return lastError;
  },
  busy,
  /** Resolves once no run is pending (debounce, in flight or queued). */
  async idle(timeoutMs = 30000) {
    const t0 = performance.now();
    let quiet = 0;
    while (quiet < 2) {
      if (performance.now() - t0 > timeoutMs) throw new Error('page did not become idle');
      await new Promise((r) => setTimeout(r, 25));
      quiet = busy() ? 0 : quiet + 1;
    }
  },
  state: () => JSON.parse(JSON.stringify(state)),
  /** The last good result, as plain JSON (exact float32 values). */
  snapshot() {
    if (!last) return null;
    const inputs = {};
    for (const [k, v] of Object.entries(last.inputs)) inputs[k] = plain(v);
    const intermediates = Object.fromEntries((last.intermediates ?? []).map((m) => [m.name, plain(m.data)]));
    return { variant: last.id, inputs, options: last.options, output: plain(last.output), weights: last.weights ? plain(last.weights) : null, intermediates, build: last.build, stale, error: lastError, timing: last.timing };
  },
  explain(kind, i, j) {
    if (!last) return null;
    return kind === 'weights' ? weightDescribe(() => last)(i, j) : outputDescribe(() => last)(i, j);
  },
  compare() {
    const out = {};
    for (const [id, r] of Object.entries(compareResults.results ?? {})) out[id] = r.error ? { error: r.error } : { output: plain(r.output), maxAbs: r.maxAbs, nmse: r.nmse };
    return { baseId: compareResults.baseId, ids: compareResults.ids, results: out };
  },
  scaling() {
    return { running: scaling.running, done: scaling.done, cancelled: scaling.cancelled, error: scaling.error?.message ?? null, points: scaling.points.map((p) => ({ n: p.n, variant: p.variant, build: p.actualBuild ?? p.build, median: p.timing?.median ?? null, skipped: p.skipped ?? null, error: p.error ?? null })), crossings: (scaling.crossings ?? []).map((c) => ({ n: c.n, a: c.a.key, b: c.b.key })) };
  },
  tooltip: tooltipState,
  unlockTooltip,
  codeSnippet: () => (last ? codeSnippet(last) : null),
  fullPrecision: fmtFull,
};

boot();
