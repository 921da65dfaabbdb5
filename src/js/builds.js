// builds.js — the one manifest of attnlab's WebAssembly builds: each build's name, its words, the
// init() options that choose it and its two modules (one thread; threads on shared memory), best
// first. The binding, the page (from dist/), scripts/ensure.mjs and build.sh (through node) read
// it; package.json's files and exports and the binding's literal module URLs (kept literal for
// bundlers) are checked against it by tests/builds.test.mjs. A plain ES module, no work at import.

export const BUILDS = Object.freeze([
  Object.freeze({ name: 'relaxed', label: 'relaxed SIMD', init: Object.freeze({ simd: 'relaxed' }), file: 'attnlab-relaxed.wasm', threadsFile: 'attnlab-relaxed-threads.wasm' }),
  Object.freeze({ name: 'simd', label: 'SIMD', init: Object.freeze({ simd: true }), file: 'attnlab-simd.wasm', threadsFile: 'attnlab-simd-threads.wasm' }),
  Object.freeze({ name: 'scalar', label: 'scalar', init: Object.freeze({ simd: false }), file: 'attnlab-scalar.wasm', threadsFile: 'attnlab-scalar-threads.wasm' }),
]);

/** Build name -> its entry. */
export const BUILD_BY_NAME = Object.freeze(Object.fromEntries(BUILDS.map((b) => [b.name, b])));

/** Every module file of every build. */
export const BUILD_FILES = Object.freeze(BUILDS.flatMap((b) => [b.file, b.threadsFile]));
