// The small transformer of attnlab in float64: an independent reference of the whole model (the
// parameter table, the initialisation, forward, masked cross-entropy, AdamW) written from the
// model contract, not from the C engine. Each head's attention is computed by reference() of
// src/js/reference.js, the float64 definition of every variant.
//
//   resolveConfig(config)                   -> the config with defaults and derived sizes, checked
//   parameterTable(config)                  -> [{ name, shape, size, matrix, frozen }] in order
//   initParameters(config)                  -> { name: Float64Array } (float32 values, see INIT)
//   forwardLoss(config, params, tokens, targets, batch, opts?)
//                                           -> { logits: Float64Array [batch*seqLen*vocab], loss,
//                                                accuracy, count, attention? }
//   gradients(config, params, tokens, targets, batch, opts?)
//                                           -> { name: Float64Array } by central differences
//   adamwStep(config, params, grads, state, { lr }) -> one AdamW update in place (float64)
//   INIT, initRule(name, config), headPattern(config, h), HEAD_PARAMETERS
//
// Layout: every matrix is row-major; activations of a sequence are [seqLen, width] row-major;
// a linear map is x·W with W [in, out] (so wq [dModel, dh] maps a row of LN(h) to a row of q).
// A plain ES module: no DOM, no Node APIs.

import { reference } from './reference.js';
import { normalStream } from './prng.js';

const LN_EPS = 1e-5;
const GELU_C = 0.7978845608;

// ---------------------------------------------------------------------------------------------
// The parameters each variant's heads carry, in the contract's order (wv, always present, last).

/** Per-head parameters, in order, with the attention input each one produces or is. */
export const HEAD_PARAMETERS = [
  // name, the attention array it makes (projections) or is, shape as dimension names
  { name: 'wq', array: 'q', shape: ['dModel', 'dh'], projection: true },
  { name: 'wk', array: 'k', shape: ['dModel', 'dh'], projection: true },
  { name: 'wx', array: 'x', shape: ['dModel', 'dh'], projection: true },
  { name: 'w1', array: 'w1', shape: ['dh', 'hidden'] },
  { name: 'b1', array: 'b1', shape: ['hidden'] },
  { name: 'w2', array: 'w2', shape: ['hidden', 'seqLen'] },
  { name: 'b2', array: 'b2', shape: ['seqLen'] },
  { name: 'w', array: 'w', shape: ['dh', 'seqLen'] },
  { name: 'r', array: 'r', shape: ['seqLen', 'seqLen'] },
  { name: 'wa', array: 'wa', shape: ['dh', 'a'] },
  { name: 'ba', array: 'ba', shape: ['a'] },
  { name: 'wb', array: 'wb', shape: ['dh', 'b'] },
  { name: 'bb', array: 'bb', shape: ['b'] },
  { name: 'r1', array: 'r1', shape: ['seqLen', 'rank'] },
  { name: 'r2', array: 'r2', shape: ['seqLen', 'rank'] },
  { name: 'alpha', array: null, shape: ['components'] },
  { name: 'wv', array: 'v', shape: ['dModel', 'dh'], projection: true },
];

// What each variant reads and takes comes from the registry (lab.variants and lab.options), passed
// as config.registry, so that a new variant needs no change here.
function registryOf(config) {
  const r = config.registry;
  if (!r || !Array.isArray(r.variants) || !r.options) {
    throw new Error('reference-model: config.registry must be { variants: lab.variants, options: lab.options }: ' +
      'which arrays and options each variant takes');
  }
  return r;
}
const variantOf = (reg, id) => reg.variants.find((v) => v.id === id);
/** The attention arrays (besides v) a variant reads. */
const arraysOf = (reg, id) => variantOf(reg, id).inputs.map((s) => s.name).filter((name) => name !== 'v');
const mixableOf = (reg) => reg.variants.filter((v) => v.mixable).map((v) => v.id);
const isComposite = (reg, id) => variantOf(reg, id).composite;
/** The patterns fixed heads take in turn (the model's own order, docs/model.md). */
const HEAD_PATTERN_CYCLE = ['previous', 'current', 'next', 'left', 'right', 'first', 'last'];

// ---------------------------------------------------------------------------------------------
// Initialisation: the one table. A parameter is named [l{l}.[h{h}.]]<kind>; its rule is INIT[kind].
// { std } draws value = Math.fround(normal · std) from its own stream, normal = Irwin–Hall
// (u1 + u2 + u3 + u4 − 2)·√3 (normalStream(seed, name) of src/js/prng.js, mulberry32 seeded with
// streamSeed(seed, name)); { value } is a constant. std 'residual' is 0.02 / √(2·layers), std
// 'rStd' is config.rStd (default 0.2).

export const INIT = Object.freeze({
  tok_emb: { std: 0.02 },
  pos_emb: { std: 0.02 },
  'ln1.g': { value: 1 }, 'ln1.b': { value: 0 },
  wq: { std: 0.02 }, wk: { std: 0.02 }, wx: { std: 0.02 }, wv: { std: 0.02 },
  w1: { std: 0.02 }, b1: { value: 0 }, w2: { std: 0.02 }, b2: { value: 0 },
  w: { std: 0.02 },
  r: { std: 'rStd' }, // config.rStd, default 0.2
  wa: { std: 0.02 }, ba: { value: 0 }, wb: { std: 0.02 }, bb: { value: 0 },
  r1: { std: 'rStd' }, r2: { std: 'rStd' },
  alpha: { value: 0 }, // logits: a uniform mixture (config.options.alphaLogits overrides, see below)
  wo: { std: 'residual' },
  'ln2.g': { value: 1 }, 'ln2.b': { value: 0 },
  fc1: { std: 0.02 }, fc1b: { value: 0 }, fc2: { std: 'residual' }, fc2b: { value: 0 },
  'lnf.g': { value: 1 }, 'lnf.b': { value: 0 },
  out: { std: 0.02 }, outb: { value: 0 },
});

const kindOf = (name) => name.replace(/^l\d+\.(h\d+\.)?/, '');

/** The rule of parameter `name`: { std } (a number) or { value }. */
export function initRule(name, config) {
  const c = resolveConfig(config);
  const rule = INIT[kindOf(name)];
  if (!rule) throw new Error(`reference-model: no initialisation rule for parameter ${name}`);
  if (rule.std === 'residual') return { std: 0.02 / Math.sqrt(2 * c.layers) };
  if (rule.std === 'rStd') return { std: c.rStd };
  return { ...rule };
}

// ---------------------------------------------------------------------------------------------
// Config.

function need(config, key, min = 1) {
  const v = config[key];
  if (!Number.isInteger(v) || v < min) throw new Error(`reference-model: config.${key} must be an integer >= ${min}, got ${String(v)}`);
  return v;
}

/** Configs resolveConfig made (resolving one again returns it as it is). */
const RESOLVED = new WeakSet();

/** The largest divisor of n that is <= sqrt(n): factorized-dense's a (b = n / a; docs/model.md). */
export function factorA(n) {
  let a = 1;
  for (let t = 1; t * t <= n; t++) if (n % t === 0) a = t;
  return a;
}

/**
 * The config with its defaults and derived sizes: { variant, options, vocab, seqLen, dModel,
 * heads, layers, dFF, causal, seed, freeze, hidden, rank, rStd, weightDecay, dh, L, a, b, components }.
 * Idempotent (a resolved config resolves to itself).
 */
export function resolveConfig(config) {
  if (RESOLVED.has(config)) return config;
  if (!config || typeof config !== 'object') throw new Error('reference-model: config must be an object');
  const registry = registryOf(config);
  const variant = config.variant;
  if (!variantOf(registry, variant)) {
    throw new Error(`reference-model: config.variant '${String(variant)}' is not a variant (${registry.variants.map((v) => v.id).join(', ')})`);
  }
  const MIXABLE = mixableOf(registry);
  const PATTERNS = registry.options.pattern.values;
  const CAUSAL_PATTERNS = registry.options.pattern.causalValues;
  const vocab = need(config, 'vocab', 2);
  const seqLen = need(config, 'seqLen');
  const dModel = need(config, 'dModel');
  const heads = need(config, 'heads');
  const layers = need(config, 'layers');
  const dFF = need(config, 'dFF');
  if (dModel % heads !== 0) throw new Error(`reference-model: config.heads (${heads}) must divide config.dModel (${dModel})`);
  const dh = dModel / heads;
  const hidden = config.hidden ?? dh;
  if (!Number.isInteger(hidden) || hidden < 1) throw new Error(`reference-model: config.hidden must be an integer >= 1, got ${String(hidden)}`);
  const rank = config.rank ?? Math.min(8, seqLen);
  if (!Number.isInteger(rank) || rank < 1) throw new Error(`reference-model: config.rank must be an integer >= 1, got ${String(rank)}`);
  const rStd = config.rStd ?? 0.2;
  if (typeof rStd !== 'number' || !(rStd > 0)) throw new Error(`reference-model: config.rStd must be a number > 0, got ${String(rStd)}`);
  const seed = config.seed ?? 0;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`reference-model: config.seed must be a uint32, got ${String(seed)}`);
  const options = { ...(config.options ?? {}) };
  let components = null;
  if (isComposite(registry, variant)) {
    components = options.components;
    if (!Array.isArray(components) || components.length < 1 || components.length > 8) {
      throw new Error('reference-model: a mixture needs config.options.components: 1 to 8 of ' + MIXABLE.join(', '));
    }
    for (const c of components) {
      if (!MIXABLE.includes(c)) throw new Error(`reference-model: mixture component '${c}' is not one of ${MIXABLE.join(', ')}`);
    }
    if (options.alpha != null) throw new Error('reference-model: a model\'s mixture weights are learned logits: give config.options.alphaLogits (initial logits), not alpha');
    if (options.alphaLogits != null && options.alphaLogits.length !== components.length) {
      throw new Error(`reference-model: config.options.alphaLogits has ${options.alphaLogits.length} values for ${components.length} components`);
    }
  }
  const causal = !!config.causal;
  if (options.pattern != null) throw new Error('reference-model: fixed heads take their patterns in turn from config.options.patterns, not options.pattern');
  if (options.patterns != null) {
    if (!variantOf(registry, variant).options.includes('pattern')) throw new Error(`reference-model: config.options.patterns is for fixed heads; ${variant} takes none`);
    if (!Array.isArray(options.patterns) || options.patterns.length < 1 || options.patterns.length > 16) {
      throw new Error('reference-model: config.options.patterns must be an array of 1 to 16 pattern names');
    }
    for (const p of options.patterns) {
      if (!PATTERNS.includes(p)) throw new Error(`reference-model: config.options.patterns names '${p}', not one of ${PATTERNS.join(', ')}`);
      if (causal && !CAUSAL_PATTERNS.includes(p)) throw new Error(`reference-model: config.options.patterns names '${p}', which looks ahead: a causal model cannot use it`);
    }
  }
  const resolved = {
    registry, variant, options, vocab, seqLen, dModel, heads, layers, dFF, causal, seed,
    freeze: [...(config.freeze ?? [])],
    hidden, rank, rStd,
    weightDecay: config.weightDecay ?? 0.01,
    dh, L: seqLen, a: factorA(seqLen), b: seqLen / factorA(seqLen),
    components,
  };
  RESOLVED.add(resolved);
  const names = new Set(tableOf(resolved).map((p) => p.name));
  for (const f of resolved.freeze) {
    if (!names.has(f)) throw new Error(`reference-model: config.freeze names '${f}', which is not a parameter of this model`);
  }
  return resolved;
}

/** The pattern of head h of a fixed model: config.options.patterns cycled if given, else the default cycle. */
export function headPattern(config, h) {
  const c = resolveConfig(config);
  if (c.options.patterns != null) return c.options.patterns[h % c.options.patterns.length];
  const causalValues = c.registry.options.pattern.causalValues;
  const list = c.causal ? HEAD_PATTERN_CYCLE.filter((p) => causalValues.includes(p)) : HEAD_PATTERN_CYCLE;
  return list[h % list.length];
}

/** The attention arrays (besides v) a head of this config reads. */
function headArrays(c) {
  if (!c.components) return new Set(arraysOf(c.registry, c.variant));
  const s = new Set();
  for (const comp of c.components) for (const a of arraysOf(c.registry, comp)) s.add(a);
  return s;
}

function tableOf(c) {
  const dim = {
    dModel: c.dModel, dh: c.dh, hidden: c.hidden, seqLen: c.seqLen, a: c.a, b: c.b, rank: c.rank,
    components: c.components ? c.components.length : 0,
  };
  const frozen = new Set(c.freeze);
  const list = [];
  const add = (name, shape) => list.push({
    name, shape, size: shape.reduce((p, t) => p * t, 1), matrix: shape.length === 2, frozen: frozen.has(name),
  });
  add('tok_emb', [c.vocab, c.dModel]);
  add('pos_emb', [c.seqLen, c.dModel]);
  const arrays = headArrays(c);
  for (let l = 0; l < c.layers; l++) {
    add(`l${l}.ln1.g`, [c.dModel]);
    add(`l${l}.ln1.b`, [c.dModel]);
    for (let h = 0; h < c.heads; h++) {
      for (const p of HEAD_PARAMETERS) {
        const used = p.name === 'wv' || (p.name === 'alpha' ? !!c.components : arrays.has(p.array));
        if (used) add(`l${l}.h${h}.${p.name}`, p.shape.map((d) => dim[d]));
      }
    }
    add(`l${l}.wo`, [c.dModel, c.dModel]);
    add(`l${l}.ln2.g`, [c.dModel]);
    add(`l${l}.ln2.b`, [c.dModel]);
    add(`l${l}.fc1`, [c.dModel, c.dFF]);
    add(`l${l}.fc1b`, [c.dFF]);
    add(`l${l}.fc2`, [c.dFF, c.dModel]);
    add(`l${l}.fc2b`, [c.dModel]);
  }
  add('lnf.g', [c.dModel]);
  add('lnf.b', [c.dModel]);
  add('out', [c.dModel, c.vocab]);
  add('outb', [c.vocab]);
  return list;
}

/** [{ name, shape, size, matrix, frozen }] in the contract's order ("matrix": weight decay applies). */
export function parameterTable(config) {
  return tableOf(resolveConfig(config));
}

// ---------------------------------------------------------------------------------------------
// Initialisation.

/** { name: Float64Array } holding exactly the float32 values the contract's init gives. */
export function initParameters(config) {
  const c = resolveConfig(config);
  const params = {};
  for (const { name, size } of tableOf(c)) {
    const arr = new Float64Array(size);
    const rule = initRule(name, c);
    if (rule.std !== undefined) {
      const normal = normalStream(c.seed, name);
      for (let i = 0; i < size; i++) arr[i] = Math.fround(normal() * rule.std);
    } else if (kindOf(name) === 'alpha' && c.options.alphaLogits != null) {
      for (let i = 0; i < size; i++) arr[i] = Math.fround(Number(c.options.alphaLogits[i]));
    } else {
      arr.fill(rule.value);
    }
    params[name] = arr;
  }
  return params;
}

// ---------------------------------------------------------------------------------------------
// Forward.

/** Y [rows, cols] = X [rows, inner] · W [inner, cols] (+ bias), float64. */
function matmul(X, W, rows, inner, cols, bias = null) {
  const Y = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      let s = bias ? bias[j] : 0;
      for (let t = 0; t < inner; t++) s += X[i * inner + t] * W[t * cols + j];
      Y[i * cols + j] = s;
    }
  }
  return Y;
}

/** LayerNorm of each row (biased variance, eps 1e-5), gain g, bias b. */
function layerNorm(X, rows, width, g, b) {
  const Y = new Float64Array(rows * width);
  for (let i = 0; i < rows; i++) {
    let mu = 0;
    for (let j = 0; j < width; j++) mu += X[i * width + j];
    mu /= width;
    let v = 0;
    for (let j = 0; j < width; j++) v += (X[i * width + j] - mu) ** 2;
    v /= width;
    const inv = 1 / Math.sqrt(v + LN_EPS);
    for (let j = 0; j < width; j++) Y[i * width + j] = (X[i * width + j] - mu) * inv * g[j] + b[j];
  }
  return Y;
}

const gelu = (t) => 0.5 * t * (1 + Math.tanh(GELU_C * (t + 0.044715 * t * t * t)));

/** The attention options of head h (from config.options, with alphaLogits from the parameter). */
function attentionOptions(c, params, l, h) {
  const o = { causal: c.causal };
  const takes = variantOf(c.registry, c.variant).options.filter((k) => !['state', 'alpha', 'alphaLogits', 'pattern'].includes(k));
  for (const k of takes) if (c.options[k] != null) o[k] = c.options[k];
  if (variantOf(c.registry, c.variant).options.includes('pattern')) o.pattern = headPattern(c, h);
  if (c.components) {
    o.components = [...c.components];
    o.alphaLogits = Array.from(params[`l${l}.h${h}.alpha`]);
  }
  return o;
}

function checkBatch(c, params, tokens, targets, batch) {
  if (!Number.isInteger(batch) || batch < 1) throw new Error(`reference-model: batch must be an integer >= 1, got ${String(batch)}`);
  const n = batch * c.seqLen;
  if (!tokens || tokens.length !== n) throw new Error(`reference-model: tokens must hold batch·seqLen = ${n} values, got ${tokens ? tokens.length : 'none'}`);
  if (!targets || targets.length !== n) throw new Error(`reference-model: targets must hold batch·seqLen = ${n} values, got ${targets ? targets.length : 'none'}`);
  for (let i = 0; i < n; i++) {
    if (!Number.isInteger(tokens[i]) || tokens[i] < 0 || tokens[i] >= c.vocab) {
      throw new Error(`reference-model: tokens[${i}] = ${tokens[i]} is outside [0, ${c.vocab})`);
    }
    if (!Number.isInteger(targets[i]) || targets[i] < -1 || targets[i] >= c.vocab) {
      throw new Error(`reference-model: targets[${i}] = ${targets[i]} is outside [-1, ${c.vocab})`);
    }
  }
  for (const { name, size } of tableOf(c)) {
    if (!params[name] || params[name].length !== size) {
      throw new Error(`reference-model: parameter ${name} must hold ${size} values, got ${params[name] ? params[name].length : 'none'}`);
    }
  }
}

/**
 * Logits, loss and accuracy of a batch, in float64. opts.attention: also return the attention
 * matrices, attention[s][l][h] = Float64Array (seqLen × seqLen) of sequence s.
 */
export function forwardLoss(config, params, tokens, targets, batch, opts = {}) {
  const c = resolveConfig(config);
  checkBatch(c, params, tokens, targets, batch);
  const { seqLen: L, dModel: D, dh, vocab: V, dFF } = c;
  const P = params;
  const logits = new Float64Array(batch * L * V);
  const attention = opts.attention ? [] : null;
  let loss = 0;
  let correct = 0;
  let count = 0;
  for (let s = 0; s < batch; s++) {
    const x = new Float64Array(L * D);
    for (let i = 0; i < L; i++) {
      const t = tokens[s * L + i];
      for (let j = 0; j < D; j++) x[i * D + j] = P.tok_emb[t * D + j] + P.pos_emb[i * D + j];
    }
    const maps = attention ? [] : null;
    for (let l = 0; l < c.layers; l++) {
      const pre = `l${l}.`;
      const a = layerNorm(x, L, D, P[`${pre}ln1.g`], P[`${pre}ln1.b`]);
      const concat = new Float64Array(L * D);
      const layerMaps = maps ? [] : null;
      for (let h = 0; h < c.heads; h++) {
        const hp = `${pre}h${h}.`;
        const inputs = { n: L, d: dh, dv: dh, h: c.hidden, L, a: c.a, b: c.b, rank: c.rank };
        for (const p of HEAD_PARAMETERS) {
          const arr = P[hp + p.name];
          if (!arr || p.name === 'alpha') continue;
          inputs[p.array] = p.projection ? matmul(a, arr, L, D, dh) : arr;
        }
        const { output, weights } = reference(c.variant, inputs, attentionOptions(c, P, l, h));
        if (layerMaps) layerMaps.push(weights);
        for (let i = 0; i < L; i++) for (let j = 0; j < dh; j++) concat[i * D + h * dh + j] = output[i * dh + j];
      }
      if (maps) maps.push(layerMaps);
      const proj = matmul(concat, P[`${pre}wo`], L, D, D);
      for (let i = 0; i < L * D; i++) x[i] += proj[i];
      const m = layerNorm(x, L, D, P[`${pre}ln2.g`], P[`${pre}ln2.b`]);
      const f = matmul(m, P[`${pre}fc1`], L, D, dFF, P[`${pre}fc1b`]);
      for (let i = 0; i < f.length; i++) f[i] = gelu(f[i]);
      const g = matmul(f, P[`${pre}fc2`], L, dFF, D, P[`${pre}fc2b`]);
      for (let i = 0; i < L * D; i++) x[i] += g[i];
    }
    if (attention) attention.push(maps);
    const z = matmul(layerNorm(x, L, D, P['lnf.g'], P['lnf.b']), P.out, L, D, V, P.outb);
    logits.set(z, s * L * V);
    for (let i = 0; i < L; i++) {
      const target = targets[s * L + i];
      if (target < 0) continue;
      const row = z.subarray(i * V, (i + 1) * V);
      let max = -Infinity;
      let arg = 0;
      for (let j = 0; j < V; j++) if (row[j] > max) { max = row[j]; arg = j; }
      let sum = 0;
      for (let j = 0; j < V; j++) sum += Math.exp(row[j] - max);
      loss += max + Math.log(sum) - row[target];
      if (arg === target) correct++;
      count++;
    }
  }
  const out = { logits, loss: count ? loss / count : 0, accuracy: count ? correct / count : 0, count };
  if (attention) out.attention = attention;
  return out;
}

/**
 * The gradient of the mean loss with respect to every parameter that is not frozen (or to
 * opts.names), by float64 central differences with step opts.step (default 1e-5): slow, for
 * tiny models. Returns { name: Float64Array }; params are left unchanged.
 */
export function gradients(config, params, tokens, targets, batch, opts = {}) {
  const c = resolveConfig(config);
  const step = opts.step ?? 1e-5;
  const table = tableOf(c);
  const names = opts.names ?? table.filter((p) => !p.frozen).map((p) => p.name);
  const work = {};
  for (const { name } of table) work[name] = Float64Array.from(params[name]);
  checkBatch(c, work, tokens, targets, batch);
  const loss = () => forwardLoss(c, work, tokens, targets, batch).loss;
  const grads = {};
  for (const name of names) {
    const p = work[name];
    if (!p) throw new Error(`reference-model: gradients: no parameter ${name}`);
    const g = new Float64Array(p.length);
    for (let i = 0; i < p.length; i++) {
      const keep = p[i];
      p[i] = keep + step;
      const up = loss();
      p[i] = keep - step;
      const down = loss();
      p[i] = keep;
      g[i] = (up - down) / (2 * step);
    }
    grads[name] = g;
  }
  return grads;
}

// ---------------------------------------------------------------------------------------------
// AdamW (float64): beta1 0.9, beta2 0.98, eps 1e-8, global-norm clipping to 1, weight decay on
// matrices only, frozen parameters untouched.

/**
 * One AdamW step in place. `grads`: { name: gradient of the mean loss } for the trainable
 * parameters; `state`: {} on the first call, then the object this returns ({ t, m, v }).
 * Returns { state, norm } (the global gradient norm before clipping).
 */
export function adamwStep(config, params, grads, state = {}, { lr }) {
  const c = resolveConfig(config);
  if (!(typeof lr === 'number' && lr >= 0)) throw new Error(`reference-model: adamwStep: lr must be a number >= 0, got ${String(lr)}`);
  const b1 = 0.9;
  const b2 = 0.98;
  const eps = 1e-8;
  const trainable = tableOf(c).filter((p) => !p.frozen);
  let sq = 0;
  for (const { name } of trainable) for (const g of grads[name]) sq += g * g;
  const norm = Math.sqrt(sq);
  const scale = 1 / Math.max(1, norm);
  const t = (state.t ?? 0) + 1;
  const m = state.m ?? {};
  const v = state.v ?? {};
  for (const { name, size, matrix } of trainable) {
    m[name] ??= new Float64Array(size);
    v[name] ??= new Float64Array(size);
    const p = params[name];
    const g = grads[name];
    const mm = m[name];
    const vv = v[name];
    for (let i = 0; i < size; i++) {
      const gi = g[i] * scale;
      mm[i] = b1 * mm[i] + (1 - b1) * gi;
      vv[i] = b2 * vv[i] + (1 - b2) * gi * gi;
      const mhat = mm[i] / (1 - b1 ** t);
      const vhat = vv[i] / (1 - b2 ** t);
      p[i] -= lr * (mhat / (Math.sqrt(vhat) + eps) + (matrix ? c.weightDecay * p[i] : 0));
    }
  }
  return { state: { t, m, v }, norm };
}
