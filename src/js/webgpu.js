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
import { CHECK_CALL } from './internal.js';
import { onWebGPU, planCall } from './webgpu-kernels.js';

export { AttnError };

// The limits a call may need beyond WebGPU's defaults: asked for at the adapter's own values.
const LIMITS = ['maxStorageBufferBindingSize', 'maxBufferSize'];
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
    throw new AttnError('UNSUPPORTED', typeof globalThis.window === 'undefined' && typeof globalThis.document === 'undefined'
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
  let device;
  try {
    device = await adapter.requestDevice({ requiredLimits });
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

class WebGPUInstance {
  #device;
  #lab;
  #pipelines = new Map(); // pipeline key -> Promise<GPUComputePipeline>
  #lost = null; // why the device is gone (BROKEN)
  #disposed = false;

  constructor(adapter, device, lab) {
    this.#device = device;
    this.#lab = lab;
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

  /**
   * lab.attention()'s result, on the GPU: { output } (and weights with weights: true).
   * @returns {Promise<{ output: Float32Array, weights?: Float32Array }>}
   */
  async attention(id, inputs, options = {}) {
    this.#alive();
    const call = this.#lab[CHECK_CALL](id, inputs, options);
    const plan = planCall(call);
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
    const buffers = new Map(), owned = [];
    const make = (name, bytes, usage) => {
      const buffer = device.createBuffer({ size: Math.max(16, Math.ceil(bytes / 4) * 4), usage });
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
        const buffer = make(b.name, b.count * 4, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST);
        for (const w of b.writes ?? []) device.queue.writeBuffer(buffer, w.offset * 4, w.data);
      }
      const pipelines = await Promise.all(plan.passes.map((p) => this.#pipeline(p.pipeline)));
      this.#alive();
      const encoder = device.createCommandEncoder();
      plan.passes.forEach((pass, i) => {
        const layout = pipelines[i].getBindGroupLayout(0);
        const group = device.createBindGroup({ layout, entries: pass.bindings.map((name, binding) => ({ binding, resource: { buffer: buffers.get(name) } })) });
        const compute = encoder.beginComputePass();
        compute.setPipeline(pipelines[i]);
        compute.setBindGroup(0, group);
        compute.dispatchWorkgroups(...pass.workgroups);
        compute.end();
      });
      const shown = plan.buffers.filter((b) => b.output);
      const read = make('read-back', shown.reduce((s, o) => s + o.count * 4, 0), GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
      let at = 0;
      for (const o of shown) {
        encoder.copyBufferToBuffer(buffers.get(o.name), 0, read, at, o.count * 4);
        at += o.count * 4;
      }
      device.queue.submit([encoder.finish()]);
      try {
        await read.mapAsync(GPUMapMode.READ);
      } catch (err) {
        this.#alive();
        throw new AttnError('BROKEN', `the GPU did not finish the call (${err?.message ?? err})`);
      }
      const all = new Float32Array(read.getMappedRange().slice(0));
      read.unmap();
      const result = {};
      at = 0;
      for (const o of shown) {
        const values = all.subarray(at, at + o.count);
        at += o.count;
        for (let i = 0; i < values.length; i++) {
          if (values[i] - values[i] !== 0) throw overflowError(call.variant, call.opt, o.name, i, o.cols, values[i]);
        }
        result[o.name] = values.slice();
      }
      return result;
    } finally {
      for (const b of owned) b.destroy();
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
