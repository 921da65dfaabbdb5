// Contender tfjs-wasm (softmax only): @tensorflow/tfjs-core with @tensorflow/tfjs-backend-wasm,
// one thread. A devDependency used only by the benchmark.
import { createRequire } from 'node:module';
import path from 'node:path';
import { externalContender } from './external.mjs';

const require = createRequire(import.meta.url);

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
    tf,
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

export const tfjsWasm = (cfg) => externalContender('tfjs-wasm', async () => {
  const tfj = await loadTfjs();
  return {
    impl: tfj,
    meta: { version: tfj.version, backend: 'wasm', simd: tfj.simd, threads: tfj.threads, op: 'tf.matMul(tf.softmax(tf.mul(tf.matMul(q, tf.transpose(k)), scale)), v), dataSync()' },
    banner: `@tensorflow/tfjs-backend-wasm ${tfj.version}: loaded (simd ${tfj.simd}, threads ${tfj.threads})`,
  };
}, cfg);
