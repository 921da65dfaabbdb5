// What the two third-party contenders (onnxruntime-web.mjs, tfjs-wasm.mjs) share: each implements
// softmax attention only, as prepare(n, d, dv, q, k, v) -> { run, memoryBytes, dispose }, and is
// timed and checked the same way.
import { measureRobust } from './measure.mjs';

/**
 * A contender around a third-party implementation. load() -> { impl, meta, banner }; impl has
 * prepare(...) and dispose(). Call init() before use: a library that cannot load carries `error`.
 */
export function externalContender(name, load, { policy }) {
  let impl = null;
  return {
    name,
    error: null,
    meta: null,
    banner: null,
    async init() {
      try {
        const r = await load();
        impl = r.impl; this.meta = r.meta; this.banner = r.banner;
      } catch (e) { this.error = e.message; }
      return this;
    },
    supports: (variant) => variant.id === 'softmax',
    async measure(job) {
      const { n, d, dv } = job.dims;
      const { q, k, v } = job.inputs();
      const p = impl.prepare(n, d, dv, q, k, v);
      try {
        const m = await measureRobust(() => p.run(), policy, { huge: job.huge });
        const memory = p.memoryBytes();
        return { ...m, memory, memoryKind: memory == null ? 'not exposed' : 'wasm heap high-water mark (sizes run in increasing order)' };
      } finally { p.dispose(); }
    },
    /** For the interleaved rounds: { fn, dispose } on softmax inputs, or null. */
    runner(ins, dims) {
      if (!impl) return null;
      const p = impl.prepare(dims.n, dims.d, dims.dv, ins.q, ins.k, ins.v);
      return { fn: () => p.run(), dispose: () => p.dispose() };
    },
    async dispose() { await impl?.dispose(); },
  };
}
