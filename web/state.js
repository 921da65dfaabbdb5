// The page state and its URL-hash form. Everything that changes a result lives here (variant,
// sizes, seed, preset, options of every variant, edited cells, compared variants), so a link
// reproduces the numbers exactly. Example:
//   #v=softmax&n=16&d=8&dv=8&seed=7&preset=random&causal=1&o.fixed.pattern=left&e.q=128~3:0.5,7:-1
import { PRESETS, DEFAULT_PRESET, f32str } from './gen.js';

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
    const cells = Object.entries(e.cells ?? {});
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

/** Parses a hash into a state (unknown keys are ignored; missing ones take defaults). */
export function decodeHash(hash) {
  const s = defaultState();
  const h = hash.replace(/^#/, '');
  if (!h) return s;
  for (const part of h.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const k = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    const v = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1));
    if (k === 'v') s.variant = v;
    else if (k === 'n' || k === 'd' || k === 'dv' || EXTRA_DIMS.includes(k)) {
      const x = Number(v);
      if (v !== '' && Number.isFinite(x)) s[k] = x;
    } else if (k === 'seed') {
      const x = Number(v);
      if (Number.isFinite(x)) s.seed = x;
    } else if (k === 'preset') {
      if (PRESETS[v]) {
        s.preset = v;
      }
    } else if (k === 'causal') s.causal = v === '1' || v === 'true';
    else if (k === 'build') s.build = v || 'auto';
    else if (k === 'cmp') s.compare = v ? v.split(',') : [];
    else if (k.startsWith('o.')) {
      const rest = k.slice(2);
      const dot = rest.lastIndexOf('.');
      if (dot <= 0) continue;
      const id = rest.slice(0, dot), name = rest.slice(dot + 1);
      (s.opts[id] ??= {})[name] = parseOptionValue(name, v);
    } else if (k.startsWith('e.')) {
      const name = k.slice(2);
      const [len, list] = v.split('~');
      const cells = {};
      for (const c of (list ?? '').split(',')) {
        if (!c) continue;
        const [i, val] = c.split(':');
        if (i !== '' && val != null) cells[Number(i)] = parseNum(val);
      }
      s.edits[name] = { len: Number(len), cells };
    }
  }
  return s;
}
