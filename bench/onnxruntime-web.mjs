// Contender onnxruntime-web (softmax only): the wasm execution provider, one thread, running a
// small ONNX graph (onnx-graph.mjs). A devDependency used only by the benchmark.
import { createRequire } from 'node:module';
import { externalContender } from './external.mjs';
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

export const onnxruntimeWeb = (cfg) => externalContender('onnxruntime-web', async () => {
  const ort = await loadOrt(cfg.dims);
  return {
    impl: ort,
    meta: { version: ort.version, backend: 'wasm', threads: 1, graph: 'Transpose(k) → MatMul(q, kT) → Mul(scale) → Softmax(axis=-1) → MatMul(·, v), opset 13, built by bench/onnx-graph.mjs' },
    banner: `onnxruntime-web ${ort.version}: loaded`,
  };
}, cfg);
