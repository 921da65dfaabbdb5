// The page's side of web/worker.js: numbered requests, replies as promises, progress callbacks.

const WORKER_URL = new URL('./worker.js', import.meta.url);

export class WorkerClient {
  constructor() {
    this.w = new Worker(WORKER_URL, { type: 'module' });
    this.next = 1;
    this.pending = new Map();
    this.w.onmessage = (e) => {
      const m = e.data;
      const p = this.pending.get(m.id);
      if (!p) return;
      if (m.type === 'progress') return p.onProgress?.(m.point);
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m);
      else p.reject(Object.assign(new Error(m.error.message), m.error));
    };
    this.w.onerror = (e) => {
      e.preventDefault?.();
      const err = Object.assign(new Error(`the worker failed: ${e.message || 'could not start (is dist/attnlab.js built?)'}`), { code: 'LOAD' });
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
  }
  call(type, payload = {}, transfer = [], onProgress = null) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      this.w.postMessage({ id, type, ...payload }, transfer);
    });
  }
  terminate() {
    this.w.terminate();
    const err = Object.assign(new Error('cancelled'), { code: 'CANCELLED' });
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

/** Copies the Float32Arrays of `inputs` so they can be transferred to the worker. */
export function cloneInputs(inputs) {
  const out = {};
  const transfer = [];
  for (const [k, v] of Object.entries(inputs)) {
    if (v instanceof Float32Array) {
      const c = v.slice();
      out[k] = c;
      transfer.push(c.buffer);
    } else out[k] = v;
  }
  return { inputs: out, transfer };
}
