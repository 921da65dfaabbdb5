// The interleaved pass behind the headline ratios: softmax on the SIMD and relaxed builds,
// onnxruntime-web and tfjs-wasm at n = 1024 and 4096, and each linear-family variant on the SIMD
// build at n = 1024 against 16384. Every round calls each entry once, plus about 20 ms of the peak
// kernel, so a burst of load from other processes hits them alike and the fraction of peak divides
// two numbers measured in the same rounds.
import { roundRobin } from './measure.mjs';
import { peakRunner } from './peak.mjs';
import { callInputs, dimsFor, flops, makeInputs } from './plan.mjs';
import { fmtMs, log } from './record.mjs';

export const PEAK = 'peak-simd128';

function peakEntry(peakCfg) {
  const { chains, unroll, split } = peakCfg ?? {};
  const peak = peakRunner(chains ? { chains, unroll, split } : undefined);
  return {
    entry: { key: PEAK, fn: peak.fn },
    gflops(stats) { if (stats[PEAK]) stats[PEAK].gflops = peak.flops / (stats[PEAK].median_ms * 1e6); },
  };
}

async function softmaxAt(n, ctx, peak) {
  const { builds, externals, registry, quick } = ctx;
  const softmax = registry.find((v) => v.id === 'softmax');
  const ins = callInputs(softmax, registry, makeInputs(n));
  const entries = [], cleanup = [];
  for (const b of builds.filter((x) => !x.error && x.name !== 'attnlab-scalar')) entries.push({ key: b.name, fn: await b.runner('softmax', ins) });
  for (const c of externals) {
    try {
      const r = c.runner(ins, dimsFor(n));
      if (r) { cleanup.push(r); entries.push({ key: c.name, fn: r.fn }); }
    } catch {}
  }
  if (entries.length < 2) return null;
  globalThis.gc?.();
  const rounds = n >= 4096 ? (quick ? 3 : 5) : (quick ? 7 : 15);
  const stats = await roundRobin([...entries, peak.entry], rounds);
  for (const r of cleanup) r.dispose();
  const f = flops(softmax, dimsFor(n)).flops;
  for (const st of Object.values(stats)) st.gflops = f / (st.median_ms * 1e6);
  peak.gflops(stats);
  log(`  interleaved softmax n=${n}, ${rounds} rounds: ${Object.entries(stats).map(([k, v]) => `${k} ${fmtMs(v.median_ms)} ms`).join(', ')} (peak ${stats[PEAK].gflops.toFixed(1)} GFLOP/s)`);
  return { variant: 'softmax', n, rounds, entries: stats };
}

async function linearScaling(variant, simd, ctx, peak) {
  const a = callInputs(variant, ctx.registry, makeInputs(1024)), b = callInputs(variant, ctx.registry, makeInputs(16384));
  const rounds = ctx.quick ? 5 : 9;
  const small = await simd.runner(variant.id, a);
  const big = (() => { const lab = simd.lab; return () => lab.attention(variant.id, b, {}).output; })();
  globalThis.gc?.(); // the softmax rounds before leave the contenders' n x n buffers to collect
  const stats = await roundRobin([{ key: '1024', fn: small }, { key: '16384', fn: big }, peak.entry], rounds);
  for (const [k, st] of Object.entries(stats)) if (k !== PEAK) st.gflops = flops(variant, dimsFor(+k)).flops / (st.median_ms * 1e6);
  peak.gflops(stats);
  log(`  interleaved ${variant.id} (SIMD build), ${rounds} rounds: n=1024 ${fmtMs(stats['1024'].median_ms)} ms, n=16384 ${fmtMs(stats['16384'].median_ms)} ms (peak ${stats[PEAK].gflops.toFixed(1)} GFLOP/s)`);
  return { variant: variant.id, contender: 'attnlab-simd', rounds, entries: stats };
}

/**
 * ctx: { builds, externals (loaded third-party contenders), registry, variants (the selected),
 * sizes, quick, peakCfg (the best shape of the first peak measurement) }. Returns results.paired.
 */
export async function pairedPhase(ctx) {
  const paired = [];
  const peak = peakEntry(ctx.peakCfg);
  log(`\n== interleaved measurements for the targets at ${(performance.now() / 1000).toFixed(0)} s`);
  if (ctx.variants.some((v) => v.id === 'softmax')) {
    for (const n of [1024, 4096].filter((x) => ctx.sizes.includes(x))) {
      const p = await softmaxAt(n, ctx, peak);
      if (p) paired.push(p);
    }
  }
  const simd = ctx.builds.find((b) => b.name === 'attnlab-simd' && !b.error);
  if (simd && ctx.sizes.includes(1024) && ctx.sizes.includes(16384)) {
    for (const v of ctx.variants.filter((x) => x.family === 'linear')) paired.push(await linearScaling(v, simd, ctx, peak));
  }
  return paired;
}
