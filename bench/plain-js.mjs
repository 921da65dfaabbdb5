// Plain-JavaScript attention: what you would write by hand, Float32Array storage and simple loops
// (the arithmetic is JavaScript's float64, rounded to float32 when stored). The baseline the
// scalar WebAssembly build is compared with. Contender `plain-js` (softmax and linear only).
import { measureRobust } from './measure.mjs';

/** Scaled dot-product softmax attention, one row of logits at a time (n floats of scratch). */
export function softmaxAttention(n, d, dv, q, k, v, scale = 1 / Math.sqrt(d)) {
  const y = new Float32Array(n * dv);
  const p = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const qi = i * d;
    let max = -Infinity;
    for (let j = 0; j < n; j++) {
      const kj = j * d;
      let s = 0;
      for (let c = 0; c < d; c++) s += q[qi + c] * k[kj + c];
      s *= scale;
      p[j] = s;
      if (s > max) max = s;
    }
    let sum = 0;
    for (let j = 0; j < n; j++) {
      const e = Math.exp(p[j] - max);
      p[j] = e;
      sum += e;
    }
    const inv = 1 / sum;
    const yi = i * dv;
    for (let j = 0; j < n; j++) {
      const w = p[j] * inv;
      const vj = j * dv;
      for (let c = 0; c < dv; c++) y[yi + c] += w * v[vj + c];
    }
  }
  return y;
}

/** Bytes softmaxAttention allocates (output + scratch); the inputs are the caller's. */
export const softmaxBytes = (n, d, dv) => 4 * (n * dv + n);

const phi = (t) => (t > 0 ? t + 1 : Math.exp(t));

/** Linear attention with phi = elu + 1: S = sum_j phi(k_j) v_j^T, z = sum_j phi(k_j). */
export function linearAttention(n, d, dv, q, k, v, eps = 1e-6) {
  const S = new Float32Array(d * dv);
  const z = new Float32Array(d);
  const f = new Float32Array(d);
  for (let j = 0; j < n; j++) {
    const kj = j * d, vj = j * dv;
    for (let c = 0; c < d; c++) {
      const fk = phi(k[kj + c]);
      z[c] += fk;
      const row = c * dv;
      for (let e = 0; e < dv; e++) S[row + e] += fk * v[vj + e];
    }
  }
  const y = new Float32Array(n * dv);
  for (let i = 0; i < n; i++) {
    const qi = i * d, yi = i * dv;
    let den = 0;
    for (let c = 0; c < d; c++) {
      f[c] = phi(q[qi + c]);
      den += f[c] * z[c];
    }
    for (let c = 0; c < d; c++) {
      const fc = f[c], row = c * dv;
      for (let e = 0; e < dv; e++) y[yi + e] += fc * S[row + e];
    }
    const inv = 1 / (den + eps);
    for (let e = 0; e < dv; e++) y[yi + e] *= inv;
  }
  return y;
}

export const linearBytes = (n, d, dv) => 4 * (n * dv + d * dv + 2 * d);

const KERNELS = {
  softmax: { run: softmaxAttention, bytes: softmaxBytes },
  linear: { run: linearAttention, bytes: linearBytes },
};

/**
 * The plain-js contender. No warm-up at n >= hugeN (a call takes seconds and the function is
 * already optimised from the smaller sizes).
 */
export function plainJs({ policy, hugeN }) {
  return {
    name: 'plain-js',
    error: null,
    meta: null,
    supports: (variant) => variant.id in KERNELS,
    async measure(job) {
      const k = KERNELS[job.variant.id];
      const { n, d, dv } = job.dims;
      const { q, k: kk, v } = job.inputs();
      const m = await measureRobust(() => k.run(n, d, dv, q, kk, v), policy, { huge: n >= hugeN });
      return { ...m, memory: k.bytes(n, d, dv), memoryKind: 'bytes allocated per call (output + scratch)' };
    },
    dispose() {},
  };
}
