// webgpu-kernels.js — the WGSL kernels of attnlab/webgpu, one section per family as in the C
// core, and the plan of one call: which pipelines (compiled once per variant and shape class,
// then cached by webgpu.js), which buffers, which passes. Nothing here touches a GPU: a plan is
// plain data, so it can be read and tested anywhere.
//
// The families still to come say so: a call to one of their variants is UNSUPPORTED with the
// reason, before any GPU work. Every family of the registry has an entry in FAMILY_PLANS (a test
// holds that), so a new family cannot be forgotten here.

import { AttnError } from './errors.js';

const WORKGROUP = 64; // query rows per workgroup (one row per invocation)
const COLUMN_BLOCK = 64; // output columns per invocation: wider dv runs as several blocks
const TILE_FLOATS = 4096; // keys and values of a tile in workgroup memory: 16 KiB, WebGPU's guaranteed minimum
const MAX_TILE = 16; // keys per tile
const MAX_D = 1024; // the widest q row an invocation holds in its registers

/** The smallest power of two >= x (and >= 4): the shape classes a pipeline is compiled for. */
function shapeClass(x) {
  let c = 4;
  while (c < x) c *= 2;
  return c;
}

// ---- the softmax family: one streaming kernel with an online softmax ----
// Query row i (one invocation) against tiles of keys and values that its workgroup loads into
// workgroup memory together: per key j (in order; causal: j <= i) the logit s = (q_i · k_j)·scale
// (the dot product over f = 0..d-1 in order), then the running maximum m, sum l and output acc
// (rescaled by e^(m_old − m) when m grows), and at the end y_i = acc / l and lse_i = m + log l.
// No n×n buffer unless weights are asked for: then a second pass writes A_ij = e^(s_ij − lse_i).
// The same adapter, shape and inputs give the same bits: every invocation's order is fixed.

function softmaxForwardWgsl(D, DVB, T) {
  return /* wgsl */ `
const D: u32 = ${D}u;
const DVB: u32 = ${DVB}u;
const T: u32 = ${T}u;
const WG: u32 = ${WORKGROUP}u;
struct Params { n: u32, d: u32, dv: u32, causal: u32, scale: f32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read> K: array<f32>;
@group(0) @binding(3) var<storage, read> V: array<f32>;
@group(0) @binding(4) var<storage, read_write> Y: array<f32>;
@group(0) @binding(5) var<storage, read_write> LSE: array<f32>;
var<workgroup> kt: array<f32, T * D>;
var<workgroup> vt: array<f32, T * DVB>;

@compute @workgroup_size(WG)
fn forward(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = wg.x * WG + li;
  let c0 = wg.y * DVB;
  let cols = min(DVB, P.dv - c0);
  let row = min(i, P.n - 1u);
  var q: array<f32, D>;
  for (var f = 0u; f < P.d; f++) { q[f] = Q[row * P.d + f]; }
  var acc: array<f32, DVB>;
  var m = -3.0e38;
  var l = 0.0;
  // causal: the workgroup's last row sees keys up to itself; the same for every invocation
  var end = P.n;
  if (P.causal != 0u) { end = min(P.n, wg.x * WG + WG); }
  for (var j0 = 0u; j0 < end; j0 += T) {
    for (var x = li; x < T * D; x += WG) {
      let j = j0 + x / D;
      let f = x % D;
      var e = 0.0;
      if (j < P.n && f < P.d) { e = K[j * P.d + f]; }
      kt[x] = e;
    }
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
      if (P.causal == 0u || j <= i) {
        var s = 0.0;
        for (var f = 0u; f < P.d; f++) { s = fma(q[f], kt[jj * D + f], s); }
        s = s * P.scale;
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

function softmaxWeightsWgsl() {
  return /* wgsl */ `
struct Params { n: u32, d: u32, dv: u32, causal: u32, scale: f32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read> K: array<f32>;
@group(0) @binding(3) var<storage, read> LSE: array<f32>;
@group(0) @binding(4) var<storage, read_write> W: array<f32>;

@compute @workgroup_size(8, 8)
fn weights(@builtin(global_invocation_id) g: vec3u) {
  let j = g.x;
  let i = g.y;
  if (i >= P.n || j >= P.n) { return; }
  var a = 0.0;
  if (P.causal == 0u || j <= i) {
    var s = 0.0;
    for (var f = 0u; f < P.d; f++) { s = fma(Q[i * P.d + f], K[j * P.d + f], s); }
    a = exp(s * P.scale - LSE[i]);
  }
  W[i * P.n + j] = a;
}
`;
}

function softmaxParams({ n, d, dv }, opt) {
  const params = new ArrayBuffer(32);
  new Uint32Array(params, 0, 4).set([n, d, dv, opt.causal ? 1 : 0]);
  new Float32Array(params, 16, 1)[0] = opt.scale ?? 1 / Math.sqrt(d);
  return params;
}

function planSoftmax(call) {
  const { variant, opt, dims } = call;
  if (variant.id !== 'softmax') return notYet(variant, 'the softmax family\'s dot-product logits are on WebGPU; the synthesizer\'s logit sources come next');
  const { n, d, dv } = dims;
  if (d > MAX_D) throw new AttnError('UNSUPPORTED', `${variant.id} on WebGPU takes d up to ${MAX_D}, got d = ${d}; use the WebAssembly builds (init())`);
  const D = shapeClass(d), DVB = Math.min(COLUMN_BLOCK, shapeClass(dv));
  const T = Math.max(1, Math.min(MAX_TILE, Math.floor(TILE_FLOATS / (D + DVB))));
  const outputs = [{ name: 'output', count: n * dv, cols: dv }, { name: 'lse', count: n, cols: 1, internal: !opt.keep }];
  const passes = [{
    pipeline: { key: `softmax.forward.${D}.${DVB}.${T}`, code: () => softmaxForwardWgsl(D, DVB, T), entry: 'forward' },
    bindings: ['params', 'q', 'k', 'v', 'output', 'lse'],
    workgroups: [Math.ceil(n / WORKGROUP), Math.ceil(dv / DVB), 1],
  }];
  if (opt.weights) {
    outputs.push({ name: 'weights', count: n * n, cols: n });
    passes.push({
      pipeline: { key: 'softmax.weights', code: softmaxWeightsWgsl, entry: 'weights' },
      bindings: ['params', 'q', 'k', 'lse', 'weights'],
      workgroups: [Math.ceil(n / 8), Math.ceil(n / 8), 1],
    });
  }
  return { params: softmaxParams(dims, opt), outputs, passes };
}

function notYet(variant, what) {
  throw new AttnError('UNSUPPORTED', `${variant.id} does not run on WebGPU yet (${what}); use the WebAssembly builds (init()) for it`);
}

// One entry per family of the registry (ATTN_FAMILY_LIST): a function from a checked call to its plan.
export const FAMILY_PLANS = {
  softmax: planSoftmax,
  synthesizer: (call) => notYet(call.variant, 'the synthesizer\'s logit sources come after dot-product softmax'),
  linear: (call) => notYet(call.variant, 'the linear family comes after the softmax family'),
  fixed: (call) => notYet(call.variant, 'the fixed patterns come after the softmax family'),
  recurrent: (call) => notYet(call.variant, 'the recurrent family comes after the linear family'),
};

/** Whether a variant of this family runs on WebGPU at all yet (the page's and warmup's question). */
export function onWebGPU(variant) {
  return variant.id === 'softmax';
}

/**
 * The plan of one checked call (lab[CHECK_CALL]'s result): { params: ArrayBuffer (the uniform),
 * outputs: [{ name, count, cols, internal? }], passes: [{ pipeline: { key, code(), entry },
 * bindings: names of params, inputs and outputs, workgroups: [x, y, z] }] }. Throws UNSUPPORTED
 * for what is not on WebGPU (yet) and for options it does not run.
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
