// model.js — lab.model(config): a small transformer whose attention is one variant, trained in the
// WebAssembly module by src/c/model_*.c (src/c/model.h says which file does what; docs/model.md). A model holds one block of module memory
// until dispose(): its configuration struct, one frozen flag per parameter, the parameters,
// gradients and AdamW moments (four sections of P floats), and the opened model (attn_model_open:
// the shape and every head's plan, made once; docs/model.md, "A model's lifetime"). Each call lays its tokens, targets,
// results and workspace out above every such block, as attention() does; generate() lays out its
// decoding state the same way, for the length of the call.
//
// Everything a configuration or a saved file declares is checked before any memory is allocated
// or grown: the core measures the model (sizes in 64-bit arithmetic, a cap on layers x heads) in a
// scratch area of the binding's control block, the parameter table and the frozen names are read
// from there, and a saved file's size and values are compared with that measure; only then is the
// model's block allocated. Every array handed back is finite or the call throws VALUE, and a
// training step that would leave a parameter non-finite changes nothing.
//
// The configuration's reading, the struct's writing and the measure are model-config.js's; the
// saved file's format is model-file.js's; this file is the class.
import { AttnError, STATUS_CODES, align, describe, typedLength } from './errors.js';
import { mulberry32 } from './prng.js';
import { MAX_STEP, readSaved, savedFloats, writeSaved } from './model-file.js';
import { CONFIG_BYTES, configJson, copyJson, failure, frozenFlags, measure, readConfig, writeConfig } from './model-config.js';

/**
 * What a model uses of the instance that made it (attnlab.js's #modelHost), and nothing more.
 * @typedef {object} ModelHost
 * @property {import('./heap.js').Heap} heap          memory: views, C strings, growth, the block a model keeps
 * @property {import('./options.js').Options} options attention options: read() from a config, writeAt() a struct
 * @property {object} meta                            the registry (registry.js), with the model structs' layouts
 * @property {(id: string) => object} variant         a variant's registry entry, with its index
 * @property {() => object} exports                   the module's exports (throws once the instance is disposed or broken)
 * @property {() => number} detailPtr                 where the core writes the detail of a failure
 * @property {() => number} modelScratch              the control block's area where a model is measured
 */

// Int32Array copy of tokens or targets, read once (the true length of a typed array, each element
// once) and checked against [lo, hi] before any memory is laid out or grown for the call.
function readInts(name, x, { expected, multipleOf, lo, hi }) {
  const typed = ArrayBuffer.isView(x) && !(x instanceof DataView) && !(x instanceof BigInt64Array) && !(x instanceof BigUint64Array);
  if (!typed && !Array.isArray(x)) throw new AttnError('SHAPE', `${name} must be an Int32Array or an array of integers, got ${describe(x)}`);
  const length = typed ? typedLength.call(x) : x.length;
  if (expected !== undefined && length !== expected) {
    throw new AttnError('SHAPE', `${name} has ${length} values, expected ${expected} (as many as tokens)`);
  }
  if (multipleOf && (length === 0 || length % multipleOf !== 0)) {
    throw new AttnError('SHAPE', `${name} has ${length} values, expected a positive multiple of seqLen = ${multipleOf} (batch * seqLen)`);
  }
  const out = new Int32Array(length);
  for (let i = 0; i < length; i++) {
    const v = x[i];
    if (!Number.isInteger(v)) throw new AttnError('VALUE', `${name}[${i}] is ${describe(v)}, not an integer`);
    if (v < lo || v > hi) throw new AttnError('VALUE', `${name}[${i}] = ${v} is outside [${lo}, ${hi}] (vocab = ${hi + 1})`);
    out[i] = v;
  }
  return out;
}

// An options object of a model method: null or undefined mean every default; a name the method
// does not take is UNKNOWN (a misspelt option never runs silently at its default). Each value is
// read once.
function readMethodOptions(what, options, known) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new AttnError('VALUE', `${what}: options must be an object, got ${describe(options)}`);
  }
  const out = {};
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new AttnError('UNKNOWN', `${what}: unknown option "${key}"; it takes ${known.join(', ')}`);
    const value = options[key];
    if (value !== undefined && value !== null) out[key] = value;
  }
  return out;
}

function deepFreeze(x) {
  if (x !== null && typeof x === 'object' && !Object.isFrozen(x)) {
    for (const value of Object.values(x)) deepFreeze(value);
    Object.freeze(x);
  }
  return x;
}

// The first index of the largest logit (the contract's argmax).
function argmax(row) {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}

// A token drawn from softmax(row / temperature) with one number of `random`.
function draw(row, temperature, random) {
  let max = -Infinity;
  for (const x of row) max = Math.max(max, x);
  const p = Float64Array.from(row, (x) => Math.exp((x - max) / temperature));
  let total = 0;
  for (const x of p) total += x;
  let u = random() * total;
  for (let i = 0; i < p.length; i++) {
    u -= p[i];
    if (u < 0) return i;
  }
  // u landed on the rounding left past the last sum: the last token that can be drawn
  let last = p.length - 1;
  while (last > 0 && p[last] === 0) last--;
  return last;
}

export class Model {
  #host;
  #block = -1; // offset of this model's memory: config struct, frozen flags, model block, opened model
  #bytes = 0;  // of the model block
  #params = []; // the parameter table: { name, offset, count, rows, cols, matrix }
  #step = 0;
  #saved; // the configuration save() writes: the model's own copy, which no caller can reach

  /**
   * loaded: { step, version, body, resetOptimizer } from Model.load: body holds the saved floats
   * (version 2: parameters and the two AdamW moments; version 1: also the gradients, which are not
   * kept); resetOptimizer keeps the parameters only (step 0, zero moments).
   */
  constructor(host, config, loaded = null) {
    this.#host = host;
    const c = readConfig(host, config);
    // Measured, tabled and checked in the control block's scratch: nothing is allocated or grown
    // until everything the configuration (or a saved file) declares has been checked.
    const { count, bytes, openBytes, table } = measure(host, c);
    const frozen = frozenFlags(table, c.freeze);
    const floats = loaded ? savedFloats(loaded, bytes / 16) : null;
    const { opt, ...shown } = c;
    this.config = deepFreeze(copyJson({ ...shown, options: c.options, freeze: c.freeze }));
    this.#saved = deepFreeze(configJson(this.config));
    this.#bytes = bytes;
    this.#params = Object.freeze(table);
    const e = host.exports();
    // config struct, frozen flags, model block, opened model: the opened model keeps a copy of the
    // struct (and a pointer to the flags), made once here and read by every pass
    this.#block = host.heap.alloc(CONFIG_BYTES + align(4 * count, 64) + bytes + openBytes);
    try {
      writeConfig(host, this.#block, c, this.#block + CONFIG_BYTES);
      host.heap.i32().set(frozen, (this.#block + CONFIG_BYTES) >>> 2);
      const handle = host.heap.scratchBase();
      host.heap.ensure(handle + 16, 'model');
      const opened = e.attn_model_open(this.#block, this.#opened(), openBytes, handle, host.detailPtr());
      if (opened !== 0) this.#fail(opened, 'model open');
      if (floats) {
        const P = bytes / 16, at = this.#memory() >>> 2, f32 = host.heap.f32();
        f32.set(floats.parameters, at);
        f32.fill(0, at + P, at + 2 * P); // gradients are recomputed by every call that needs them
        if (loaded.resetOptimizer) {
          f32.fill(0, at + 2 * P, at + 4 * P); // fine-tuning: a fresh AdamW, from step 0
        } else {
          f32.set(floats.moments, at + 2 * P);
          this.#step = loaded.step;
        }
      } else {
        const st = e.attn_model_init(this.#block, this.#memory(), this.#bytes, host.detailPtr());
        if (st !== 0) this.#fail(st, 'model init');
      }
    } catch (err) {
      this.dispose(); // nothing of a model that failed to be made stays in memory
      throw err;
    }
    this.parameterCount = table.reduce((s, p) => s + p.count, 0);
  }

  /** The number of trainStep calls so far (AdamW's step count). */
  get step() { return this.#step; }

  /**
   * One AdamW step on the mean cross-entropy of a batch. tokens, targets: [batch * seqLen].
   * All or nothing: a loss or gradient that is not finite, or an update that would leave a
   * parameter or moment non-finite, throws VALUE and leaves the model as it was (parameters,
   * moments, step count).
   */
  trainStep(tokens, targets, options) {
    const { lr } = readMethodOptions('trainStep', options, ['lr']);
    if (typeof lr !== 'number' || !Number.isFinite(Math.fround(lr)) || lr < 0) {
      throw new AttnError('VALUE', `trainStep: lr must be a number >= 0 that float32 can hold (up to 3.4e38), got ${describe(lr)}`);
    }
    this.#alive();
    if (this.#step >= MAX_STEP) {
      throw new AttnError('VALUE', `trainStep: this model has taken ${this.#step} steps, as many as AdamW's int32 step count allows`);
    }
    const r = this.#lossCall('attn_model_loss_backward', tokens, targets, 'trainStep');
    const e = this.#host.exports();
    const normAt = this.#host.heap.scratchBase();
    this.#host.heap.ensure(normAt + 16, 'trainStep');
    const st = e.attn_model_adamw(this.#opened(), this.#memory(), this.#bytes, lr, this.#step + 1, normAt, this.#host.detailPtr());
    if (st !== 0) this.#fail(st, 'trainStep');
    this.#step++;
    return { ...r, gradNorm: this.#host.heap.f32()[normAt >>> 2] };
  }

  /** Mean cross-entropy and accuracy over the positions with a target (>= 0). */
  evaluate(tokens, targets) {
    return this.#lossCall('attn_model_loss', tokens, targets, 'evaluate');
  }

  /** Logits [batch * seqLen * vocab] of tokens [batch * seqLen]. */
  forward(tokens) {
    this.#alive();
    const { seqLen, vocab } = this.config;
    const tok = readInts('tokens', tokens, { multipleOf: seqLen, lo: 0, hi: vocab - 1 });
    const batch = tok.length / seqLen;
    return this.#call(batch, [tok], tok.length * vocab, (at, out, ws, wsBytes, e) =>
      e.attn_model_forward(this.#opened(), this.#memory(), this.#bytes, at[0], batch, out, ws, wsBytes, this.#host.detailPtr()),
    { check: (bad, value) => `forward: logits[${Math.floor(bad / vocab)}][${bad % vocab}] (row = sequence position, column = token) ` +
        `came out ${value}: ${OVERFLOW}` });
  }

  /** { name: Float32Array } copies of every parameter. */
  parameters() {
    return this.#section(0);
  }

  /** { name: Float32Array }: the gradient of the mean loss of this batch (frozen: zeros). */
  gradients(tokens, targets) {
    this.#lossCall('attn_model_loss_backward', tokens, targets, 'gradients');
    const grads = this.#section(1);
    for (const p of this.#params) {
      const bad = grads[p.name].findIndex((x) => !Number.isFinite(x));
      if (bad >= 0) throw new AttnError('VALUE', `gradients: the gradient of ${p.name}[${bad}] came out ${grads[p.name][bad]}: ${OVERFLOW}`);
    }
    return grads;
  }

  /** A mixture's weights now: softmax of the head's learned alpha logits. */
  alpha(options) {
    const { layer = 0, head = 0 } = readMethodOptions('alpha', options, ['layer', 'head']);
    this.#alive();
    const name = `l${layer}.h${head}.alpha`;
    const p = this.#params.find((x) => x.name === name);
    if (!p) throw new AttnError('UNKNOWN', `alpha: no parameter ${name} (a mixture model has one per layer and head)`);
    const logits = this.#section(0)[name];
    const m = Math.max(...logits);
    const e = logits.map((z) => Math.exp(z - m));
    const s = e.reduce((a, b) => a + b, 0);
    return Float32Array.from(e, (x) => x / s);
  }

  /**
   * Continues prompt by count tokens, one position at a time (attn_model_decode_step: a constant
   * state per head for the linear family, a key/value cache for the rest): the prompt is fed step
   * by step, then each token is drawn from the last step's logits (temperature 0: the argmax;
   * else softmax(logits / temperature) with mulberry32(seed)). msPerToken[g] times the step that
   * produced token g's logits and its draw; logits [count * vocab] are those logits. Logits that
   * are not finite throw VALUE instead of being drawn from.
   */
  generate(prompt, count, options) {
    const { temperature = 1, seed = 0 } = readMethodOptions('generate', options, ['temperature', 'seed']);
    this.#alive();
    const { seqLen, vocab, causal } = this.config;
    if (!causal) {
      throw new AttnError('UNSUPPORTED', 'generate: a model that is not causal cannot be decoded step by step ' +
        '(each position attends to later ones); make the model with causal: true');
    }
    const tok = readInts('prompt', prompt, { lo: 0, hi: vocab - 1 });
    if (tok.length === 0) throw new AttnError('SHAPE', 'generate: the prompt must hold at least one token (there is no start token)');
    if (!Number.isInteger(count) || count < 0) throw new AttnError('VALUE', `generate: count must be an integer >= 0, got ${describe(count)}`);
    if (tok.length + count > seqLen) {
      throw new AttnError('VALUE', `generate: a prompt of ${tok.length} tokens + ${count} generated runs past seqLen = ${seqLen}: ` +
        'the position embeddings (and a Synthesizer head\'s L-sized parameters) end there');
    }
    if (typeof temperature !== 'number' || !Number.isFinite(temperature) || temperature < 0) {
      throw new AttnError('VALUE', `generate: temperature must be a finite number >= 0, got ${describe(temperature)}`);
    }
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
      throw new AttnError('VALUE', `generate: seed must be an integer in [0, 2^32), got ${describe(seed)}`);
    }
    this.#alive(); // the prompt's getters ran since the first check
    const e = this.#host.exports();
    const sizes = this.#host.heap.scratchBase();
    this.#host.heap.ensure(sizes + 64, 'generate');
    const u32 = () => new Uint32Array(this.#host.heap.i32().buffer);
    let st = e.attn_model_decode_size(this.#opened(), sizes);
    if (st === 0) st = e.attn_model_decode_workspace_size(this.#opened(), sizes + 4);
    if (st !== 0) throw new AttnError(STATUS_CODES[st] ?? 'MEMORY', `generate: the decoding state of this model does not fit in WebAssembly memory`);
    const stateBytes = u32()[sizes >>> 2], wsBytes = u32()[(sizes >>> 2) + 1];
    const state = sizes + 64;
    const out = align(state + stateBytes, 64);
    const ws = align(out + vocab * 4, 64);
    this.#host.heap.ensure(ws + wsBytes, 'generate');
    st = e.attn_model_decode_reset(this.#opened(), state);
    if (st !== 0) this.#fail(st, 'generate');

    const tokens = new Int32Array(tok.length + count);
    tokens.set(tok);
    const msPerToken = new Float64Array(count);
    const logits = new Float32Array(count * vocab);
    const random = mulberry32(seed);
    const step = (position) => {
      const status = e.attn_model_decode_step(this.#opened(), this.#memory(), this.#bytes, state, tokens[position], position,
        out, ws, wsBytes, this.#host.detailPtr());
      if (status !== 0) this.#fail(status, 'generate');
    };
    let position = 0;
    for (; position < tok.length - 1; position++) step(position);
    for (let g = 0; g < count; g++, position++) {
      const start = performance.now();
      step(position);
      const bad = Number(e.attn_find_nonfinite(out, vocab));
      if (bad >= 0) {
        throw new AttnError('VALUE', `generate: the logit of token ${bad} after position ${position} came out ` +
          `${this.#host.heap.f32()[(out >>> 2) + bad]}: ${OVERFLOW}`);
      }
      const row = this.#host.heap.f32().subarray(out >>> 2, (out >>> 2) + vocab);
      tokens[position + 1] = temperature === 0 ? argmax(row) : draw(row, temperature, random);
      msPerToken[g] = performance.now() - start;
      logits.set(row, g * vocab);
    }
    return { tokens, msPerToken, logits };
  }

  /**
   * The attention matrix A [seqLen * seqLen] of one head on one sequence of tokens [seqLen]: rows
   * are distributions over the positions each one attends to (the linear family's computed from
   * its definition for display, as attention() does).
   */
  attentionMap(tokens, options) {
    const { layer = 0, head = 0 } = readMethodOptions('attentionMap', options, ['layer', 'head']);
    this.#alive();
    const { seqLen, layers, heads, vocab } = this.config;
    const tok = readInts('tokens', tokens, { lo: 0, hi: vocab - 1 });
    if (tok.length !== seqLen) throw new AttnError('SHAPE', `attentionMap: tokens has ${tok.length} values, expected one sequence of seqLen = ${seqLen}`);
    for (const [name, value, limit] of [['layer', layer, layers], ['head', head, heads]]) {
      if (!Number.isInteger(value) || value < 0 || value >= limit) {
        throw new AttnError('VALUE', `attentionMap: ${name} must be an integer in [0, ${limit}), got ${describe(value)}`);
      }
    }
    return this.#call(1, [tok], seqLen * seqLen, (at, out, ws, wsBytes, e) =>
      e.attn_model_attention_map(this.#opened(), this.#memory(), this.#bytes, at[0], layer, head, out, ws, wsBytes, this.#host.detailPtr()),
    {
      measure: (e, at) => e.attn_model_attention_map_workspace_size(this.#opened(), at),
      check: (bad, value) => `attentionMap: A[${Math.floor(bad / seqLen)}][${bad % seqLen}] of layer ${layer}, head ${head} came out ${value}: ${OVERFLOW}`,
    });
  }

  /**
   * The configuration, step count, parameters and AdamW moments, as bytes for loadModel (format
   * version 2, docs/model.md "Saved models": a JSON header, the floats, a CRC-32 of both).
   */
  save() {
    this.#alive();
    const P = this.#bytes / 16, at = this.#memory() >>> 2, f32 = this.#host.heap.f32();
    return writeSaved(this.#saved, this.#step, f32.subarray(at, at + P), f32.subarray(at + 2 * P, at + 4 * P));
  }

  static load(host, bytes, options) {
    const { resetOptimizer = false } = readMethodOptions('loadModel', options, ['resetOptimizer']);
    if (typeof resetOptimizer !== 'boolean') throw new AttnError('VALUE', `loadModel: resetOptimizer must be true or false, got ${describe(resetOptimizer)}`);
    const { header, step, version, body } = readSaved(bytes);
    try {
      return new Model(host, header.config, { step, version, body, resetOptimizer });
    } catch (err) {
      if (err instanceof AttnError && !err.message.startsWith('loadModel')) err.message = `loadModel: ${err.message}`;
      throw err;
    }
  }

  /** Frees the model's memory; later calls throw DISPOSED. */
  dispose() {
    if (this.#block < 0) return;
    this.#host.heap.free(this.#block);
    this.#block = -1;
  }

  // ---- internals ----

  #alive() {
    if (this.#block < 0) throw new AttnError('DISPOSED', 'this model was disposed');
    this.#host.exports(); // throws DISPOSED when the instance is
  }

  #memory() { return this.#block + CONFIG_BYTES + align(4 * this.#params.length, 64); }
  // the opened model (attn_model_open), after the model block: what every pass takes
  #opened() { return this.#memory() + this.#bytes; }

  #fail(status, what) {
    throw failure(this.#host, status, what);
  }

  // Tokens and targets in, one result array out, a workspace for the batch (measured by
  // `measure`, by default the passes' attn_model_workspace_size): laid out above every model's
  // block and copied out; `check` (for float results) names the first value that is not finite.
  #call(batch, ints, outCount, run, { measure = (e, at) => e.attn_model_workspace_size(this.#opened(), batch, at), check = null } = {}) {
    this.#alive();
    const e = this.#host.exports();
    let cursor = this.#host.heap.scratchBase();
    const wsAt = cursor;
    this.#host.heap.ensure(cursor + 64, 'a model call');
    const st = measure(e, wsAt);
    if (st !== 0) throw new AttnError(STATUS_CODES[st] ?? 'MEMORY', `a batch of ${batch} sequences does not fit in WebAssembly memory`);
    const wsBytes = new Uint32Array(this.#host.heap.i32().buffer)[wsAt >>> 2];
    const at = ints.map((a) => { const p = cursor; cursor = align(cursor + a.length * 4, 64); return p; });
    const out = cursor;
    cursor = align(cursor + outCount * 4, 64);
    const ws = cursor;
    this.#host.heap.ensure(ws + wsBytes, `a batch of ${batch} sequences`);
    const i32 = this.#host.heap.i32();
    ints.forEach((a, k) => i32.set(a, at[k] >>> 2));
    const status = run(at, out, ws, wsBytes, e);
    if (status !== 0) this.#fail(status, 'model');
    if (check) {
      const bad = Number(e.attn_find_nonfinite(out, outCount));
      if (bad >= 0) throw new AttnError('VALUE', check(bad, this.#host.heap.f32()[(out >>> 2) + bad]));
    }
    return this.#host.heap.f32().slice(out >>> 2, (out >>> 2) + outCount);
  }

  #lossCall(fn, tokens, targets, what) {
    this.#alive();
    const { seqLen } = this.config;
    const tok = readInts('tokens', tokens, { multipleOf: seqLen, lo: 0, hi: this.config.vocab - 1 });
    const tgt = readInts('targets', targets, { expected: tok.length, lo: -1, hi: this.config.vocab - 1 });
    const batch = tok.length / seqLen;
    const r = this.#call(batch, [tok, tgt], 4, (at, out, ws, wsBytes, e) =>
      e[fn](this.#opened(), this.#memory(), this.#bytes, at[0], at[1], batch, out, out + 4, out + 8, ws, wsBytes, this.#host.detailPtr()));
    const ints = new Int32Array(r.buffer);
    const loss = r[0], correct = ints[1], counted = ints[2];
    if (!Number.isFinite(loss)) {
      throw new AttnError('VALUE', `${what}: the loss came out ${loss}: ${OVERFLOW}` +
        (fn === 'attn_model_loss_backward' ? '; the model is as it was before this call' : ''));
    }
    return { loss, accuracy: counted ? correct / counted : 0, counted };
  }

  #section(k) {
    this.#alive();
    const f32 = this.#host.heap.f32();
    const P = this.#bytes / 16;
    const base = (this.#memory() >>> 2) + k * P;
    const out = {};
    for (const p of this.#params) out[p.name] = f32.slice(base + p.offset, base + p.offset + p.count);
    return out;
  }
}

// What a non-finite result means: the parameters are finite (loadModel and trainStep see to
// that), so an intermediate of the forward pass left float32's range.
const OVERFLOW = 'an intermediate of the forward pass left float32\'s range (parameters too large: ' +
  'a training step with too large an lr or weight decay, or a saved model with extreme values)';
