// The page state and its URL-hash form. Everything that changes a result lives here (variant,
// sizes, seed, preset, options of every variant, edited cells, compared variants), so a link
// reproduces the numbers exactly. Example:
//   #v=softmax&n=16&d=8&dv=8&seed=7&preset=random&causal=1&o.fixed.pattern=left&e.q=128~3:0.5,7:-1
import { PRESETS, DEFAULT_PRESET, DIM_LIMITS, f32str } from './gen.js';

export const EXTRA_DIMS = ['h', 'L', 'a', 'b', 'rank'];

export function defaultState() {
  const p = PRESETS[DEFAULT_PRESET];
  return {
    variant: 'softmax',
    n: p.n,
    d: p.d,
    dv: p.dv,
    h: null,
    L: null,
    a: null,
    b: null,
    rank: null,
    seed: 1,
    preset: DEFAULT_PRESET,
    causal: false,
    opts: {}, // { [variantId]: { [option]: value } }
    edits: {}, // { [array]: { len, cells: { [index]: value } } }
    compare: ['softmax', 'linear', 'random'],
    build: 'auto',
  };
}

function enc(s) {
  return encodeURIComponent(s).replace(/%2C/gi, ',').replace(/%3A/gi, ':').replace(/%7E/gi, '~');
}

function numStr(x) {
  return typeof x === 'number' ? f32str(x) : String(x);
}

export function encodeHash(s) {
  const parts = [];
  const put = (k, v) => parts.push(`${enc(k)}=${enc(v)}`);
  put('v', s.variant);
  for (const k of ['n', 'd', 'dv', ...EXTRA_DIMS]) if (s[k] != null) put(k, String(s[k]));
  put('seed', String(s.seed));
  put('preset', s.preset);
  if (s.causal) put('causal', '1');
  if (s.build && s.build !== 'auto') put('build', s.build);
  for (const [id, o] of Object.entries(s.opts)) {
    for (const [name, val] of Object.entries(o ?? {})) {
      if (val == null || val === '') continue;
      put(`o.${id}.${name}`, Array.isArray(val) ? val.map(numStr).join(',') : numStr(val));
    }
  }
  for (const [name, e] of Object.entries(s.edits)) {
    // Only finite values go into a link: a cell the user typed wrong stays out of it.
    const cells = Object.entries(e.cells ?? {}).filter(([, v]) => Number.isFinite(v));
    if (!cells.length) continue;
    put(`e.${name}`, `${e.len}~${cells.map(([i, v]) => `${i}:${numStr(v)}`).join(',')}`);
  }
  if (s.compare?.length) put('cmp', s.compare.join(','));
  return parts.join('&');
}

function parseNum(t) {
  if (t === 'NaN') return NaN;
  if (t === 'Infinity') return Infinity;
  if (t === '-Infinity') return -Infinity;
  const x = Number(t);
  return x;
}

/** Options whose values are lists (so "0.5" stays a one-element list). */
const LIST_OPTIONS = new Set(['components', 'alpha', 'alphaLogits']);

function parseOptionValue(name, t) {
  if (LIST_OPTIONS.has(name)) {
    return t === '' ? [] : t.split(',').map((x) => (/^[-+0-9.eE]+$|^NaN$|Infinity$/.test(x) ? parseNum(x) : x));
  }
  if (/^-?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t) || t === 'NaN') return parseNum(t);
  if (t === 'true') return true;
  if (t === 'false') return false;
  return t;
}

function safeDecode(t) {
  try {
    return decodeURIComponent(t);
  } catch {
    return null;
  }
}

const shown = (t) => (t.length > 40 ? `${t.slice(0, 40)}…` : t);

/**
 * Parses a hash into a state; missing keys take defaults. What cannot be read (a cut-off %
 * escape, a number that is not one, an unknown key or preset) is left at its default and listed
 * in `ignored` as { key, text, why }. Whether a variant, option or build exists is the store's
 * check (it knows `lab`).
 */
export function decodeHash(hash, ignored = []) {
  const s = defaultState();
  const h = hash.replace(/^#/, '');
  if (!h) return s;
  const skip = (key, text, why) => ignored.push({ key, text: shown(text), why });
  for (const part of h.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const rawK = eq < 0 ? part : part.slice(0, eq);
    const rawV = eq < 0 ? '' : part.slice(eq + 1);
    // the view switch and the Experiment view's own keys (web/experiment/config.js) are not
    // ours: that view reads (and names what it cannot use of) them
    if (rawK === 'view' || rawK.startsWith('x.')) continue;
    const k = safeDecode(rawK);
    const v = safeDecode(rawV);
    if (k == null || v == null) {
      skip(k ?? rawK, rawV, 'a % escape is cut off or invalid (was the link truncated?)');
      continue;
    }
    // the view switch and the Experiment view's own keys (web/experiment/config.js) are not ours
    if (k === 'view' || k.startsWith('x.')) continue;
    if (k === 'v') s.variant = v;
    else if (k === 'n' || k === 'd' || k === 'dv' || EXTRA_DIMS.includes(k)) {
      const x = Number(v);
      if (v !== '' && Number.isInteger(x) && x >= 1 && x <= DIM_LIMITS[k]) s[k] = x;
      else skip(k, v, `not a whole number from 1 to ${DIM_LIMITS[k]}`);
    } else if (k === 'seed') {
      const x = Number(v);
      if (v !== '' && Number.isFinite(x)) s.seed = Math.trunc(x);
      else skip(k, v, 'not a number');
    } else if (k === 'preset') {
      if (Object.hasOwn(PRESETS, v)) s.preset = v;
      else skip(k, v, `no such preset (${Object.keys(PRESETS).join(', ')})`);
    } else if (k === 'causal') {
      if (['1', 'true', '0', 'false', ''].includes(v)) s.causal = v === '1' || v === 'true';
      else skip(k, v, 'expected 1 or 0');
    } else if (k === 'build') s.build = v || 'auto';
    else if (k === 'cmp') s.compare = v ? v.split(',') : [];
    else if (k.startsWith('o.')) {
      const rest = k.slice(2);
      const dot = rest.lastIndexOf('.');
      if (dot <= 0) {
        skip(k, v, 'not an option key (o.variant.option)');
        continue;
      }
      const id = rest.slice(0, dot), name = rest.slice(dot + 1);
      (s.opts[id] ??= {})[name] = parseOptionValue(name, v);
    } else if (k.startsWith('e.')) {
      const name = k.slice(2);
      const [lenText, list] = v.split('~');
      const len = Number(lenText);
      if (!Number.isInteger(len) || len < 1) {
        skip(k, v, 'the edited cells need the array length first (len~i:value,…)');
        continue;
      }
      const cells = {};
      const bad = [];
      for (const c of (list ?? '').split(',')) {
        if (!c) continue;
        const [i, val] = c.split(':');
        const idx = Number(i), x = val == null || val === '' ? NaN : Number(val);
        if (i !== '' && Number.isInteger(idx) && idx >= 0 && idx < len && Number.isFinite(x)) cells[idx] = Math.fround(x);
        else bad.push(c);
      }
      if (bad.length) skip(k, bad.join(','), `cell${bad.length > 1 ? 's' : ''} without a finite number or a valid index`);
      if (Object.keys(cells).length) s.edits[name] = { len, cells };
    } else skip(k, v, 'unknown key');
  }
  return s;
}
