// Measures this machine's WebAssembly SIMD128 arithmetic peak with a hand-assembled module
// (no toolchain needed): `chains` independent accumulators, each updated as
//   acc = acc * m + a          (f32x4.mul then f32x4.add: 8 flops per chain step)
// or, in the relaxed variant,
//   acc = relaxed_madd(acc, m, a)   (one f32x4.relaxed_madd: 8 flops per chain step)
// The loop body is unrolled; several chain counts are tried and the best is the peak. Contender
// `peak` of the benchmark: measured before and after the run, and run in the interleaved rounds.

const SIMD = 0xfd;
const V128 = 0x7b, I32 = 0x7f, F32 = 0x7d;

function uleb(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}
const simdOp = (code) => [SIMD, ...uleb(code)];
const OP = {
  v128_const: simdOp(0x0c),
  f32x4_add: simdOp(0xe4),
  f32x4_mul: simdOp(0xe6),
  f32x4_extract_lane: simdOp(0x1f),
  f32x4_relaxed_madd: simdOp(0x105),
};
const localGet = (i) => [0x20, ...uleb(i)];
const localSet = (i) => [0x21, ...uleb(i)];
const localTee = (i) => [0x22, ...uleb(i)];
function f32x4Const(x) {
  const b = new Uint8Array(16);
  const dv = new DataView(b.buffer);
  for (let l = 0; l < 4; l++) dv.setFloat32(4 * l, x, true);
  return [...OP.v128_const, ...b];
}
const section = (id, bytes) => [id, ...uleb(bytes.length), ...bytes];
const vec = (items) => [...uleb(items.length), ...items.flat()];
const name = (s) => [...uleb(s.length), ...new TextEncoder().encode(s)];

/** Module exporting `run(iters: i32) -> f32`; each iteration does chains*unroll chain steps. */
export function peakModule({ chains, unroll = 4, relaxed = false, split = false }) {
  // locals: 0 = iters (param); 1..chains = accumulators; chains+1 = m; chains+2 = a
  const M = chains + 1, A = chains + 2;
  const body = [];
  for (let c = 0; c < chains; c++) body.push(...f32x4Const(1 + c / 64), ...localSet(1 + c));
  // combined chains converge to a/(1-m) = 1; split chains keep acc ~ 1 (x*1 and 1 + 1e-9 round to x)
  body.push(...f32x4Const(split ? 1 : 0.999), ...localSet(M), ...f32x4Const(split ? 1e-9 : 0.001), ...localSet(A));
  body.push(0x02, 0x40); // block
  body.push(0x03, 0x40); //   loop
  for (let u = 0; u < unroll; u++) {
    for (let c = 0; c < chains; c++) {
      body.push(...localGet(1 + c));
      if (relaxed) body.push(...localGet(M), ...localGet(A), ...OP.f32x4_relaxed_madd);
      else if (split) body.push(...(c & 1 ? [...localGet(A), ...OP.f32x4_add] : [...localGet(M), ...OP.f32x4_mul]));
      else body.push(...localGet(M), ...OP.f32x4_mul, ...localGet(A), ...OP.f32x4_add);
      body.push(...localSet(1 + c));
    }
  }
  // iters -= 1; br_if loop (iters != 0)
  body.push(...localGet(0), 0x41, 1, 0x6b, ...localTee(0), 0x0d, 0x00);
  body.push(0x0b, 0x0b); // end loop, end block
  body.push(...localGet(1));
  for (let c = 1; c < chains; c++) body.push(...localGet(1 + c), ...OP.f32x4_add);
  body.push(...OP.f32x4_extract_lane, 0);
  body.push(0x0b); // end function
  const locals = vec([[...uleb(chains + 2), V128]]);
  const func = [...locals, ...body];
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec([[0x60, 1, I32, 1, F32]])), // type: (i32) -> f32
    ...section(3, vec([[0]])), // function 0 has type 0
    ...section(7, vec([[...name('run'), 0x00, 0]])), // export "run" = func 0
    ...section(10, vec([[...uleb(func.length), ...func]])),
  ];
  return { bytes: Uint8Array.from(bytes), flopsPerIter: chains * unroll * (split ? 4 : 8) };
}

export function relaxedSupported() {
  try {
    return WebAssembly.validate(peakModule({ chains: 1, unroll: 1, relaxed: true }).bytes);
  } catch {
    return false;
  }
}

const CONFIGS = {
  simd: [
    { chains: 10, unroll: 4 },
    { chains: 12, unroll: 4 },
    { chains: 12, unroll: 8 },
    { chains: 12, unroll: 1, split: true },
    { chains: 12, unroll: 4, split: true },
  ],
  relaxed: [
    { chains: 10, unroll: 4 },
    { chains: 12, unroll: 4 },
    { chains: 12, unroll: 8 },
  ],
};

/**
 * Peak GFLOP/s: for each kernel shape the median of `reps` timed runs of about targetMs each;
 * the peak is the best of those medians (the shapes differ only in how V8 schedules them).
 */
export function measurePeak({ relaxed = false, quick = false, configs = quick ? CONFIGS[relaxed ? 'relaxed' : 'simd'].filter((c) => c.chains === 12 && c.unroll !== 8) : CONFIGS[relaxed ? 'relaxed' : 'simd'], targetMs = 60, reps = 5 } = {}) {
  if (relaxed && !relaxedSupported()) throw new Error('relaxed SIMD not supported by this engine');
  const perConfig = [];
  for (const cfg of configs) {
    const { fn, flops } = peakRunner(cfg, { relaxed, targetMs });
    // a sample during which the process got under 90 % of the wall time as CPU time (another
    // process took the CPU) is taken again, up to 2 * reps extra times
    const samples = [];
    for (let r = 0, retries = 0; r < reps; r++) {
      const c0 = process.cpuUsage();
      const t = performance.now();
      const x = fn();
      const ms = performance.now() - t;
      const c = process.cpuUsage(c0);
      if (!Number.isFinite(x)) throw new Error('peak kernel diverged');
      if ((c.user + c.system) / 1000 < 0.9 * ms && retries < 2 * reps) { retries++; r--; continue; }
      samples.push(flops / (ms * 1e6));
    }
    samples.sort((x, y) => x - y);
    perConfig.push({ ...cfg, gflops: samples[samples.length >> 1], min: samples[0], max: samples[samples.length - 1] });
  }
  const best = perConfig.reduce((x, y) => (y.gflops > x.gflops ? y : x));
  return { gflops: best.gflops, min: best.min, max: best.max, best: { ...best }, perConfig };
}

/**
 * One kernel shape as a callable of about targetMs, for interleaving with other measurements:
 * { fn, flops } where fn() runs the kernel once and flops is what one call computes.
 */
export function peakRunner(cfg = CONFIGS.simd[3], { relaxed = false, targetMs = 20 } = {}) {
  const { bytes, flopsPerIter } = peakModule({ ...cfg, relaxed });
  const run = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.run;
  let iters = 1000; // calibrated to about targetMs
  for (;;) {
    const t = performance.now();
    run(iters);
    const ms = performance.now() - t;
    if (ms > targetMs / 4) { iters = Math.max(1, Math.round((iters * targetMs) / ms)); break; }
    iters *= 4;
  }
  return { fn: () => run(iters), flops: flopsPerIter * iters };
}

/** The peaks before the run: SIMD128 and (when the engine has it) relaxed FMA. */
export function peaksBefore(quick) {
  const o = quick ? { reps: 3, targetMs: 40, quick: true } : {};
  const before = { simd128: measurePeak(o), relaxed: null };
  try { before.relaxed = measurePeak({ ...o, relaxed: true }); } catch (e) { before.relaxed = { error: e.message }; }
  return before;
}

/** The peaks measured again after the run (not when quick); results.peak keeps the higher of each. */
export function peaksAfter(before, quick) {
  const after = quick ? before : { simd128: measurePeak(), relaxed: null };
  if (!quick) try { after.relaxed = measurePeak({ relaxed: true }); } catch (e) { after.relaxed = { error: e.message }; }
  const pick = (a, b) => ((a?.gflops ?? 0) >= (b?.gflops ?? 0) ? a : b);
  return {
    simd128: { ...pick(before.simd128, after.simd128), before: before.simd128.gflops, after: after.simd128.gflops, kernel: 'independent f32x4.mul + f32x4.add chains (hand-assembled wasm, bench/peak.mjs); 2 flops per lane per mul+add' },
    relaxed: before.relaxed?.gflops
      ? { ...pick(before.relaxed, after.relaxed), before: before.relaxed.gflops, after: after.relaxed?.gflops, kernel: 'independent f32x4.relaxed_madd chains; 2 flops per lane' }
      : { error: before.relaxed?.error },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log('simd128', JSON.stringify(measurePeak()));
  if (relaxedSupported()) console.log('relaxed', JSON.stringify(measurePeak({ relaxed: true })));
  else console.log('relaxed: not supported (run node with --experimental-wasm-relaxed-simd)');
}
