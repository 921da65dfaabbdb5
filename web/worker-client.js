// The page's side of its workers, one protocol for both: web/worker.js (the Explore view's calls)
// and web/experiment-worker.js (one per run of the Experiment view); their side is
// web/worker-host.js. A request { id, type, ... } is answered by one reply { id, ok: true, ... }
// or { id, ok: false, error: { code, name, message } }, which settles call()'s promise; before
// it, the worker may post events { id, type, ... } (progress, started, ...), which go to the
// call's own handler, else to the client's. control() posts a message with no id and no reply.

const EXPLORE_WORKER_URL = new URL('./worker.js', import.meta.url);

export class WorkerClient {
  /**
   * url: the worker module (the Explore worker unless given); onEvent(message): the events no
   * call of its own handles; what: the worker as messages name it.
   */
  constructor(url = EXPLORE_WORKER_URL, { onEvent = null, what = 'the worker' } = {}) {
    this.w = new Worker(url, { type: 'module' });
    this.next = 1;
    this.pending = new Map();
    this.onEvent = onEvent;
    this.terminated = false; // after terminate(), call() rejects at once (a terminated worker never answers)
    this.w.onmessage = (e) => {
      const m = e.data;
      const p = this.pending.get(m.id);
      if (m.type) return (p?.onEvent ?? this.onEvent)?.(m);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m);
      else p.reject(Object.assign(new Error(m.error.message), m.error));
    };
    this.w.onerror = (e) => {
      e.preventDefault?.();
      const err = Object.assign(new Error(`${what} failed: ${e.message || 'could not start (is dist/attnlab.js built?)'}`), { code: 'LOAD' });
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
  }

  /** Sends a request; its reply settles the promise. onEvent(message): this call's events. */
  call(type, payload = {}, transfer = [], onEvent = null) {
    if (this.terminated) return Promise.reject(Object.assign(new Error('cancelled: this worker has ended'), { code: 'CANCELLED' }));
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onEvent });
      this.w.postMessage({ id, type, ...payload }, transfer);
    });
  }

  /** A control message (pause, resume, ...): handled by the worker at once, never answered. */
  control(type) {
    if (!this.terminated) this.w.postMessage({ type });
  }

  /** Ends the worker; the calls in flight reject with CANCELLED. */
  terminate() {
    this.terminated = true;
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
