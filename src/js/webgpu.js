// attnlab/webgpu — attention on the visitor's GPU.
//
//   import { initWebGPU } from 'attnlab/webgpu';
//   const gpu = await initWebGPU();             // rejects with AttnError UNSUPPORTED where there is no WebGPU
//   const { output } = await gpu.attention('softmax', { n, d, dv, q, k, v }, { causal: true });
//
// The same variant ids, inputs, options, defaults and errors as the WebAssembly instance: every
// call is read and checked by a WebAssembly instance of the package's own (init(), one thread)
// before any GPU work, so a bad input rejects with the error lab.attention() throws, word for
// word. The kernels are webgpu-kernels.js's; pipelines are compiled once per variant and shape
// class and cached. Nothing runs at import; the main entry ('attnlab') never touches WebGPU.

import { AttnError, describe, overflowError } from './errors.js';
import { init } from './attnlab.js';
import { CHECK_CALL, RESIDENT } from './internal.js';
import { isTensor, onWebGPU, planCall } from './webgpu-kernels.js';

export { AttnError };

// The limits a call may need beyond WebGPU's defaults: asked for at the adapter's own values.
const LIMITS = ['maxStorageBufferBindingSize', 'maxBufferSize'];
const POOL_BYTES = 256 * 2 ** 20; // idle buffers kept for the next calls, at most
const POWER = ['low-power', 'high-performance'];

/**
 * An instance on the GPU the browser offers. Rejects with UNSUPPORTED (saying why) where there is
 * no navigator.gpu (Node; a browser without WebGPU; a page that is not a secure context) or no
 * adapter (WebGPU switched off, a blocklisted driver).
 * @param {{ powerPreference?: 'low-power' | 'high-performance' }} [options]
 */
export async function initWebGPU(options = {}) {
  if (options === null || typeof options !== 'object') throw new AttnError('UNKNOWN', 'initWebGPU() takes an options object');
  for (const key of Object.keys(options)) {
    if (key !== 'powerPreference') throw new AttnError('UNKNOWN', `unknown initWebGPU option "${key}"; expected powerPreference`);
  }
  const power = options.powerPreference;
  if (power !== undefined && !POWER.includes(power)) {
    throw new AttnError('VALUE', `powerPreference must be "low-power" or "high-performance", got ${describe(power)}`);
  }
  const gpu = globalThis.navigator?.gpu;
  if (!gpu) {
    throw new AttnError('UNSUPPORTED', globalThis.process?.versions?.node
      ? 'WebGPU is not available here: this runtime has no navigator.gpu (Node has no WebGPU); use init() for the WebAssembly builds'
      : 'WebGPU is not available in this browser (no navigator.gpu): it needs a browser with WebGPU and a secure context ' +
        '(https or http://localhost); use init() for the WebAssembly builds');
  }
  let adapter;
  try {
    adapter = await gpu.requestAdapter(power ? { powerPreference: power } : undefined);
  } catch (err) {
    throw new AttnError('UNSUPPORTED', `the browser refused a WebGPU adapter (${err?.message ?? err}); use init() for the WebAssembly builds`);
  }
  if (!adapter) {
    throw new AttnError('UNSUPPORTED', 'no WebGPU adapter: the browser has WebGPU but offers no GPU to it (switched off, a blocklisted ' +
      'driver, or a platform where it is still behind a flag); use init() for the WebAssembly builds');
  }
  const requiredLimits = {};
  for (const name of LIMITS) requiredLimits[name] = adapter.limits[name];
  // the GPU's own time of a call's kernels, where the adapter can tell it
  const requiredFeatures = adapter.features.has('timestamp-query') ? ['timestamp-query'] : [];
  let device;
  try {
    device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
  } catch (err) {
    throw new AttnError('UNSUPPORTED', `the WebGPU adapter gave no device (${err?.message ?? err}); use init() for the WebAssembly builds`);
  }
  let lab;
  try {
    lab = await init({ threads: 1, fresh: true }); // the registry, and the checks of every call
  } catch (err) {
    device.destroy();
    throw err;
  }
  return new WebGPUInstance(adapter, device, lab);
}

// Buffers in power-of-two sizes from 256 bytes, reused across calls (creating and destroying a
// buffer per array per call costs more than a small call's kernels); at most POOL_BYTES idle, the
// rest destroyed. A buffer comes back only from a call that ended normally.
class BufferPool {
  #device;
  #idle = new Map(); // `${usage}:${size}` -> idle buffers
  #idleBytes = 0;

  constructor(device) {
    this.#device = device;
  }

  take(bytes, usage, limit) {
    let size = 256;
    while (size < bytes) size *= 2;
    if (size > limit) size = Math.ceil(bytes / 4) * 4; // past the limit's power of two: exact
    const list = this.#idle.get(`${usage}:${size}`);
    if (list?.length) {
      this.#idleBytes -= size;
      return list.pop();
    }
    return this.#device.createBuffer({ size, usage });
  }

  give(buffer) {
    if (this.#idleBytes + buffer.size > POOL_BYTES) return buffer.destroy();
    const key = `${buffer.usage}:${buffer.size}`;
    if (!this.#idle.has(key)) this.#idle.set(key, []);
    this.#idle.get(key).push(buffer);
    this.#idleBytes += buffer.size;
  }

  clear() {
    for (const list of this.#idle.values()) for (const b of list) b.destroy();
    this.#idle.clear();
    this.#idleBytes = 0;
  }
}

class WebGPUInstance {
  #device;
  #lab;
  #pool;
  #timestamps = null; // a query set of two, where the device has timestamp-query
  #gpuMs = null;
  #tensors = new WeakSet(); // the resident tensors this instance made and has not released
  #pipelines = new Map(); // pipeline key -> Promise<GPUComputePipeline>
  #lost = null; // why the device is gone (BROKEN)
  #disposed = false;

  constructor(adapter, device, lab) {
    this.#device = device;
    this.#lab = lab;
    this.#pool = new BufferPool(device);
    if (device.features.has('timestamp-query')) this.#timestamps = device.createQuerySet({ type: 'timestamp', count: 2 });
    const info = adapter.info ?? {};
    /** What the browser says of its GPU (fields it keeps private are empty strings). */
    this.adapter = Object.freeze({ vendor: info.vendor ?? '', architecture: info.architecture ?? '', description: info.description ?? '' });
    this.variants = lab.variants;
    this.options = lab.options;
    this.dims = lab.dims;
    /** The variant ids that run on WebGPU in this version; the others reject with UNSUPPORTED. */
    this.ready = Object.freeze(lab.variants.filter(onWebGPU).map((v) => v.id));
    device.lost.then((why) => {
      if (!this.#disposed) this.#lost = `the GPU device was lost (${why.reason ?? 'unknown'}: ${why.message}); call initWebGPU() again for a new instance`;
    });
  }

  /** How many pipelines this instance has compiled: a call that raises it waited for the shader compiler. */
  get pipelinesCompiled() {
    return this.#pipelines.size;
  }

  /** The GPU's own time of the last call's kernels in ms (timestamp-query), or null where the adapter cannot tell it. */
  get gpuTime() {
    return this.#gpuMs;
  }

  /**
   * lab.attention()'s result, on the GPU: { output }, weights with weights: true, state (and
   * normalizer) with state: true.
   * @returns {Promise<{ output: Float32Array, weights?: Float32Array, state?: Float32Array, normalizer?: Float32Array }>}
   */
  async attention(id, inputs, options = {}) {
    this.#alive();
    return this.#run(this.#lab[CHECK_CALL](id, inputs, options), false);
  }

  // One checked call: its plan's buffers (from the pool; a write that is a resident tensor copied
  // on the GPU, a buffer that is one whole tensor bound as it is), its passes, then its outputs,
  // read back and checked or (resident) handed to the caller as tensors.
  async #run(call, resident) {
    const plan = planCall(call, { resident });
    const device = this.#device;
    const limit = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
    for (const b of plan.buffers) {
      if (b.count * 4 > limit) {
        throw new AttnError('UNSUPPORTED', `${call.variant.id} with n = ${call.dims.n} needs a GPU buffer of ${mib(b.count * 4)} for ` +
          `${b.what ?? b.name}, more than this adapter allows (${mib(limit)})` +
          (b.name === 'weights' ? '; request weights only for smaller n' : '; use a smaller n or the WebAssembly builds'));
      }
    }
    // every input goes up now, before the first await: the caller's arrays are read in this turn
    const buffers = new Map(), owned = [], handed = [], copies = [];
    let done = false; // the call ended normally: its buffers go back to the pool
    const make = (name, bytes, usage) => {
      const buffer = this.#pool.take(bytes, usage, limit);
      owned.push(buffer);
      buffers.set(name, buffer);
      return buffer;
    };
    try {
      for (const b of plan.buffers) {
        if (b.uniform) {
          device.queue.writeBuffer(make(b.name, b.uniform.byteLength, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST), 0, b.uniform);
          continue;
        }
        const [first] = b.writes ?? [];
        if (b.writes?.length === 1 && isTensor(first.data) && first.offset === 0 && first.data.count === b.count) {
          buffers.set(b.name, first.data.buffer); // one whole tensor: bound as it is
          continue;
        }
        let buffer;
        if (resident && b.output) { // the caller's from now on: its own buffer, not the pool's
          buffer = this.#newTensorBuffer(b.count);
          handed.push({ name: b.name, buffer, count: b.count });
          buffers.set(b.name, buffer);
        } else {
          buffer = make(b.name, b.count * 4, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST);
        }
        for (const w of b.writes ?? []) {
          if (isTensor(w.data)) copies.push({ from: w.data.buffer, to: buffer, offset: w.offset, count: w.data.count });
          else device.queue.writeBuffer(buffer, w.offset * 4, w.data);
        }
      }
      const pipelines = await Promise.all(plan.passes.map((p) => this.#pipeline(p.pipeline)));
      this.#alive();
      const encoder = device.createCommandEncoder();
      for (const c of copies) encoder.copyBufferToBuffer(c.from, 0, c.to, c.offset * 4, c.count * 4);
      const last = plan.passes.length - 1, querySet = resident ? null : this.#timestamps;
      plan.passes.forEach((pass, i) => {
        const layout = pipelines[i].getBindGroupLayout(0);
        // bound by range: a pooled buffer may be larger than its array
        const entries = pass.bindings.map((name, binding) => ({ binding, resource: { buffer: buffers.get(name), size: boundBytes(plan, name) } }));
        const group = device.createBindGroup({ layout, entries });
        const stamps = querySet && (i === 0 || i === last)
          ? { timestampWrites: { querySet, ...(i === 0 ? { beginningOfPassWriteIndex: 0 } : {}), ...(i === last ? { endOfPassWriteIndex: 1 } : {}) } } : {};
        const compute = encoder.beginComputePass(stamps);
        compute.setPipeline(pipelines[i]);
        compute.setBindGroup(0, group);
        compute.dispatchWorkgroups(...pass.workgroups);
        compute.end();
      });
      if (resident) {
        device.queue.submit([encoder.finish()]);
        const result = {};
        for (const h of handed) result[h.name] = this.#tensorOf(h.buffer, h.count);
        done = true;
        return result;
      }
      const shown = plan.buffers.filter((b) => b.output);
      const outBytes = shown.reduce((s, o) => s + o.count * 4, 0);
      const stampsAt = Math.ceil(outBytes / 8) * 8, readBytes = querySet ? stampsAt + 16 : outBytes; // two u64 after the outputs
      const read = make('read-back', readBytes, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
      let at = 0;
      for (const o of shown) {
        encoder.copyBufferToBuffer(buffers.get(o.name), 0, read, at, o.count * 4);
        at += o.count * 4;
      }
      if (querySet) {
        const stamps = make('timestamps', 16, GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC);
        encoder.resolveQuerySet(querySet, 0, 2, stamps, 0);
        encoder.copyBufferToBuffer(stamps, 0, read, stampsAt, 16);
      }
      device.queue.submit([encoder.finish()]);
      try {
        await read.mapAsync(GPUMapMode.READ);
      } catch (err) {
        this.#alive();
        throw new AttnError('BROKEN', `the GPU did not finish the call (${err?.message ?? err})`);
      }
      // each output copied once, straight out of the mapping, into an array of its own
      const range = read.getMappedRange(0, readBytes), result = {};
      let overflow = null;
      try {
        if (querySet) {
          const [begin, end] = new BigUint64Array(range, stampsAt, 2);
          this.#gpuMs = end >= begin ? Number(end - begin) / 1e6 : null;
        }
        at = 0;
        for (const o of shown) {
          const values = new Float32Array(range, at, o.count).slice();
          at += o.count * 4;
          const bad = values.findIndex((x) => x - x !== 0);
          if (bad >= 0) {
            overflow = overflowError(call.variant, call.opt, o.name, bad, o.cols, values[bad]);
            break;
          }
          result[o.name] = values;
        }
      } finally {
        read.unmap();
      }
      if (overflow) throw overflow;
      done = true;
      return result;
    } finally {
      for (const b of owned) {
        if (done && !this.#disposed && !this.#lost) this.#pool.give(b);
        else b.destroy();
      }
      if (!done) for (const h of handed) h.buffer.destroy();
    }
  }

  /*
   * Resident tensors: arrays that stay on the GPU between calls, for what builds on attention
   * (gradients, training) without a read-back per call. Internal (src/js/internal.js), not part of
   * the public API:
   *   upload(Float32Array) -> tensor        read(tensor) -> Promise<Float32Array>        release(tensor)
   *   attention(id, inputs, options) -> Promise<{ output, weights?, state?, normalizer? }>, tensors:
   * inputs may hold tensors in place of arrays. The call's shapes and options are checked as
   * attention()'s are (the checks see zeros of each tensor's length); the tensors' values are the
   * GPU's and are not checked, nor are the outputs (read them to see them). A tensor belongs to
   * the instance that made it; the caller releases it (dispose() frees the device and with it all).
   */
  get [RESIDENT]() {
    return {
      upload: (data) => {
        this.#alive();
        if (!(data instanceof Float32Array)) throw new AttnError('VALUE', `upload takes a Float32Array, got ${describe(data)}`);
        const buffer = this.#newTensorBuffer(data.length);
        this.#device.queue.writeBuffer(buffer, 0, data);
        return this.#tensorOf(buffer, data.length);
      },
      read: async (tensor) => {
        this.#alive();
        this.#own(tensor, 'read');
        const device = this.#device, bytes = tensor.count * 4;
        const read = device.createBuffer({ size: Math.max(16, bytes), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
        try {
          const encoder = device.createCommandEncoder();
          encoder.copyBufferToBuffer(tensor.buffer, 0, read, 0, bytes);
          device.queue.submit([encoder.finish()]);
          await read.mapAsync(GPUMapMode.READ);
          const values = new Float32Array(read.getMappedRange().slice(0, bytes));
          read.unmap();
          return values;
        } finally {
          read.destroy();
        }
      },
      release: (tensor) => {
        this.#own(tensor, 'release');
        this.#tensors.delete(tensor);
        tensor.buffer.destroy();
      },
      attention: async (id, inputs, options = {}) => {
        this.#alive();
        const tensors = new Map(), standIns = {};
        for (const [name, value] of Object.entries(inputs ?? {})) {
          if (isTensor(value)) {
            this.#own(value, `attention's ${name}`);
            tensors.set(name, value);
            standIns[name] = new Float32Array(value.count);
          } else standIns[name] = value;
        }
        const call = this.#lab[CHECK_CALL](id, inputs === null || typeof inputs !== 'object' ? inputs : standIns, options);
        for (const a of call.arrays) if (tensors.has(a.name)) a.data = tensors.get(a.name);
        return this.#run(call, true);
      },
    };
  }

  #newTensorBuffer(count) {
    return this.#device.createBuffer({ size: Math.max(16, count * 4), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  }

  #tensorOf(buffer, count) {
    const tensor = Object.freeze({ tensor: true, buffer, count });
    this.#tensors.add(tensor);
    return tensor;
  }

  #own(tensor, what) {
    if (!this.#tensors.has(tensor)) {
      throw new AttnError('VALUE', `${what}: not a live tensor of this instance (made by another instance, or released)`);
    }
  }

  /**
   * Compiles ahead of the first timed call the pipelines of these variants (default: every one
   * on WebGPU) at the shape class of dims (default d = dv = 64), causal and not, with and
   * without weights.
   */
  async warmup(ids = this.ready, dims = { d: 64, dv: 64 }) {
    this.#alive();
    const list = Array.isArray(ids) ? ids : [ids];
    const keys = new Map();
    for (const id of list) {
      const variant = this.variants.find((v) => v.id === id);
      if (!variant) throw new AttnError('UNKNOWN', `unknown variant ${describe(id)}; expected one of ${this.variants.map((v) => v.id).join(', ')}`);
      for (const causal of [false, true]) {
        for (const weights of [false, true]) {
          const plan = planCall(stubCall(this.variants, variant, { causal, weights }, dims));
          for (const p of plan.passes) keys.set(p.pipeline.key, p.pipeline);
        }
      }
    }
    await Promise.all([...keys.values()].map((p) => this.#pipeline(p)));
  }

  /** Frees the device and the WebAssembly instance that checks the calls; later calls reject with DISPOSED. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#pipelines.clear();
    this.#pool.clear();
    this.#device.destroy();
    this.#lab.dispose();
  }

  #pipeline({ key, code, entry }) {
    let pending = this.#pipelines.get(key);
    if (!pending) {
      const module = this.#device.createShaderModule({ code: code() });
      pending = this.#device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: entry } });
      this.#pipelines.set(key, pending);
      pending.catch(() => this.#pipelines.delete(key));
    }
    return pending;
  }

  #alive() {
    if (this.#disposed) throw new AttnError('DISPOSED', 'this WebGPU instance was disposed; call initWebGPU() again for a new one');
    if (this.#lost) throw new AttnError('BROKEN', this.#lost);
  }
}

// The bytes a pass binds of a buffer: the plan's array (a uniform's own size), not the pooled buffer's.
function boundBytes(plan, name) {
  const b = plan.buffers.find((x) => x.name === name);
  return b.uniform ? b.uniform.byteLength : Math.max(4, b.count) * 4;
}

// A call of one row at these widths, for warmup's plans: every array the variant (a mixture: the
// first two of its components) reads, zeros, every other dimension 1.
function stubCall(variants, variant, opt, { d, dv }) {
  const byId = new Map(variants.map((v) => [v.id, v]));
  const components = variant.composite ? variants.filter((v) => v.mixable).slice(0, 2).map((v) => v.id) : null;
  const parts = components ? components.map((id) => byId.get(id)) : [variant];
  const dims = { n: 1, d, dv, h: d, L: 1, a: 1, b: 1, rank: d }; // query sides as wide as d
  const arrays = new Map();
  for (const part of [...parts, variant]) {
    for (const spec of part.inputs) {
      if (spec.optional || arrays.has(spec.name)) continue;
      const count = spec.shape.reduce((p, s) => p * dims[s], 1);
      arrays.set(spec.name, { name: spec.name, count, cols: dims[spec.shape[spec.shape.length - 1]], data: new Float32Array(count) });
    }
  }
  const fullOpt = components ? { ...opt, components, alpha: components.map(() => 1 / components.length) } : opt;
  return { variant, opt: fullOpt, dims, arrays: [...arrays.values()] };
}

function mib(bytes) {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}
