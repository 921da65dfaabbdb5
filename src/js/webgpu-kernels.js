// webgpu-kernels.js — the WGSL kernels of attnlab/webgpu, one section per family as in the C
// core, and the plan of one call: its buffers (what is uploaded where), its passes (a pipeline,
// compiled once per kernel and shape class and cached by webgpu.js, the buffers it binds, its
// workgroups) and its outputs. Nothing here touches a GPU: a plan is plain data.
//
// Every family of the registry has an entry in FAMILY_PLANS (tests/webgpu.test.mjs holds that);
// a family not on the GPU yet rejects with UNSUPPORTED saying so, before any GPU work.

import { AttnError } from './errors.js';

const WORKGROUP = 64; // query rows per workgroup of the streaming kernels (one row per invocation)
const COLUMN_BLOCK = 64; // output columns per invocation: a wider dv runs as several blocks
const TILE_FLOATS = 4096; // keys and values of a tile in workgroup memory: 16 KiB, WebGPU's guaranteed minimum
const MAX_TILE = 16; // keys per tile
const MAX_WIDTH = 1024; // the widest query side an invocation holds in its registers
const MAX_TERMS = 8; // a mixture's components (attnlab.h ATTN_MAX_COMPONENTS)
const FLAT = 65535 * 64; // elements of a one-dimensional dispatch of 64-wide workgroups, per row of workgroups

/** The smallest power of two >= x (and >= 4): the shape classes a pipeline is compiled for. */
function shapeClass(x) {
  let c = 4;
  while (c < x) c *= 2;
  return c;
}

// ---- softmax-type families (softmax, synthesizer): a logit source, then one streaming kernel ----
// A call's logits are B = sum_t alpha_t * B_t over its terms (one term of weight 1 unless it is a
// mixture). Every term reads one packed buffer, SRC, at offsets the uniform gives: arrays the
// caller passed go in as they are (w2 and w transposed to rows of keys), hidden layers and factors
// are computed into it by the affine kernel first. Term kinds:
//   dot     B_ij = (qs_i · ks_j + bias_j) * scale   softmax (q, k), dense (relu(x w1 + b1), w2ᵀ, b2),
//                                                     dense1 (x, wᵀ), factorized-random (r1, r2)
//   table   B_ij = r[i, j]                           random
//   kron    B_ij = fa[i, j / b] * fb[i, j % b]       factorized-dense, tiling kronecker
//   tile    B_ij = fa[i, j % a] * fb[i, j % b]       factorized-dense, tiling tile
// The streaming kernel: query row i (one invocation) against tiles of values (and, for a lone dot
// term, of keys) that its workgroup loads into workgroup memory together; per key j in order
// (causal: j <= i) the logit, then the running maximum m, sum l and output acc (rescaled by
// e^(m_old − m) when m grows); at the end y_i = acc / l and lse_i = m + log l. No n×n buffer
// unless weights are asked for: then a second pass writes A_ij = e^(B_ij − lse_i) from the same
// logit function. Every invocation's order is fixed, so the same adapter, shape and inputs give
// the same bits.

const PARAMS_WGSL = /* wgsl */ `
struct Params {
  n: u32, dv: u32, causal: u32, terms: u32,
  at: array<vec4u, ${MAX_TERMS}>,   // per term: offsets into SRC (and widths), by kind
  num: array<vec4f, ${MAX_TERMS}>,  // per term: alpha, scale, has bias
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> SRC: array<f32>;
`;

// Term t's logit as a WGSL function of (i, j).
const TERM_WGSL = {
  dot: (t) => /* wgsl */ `
fn term${t}(i: u32, j: u32) -> f32 {
  let at = P.at[${t}];  // query side, key side, bias, width
  var s = 0.0;
  for (var f = 0u; f < at.w; f++) { s = fma(SRC[at.x + i * at.w + f], SRC[at.y + j * at.w + f], s); }
  if (P.num[${t}].z != 0.0) { s = s + SRC[at.z + j]; }
  return s * P.num[${t}].y;
}`,
  table: (t) => /* wgsl */ `
fn term${t}(i: u32, j: u32) -> f32 {
  let at = P.at[${t}];  // r, its row stride L
  return SRC[at.x + i * at.y + j];
}`,
  kron: (t) => /* wgsl */ `
fn term${t}(i: u32, j: u32) -> f32 {
  let at = P.at[${t}];  // fa, fb, a, b
  return SRC[at.x + i * at.z + j / at.w] * SRC[at.y + i * at.w + j % at.w];
}`,
  tile: (t) => /* wgsl */ `
fn term${t}(i: u32, j: u32) -> f32 {
  let at = P.at[${t}];  // fa, fb, a, b
  return SRC[at.x + i * at.z + j % at.z] * SRC[at.y + i * at.w + j % at.w];
}`,
};

// logit(i, j): the one term, or the mixture's sum in component order.
function logitWgsl(kinds) {
  const terms = kinds.map((kind, t) => TERM_WGSL[kind](t)).join('\n');
  const sum = kinds.length === 1 ? 'term0(i, j)' : kinds.map((_, t) => `P.num[${t}].x * term${t}(i, j)`).join(' + ');
  return `${terms}\nfn logit(i: u32, j: u32) -> f32 { return ${sum}; }\n`;
}

// The streaming kernel. tiled: a lone dot term, whose query row lives in registers and whose keys
// come through workgroup memory with the values; otherwise logit(i, j) reads SRC directly.
function streamingWgsl(kinds, tiled, W, DVB, T) {
  const keys = tiled ? /* wgsl */ `
var<workgroup> kt: array<f32, T * W>;` : '';
  const loadQuery = tiled ? /* wgsl */ `
  let at = P.at[0];
  var q: array<f32, W>;
  for (var f = 0u; f < at.w; f++) { q[f] = SRC[at.x + row * at.w + f]; }` : '';
  const loadKeys = tiled ? /* wgsl */ `
    for (var x = li; x < T * W; x += WG) {
      let j = j0 + x / W;
      let f = x % W;
      var e = 0.0;
      if (j < P.n && f < at.w) { e = SRC[at.y + j * at.w + f]; }
      kt[x] = e;
    }` : '';
  const score = tiled ? /* wgsl */ `
        var s = 0.0;
        for (var f = 0u; f < at.w; f++) { s = fma(q[f], kt[jj * W + f], s); }
        if (P.num[0].z != 0.0) { s = s + SRC[at.z + j]; }
        s = s * P.num[0].y;` : /* wgsl */ `
        let s = logit(i, j);`;
  return /* wgsl */ `
const W: u32 = ${W}u;
const DVB: u32 = ${DVB}u;
const T: u32 = ${T}u;
const WG: u32 = ${WORKGROUP}u;
${PARAMS_WGSL}
@group(0) @binding(2) var<storage, read> V: array<f32>;
@group(0) @binding(3) var<storage, read_write> Y: array<f32>;
@group(0) @binding(4) var<storage, read_write> LSE: array<f32>;
var<workgroup> vt: array<f32, T * DVB>;${keys}
${tiled ? '' : logitWgsl(kinds)}
@compute @workgroup_size(WG)
fn forward(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = wg.x * WG + li;
  let c0 = wg.y * DVB;
  let cols = min(DVB, P.dv - c0);
  let row = min(i, P.n - 1u);${loadQuery}
  var acc: array<f32, DVB>;
  var m = -3.0e38;
  var l = 0.0;
  // causal: the workgroup's last row sees keys up to itself; the same bound for every invocation
  var end = P.n;
  if (P.causal != 0u) { end = min(P.n, wg.x * WG + WG); }
  for (var j0 = 0u; j0 < end; j0 += T) {${loadKeys}
    for (var x = li; x < T * DVB; x += WG) {
      let j = j0 + x / DVB;
      let c = x % DVB;
      var e = 0.0;
      if (j < P.n && c < cols) { e = V[j * P.dv + c0 + c]; }
      vt[x] = e;
    }
    workgroupBarrier();
    let tile = min(T, end - j0);
    for (var jj = 0u; jj < tile; jj++) {
      let j = j0 + jj;
      if (i < P.n && (P.causal == 0u || j <= i)) {${score}
        if (s > m) {
          let shrink = exp(m - s);
          l = l * shrink;
          for (var c = 0u; c < cols; c++) { acc[c] = acc[c] * shrink; }
          m = s;
        }
        let p = exp(s - m);
        l = l + p;
        for (var c = 0u; c < cols; c++) { acc[c] = fma(p, vt[jj * DVB + c], acc[c]); }
      }
    }
    workgroupBarrier();
  }
  if (i < P.n) {
    for (var c = 0u; c < cols; c++) { Y[i * P.dv + c0 + c] = acc[c] / l; }
    if (wg.y == 0u) { LSE[i] = m + log(l); }
  }
}
`;
}

function weightsWgsl(kinds) {
  return /* wgsl */ `${PARAMS_WGSL}
@group(0) @binding(2) var<storage, read> LSE: array<f32>;
@group(0) @binding(3) var<storage, read_write> A: array<f32>;
${logitWgsl(kinds)}
@compute @workgroup_size(8, 8)
fn weights(@builtin(global_invocation_id) g: vec3u) {
  let j = g.x;
  let i = g.y;
  if (i >= P.n || j >= P.n) { return; }
  var a = 0.0;
  if (P.causal == 0u || j <= i) { a = exp(logit(i, j) - LSE[i]); }
  A[i * P.n + j] = a;
}
`;
}

// out[r, c] = act(b[c] + sum_f x[r, f] w[f, c]) for r < n, written into SRC at an offset: the
// dense hidden layer (relu) and the factorized factors.
const AFFINE_WGSL = /* wgsl */ `
struct Affine { n: u32, din: u32, cols: u32, relu: u32, out: u32 }
@group(0) @binding(0) var<uniform> P: Affine;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read> Wt: array<f32>;
@group(0) @binding(3) var<storage, read> B: array<f32>;
@group(0) @binding(4) var<storage, read_write> SRC: array<f32>;

@compute @workgroup_size(64)
fn affine(@builtin(global_invocation_id) g: vec3u) {
  let e = g.x + g.y * ${FLAT}u;
  if (e >= P.n * P.cols) { return; }
  let r = e / P.cols;
  let c = e % P.cols;
  var s = 0.0;
  for (var f = 0u; f < P.din; f++) { s = fma(X[r * P.din + f], Wt[f * P.cols + c], s); }
  s = s + B[c];
  if (P.relu != 0u) { s = max(s, 0.0); }
  SRC[P.out + e] = s;
}
`;

function flatWorkgroups(count) {
  const groups = Math.ceil(count / 64);
  return [Math.min(groups, 65535), Math.ceil(groups / 65535), 1];
}

// The first `rows` rows of the transpose of m [inner, cols]: out[j, f] = m[f, j] (keys as rows).
function transposeRows(m, inner, cols, rows) {
  const out = new Float32Array(rows * inner);
  for (let f = 0; f < inner; f++) for (let j = 0; j < rows; j++) out[j * inner + f] = m[f * cols + j];
  return out;
}

// Builds SRC and the prepasses of a call: put() appends an array, affine() a computed one.
class SourcePack {
  constructor(call) {
    this.call = call;
    this.floats = 0;
    this.writes = []; // { offset, data }
    this.prepasses = []; // { uniform, bindings, workgroups }
    this.inputs = new Map(call.arrays.map((a) => [a.name, a.data]));
  }

  array(name) { return this.inputs.get(name); }

  put(data) {
    const at = this.floats;
    this.writes.push({ offset: at, data });
    this.floats += data.length;
    return at;
  }

  affine(x, w, b, din, cols, relu) {
    const { n } = this.call.dims;
    const at = this.floats;
    this.floats += n * cols;
    const uniform = new Uint32Array([n, din, cols, relu ? 1 : 0, at, 0, 0, 0]).buffer;
    this.prepasses.push({
      pipeline: { key: 'affine', code: () => AFFINE_WGSL, entry: 'affine' },
      uniform, bindings: [`input:${x}`, `input:${w}`, `input:${b}`, 'src'], workgroups: flatWorkgroups(n * cols),
    });
    return at;
  }
}

// One term per softmax-type variant: its kind, SRC offsets ([4] u32), numbers (alpha set by the caller).
const SOURCES = {
  softmax: (pack, { d }, opt) => ({ kind: 'dot', at: [pack.put(pack.array('q')), pack.put(pack.array('k')), 0, d], scale: opt.scale ?? 1 / Math.sqrt(d) }),
  dense: (pack, { n, d, h, L }) => {
    const hidden = pack.affine('x', 'w1', 'b1', d, h, true);
    const keys = pack.put(transposeRows(pack.array('w2'), h, L, n));
    return { kind: 'dot', at: [hidden, keys, pack.put(pack.array('b2').subarray(0, n)), h], bias: true };
  },
  dense1: (pack, { n, d, L }) => ({ kind: 'dot', at: [pack.put(pack.array('x')), pack.put(transposeRows(pack.array('w'), d, L, n)), 0, d] }),
  random: (pack, { L }) => ({ kind: 'table', at: [pack.put(pack.array('r')), L, 0, 0] }),
  'factorized-dense': (pack, { d, a, b }, opt) => {
    const fa = pack.affine('x', 'wa', 'ba', d, a, false), fb = pack.affine('x', 'wb', 'bb', d, b, false);
    return { kind: opt.tiling === 'tile' ? 'tile' : 'kron', at: [fa, fb, a, b] };
  },
  'factorized-random': (pack, { n, rank }) => ({
    kind: 'dot', at: [pack.put(pack.array('r1').subarray(0, n * rank)), pack.put(pack.array('r2').subarray(0, n * rank)), 0, rank],
  }),
};

/** The softmax-type variants whose logit source is on WebGPU (a mixture's components among them). */
export const LOGIT_SOURCES = Object.freeze(Object.keys(SOURCES));

function mixtureAlpha(opt) {
  if (!opt.alphaLogits) return opt.alpha.map(Math.fround);
  const z = opt.alphaLogits.map(Math.fround), top = Math.max(...z);
  const e = z.map((x) => Math.exp(x - top)), sum = e.reduce((s, x) => s + x, 0);
  return e.map((x) => Math.fround(x / sum));
}

function planSoftmaxType(call) {
  const { variant, opt, dims } = call;
  const { n, dv } = dims;
  const pack = new SourcePack(call);
  const parts = opt.components ?? [variant.id];
  const alpha = opt.components ? mixtureAlpha(opt) : [1];
  const terms = parts.map((id, t) => {
    if (!SOURCES[id]) notYet(variant, `${id}'s logits are not on WebGPU`);
    return { ...SOURCES[id](pack, dims, opt), alpha: alpha[t] };
  });
  const kinds = terms.map((t) => t.kind);
  const tiled = kinds.length === 1 && kinds[0] === 'dot';
  const width = tiled ? terms[0].at[3] : 0;
  if (width > MAX_WIDTH) {
    throw new AttnError('UNSUPPORTED', `${variant.id} on WebGPU takes a query side up to ${MAX_WIDTH} wide, got ${width}; use the WebAssembly builds (init())`);
  }
  const W = tiled ? shapeClass(width) : 0, DVB = Math.min(COLUMN_BLOCK, shapeClass(dv));
  const T = Math.max(1, Math.min(MAX_TILE, Math.floor(TILE_FLOATS / (W + DVB))));
  const params = new ArrayBuffer(16 + 32 * MAX_TERMS);
  new Uint32Array(params, 0, 4).set([n, dv, opt.causal ? 1 : 0, terms.length]);
  terms.forEach((term, t) => {
    new Uint32Array(params, 16 + 16 * t, 4).set(term.at);
    new Float32Array(params, 16 + 16 * MAX_TERMS + 16 * t, 4).set([term.alpha, term.scale ?? 1, term.bias ? 1 : 0, 0]);
  });
  const shape = kinds.join('+');
  const buffers = [
    { name: 'params', uniform: params },
    { name: 'src', count: pack.floats, writes: pack.writes, what: 'the logits\' arrays' },
    ...pack.prepasses.map((p, k) => ({ name: `affine${k}`, uniform: p.uniform })),
    ...call.arrays.filter((a) => a.name === 'v' || pack.prepasses.some((p) => p.bindings.includes(`input:${a.name}`)))
      .map((a) => ({ name: `input:${a.name}`, count: a.count, writes: [{ offset: 0, data: a.data }], what: a.name })),
    { name: 'output', count: n * dv, output: true, cols: dv },
    { name: 'lse', count: n, output: opt.keep, cols: 1 },
  ];
  const passes = pack.prepasses.map((p, k) => ({ pipeline: p.pipeline, bindings: [`affine${k}`, ...p.bindings], workgroups: p.workgroups }));
  passes.push({
    pipeline: { key: `stream.${shape}.${tiled ? `tiled.${W}` : 'direct'}.${DVB}.${T}`, code: () => streamingWgsl(kinds, tiled, W, DVB, T), entry: 'forward' },
    bindings: ['params', 'src', 'input:v', 'output', 'lse'],
    workgroups: [Math.ceil(n / WORKGROUP), Math.ceil(dv / DVB), 1],
  });
  if (opt.weights) {
    buffers.push({ name: 'weights', count: n * n, output: true, cols: n });
    passes.push({
      pipeline: { key: `weights.${shape}`, code: () => weightsWgsl(kinds), entry: 'weights' },
      bindings: ['params', 'src', 'lse', 'weights'],
      workgroups: [Math.ceil(n / 8), Math.ceil(n / 8), 1],
    });
  }
  return { buffers, passes };
}

function notYet(variant, what) {
  throw new AttnError('UNSUPPORTED', `${variant.id} does not run on WebGPU yet (${what}); use the WebAssembly builds (init()) for it`);
}

// One entry per family of the registry (ATTN_FAMILY_LIST): a function from a checked call to its plan.
export const FAMILY_PLANS = {
  softmax: planSoftmaxType,
  synthesizer: planSoftmaxType,
  linear: (call) => notYet(call.variant, 'the linear family comes after the softmax-type families'),
  fixed: (call) => notYet(call.variant, 'the fixed patterns come after the softmax-type families'),
  recurrent: (call) => notYet(call.variant, 'the recurrent family comes after the linear family'),
};

/** Whether a variant runs on WebGPU in this version: a softmax-type one whose logits are here (a mixture's components all are). */
export function onWebGPU(variant) {
  return FAMILY_PLANS[variant.family] === planSoftmaxType && (variant.composite || LOGIT_SOURCES.includes(variant.id));
}

/**
 * The plan of one checked call (lab[CHECK_CALL]'s result): { buffers: [{ name, uniform?:
 * ArrayBuffer, count?, writes?: [{ offset, data }], output?, cols?, what? }], passes: [{ pipeline:
 * { key, code(), entry }, bindings: buffer names in binding order, workgroups: [x, y, z] }] }.
 * Throws UNSUPPORTED for what is not on WebGPU (yet).
 */
export function planCall(call) {
  const { variant, opt } = call;
  const plan = FAMILY_PLANS[variant.family];
  if (!plan) throw new AttnError('UNSUPPORTED', `${variant.id}: family ${variant.family} has no WebGPU entry`);
  if (opt.keep) {
    throw new AttnError('UNSUPPORTED', 'option "keep" does not run on WebGPU yet: its backward pass comes with the GPU\'s gradients; ' +
      'call the WebAssembly instance\'s attention() with keep: true');
  }
  return plan(call);
}
