// The page's one store: the state a link reproduces (web/state.js encodes it), what the binding
// told us (`lab`), the last result, and the few UI positions panels share. Panels read it here and
// change it through commit(), which writes the URL hash and notifies the subscribers (each panel
// re-renders what `what` says changed; the run loop schedules a run).

import { buildRequest, defaultOptions, requirements, resolveDims, DIM_LIMITS } from './gen.js';
import { defaultState, decodeHash, encodeHash, EXTRA_DIMS } from './state.js';
import { BUILDS as BUILD_MANIFEST } from '../dist/builds.js';

export const store = {
  state: defaultState(),
  lab: null, // { build, simd, version, variants, options, dims, features }
  byId: {},
  last: null, // last good main result
  lastError: null,
  stale: false,
  compare: {}, // { baseId, ids, results }
  ui: { activeArray: null, editorRow: 0, lastHash: '', hashIgnored: [], rowNorm: false, sharedScale: true, compareCancels: 0 },
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

// Each view keeps its state in the link: Explore's keys always; the Experiment view's
// (view=experiment&x.…) first while it is shown, and after Explore's, when it is not the default
// config, while Explore is shown (web/view.js sets both). So a link, and Back, restore both views.
let viewHash = null;
let otherKeys = () => '';
export function setViewHash(fn) {
  viewHash = fn;
}
export function setOtherViewKeys(fn) {
  otherKeys = fn;
}

/**
 * The state as the link holds it: an option the page starts on that is not the library's default
 * (the fixed pattern: previous, not current) is written out, so the link says what ran.
 */
function linkState() {
  const s = store.state;
  const info = store.byId[s.variant];
  if (!info) return s;
  const mine = s.opts[s.variant] ?? {};
  const extra = {};
  for (const [k, v] of Object.entries(defaultOptions(info, store.lab))) {
    const lib = store.lab.options?.[k]?.default;
    if (lib != null && lib !== v && mine[k] == null) extra[k] = v;
  }
  return Object.keys(extra).length ? { ...s, opts: { ...s.opts, [s.variant]: { ...extra, ...mine } } } : s;
}

/**
 * Writes the state into the link. push: a new history entry (a switch of view, so Back returns
 * to the other view); otherwise the current entry is replaced (edits are not steps of history).
 */
export function writeHash({ push = false } = {}) {
  const explore = encodeHash(linkState());
  const h = viewHash ? `${viewHash()}&${explore}` : [explore, otherKeys()].filter(Boolean).join('&');
  store.ui.lastHash = h;
  if (push && location.hash.replace(/^#/, '') !== h) history.pushState(null, '', `#${h}`);
  else history.replaceState(null, '', `#${h}`);
}

const BUILDS = ['auto', ...BUILD_MANIFEST.map((b) => b.name), 'webgpu'];

/** Why `val` cannot be option `name` of variant `id` (lab.options says what it takes), or null. */
function optionProblem(id, name, val) {
  const v = store.byId[id];
  if (!v) return `no variant '${id}'`;
  if (!v.options.includes(name) || name === 'state' || name === 'weights' || name === 'causal') return `${id} has no option '${name}'`;
  const m = store.lab.options?.[name];
  if (!m) return null;
  const num = (x) => typeof x === 'number' && Number.isFinite(x);
  switch (m.type) {
    case 'number':
      return num(val) ? null : 'not a number';
    case 'integer':
      return Number.isInteger(val) ? null : 'not a whole number';
    case 'boolean':
      return typeof val === 'boolean' ? null : 'expected true or false';
    case 'enum':
      return m.values?.includes(val) ? null : `expected one of ${m.values?.join(', ')}`;
    case 'list':
      return Array.isArray(val) && val.every((x) => !m.values || m.values.includes(x)) ? null : `expected a list of ${m.values?.join(', ')}`;
    case 'numbers':
      return Array.isArray(val) && val.every(num) ? null : 'expected a list of numbers';
    default:
      return null;
  }
}

/**
 * Reads the URL hash into the store. Whatever it cannot use keeps its default and is listed in
 * store.ui.hashIgnored ({ key, text, why }), which the page shows.
 */
export function loadHash() {
  const ignored = [];
  const s = decodeHash(location.hash, ignored);
  const first = store.lab.variants[0].id;
  if (!store.byId[s.variant]) {
    ignored.push({ key: 'v', text: s.variant, why: `no such variant; showing ${store.byId.softmax ? 'softmax' : first}` });
    s.variant = store.byId.softmax ? 'softmax' : first;
  }
  const unknownCmp = s.compare.filter((x) => !store.byId[x]);
  if (unknownCmp.length) ignored.push({ key: 'cmp', text: unknownCmp.join(','), why: 'no such variant' });
  s.compare = s.compare.filter((x) => store.byId[x]);
  if (!BUILDS.includes(s.build)) {
    ignored.push({ key: 'build', text: s.build, why: `expected ${BUILDS.join(', ')}` });
    s.build = 'auto';
  }
  for (const [id, o] of Object.entries(s.opts)) {
    for (const [name, val] of Object.entries(o)) {
      const why = optionProblem(id, name, val);
      if (!why) continue;
      ignored.push({ key: `o.${id}.${name}`, text: Array.isArray(val) ? val.join(',') : String(val), why });
      delete o[name];
    }
    if (!Object.keys(o).length) delete s.opts[id];
  }
  store.state = s;
  store.ui.hashIgnored = ignored;
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

/**
 * Edits of an array whose size the last change altered (n 16 → 20) no longer fit it: they are
 * dropped, so the tab, the editor and the link agree (a toast says which). Arrays the current
 * variant does not use keep their edits. Returns the names dropped.
 */
function pruneEdits() {
  const s = store.state;
  if (!Object.keys(s.edits).length || validateDims()) return [];
  const dims = resolveDims(dimsState());
  const dropped = [];
  for (const a of requirements(s.variant, store.byId, effectiveOpts(s.variant)).inputs) {
    const e = s.edits[a.name];
    if (!e) continue;
    const len = a.shape.reduce((p, x) => p * dims[x], 1);
    if (e.len !== len) {
      delete s.edits[a.name];
      dropped.push(a.name);
    }
  }
  return dropped;
}

let onDropped = () => {};
/** fn(names) when edits are dropped because their array changed size (the page's toast). */
export function onEditsDropped(fn) {
  onDropped = fn;
}

export function commit(what = {}) {
  if (what.dims || what.arrays || what.variant || what.options) {
    const dropped = pruneEdits();
    if (dropped.length) onDropped(dropped);
  }
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
