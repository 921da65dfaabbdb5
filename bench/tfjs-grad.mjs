// The tfjs-wasm gradient of softmax attention, for the backward-pass comparison: tf.grads of
// sum(dO ⊙ matMul(softmax(mul(matMul(q, transpose(k)), scale)), v)) with respect to q, k, v, on
// @tensorflow/tfjs-backend-wasm, one thread (the same loading as tfjs-wasm.mjs).
// tfjs-core's Node build registers no gradients (the union package @tensorflow/tfjs does, through
// tfjs-core/dist/register_all_gradients.js, an ES module Node cannot load as shipped), so the
// gradients of the five kernels this graph uses are registered here, written as tfjs-core's own
// gradients/{Sum,Multiply,BatchMatMul,Softmax,Transpose}_grad.js (same ops, same transposes).
import { loadTfjs } from './tfjs-wasm.mjs';

function gradConfigs(tf) {
  const { mul, sum, sub, reshape, ones, cast, matMul, transpose } = tf;
  const reduceTo = (res, shape, outShape) => {
    const axes = tf.broadcast_util.getReductionAxes(shape, outShape);
    return axes.length ? reshape(sum(res, axes), shape) : res;
  };
  return [
    { kernelName: tf.Sum, inputsToSave: ['x'], gradFunc: (dy, [x], { axis }) => {
      const shape = x.shape.slice();
      for (const a of tf.util.parseAxisParam(axis, x.shape)) shape[a] = 1;
      const der = mul(reshape(dy, shape), ones(x.shape, 'float32'));
      return { x: () => der };
    } },
    { kernelName: tf.Multiply, inputsToSave: ['a', 'b'], gradFunc: (dy, [a, b]) => {
      const out = tf.broadcast_util.assertAndGetBroadcastShape(a.shape, b.shape);
      return { a: () => reduceTo(mul(dy, cast(b, 'float32')), a.shape, out), b: () => reduceTo(mul(dy, cast(a, 'float32')), b.shape, out) };
    } },
    { kernelName: tf.BatchMatMul, inputsToSave: ['a', 'b'], gradFunc: (dy, [a, b], { transposeA: ta, transposeB: tb }) => {
      if (!ta && !tb) return { a: () => matMul(dy, b, false, true), b: () => matMul(a, dy, true, false) };
      if (!ta && tb) return { a: () => matMul(dy, b, false, false), b: () => matMul(dy, a, true, false) };
      if (ta && !tb) return { a: () => matMul(b, dy, false, true), b: () => matMul(a, dy, false, false) };
      return { a: () => matMul(b, dy, true, true), b: () => matMul(dy, a, true, true) };
    } },
    { kernelName: tf.Softmax, outputsToSave: [true], gradFunc: (dy, [y], { dim }) => {
      const dyTimesY = mul(dy, y);
      return { logits: () => sub(dyTimesY, mul(sum(dyTimesY, [dim], true), y)) };
    } },
    { kernelName: tf.Transpose, gradFunc: (dy, saved, { perm }) => ({ x: () => transpose(dy, tf.backend_util.getUndoAxesPermutation(perm)) }) },
  ];
}

/** Registers each gradient tfjs does not have yet; returns the kernel names registered here. */
function registerGradients(tf) {
  const added = [];
  for (const g of gradConfigs(tf)) {
    if (tf.getGradient(g.kernelName)) continue;
    tf.registerGradient(g);
    added.push(g.kernelName);
  }
  return added;
}

/**
 * { meta, prepare(n, d, dv, q, k, v, dO) -> { run() -> { q, k, v } (Float32Arrays), memoryBytes, dispose } }.
 * Throws when tfjs cannot load.
 */
export async function loadTfjsGrad() {
  const tfj = await loadTfjs();
  const tf = tfj.tf;
  const registered = registerGradients(tf);
  const meta = {
    version: tfj.version, backend: 'wasm', simd: tfj.simd, threads: tfj.threads,
    op: 'tf.grads((q, k, v) => tf.sum(tf.mul(tf.matMul(tf.softmax(tf.mul(tf.matMul(q, tf.transpose(k)), scale)), v), dO))), dataSync() of the three gradients',
    gradients_registered_by_bench: registered,
  };
  return {
    meta,
    prepare(n, d, dv, q, k, v, dO, scale = 1 / Math.sqrt(d)) {
      const t = [tf.tensor2d(q, [n, d]), tf.tensor2d(k, [n, d]), tf.tensor2d(v, [n, dv])];
      const tdO = tf.tensor2d(dO, [n, dv]);
      const f = (a, b, c) => tf.sum(tf.mul(tf.matMul(tf.softmax(tf.mul(tf.matMul(a, tf.transpose(b)), scale)), c), tdO));
      const grads = tf.grads(f);
      return {
        run() {
          const gs = tf.tidy(() => grads(t));
          const [gq, gk, gv] = gs.map((x) => x.dataSync());
          for (const x of gs) x.dispose();
          return { q: gq, k: gk, v: gv };
        },
        memoryBytes: () => tf.backend().wasm?.HEAPU8?.buffer?.byteLength ?? null,
        dispose() { for (const x of [...t, tdO]) x.dispose(); },
      };
    },
  };
}
