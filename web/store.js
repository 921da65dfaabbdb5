// The page's one store: the state a link reproduces (web/state.js encodes it), what the binding
// told us (`lab`), the last result, and the few UI positions panels share. Panels read it here and
// change it through commit(), which writes the URL hash and notifies the subscribers (each panel
// re-renders what `what` says changed; the run loop schedules a run).

import { buildRequest, defaultOptions, requirements, resolveDims, DIM_LIMITS } from './gen.js';
import { defaultState, decodeHash, encodeHash, EXTRA_DIMS } from './state.js';

export const store = {
  state: defaultState(),
  lab: null, // { build, simd, version, variants, options, dims, features }
  byId: {},
  last: null, // last good main result
  lastError: null,
  stale: false,
  compare: {}, // { baseId, ids, results }
  ui: { activeArray: null, editorRow: 0, lastHash: '' },
};

export function setLab(lab) {
  store.lab = lab;
  store.byId = Object.fromEntries(lab.variants.map((v) => [v.id, v]));
}

export const info = () => store.byId[store.state.variant];

/** The options the page sends for `id`: its page defaults, then what the user set. */
export function effectiveOpts(id) {
  const i = store.byId[id];
  if (!i) return {};
  return { ...defaultOptions(i, store.lab), ...(store.state.opts[id] ?? {}) };
}

/** Sets (or clears, with null / '') one option of the current variant. */
export function setOption(name, val) {
  const s = store.state;
  const o = (s.opts[s.variant] ??= {});
  o[name] = val;
  if (val == null || val === '') delete o[name];
}

export function dimsState() {
  const s = store.state;
  return { n: s.n, d: s.d, dv: s.dv, h: s.h, L: s.L, a: s.a, b: s.b, rank: s.rank };
}

export function requestFor(id) {
  const s = store.state;
  return buildRequest({ id, dimsState: dimsState(), seed: s.seed, preset: s.preset, edits: s.edits, opts: effectiveOpts(id), causal: s.causal }, store.byId);
}

/** Page-level checks the binding cannot do for us (we need whole, bounded sizes to build arrays). */
export function validateDims() {
  const s = store.state;
  const req = requirements(s.variant, store.byId, effectiveOpts(s.variant));
  const used = req.dims;
  for (const k of ['n', 'd', 'dv', ...EXTRA_DIMS]) {
    if (!used.includes(k) && !['n', 'dv'].includes(k)) continue;
    const x = k in s ? s[k] : null;
    if (x == null && (k === 'n' || k === 'dv' || (k === 'd' && used.includes('d')))) return { target: 'dims', message: `${k} is empty: enter a whole number ≥ 1` };
    if (x == null) continue;
    if (!Number.isInteger(x) || x < 1) return { target: 'dims', message: `${k} must be a whole number ≥ 1 (got ${x})` };
    if (x > DIM_LIMITS[k]) return { target: 'dims', message: `${k} = ${x} is larger than the page allows (${DIM_LIMITS[k]}); the scaling chart goes up to n = 16384` };
  }
  const dims = resolveDims(dimsState());
  let total = 0;
  for (const a of req.inputs) total += a.shape.reduce((p, x) => p * dims[x], 1);
  if (total > 32 * 1024 * 1024) return { target: 'dims', message: `the inputs would hold ${total.toLocaleString()} values; choose smaller sizes` };
  return null;
}

// ---- URL hash

export function writeHash() {
  const h = encodeHash(store.state);
  store.ui.lastHash = h;
  history.replaceState(null, '', `#${h}`);
}

export function loadHash() {
  const s = decodeHash(location.hash);
  if (!store.byId[s.variant]) s.variant = store.lab.variants[0].id;
  s.compare = s.compare.filter((x) => store.byId[x]);
  store.state = s;
  store.ui.lastHash = location.hash.replace(/^#/, '');
}

// ---- change notification

const subscribers = [];
const topics = new Map();

/**
 * fn(what) after every change. `what` flags: variant, options, arrays, dims (re-render those),
 * all (re-render everything, from a new hash; no run), now (run without the debounce).
 */
export function subscribe(fn) {
  subscribers.push(fn);
}

export function commit(what = {}) {
  writeHash();
  for (const fn of subscribers) fn(what);
}

/** Re-renders every panel from the store (after boot or a new hash); does not run. */
export function renderAll() {
  for (const fn of subscribers) fn({ all: true, variant: true, options: true, arrays: true });
}

/** Named events that are not state changes: 'theme' (colours changed), 'resize'. */
export function on(topic, fn) {
  if (!topics.has(topic)) topics.set(topic, []);
  topics.get(topic).push(fn);
}

export function emit(topic, ...args) {
  for (const fn of topics.get(topic) ?? []) fn(...args);
}
