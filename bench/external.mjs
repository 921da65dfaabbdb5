// The two third-party contenders for `softmax`, each on its WebAssembly backend with one thread:
// onnxruntime-web (a small ONNX graph, see onnx-graph.mjs) and @tensorflow/tfjs-backend-wasm.
// Both are devDependencies used only by the benchmark.
import { createRequire } from 'node:module';
import path from 'node:path';
import { attentionModel } from './onnx-graph.mjs';

const require = createRequire(import.meta.url);

/**
 * onnxruntime-web, wasm execution provider, one thread.
 * Returns { name, version, prepare(n, d, dv, q, k, v) -> { run: async () => Float32Array, dispose } }.
 */
export async function loadOrt({ d, dv }) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  if ('simd' in ort.env.wasm) ort.env.wasm.simd = true; // older releases; 1.30 always loads its SIMD build
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(attentionModel({ d, dv }), {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  return {
    name: 'onnxruntime-web',
    version: ort.env.versions?.web ?? require('onnxruntime-web/package.json').version,
    prepare(n, d_, dv_, q, k, v) {
      const feeds = {
        q: new ort.Tensor('float32', q, [n, d_]),
        k: new ort.Tensor('float32', k, [n, d_]),
        v: new ort.Tensor('float32', v, [n, dv_]),
      };
      return {
        async run() {
          const out = await session.run(feeds);
          return out.y.data;
        },
        memoryBytes: () => null, // the wasm heap is not exposed
        dispose() {},
      };
    },
    async dispose() { await session.release(); },
  };
}

/**
 * @tensorflow/tfjs-core + @tensorflow/tfjs-backend-wasm, one thread (the non-threaded SIMD binary).
 * The op is tf.matMul(tf.softmax(tf.mul(tf.matMul(q, tf.transpose(k)), scale)), v): the transpose
 * is explicit because matMul(q, k, false, true) takes a path about 8x slower in this backend.
 */
export async function loadTfjs() {
  const tf = await import('@tensorflow/tfjs-core');
  const tfw = await import('@tensorflow/tfjs-backend-wasm');
  const dist = path.join(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist') + path.sep;
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false); // load tfjs-backend-wasm-simd.wasm, no workers
  tfw.setWasmPaths(dist);
  tfw.setThreadsCount?.(1);
  const ok = await tf.setBackend('wasm');
  if (!ok || tf.getBackend() !== 'wasm') throw new Error('tf.setBackend("wasm") failed');
  await tf.ready();
  const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
  return {
    name: 'tfjs-backend-wasm',
    version: require('@tensorflow/tfjs-backend-wasm/package.json').version,
    simd,
    threads: tfw.getThreadsCount?.() ?? 1,
    prepare(n, d, dv, q, k, v, scale = 1 / Math.sqrt(d)) {
      const tq = tf.tensor2d(q, [n, d]);
      const tk = tf.tensor2d(k, [n, d]);
      const tv = tf.tensor2d(v, [n, dv]);
      return {
        run() {
          const y = tf.tidy(() => tf.matMul(tf.softmax(tf.mul(tf.matMul(tq, tf.transpose(tk)), scale)), tv));
          const data = y.dataSync();
          y.dispose();
          return data;
        },
        // WebAssembly memory never shrinks: this is the high-water mark of every size run so far
        memoryBytes: () => tf.backend().wasm?.HEAPU8?.buffer?.byteLength ?? null,
        dispose() { tq.dispose(); tk.dispose(); tv.dispose(); },
      };
    },
    async dispose() {},
  };
}
