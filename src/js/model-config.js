// model-config.js — a model's configuration between the caller and the core: reading and checking
// what lab.model() is given (readConfig), the configuration as save() writes it (configJson),
// writing the struct attn_model_config by the module's own layout (writeConfig), and the core's
// measure of the model it describes (measure: checks, parameter count, block size, parameter
// table) before any memory is allocated; the frozen flags of a `freeze` list. model.js's class
// uses these; nothing here keeps state. `host` is the instance as a model sees it (ModelHost,
// model.js). No work at import time.

import { AttnError, STATUS_CODES, describe } from './errors.js';

// The block a model's attn_model_config takes (attnlab.h asserts the struct fits it). The struct's
// layout, and attn_model_param's, come from the module (attn_metadata_json, registry.c: each
// field's name, type and offset), so nothing here mirrors an offset.
export const CONFIG_BYTES = 256;
// attn_model_config's scalar fields and the configuration's names for them (its options, frozen
// pointer and patterns are written apart).
const CONFIG_VALUES = {
  variant: 'variant', vocab: 'vocab', seq_len: 'seqLen', d_model: 'dModel', heads: 'heads', layers: 'layers', d_ff: 'dFF',
  causal: 'causal', hidden: 'hidden', rank: 'rank', weight_decay: 'weightDecay', seed: 'seed', r_std: 'rStd',
};
const R_STD_DEFAULT = 0.2;
const R_STD_MAX = 1e6;
const SIZES = ['vocab', 'seqLen', 'dModel', 'heads', 'layers', 'dFF'];
const KEYS = new Set([...SIZES, 'variant', 'options', 'causal', 'seed', 'freeze', 'hidden', 'rank', 'weightDecay', 'rStd']);
// Options a model sets itself, and why a caller cannot.
const MODEL_SETS = new Map([
  ['causal', 'a model is causal or not as a whole: give causal in the model config'],
  ['weights', 'a model returns logits; model.attentionMap is for A'],
  ['state', 'a model keeps no attention state to return'],
  ['keep', 'a model keeps what its backward pass needs by itself'],
  ['alpha', "a model learns its mixture weights per head (the parameters 'l*.h*.alpha', starting uniform)"],
  ['alphaLogits', "a model learns its mixture weights per head (the parameters 'l*.h*.alpha', starting uniform)"],
  ['pattern', 'fixed heads take the patterns in turn: give the list as options.patterns (docs/model.md)'],
]);


function positiveInt(name, x) {
  if (!Number.isInteger(x) || x < 1 || x > 0x7fffffff) {
    throw new AttnError('SHAPE', `model config: ${name} must be a positive integer, got ${describe(x)}`);
  }
  return x;
}

// The configuration as given, checked for what JavaScript must know (types, names); the core
// checks the rest (heads dividing dModel, a Synthesizer's sizes, option values).
export function readConfig(host, config) {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new AttnError('VALUE', `lab.model() takes a config object, got ${describe(config)}`);
  }
  for (const key of Object.keys(config)) {
    if (!KEYS.has(key)) throw new AttnError('UNKNOWN', `model config: unknown field "${key}"; expected ${[...KEYS].join(', ')}`);
  }
  const variant = host.variant(config.variant ?? 'softmax');
  if (!variant) {
    throw new AttnError('UNKNOWN', `model config: unknown variant ${describe(config.variant)}; expected one of ` +
      host.meta.variants.map((v) => v.id).join(', '));
  }
  const c = { variant: variant.id };
  for (const name of SIZES) c[name] = positiveInt(name, config[name]);
  c.causal = config.causal ?? false;
  if (typeof c.causal !== 'boolean') throw new AttnError('VALUE', `model config: causal must be true or false, got ${describe(c.causal)}`);
  c.seed = config.seed ?? 0;
  if (!Number.isInteger(c.seed) || c.seed < 0 || c.seed > 0xffffffff) {
    throw new AttnError('VALUE', `model config: seed must be an integer in [0, 2^32), got ${describe(c.seed)}`);
  }
  c.hidden = config.hidden === undefined ? 0 : positiveInt('hidden', config.hidden);
  c.rank = config.rank === undefined ? 0 : positiveInt('rank', config.rank);
  c.weightDecay = config.weightDecay ?? 0.01;
  if (typeof c.weightDecay !== 'number' || !Number.isFinite(Math.fround(c.weightDecay)) || c.weightDecay < 0) {
    throw new AttnError('VALUE', `model config: weightDecay must be a number >= 0 that float32 can hold (up to 3.4e38), got ${describe(c.weightDecay)}`);
  }
  c.rStd = config.rStd ?? R_STD_DEFAULT;
  if (typeof c.rStd !== 'number' || !(c.rStd > 0 && c.rStd <= R_STD_MAX)) {
    throw new AttnError('VALUE', `model config: rStd (the initial standard deviation of r, r1, r2) must be a number in (0, ${R_STD_MAX}], got ${describe(c.rStd)}`);
  }
  const freeze = config.freeze ?? [];
  if (!Array.isArray(freeze) || freeze.some((f) => typeof f !== 'string')) {
    throw new AttnError('VALUE', `model config: freeze must be an array of parameter names, got ${describe(freeze)}`);
  }
  c.freeze = freeze.slice();
  const options = config.options ?? {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new AttnError('VALUE', `model config: options must be an object, got ${describe(options)}`);
  }
  const attention = {}; // every option read once; patterns is the model's, the rest the attention's
  for (const key of Object.keys(options)) attention[key] = options[key];
  const { patterns } = attention;
  delete attention.patterns;
  c.opt = host.options.read(variant, attention, MODEL_SETS);
  c.options = Object.fromEntries(c.opt.given);
  if (patterns !== undefined && patterns !== null) {
    c.patterns = readPatterns(host, patterns);
    c.options.patterns = c.patterns.slice();
  }
  return c;
}

// options.patterns: names of fixed patterns, cycled over the heads. The names are checked here
// (the core sees indices); which variant and which causal setting may take them, in the core.
function readPatterns(host, patterns) {
  const names = host.meta.options.find((o) => o.name === 'pattern').values;
  const length = Array.isArray(patterns) ? patterns.length : 0;
  const max = fieldOf(host.meta.modelConfig, 'attn_model_config', 'patterns').count; // ATTN_MODEL_MAX_PATTERNS
  if (length < 1 || length > max) {
    throw new AttnError('VALUE', `model config: options.patterns must be an array of 1 to ${max} pattern names among ${names.join(', ')}, got ${describe(patterns)}`);
  }
  const out = [];
  for (let i = 0; i < length; i++) {
    const name = patterns[i];
    if (!names.includes(name)) throw new AttnError('UNKNOWN', `model config: options.patterns[${i}] is ${describe(name)}, not one of ${names.join(', ')}`);
    out.push(name);
  }
  return out;
}

// A JSON-shaped deep copy (the configuration holds plain objects, arrays, strings and numbers).
export const copyJson = (x) => JSON.parse(JSON.stringify(x));

export function failure(host, status, what) {
  const detail = host.heap.cString(host.heap.i32()[host.detailPtr() >>> 2]);
  return new AttnError(STATUS_CODES[status] ?? 'VALUE', `${what}: ${detail}`);
}

// The configuration as save() writes it (hidden and rank only when given, rStd only when not 0.2).
export function configJson(config) {
  const { variant, vocab, seqLen, dModel, heads, layers, dFF, causal, seed, freeze, weightDecay, options } = config;
  const c = { variant, vocab, seqLen, dModel, heads, layers, dFF, causal, seed, freeze: [...freeze], weightDecay, options: copyJson(options) };
  if (config.hidden) c.hidden = config.hidden;
  if (config.rank) c.rank = config.rank;
  if (config.rStd !== R_STD_DEFAULT) c.rStd = config.rStd; // so that files of default models keep their bytes
  return c;
}

// A field of one of the model's structs as the module lays it out, or LOAD naming it: a module
// whose struct lacks a field the binding writes is not the binding's.
function fieldOf(layout, struct, name) {
  const field = layout.fields.get(name);
  if (!field) throw new AttnError('LOAD', `this module's ${struct} has no field ${name}: binding and module differ`);
  return field;
}

// Writes a number at byte `at` as the C type of its field.
function putNumber(host, at, type, value) {
  const buffer = host.heap.i32().buffer;
  switch (type) {
    case 'int32_t': case 'pointer': new Int32Array(buffer, at, 1)[0] = value; break; // wasm32: 4-byte pointers
    case 'uint32_t': new Uint32Array(buffer, at, 1)[0] = value; break;
    case 'float': new Float32Array(buffer, at, 1)[0] = value; break;
    case 'double': new Float64Array(buffer, at, 1)[0] = value; break;
    default: throw new AttnError('LOAD', `attn_model_config: a field of type ${type} is not one the binding writes: binding and module differ`);
  }
}

// The struct attn_model_config at ptr, by the module's layout: the scalar fields, the attention
// options, the frozen flags' pointer and the fixed patterns.
export function writeConfig(host, ptr, c, frozenPtr) {
  const layout = host.meta.modelConfig;
  if (layout.bytes > CONFIG_BYTES) { // attnlab.h asserts it too
    throw new AttnError('LOAD', `this module's attn_model_config (${layout.bytes} bytes) does not fit the binding's ${CONFIG_BYTES}-byte block: binding and module differ`);
  }
  const field = (name) => fieldOf(layout, 'attn_model_config', name);
  host.heap.i32().fill(0, ptr >>> 2, (ptr + CONFIG_BYTES) >>> 2);
  const values = { ...c, variant: host.variant(c.variant).index, causal: c.causal ? 1 : 0 };
  for (const [name, key] of Object.entries(CONFIG_VALUES)) putNumber(host, ptr + field(name).offset, field(name).type, values[key]);
  host.options.writeAt(ptr + field('options').offset, c.opt);
  putNumber(host, ptr + field('frozen').offset, field('frozen').type, frozenPtr);
  if (c.patterns) {
    const names = host.meta.options.find((o) => o.name === 'pattern').values;
    putNumber(host, ptr + field('n_patterns').offset, field('n_patterns').type, c.patterns.length);
    const at = field('patterns');
    c.patterns.forEach((name, i) => putNumber(host, ptr + at.offset + 4 * i, at.type, names.indexOf(name)));
  }
}

// The model a configuration describes, measured by the core in the binding's model scratch (in
// the control block, so nothing grows): its checks, its parameter count, the bytes of its block
// and its parameter table. The checks (64-bit sizes, layers x heads <= ATTN_MODEL_MAX_HEADS) come
// first, so a configuration that declares a huge model is refused before any table is read.
export function measure(host, c) {
  const e = host.exports();
  const cfg = host.modelScratch(); // CONFIG_BYTES for the struct, then 64 for results, then an attn_model_param
  const result = cfg + CONFIG_BYTES, info = result + 64;
  const param = host.meta.modelParam;
  const at = (name) => info + fieldOf(param, 'attn_model_param', name).offset;
  writeConfig(host, cfg, c, 0);
  const check = (status, what) => { if (status !== 0) throw failure(host, status, what); };
  check(e.attn_model_check(cfg, host.detailPtr()), 'model config');
  check(e.attn_model_param_count(cfg, result, host.detailPtr()), 'model config');
  const count = host.heap.i32()[result >>> 2];
  check(e.attn_model_size(cfg, result), 'model config');
  check(e.attn_model_open_size(cfg, result + 4), 'model config');
  const [bytes, openBytes] = new Uint32Array(host.heap.i32().buffer).subarray(result >>> 2, (result >>> 2) + 2);
  const table = [];
  for (let i = 0; i < count; i++) {
    check(e.attn_model_param_info(cfg, i, info, host.detailPtr()), 'parameter table');
    const i32 = host.heap.i32();
    const f = (name) => i32[at(name) >>> 2];
    table.push(Object.freeze({ name: host.heap.cString(at('name')), offset: f('offset'), count: f('count'), rows: f('rows'), cols: f('cols'), matrix: f('is_matrix') !== 0 }));
  }
  return { count, bytes, openBytes, table };
}

// One flag per parameter (1 = frozen), or UNKNOWN for a name that is not a parameter.
export function frozenFlags(table, names) {
  const flags = new Int32Array(table.length);
  const index = new Map(table.map((p, i) => [p.name, i]));
  for (const name of names) {
    const i = index.get(name);
    if (i === undefined) {
      throw new AttnError('UNKNOWN', `model config: freeze names ${describe(name)}, which is not a parameter of this model; ` +
        `its parameters are ${table.map((p) => p.name).slice(0, 12).join(', ')}${table.length > 12 ? ', ...' : ''}`);
    }
    flags[i] = 1;
  }
  return flags;
}
