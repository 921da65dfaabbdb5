// Contenders attnlab-simd, attnlab-relaxed and attnlab-scalar: the three WebAssembly builds through
// the binding (dist/attnlab.js), a fresh instance per variant and size so that memoryBytes() is
// that call's high-water mark. The SIMD build is the reference every other output is checked with.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './cli.mjs';
import { measureRobust } from './measure.mjs';

const BUILDS = [
  { name: 'attnlab-simd', build: 'simd', simd: true },
  { name: 'attnlab-relaxed', build: 'relaxed', simd: 'relaxed' },
  { name: 'attnlab-scalar', build: 'scalar', simd: false },
];
export const REFERENCE = 'attnlab-simd';
export const BUILD_NAMES = BUILDS.map((b) => b.name);

async function loadBinding() {
  const file = path.join(ROOT, 'dist/attnlab.js');
  if (!fs.existsSync(file)) throw new Error('dist/attnlab.js not found (run `bash build.sh`)');
  return import(pathToFileURL(file).href);
}

const errorText = (e) => `${e.code ? e.code + ': ' : ''}${e.message}`;

class BuildContender {
  constructor(mod, spec, policy) {
    Object.assign(this, { mod, spec, policy, name: spec.name, lab: null, error: null, meta: null });
  }

  /** Reads the module's bytes once, so every instance of a run is the same build even if dist/ is rebuilt meanwhile. */
  async load() {
    this.bytes = fs.readFileSync(path.join(ROOT, 'dist', `attnlab-${this.spec.build}.wasm`));
    const lab = await this.fresh();
    let built = null;
    try { built = fs.readFileSync(path.join(ROOT, 'dist/.stamp'), 'utf8').trim().split(' ')[0]; } catch {} // its date (then whether the native tests ran)
    const sha256 = createHash('sha256').update(this.bytes).digest('hex').slice(0, 16);
    this.meta = { version: lab.version, build: lab.build, simd: lab.simd, wasm: `dist/attnlab-${this.spec.build}.wasm`, sha256, built };
    return lab;
  }

  /** A fresh instance (init() with wasmBinary is never cached); the previous one is disposed. */
  async fresh() {
    if (this.lab) { try { this.lab.dispose(); } catch {} this.lab = null; }
    // one thread: these are the single-threaded modules' bytes, and the tables compare one thread
    // with one thread (bench/threads.mjs measures thread counts)
    const lab = await this.mod.init({ simd: this.spec.simd, threads: 1, wasmBinary: this.bytes });
    if (lab.build !== this.spec.build) { lab.dispose(); throw new Error(`init({ simd: ${JSON.stringify(this.spec.simd)} }) loaded the ${lab.build} build`); }
    this.lab = lab;
    return lab;
  }

  supports() { return true; }

  async measure(job) {
    const lab = await this.fresh();
    const id = job.variant.id, opt = job.options;
    if (job.huge) { // pre-warm at a smaller size: no warm-up at this one
      const pins = job.prewarmInputs();
      const t = performance.now();
      while (performance.now() - t < 150) lab.attention(id, pins, opt);
    }
    const ins = job.inputs();
    const m = await measureRobust(() => lab.attention(id, ins, opt).output, this.policy, { huge: job.huge });
    return { ...m, memory: lab.memoryBytes(), memoryKind: 'wasm memory of a fresh instance after the run' };
  }

  /** A callable for the interleaved rounds, on a fresh instance. */
  async runner(id, ins, opt = {}) {
    const lab = await this.fresh();
    return () => lab.attention(id, ins, opt).output;
  }

  dispose() { try { this.lab?.dispose(); } catch {} this.lab = null; }
}

/**
 * The builds that `want` selects, loaded; one that cannot load carries `error`. Also returns the
 * registry (lab.variants) of the first build that loaded.
 */
export async function loadBuilds({ policy, want }) {
  const specs = BUILDS.filter((b) => want(b.name));
  let mod = null, bindingError = null;
  if (specs.length) try { mod = await loadBinding(); } catch (e) { bindingError = e.message; }
  const builds = [];
  let variants = null;
  for (const spec of specs) {
    const c = new BuildContender(mod, spec, policy);
    if (!mod) c.error = bindingError;
    else {
      try {
        const lab = await c.load();
        variants ??= lab.variants;
      } catch (e) { c.error = errorText(e); }
    }
    builds.push(c);
  }
  return { builds, variants };
}
