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
export const MAX_TERMS = 8; // a mixture's components (attnlab.h ATTN_MAX_COMPONENTS; tests/webgpu.test.mjs holds them equal)
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
${WEIGHTS_ENTRY}
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

// What every plan shares: an input uploaded as it is, a pass, and the n×n weights with their pass.
function uploaded(call, name) {
  const a = call.arrays.find((x) => x.name === name);
  return { name: `input:${name}`, count: a.count, writes: [{ offset: 0, data: a.data }], what: name };
}

function pass(key, code, entry, bindings, workgroups) {
  return { pipeline: { key, code: typeof code === 'function' ? code : () => code, entry }, bindings, workgroups };
}

// weights: A [n, n], one invocation per entry in 8×8 workgroups, its rows i = gid.y (below: WEIGHTS_ENTRY)
function addWeights(plan, n, key, code, bindings) {
  plan.buffers.push({ name: 'weights', count: n * n, output: true, cols: n });
  plan.passes.push(pass(key, code, 'weights', [...bindings, 'weights'], [Math.ceil(n / 8), Math.ceil(n / 8), 1]));
  return plan;
}

// The start of a weights kernel: entry (i, j) of A, nothing past n.
const WEIGHTS_ENTRY = /* wgsl */ `
@compute @workgroup_size(8, 8)
fn weights(@builtin(global_invocation_id) g: vec3u) {
  let j = g.x;
  let i = g.y;
  if (i >= P.n || j >= P.n) { return; }`;

// The start of a read-out kernel: row i (one invocation) and its block of DVB output columns.
const ROW_BLOCK_ENTRY = /* wgsl */ `
@compute @workgroup_size(64)
fn readout(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = wg.x * 64u + li;
  if (i >= P.n) { return; }
  let c0 = wg.y * DVB;
  let cols = min(DVB, P.dv - c0);`;

// The first `rows` rows of the transpose of m [inner, cols]: out[j, f] = m[f, j] (keys as rows).
function transposeRows(m, inner, cols, rows) {
  const out = new Float32Array(rows * inner);
  for (let f = 0; f < inner; f++) for (let j = 0; j < rows; j++) out[j * inner + f] = m[f * cols + j];
  return out;
}

/**
 * A tensor that stays on the GPU (webgpu.js's resident tensors): { tensor: true, buffer, count }.
 * Where a plan's write holds one, the runner copies it on the GPU instead of uploading.
 */
export function isTensor(x) {
  return x?.tensor === true;
}

// The first `count` values of an array or of a tensor (a tensor's as a view: the runner copies that many).
function head(data, count) {
  return isTensor(data) ? { ...data, count } : data.subarray(0, count);
}

// A source that rearranges an array on the CPU cannot take a tensor (yet): say which.
function onCpu(data, variant, name) {
  if (isTensor(data)) {
    throw new AttnError('UNSUPPORTED', `${variant.id} reads ${name} transposed, which is done on the CPU: pass ${name} as an array, not a resident tensor`);
  }
  return data;
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
    this.floats += isTensor(data) ? data.count : data.length;
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
    const keys = pack.put(transposeRows(onCpu(pack.array('w2'), pack.call.variant, 'w2'), h, L, n));
    return { kind: 'dot', at: [hidden, keys, pack.put(head(pack.array('b2'), n)), h], bias: true };
  },
  dense1: (pack, { n, d, L }) => ({ kind: 'dot', at: [pack.put(pack.array('x')), pack.put(transposeRows(onCpu(pack.array('w'), pack.call.variant, 'w'), d, L, n)), 0, d] }),
  random: (pack, { L }) => ({ kind: 'table', at: [pack.put(pack.array('r')), L, 0, 0] }),
  'factorized-dense': (pack, { d, a, b }, opt) => {
    const fa = pack.affine('x', 'wa', 'ba', d, a, false), fb = pack.affine('x', 'wb', 'bb', d, b, false);
    return { kind: opt.tiling === 'tile' ? 'tile' : 'kron', at: [fa, fb, a, b] };
  },
  'factorized-random': (pack, { n, rank }) => ({
    kind: 'dot', at: [pack.put(head(pack.array('r1'), n * rank)), pack.put(head(pack.array('r2'), n * rank)), 0, rank],
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
      .map((a) => uploaded(call, a.name)),
    { name: 'output', count: n * dv, output: true, cols: dv },
    { name: 'lse', count: n, output: opt.keep, cols: 1 },
  ];
  const passes = pack.prepasses.map((p, k) => ({ pipeline: p.pipeline, bindings: [`affine${k}`, ...p.bindings], workgroups: p.workgroups }));
  passes.push(pass(`stream.${shape}.${tiled ? `tiled.${W}` : 'direct'}.${DVB}.${T}`, () => streamingWgsl(kinds, tiled, W, DVB, T), 'forward',
    ['params', 'src', 'input:v', 'output', 'lse'], [Math.ceil(n / WORKGROUP), Math.ceil(dv / DVB), 1]));
  const plan = { buffers, passes };
  return opt.weights ? addWeights(plan, n, `weights.${shape}`, () => weightsWgsl(kinds), ['params', 'src', 'lse']) : plan;
}

// ---- the linear family's kernel forms (linear: φ = elu+1, F = d; taylor: φ(x) = [1, x / max(‖x‖, 1e-12)], F = d + 1) ----
// y_i = φ(q_i)ᵀS / (φ(q_i)·z + eps), S = Σ_j φ(k_j)v_jᵀ [F, dv], z = Σ_j φ(k_j); causal: the sums
// over j <= i. Rows go in chunks of C: the features of every row (one pass), each chunk's sums of
// S and z (one invocation per element and chunk, rows in order), their prefix over chunks (one
// invocation per element, chunks in order; the total is the state), then the read-out: row i
// against the prefix before its chunk and, causal, its chunk's rows j <= i one by one. z rides as
// column dv of S. With weights, A_ij = φ(q_i)·φ(k_j) / (φ(q_i)·z + eps), the denominator the
// read-out kept.

const CHUNK = 64;

const KERNEL_PARAMS_WGSL = /* wgsl */ `
struct Params { n: u32, d: u32, dv: u32, F: u32, causal: u32, taylor: u32, nb: u32, eps: f32 }
@group(0) @binding(0) var<uniform> P: Params;
const C: u32 = ${CHUNK}u;
`;

const KERNEL_FEATURES_WGSL = /* wgsl */ `${KERNEL_PARAMS_WGSL}
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read> K: array<f32>;
@group(0) @binding(3) var<storage, read_write> PHI: array<f32>;

fn feature(x: f32) -> f32 {
  if (x > 0.0) { return x + 1.0; }
  return exp(x);
}

// Entry f of row r of [q; k].
fn input(r: u32, f: u32) -> f32 {
  if (r < P.n) { return Q[r * P.d + f]; }
  return K[(r - P.n) * P.d + f];
}

@compute @workgroup_size(64)
fn features(@builtin(global_invocation_id) g: vec3u) {
  let r = g.x + g.y * ${FLAT}u;  // rows of q, then rows of k
  if (r >= 2u * P.n) { return; }
  if (P.taylor == 0u) {
    for (var f = 0u; f < P.d; f++) { PHI[r * P.F + f] = feature(input(r, f)); }
    return;
  }
  var norm2 = 0.0;
  for (var f = 0u; f < P.d; f++) { norm2 = fma(input(r, f), input(r, f), norm2); }
  let norm = max(sqrt(norm2), 1e-12);
  PHI[r * P.F] = 1.0;
  for (var f = 0u; f < P.d; f++) { PHI[r * P.F + 1u + f] = input(r, f) / norm; }
}
`;

const KERNEL_CHUNKS_WGSL = /* wgsl */ `${KERNEL_PARAMS_WGSL}
@group(0) @binding(1) var<storage, read> PHI: array<f32>;
@group(0) @binding(2) var<storage, read> V: array<f32>;
@group(0) @binding(3) var<storage, read_write> CS: array<f32>;

@compute @workgroup_size(64)
fn chunks(@builtin(global_invocation_id) g: vec3u) {
  let e = g.x + g.y * ${FLAT}u;
  let E = P.F * (P.dv + 1u);
  if (e >= P.nb * E) { return; }
  let b = e / E;
  let f = (e % E) / (P.dv + 1u);
  let c = (e % E) % (P.dv + 1u);
  var s = 0.0;
  for (var j = b * C; j < min(P.n, b * C + C); j++) {
    var x = 1.0;
    if (c < P.dv) { x = V[j * P.dv + c]; }
    s = fma(PHI[(P.n + j) * P.F + f], x, s);
  }
  CS[e] = s;
}
`;

const KERNEL_PREFIX_WGSL = /* wgsl */ `${KERNEL_PARAMS_WGSL}
@group(0) @binding(1) var<storage, read> CS: array<f32>;
@group(0) @binding(2) var<storage, read_write> PS: array<f32>;
@group(0) @binding(3) var<storage, read_write> STATE: array<f32>;
@group(0) @binding(4) var<storage, read_write> NORM: array<f32>;

@compute @workgroup_size(64)
fn prefix(@builtin(global_invocation_id) g: vec3u) {
  let e = g.x + g.y * ${FLAT}u;
  let E = P.F * (P.dv + 1u);
  if (e >= E) { return; }
  var run = 0.0;
  for (var b = 0u; b < P.nb; b++) {
    PS[b * E + e] = run;
    run = run + CS[b * E + e];
  }
  PS[P.nb * E + e] = run;
  let f = e / (P.dv + 1u);
  let c = e % (P.dv + 1u);
  if (c < P.dv) { STATE[f * P.dv + c] = run; } else { NORM[f] = run; }
}
`;

function kernelReadoutWgsl(DVB) {
  return /* wgsl */ `${KERNEL_PARAMS_WGSL}
const DVB: u32 = ${DVB}u;
@group(0) @binding(1) var<storage, read> PHI: array<f32>;
@group(0) @binding(2) var<storage, read> PS: array<f32>;
@group(0) @binding(3) var<storage, read> V: array<f32>;
@group(0) @binding(4) var<storage, read_write> Y: array<f32>;
@group(0) @binding(5) var<storage, read_write> DEN: array<f32>;

${ROW_BLOCK_ENTRY}
  let E = P.F * (P.dv + 1u);
  var b = P.nb;  // not causal: the totals
  if (P.causal != 0u) { b = i / C; }
  var acc: array<f32, DVB>;
  var den = 0.0;
  for (var f = 0u; f < P.F; f++) {
    let p = PHI[i * P.F + f];
    let row = b * E + f * (P.dv + 1u);
    for (var c = 0u; c < cols; c++) { acc[c] = fma(p, PS[row + c0 + c], acc[c]); }
    den = fma(p, PS[row + P.dv], den);
  }
  if (P.causal != 0u) {
    for (var j = b * C; j <= i; j++) {
      var s = 0.0;
      for (var f = 0u; f < P.F; f++) { s = fma(PHI[i * P.F + f], PHI[(P.n + j) * P.F + f], s); }
      den = den + s;
      for (var c = 0u; c < cols; c++) { acc[c] = fma(s, V[j * P.dv + c0 + c], acc[c]); }
    }
  }
  den = den + P.eps;
  for (var c = 0u; c < cols; c++) { Y[i * P.dv + c0 + c] = acc[c] / den; }
  if (wg.y == 0u) { DEN[i] = den; }
}
`;
}

const KERNEL_WEIGHTS_WGSL = /* wgsl */ `${KERNEL_PARAMS_WGSL}
@group(0) @binding(1) var<storage, read> PHI: array<f32>;
@group(0) @binding(2) var<storage, read> DEN: array<f32>;
@group(0) @binding(3) var<storage, read_write> A: array<f32>;

${WEIGHTS_ENTRY}
  var a = 0.0;
  if (P.causal == 0u || j <= i) {
    var s = 0.0;
    for (var f = 0u; f < P.F; f++) { s = fma(PHI[i * P.F + f], PHI[(P.n + j) * P.F + f], s); }
    a = s / DEN[i];
  }
  A[i * P.n + j] = a;
}
`;

// The kernel forms by variant: whether φ is taylor's (else elu+1) and its width F.
const KERNEL_FORMS = { linear: { taylor: false, extra: 0 }, taylor: { taylor: true, extra: 1 } };

function planLinear(call) {
  const { variant, opt, dims } = call;
  const form = KERNEL_FORMS[variant.id];
  if (!form) return planEfficient(call);
  const { n, d, dv } = dims;
  if (d > MAX_WIDTH) throw new AttnError('UNSUPPORTED', `${variant.id} on WebGPU takes d up to ${MAX_WIDTH}, got d = ${d}; use the WebAssembly builds (init())`);
  const F = d + form.extra, nb = Math.ceil(n / CHUNK), E = F * (dv + 1);
  const DVB = Math.min(COLUMN_BLOCK, shapeClass(dv));
  const params = new ArrayBuffer(32);
  new Uint32Array(params, 0, 7).set([n, d, dv, F, opt.causal ? 1 : 0, form.taylor ? 1 : 0, nb]);
  new Float32Array(params, 28, 1)[0] = opt.eps;
  const buffers = [
    { name: 'params', uniform: params }, uploaded(call, 'q'), uploaded(call, 'k'), uploaded(call, 'v'),
    { name: 'phi', count: 2 * n * F, what: 'the features of q and k' },
    { name: 'chunks', count: nb * E, what: 'the chunks\' sums' },
    { name: 'prefix', count: (nb + 1) * E, what: 'the chunks\' prefix sums' },
    { name: 'output', count: n * dv, output: true, cols: dv },
    { name: 'den', count: n, cols: 1 },
    { name: 'state', count: F * dv, output: opt.state, cols: dv },
    { name: 'normalizer', count: F, output: opt.state, cols: F },
  ];
  const passes = [
    pass('linear.features', KERNEL_FEATURES_WGSL, 'features', ['params', 'input:q', 'input:k', 'phi'], flatWorkgroups(2 * n)),
    pass('linear.chunks', KERNEL_CHUNKS_WGSL, 'chunks', ['params', 'phi', 'input:v', 'chunks'], flatWorkgroups(nb * E)),
    pass('linear.prefix', KERNEL_PREFIX_WGSL, 'prefix', ['params', 'chunks', 'prefix', 'state', 'normalizer'], flatWorkgroups(E)),
    pass(`linear.readout.${DVB}`, () => kernelReadoutWgsl(DVB), 'readout', ['params', 'phi', 'prefix', 'input:v', 'output', 'den'], [Math.ceil(n / 64), Math.ceil(dv / DVB), 1]),
  ];
  const plan = { buffers, passes };
  return opt.weights ? addWeights(plan, n, 'linear.weights', KERNEL_WEIGHTS_WGSL, ['params', 'phi', 'den']) : plan;
}

// ---- efficient attention: a softmax of q over its features, of k over positions ----
// y_i = Σ_c ρ_q(q_i)_c · (Σ_j e^{k_jc} v_j) / (Σ_j e^{k_jc}), over j <= i when causal. Rows go in
// chunks of C: each chunk's per-feature maximum m and its sums of e^{k_jc − m}·v_j and e^{k_jc − m}
// (z rides as column dv), their prefix over chunks with a running maximum (the sums rescaled when
// it grows; the total is the state ρ_k(k)ᵀv, and M + log Z the normalizer), then the read-out:
// row i against the prefix before its chunk and, causal, its chunk's rows j <= i, the running
// maximum taken over them first. With weights, A_ij = Σ_c ρ_q(q_i)_c e^{k_jc − logZ_ic}, where
// logZ_ic is the log of the column's softmax denominator row i saw (the read-out keeps it).

const EFFICIENT_PARAMS_WGSL = /* wgsl */ `
struct Params { n: u32, d: u32, dv: u32, causal: u32, nb: u32 }
@group(0) @binding(0) var<uniform> P: Params;
const C: u32 = ${CHUNK}u;
`;

const EFFICIENT_CHUNKS_WGSL = /* wgsl */ `${EFFICIENT_PARAMS_WGSL}
@group(0) @binding(1) var<storage, read> K: array<f32>;
@group(0) @binding(2) var<storage, read> V: array<f32>;
@group(0) @binding(3) var<storage, read_write> CM: array<f32>;
@group(0) @binding(4) var<storage, read_write> CU: array<f32>;

@compute @workgroup_size(64)
fn chunks(@builtin(global_invocation_id) g: vec3u) {
  let e = g.x + g.y * ${FLAT}u;
  let E = P.d * (P.dv + 1u);
  if (e >= P.nb * E) { return; }
  let b = e / E;
  let c = (e % E) / (P.dv + 1u);
  let col = (e % E) % (P.dv + 1u);
  let end = min(P.n, b * C + C);
  var m = -3.0e38;
  for (var j = b * C; j < end; j++) { m = max(m, K[j * P.d + c]); }
  var s = 0.0;
  for (var j = b * C; j < end; j++) {
    var x = 1.0;
    if (col < P.dv) { x = V[j * P.dv + col]; }
    s = fma(exp(K[j * P.d + c] - m), x, s);
  }
  CU[e] = s;
  if (col == P.dv) { CM[b * P.d + c] = m; }
}
`;

const EFFICIENT_PREFIX_WGSL = /* wgsl */ `${EFFICIENT_PARAMS_WGSL}
@group(0) @binding(1) var<storage, read> CM: array<f32>;
@group(0) @binding(2) var<storage, read> CU: array<f32>;
@group(0) @binding(3) var<storage, read_write> PM: array<f32>;
@group(0) @binding(4) var<storage, read_write> PX: array<f32>;
@group(0) @binding(5) var<storage, read_write> STATE: array<f32>;
@group(0) @binding(6) var<storage, read_write> NORM: array<f32>;

@compute @workgroup_size(64)
fn prefix(@builtin(global_invocation_id) g: vec3u) {
  let e = g.x + g.y * ${FLAT}u;
  let E = P.d * (P.dv + 1u);
  if (e >= E) { return; }
  let c = e / (P.dv + 1u);
  let col = e % (P.dv + 1u);
  var m = -3.0e38;
  var x = 0.0;  // the sum, at the running maximum m
  var z = 0.0;  // the column's own denominator, likewise (the state divides by it)
  for (var b = 0u; b <= P.nb; b++) {
    PX[b * E + e] = x;
    if (col == P.dv) { PM[b * P.d + c] = m; }
    if (b == P.nb) { break; }
    let mb = CM[b * P.d + c];
    let top = max(m, mb);
    x = x * exp(m - top) + CU[b * E + e] * exp(mb - top);
    z = z * exp(m - top) + CU[b * E + c * (P.dv + 1u) + P.dv] * exp(mb - top);
    m = top;
  }
  if (col < P.dv) { STATE[c * P.dv + col] = x / z; } else { NORM[c] = m + log(z); }
}
`;

function efficientReadoutWgsl(DVB) {
  return /* wgsl */ `${EFFICIENT_PARAMS_WGSL}
const DVB: u32 = ${DVB}u;
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read> K: array<f32>;
@group(0) @binding(3) var<storage, read> V: array<f32>;
@group(0) @binding(4) var<storage, read> PM: array<f32>;
@group(0) @binding(5) var<storage, read> PX: array<f32>;
@group(0) @binding(6) var<storage, read_write> Y: array<f32>;
@group(0) @binding(7) var<storage, read_write> LOGZ: array<f32>;

${ROW_BLOCK_ENTRY}
  let E = P.d * (P.dv + 1u);
  // ρ_q(q_i): the softmax of the row over its features
  var qmax = -3.0e38;
  for (var c = 0u; c < P.d; c++) { qmax = max(qmax, Q[i * P.d + c]); }
  var qsum = 0.0;
  for (var c = 0u; c < P.d; c++) { qsum = qsum + exp(Q[i * P.d + c] - qmax); }
  var b = P.nb;  // not causal: the totals
  var first = 0u;
  if (P.causal != 0u) { b = i / C; first = b * C; }
  var acc: array<f32, DVB>;
  for (var c = 0u; c < P.d; c++) {
    let pm = PM[b * P.d + c];
    var m = pm;
    if (P.causal != 0u) { for (var j = first; j <= i; j++) { m = max(m, K[j * P.d + c]); } }
    let keep = exp(pm - m);
    var num: array<f32, DVB>;
    for (var e = 0u; e < cols; e++) { num[e] = PX[b * E + c * (P.dv + 1u) + c0 + e] * keep; }
    var den = PX[b * E + c * (P.dv + 1u) + P.dv] * keep;
    if (P.causal != 0u) {
      for (var j = first; j <= i; j++) {
        let w = exp(K[j * P.d + c] - m);
        den = den + w;
        for (var e = 0u; e < cols; e++) { num[e] = fma(w, V[j * P.dv + c0 + e], num[e]); }
      }
    }
    let rho = exp(Q[i * P.d + c] - qmax) / qsum;
    for (var e = 0u; e < cols; e++) { acc[e] = fma(rho, num[e] / den, acc[e]); }
    if (wg.y == 0u) { LOGZ[i * P.d + c] = m + log(den); }
  }
  for (var e = 0u; e < cols; e++) { Y[i * P.dv + c0 + e] = acc[e]; }
}
`;
}

const EFFICIENT_WEIGHTS_WGSL = /* wgsl */ `${EFFICIENT_PARAMS_WGSL}
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read> K: array<f32>;
@group(0) @binding(3) var<storage, read> LOGZ: array<f32>;
@group(0) @binding(4) var<storage, read_write> A: array<f32>;

${WEIGHTS_ENTRY}
  var a = 0.0;
  if (P.causal == 0u || j <= i) {
    var qmax = -3.0e38;
    for (var c = 0u; c < P.d; c++) { qmax = max(qmax, Q[i * P.d + c]); }
    var qsum = 0.0;
    for (var c = 0u; c < P.d; c++) { qsum = qsum + exp(Q[i * P.d + c] - qmax); }
    for (var c = 0u; c < P.d; c++) { a = fma(exp(Q[i * P.d + c] - qmax) / qsum, exp(K[j * P.d + c] - LOGZ[i * P.d + c]), a); }
  }
  A[i * P.n + j] = a;
}
`;

function planEfficient(call) {
  const { opt, dims } = call;
  const { n, d, dv } = dims;
  const nb = Math.ceil(n / CHUNK), E = d * (dv + 1);
  const DVB = Math.min(COLUMN_BLOCK, shapeClass(dv));
  const params = new Uint32Array([n, d, dv, opt.causal ? 1 : 0, nb, 0, 0, 0]).buffer;
  const buffers = [
    { name: 'params', uniform: params }, uploaded(call, 'q'), uploaded(call, 'k'), uploaded(call, 'v'),
    { name: 'cm', count: nb * d, what: 'the chunks\' maxima' },
    { name: 'cu', count: nb * E, what: 'the chunks\' sums' },
    { name: 'pm', count: (nb + 1) * d, what: 'the prefix maxima' },
    { name: 'px', count: (nb + 1) * E, what: 'the chunks\' prefix sums' },
    { name: 'output', count: n * dv, output: true, cols: dv },
    { name: 'logz', count: n * d, what: 'the rows\' log denominators' },
    { name: 'state', count: d * dv, output: opt.state, cols: dv },
    { name: 'normalizer', count: d, output: opt.state, cols: d },
  ];
  const passes = [
    pass('efficient.chunks', EFFICIENT_CHUNKS_WGSL, 'chunks', ['params', 'input:k', 'input:v', 'cm', 'cu'], flatWorkgroups(nb * E)),
    pass('efficient.prefix', EFFICIENT_PREFIX_WGSL, 'prefix', ['params', 'cm', 'cu', 'pm', 'px', 'state', 'normalizer'], flatWorkgroups(E)),
    pass(`efficient.readout.${DVB}`, () => efficientReadoutWgsl(DVB), 'readout', ['params', 'input:q', 'input:k', 'input:v', 'pm', 'px', 'output', 'logz'],
      [Math.ceil(n / 64), Math.ceil(dv / DVB), 1]),
  ];
  const plan = { buffers, passes };
  return opt.weights ? addWeights(plan, n, 'efficient.weights', EFFICIENT_WEIGHTS_WGSL, ['params', 'input:q', 'input:k', 'logz']) : plan;
}

// ---- fixed patterns: row i averages v over its pattern's span [j0, j1] ----

/** attnlab.h's ATTN_PATTERN_LIST, in order (tests/webgpu.test.mjs holds it to lab.options.pattern.values). */
export const PATTERNS = ['current', 'previous', 'next', 'left', 'right', 'first', 'last'];

const FIXED_WGSL = /* wgsl */ `
struct Params { n: u32, dv: u32, pattern: u32, window: u32 }
@group(0) @binding(0) var<uniform> P: Params;

// The span of row i, as the pattern list says (rows without a span of their own attend to themselves).
fn span(i: u32) -> vec2u {
  let last = P.n - 1u;
  switch (P.pattern) {
    case 1u: { if (i == 0u) { return vec2u(0u, 0u); } return vec2u(i - 1u, i - 1u); }
    case 2u: { if (i == last) { return vec2u(i, i); } return vec2u(i + 1u, i + 1u); }
    case 3u: { if (i == 0u) { return vec2u(0u, 0u); } return vec2u(i - min(i, P.window), i - 1u); }
    case 4u: { if (i == last) { return vec2u(i, i); } return vec2u(i + 1u, min(last, i + P.window)); }
    case 5u: { return vec2u(0u, 0u); }
    case 6u: { return vec2u(last, last); }
    default: { return vec2u(i, i); }
  }
}
`;

const FIXED_OUTPUT_WGSL = /* wgsl */ `${FIXED_WGSL}
@group(0) @binding(1) var<storage, read> V: array<f32>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;

@compute @workgroup_size(64)
fn fixed_output(@builtin(global_invocation_id) g: vec3u) {
  let e = g.x + g.y * ${FLAT}u;
  if (e >= P.n * P.dv) { return; }
  let i = e / P.dv;
  let c = e % P.dv;
  let s = span(i);
  var sum = 0.0;
  for (var j = s.x; j <= s.y; j++) { sum = sum + V[j * P.dv + c]; }
  Y[e] = sum / f32(s.y - s.x + 1u);
}
`;

const FIXED_WEIGHTS_WGSL = /* wgsl */ `${FIXED_WGSL}
@group(0) @binding(1) var<storage, read_write> A: array<f32>;

${WEIGHTS_ENTRY}
  let s = span(i);
  var a = 0.0;
  if (j >= s.x && j <= s.y) { a = 1.0 / f32(s.y - s.x + 1u); }
  A[i * P.n + j] = a;
}
`;

function planFixed(call) {
  const { opt, dims } = call;
  const { n, dv } = dims;
  const params = new Uint32Array([n, dv, PATTERNS.indexOf(opt.pattern), opt.window]).buffer;
  const plan = {
    buffers: [{ name: 'params', uniform: params }, uploaded(call, 'v'), { name: 'output', count: n * dv, output: true, cols: dv }],
    passes: [pass('fixed.output', FIXED_OUTPUT_WGSL, 'fixed_output', ['params', 'input:v', 'output'], flatWorkgroups(n * dv))],
  };
  return opt.weights ? addWeights(plan, n, 'fixed.weights', FIXED_WEIGHTS_WGSL, ['params']) : plan;
}

// ---- the recurrent family: a scan over tokens, one invocation per column of the state ----
// Column j of S, u and y depends on column j alone in every rule, so each invocation holds one
// column of S (d floats) and runs the tokens in order, as the C scan does: the decay (gated
// rules), u = β(v − S̃ᵀk) (delta rules; else u = v), the write S += k·u, y = scale·Sᵀq. The
// effective matrix, with weights: row i carries x = q_i back through the transposed transitions,
// W_ij = scale·β_j·(k_j·x), one invocation per row.

const RECURRENT_PARAMS_WGSL = /* wgsl */ `
struct Params { n: u32, d: u32, dv: u32, gated: u32, delta: u32, has_s0: u32, scale: f32, pad: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read> K: array<f32>;
@group(0) @binding(3) var<storage, read> G: array<f32>;
@group(0) @binding(4) var<storage, read> BETA: array<f32>;
`;

function recurrentScanWgsl(D) {
  return /* wgsl */ `${RECURRENT_PARAMS_WGSL}
@group(0) @binding(5) var<storage, read> V: array<f32>;
@group(0) @binding(6) var<storage, read> S0: array<f32>;
@group(0) @binding(7) var<storage, read_write> Y: array<f32>;
@group(0) @binding(8) var<storage, read_write> STATE: array<f32>;

@compute @workgroup_size(64)
fn scan(@builtin(global_invocation_id) g: vec3u) {
  let j = g.x;
  if (j >= P.dv) { return; }
  var S: array<f32, ${D}>;
  if (P.has_s0 != 0u) { for (var i = 0u; i < P.d; i++) { S[i] = S0[i * P.dv + j]; } }
  for (var t = 0u; t < P.n; t++) {
    let row = t * P.d;
    if (P.gated != 0u) { for (var i = 0u; i < P.d; i++) { S[i] = S[i] * exp(G[row + i]); } }
    var u = V[t * P.dv + j];
    if (P.delta != 0u) {
      var read = 0.0;
      for (var i = 0u; i < P.d; i++) { read = fma(S[i], K[row + i], read); }
      u = BETA[t] * (u - read);
    }
    var y = 0.0;
    for (var i = 0u; i < P.d; i++) {
      S[i] = fma(K[row + i], u, S[i]);
      y = fma(Q[row + i], S[i], y);
    }
    Y[t * P.dv + j] = y * P.scale;
  }
  for (var i = 0u; i < P.d; i++) { STATE[i * P.dv + j] = S[i]; }
}
`;
}

function recurrentWeightsWgsl(D) {
  return /* wgsl */ `${RECURRENT_PARAMS_WGSL}
@group(0) @binding(5) var<storage, read_write> A: array<f32>;

@compute @workgroup_size(64)
fn weights(@builtin(global_invocation_id) g: vec3u) {
  let i = g.x;
  if (i >= P.n) { return; }
  var x: array<f32, ${D}>;
  for (var c = 0u; c < P.d; c++) { x[c] = Q[i * P.d + c]; }
  for (var j = i + 1u; j < P.n; j++) { A[i * P.n + j] = 0.0; }
  for (var j = i + 1u; j > 0u; j--) {
    let t = j - 1u;
    let row = t * P.d;
    var kx = 0.0;
    for (var c = 0u; c < P.d; c++) { kx = fma(K[row + c], x[c], kx); }
    var beta = 1.0;
    if (P.delta != 0u) { beta = BETA[t]; }
    A[i * P.n + t] = P.scale * beta * kx;
    if (P.delta != 0u) { for (var c = 0u; c < P.d; c++) { x[c] = fma(-beta * kx, K[row + c], x[c]); } }
    if (P.gated != 0u) { for (var c = 0u; c < P.d; c++) { x[c] = x[c] * exp(G[row + c]); } }
  }
}
`;
}

// The rules by variant: whether they decay (read g) and whether they write by the delta rule (read beta).
const RECURRENT_RULES = {
  'plain-linear': { gated: false, delta: false }, gla: { gated: true, delta: false },
  deltanet: { gated: false, delta: true }, 'gated-deltanet': { gated: true, delta: true },
};

function planRecurrent(call) {
  const { variant, opt, dims } = call;
  const rule = RECURRENT_RULES[variant.id];
  if (!rule) notYet(variant, 'its update rule has no WebGPU kernel');
  const { n, d, dv } = dims;
  if (d > MAX_WIDTH) throw new AttnError('UNSUPPORTED', `${variant.id} on WebGPU takes d up to ${MAX_WIDTH}, got d = ${d}; use the WebAssembly builds (init())`);
  const D = shapeClass(d);
  const params = new ArrayBuffer(32);
  const given = new Map(call.arrays.map((a) => [a.name, a]));
  new Uint32Array(params, 0, 6).set([n, d, dv, rule.gated ? 1 : 0, rule.delta ? 1 : 0, given.has('s0') ? 1 : 0]);
  new Float32Array(params, 24, 1)[0] = opt.scale ?? 1 / Math.sqrt(d);
  // an array the rule does not read (and s0 left out) is bound as a small buffer of zeros
  const input = (name) => (given.has(name) ? uploaded(call, name) : { name: `input:${name}`, count: 4 });
  const reads = ['params', 'input:q', 'input:k', 'input:g', 'input:beta'];
  const buffers = [
    { name: 'params', uniform: params }, ...['q', 'k', 'g', 'beta', 'v', 's0'].map(input),
    { name: 'output', count: n * dv, output: true, cols: dv },
    { name: 'state', count: d * dv, output: opt.state, cols: dv },
  ];
  const passes = [pass(`recurrent.scan.${D}`, () => recurrentScanWgsl(D), 'scan', [...reads, 'input:v', 'input:s0', 'output', 'state'], [Math.ceil(dv / 64), 1, 1])];
  if (opt.weights) { // a row of W an invocation (it carries q_i back through the transitions)
    buffers.push({ name: 'weights', count: n * n, output: true, cols: n });
    passes.push(pass(`recurrent.weights.${D}`, () => recurrentWeightsWgsl(D), 'weights', [...reads, 'weights'], [Math.ceil(n / 64), 1, 1]));
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
  linear: planLinear,
  fixed: planFixed,
  recurrent: planRecurrent,
};

/** Whether a variant runs on WebGPU in this version. */
export function onWebGPU(variant) {
  const plan = FAMILY_PLANS[variant.family];
  if (plan === planSoftmaxType) return variant.composite || LOGIT_SOURCES.includes(variant.id); // a mixture's components all are
  if (plan === planLinear) return true; // its kernel forms, and efficient
  if (plan === planRecurrent) return Object.hasOwn(RECURRENT_RULES, variant.id);
  return plan === planFixed;
}

/**
 * The plan of one checked call (lab[CHECK_CALL]'s result): { buffers: [{ name, uniform?:
 * ArrayBuffer, count?, writes?: [{ offset, data }], output?, cols?, what? }], passes: [{ pipeline:
 * { key, code(), entry }, bindings: buffer names in binding order, workgroups: [x, y, z] }] }.
 * Throws UNSUPPORTED for what is not on WebGPU (yet). resident: a call on resident tensors, where
 * keep: true hands a softmax-type variant's lse over as a tensor (for a backward on the GPU).
 */
export function planCall(call, { resident = false } = {}) {
  const { variant, opt } = call;
  const plan = FAMILY_PLANS[variant.family];
  if (!plan) throw new AttnError('UNSUPPORTED', `${variant.id}: family ${variant.family} has no WebGPU entry`);
  if (opt.keep && !(resident && variant.keepsLse)) {
    throw new AttnError('UNSUPPORTED', 'option "keep" does not run on WebGPU yet: its backward pass comes with the GPU\'s gradients; ' +
      'call the WebAssembly instance\'s attention() with keep: true');
  }
  return plan(call);
}
