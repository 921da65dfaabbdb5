// The targets of the benchmark, each computed from one run's rows (ratios and fractions of the
// measured peak, so they do not depend on how fast the machine was that day), and the helpers the
// report shares for looking rows up and formatting numbers.

export const CONTENDERS = ['attnlab-simd', 'attnlab-relaxed', 'attnlab-scalar', 'plain-js', 'native', 'onnxruntime-web', 'tfjs-wasm'];
export const CONTENDED = 0.9; // cpu time / wall time below this: the measurement shared the CPU
export const PEAK = 'peak-simd128'; // the peak kernel's key in results.paired

export const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms >= 0.1 ? ms.toFixed(3) : ms.toFixed(4));
export const fmtG = (g) => (g == null ? '' : g >= 10 ? g.toFixed(1) : g >= 1 ? g.toFixed(2) : g.toPrecision(2));
export const fmtMiB = (b) => (b == null ? '–' : (b / 2 ** 20).toFixed(b >= 100 * 2 ** 20 ? 0 : 1));
const x2 = (r) => `${r.toFixed(2)}×`;
const pct = (f) => `${(100 * f).toFixed(0)} %`;

export function rowOf(results, contender, variant, n) {
  return results.rows.find((r) => r.contender === contender && r.variant === variant && r.n === n);
}
export const okRow = (results, c, v, n) => {
  const r = rowOf(results, c, v, n);
  return r && r.status === 'ok' ? r : null;
};
export const whyMissing = (results, c, v, n) => {
  const r = rowOf(results, c, v, n);
  if (!r) return 'not run';
  return r.reason ?? r.status;
};
/** The ids of this run's variants of a family (results.meta.variants, from the registry). */
export const familyOf = (results, family) => (results.meta.variants ?? []).filter((v) => v.family === family).map((v) => v.id);
const ran = (results, v) => results.rows.some((r) => r.variant === v);

/** Time of a contender for softmax at n: the interleaved measurement when there is one, else the table's. */
function softmaxTime(results, c, n) {
  const p = (results.paired ?? []).find((x) => x.variant === 'softmax' && x.n === n)?.entries?.[c];
  if (p) return { ms: p.median_ms, gflops: p.gflops, src: 'interleaved' };
  const r = okRow(results, c, 'softmax', n);
  return r ? { ms: r.median_ms, gflops: r.gflops, src: 'table' } : null;
}

function softmaxRatio(results, slow, fast, n) {
  const a = softmaxTime(results, slow, n), b = softmaxTime(results, fast, n);
  if (!a || !b) return { value: null, detail: !a ? `${slow}: ${whyMissing(results, slow, 'softmax', n)}` : `${fast}: ${whyMissing(results, fast, 'softmax', n)}` };
  return { value: a.ms / b.ms, detail: `${fmtMs(a.ms)} ms / ${fmtMs(b.ms)} ms${a.src === 'interleaved' && b.src === 'interleaved' ? ' (interleaved)' : ''}` };
}

function softmaxTargets(results, add) {
  const peak = results.peak?.simd128?.gflops ?? null;
  for (const n of [1024, 4096]) {
    for (const [other, need] of [['onnxruntime-web', 1.5], ['tfjs-wasm', 1.35]]) {
      const r = softmaxRatio(results, other, 'attnlab-simd', n);
      add({ group: 'softmax', target: `softmax, SIMD build vs ${other}: speed-up`, n, value: r.value, shown: r.value == null ? null : x2(r.value), required: `≥ ${need}×`, met: r.value == null ? null : r.value >= need, detail: r.detail });
    }
    const s = softmaxTime(results, 'attnlab-simd', n);
    const paired = (results.paired ?? []).find((x) => x.variant === 'softmax' && x.n === n);
    const pk = s?.src === 'interleaved' ? paired.entries[PEAK]?.gflops ?? peak : peak;
    const f = s && pk ? s.gflops / pk : null;
    add({ group: 'softmax', target: 'softmax, SIMD build: fraction of the SIMD128 peak', n, value: f, shown: f == null ? null : pct(f), required: '≥ 75 %', met: f == null ? null : f >= 0.75, detail: s && pk ? `${fmtG(s.gflops)} / ${fmtG(pk)} GFLOP/s${s.src === 'interleaved' ? ' (interleaved, the peak kernel in the same rounds)' : ''}` : (s ? 'peak not measured' : whyMissing(results, 'attnlab-simd', 'softmax', n)) });
    const r = softmaxRatio(results, 'attnlab-simd', 'attnlab-relaxed', n);
    add({ group: 'softmax', target: 'softmax, relaxed build vs SIMD build: speed-up', n, value: r.value, shown: r.value == null ? null : x2(r.value), required: '≥ 1.2×', met: r.value == null ? null : r.value >= 1.2, detail: r.detail });
  }
}

function linearTargets(results, add) {
  const peak = results.peak?.simd128?.gflops ?? null;
  for (const v of familyOf(results, 'linear').filter((x) => ran(results, x))) {
    const p = (results.paired ?? []).find((x) => x.variant === v && x.entries?.['1024'] && x.entries?.['16384']);
    const a = p ? p.entries['1024'] : okRow(results, 'attnlab-simd', v, 1024);
    const b = p ? p.entries['16384'] : okRow(results, 'attnlab-simd', v, 16384);
    const tag = p ? ' (interleaved)' : '';
    const ratio = a && b ? b.median_ms / a.median_ms : null;
    add({ group: 'linear', target: `${v}: time(16384) / time(1024), SIMD build`, n: 16384, value: ratio, shown: ratio == null ? null : ratio.toFixed(1), required: '≤ 17', met: ratio == null ? null : ratio <= 17, detail: a && b ? `${fmtMs(b.median_ms)} ms / ${fmtMs(a.median_ms)} ms${tag}` : `not measured at ${!a ? 1024 : 16384}` });
    const pk = p?.entries?.[PEAK]?.gflops ?? peak;
    const f = b && pk ? b.gflops / pk : null;
    add({ group: 'linear', target: `${v}: fraction of the SIMD128 peak, SIMD build`, n: 16384, value: f, shown: f == null ? null : pct(f), required: '≥ 60 %', met: f == null ? null : f >= 0.6, detail: b && pk ? `${fmtG(b.gflops)} / ${fmtG(pk)} GFLOP/s${p?.entries?.[PEAK] ? ' (interleaved, the peak kernel in the same rounds)' : tag}` : 'not measured at 16384' });
  }
}

function synthesizerTargets(results, add) {
  for (const v of familyOf(results, 'synthesizer').filter((x) => ran(results, x))) {
    for (const n of results.meta.sizes) {
      const a = okRow(results, 'attnlab-simd', v, n), s = okRow(results, 'attnlab-simd', 'softmax', n);
      if (!a && !s) continue;
      const ratio = a && s ? a.median_ms / s.median_ms : null;
      add({ group: 'synthesizer', target: `${v} / softmax time, SIMD build`, n, value: ratio, shown: ratio == null ? null : x2(ratio), required: '≤ 1.3×', met: ratio == null ? null : ratio <= 1.3, detail: a && s ? `${fmtMs(a.median_ms)} ms / ${fmtMs(s.median_ms)} ms` : (a ? 'softmax not measured' : whyMissing(results, 'attnlab-simd', v, n)) });
    }
  }
}

function scalarTargets(results, add) {
  const plain = [...new Set(results.rows.filter((r) => r.contender === 'plain-js').map((r) => r.variant))];
  for (const v of plain) {
    for (const n of results.meta.sizes) {
      const a = okRow(results, 'plain-js', v, n), b = okRow(results, 'attnlab-scalar', v, n);
      if (!a && !b) continue;
      const value = a && b ? a.median_ms / b.median_ms : null;
      const detail = a && b ? `${fmtMs(a.median_ms)} ms / ${fmtMs(b.median_ms)} ms` : !a ? `plain-js: ${whyMissing(results, 'plain-js', v, n)}` : `attnlab-scalar: ${whyMissing(results, 'attnlab-scalar', v, n)}`;
      add({ group: 'scalar', target: `${v}, scalar build vs plain JS: speed-up`, n, value, shown: value == null ? null : x2(value), required: '≥ 3×', met: value == null ? null : value >= 3, detail });
    }
  }
}

/**
 * The recurrent family against linear (the bench's linear: non-causal, the cheapest form of
 * softmax-free attention), SIMD build. The rules without the delta rule (no beta input: plain-linear,
 * gla) make one sweep of the state a token and must stay within 1.5× of it; the delta rules need a
 * second sweep (S~ᵀk before the write), so their ratio is recorded against the same bound, not held
 * to it (bench/README.md explains it).
 */
function recurrentTargets(results, add) {
  for (const v of familyOf(results, 'recurrent').filter((x) => ran(results, x))) {
    const delta = (results.meta.variants.find((m) => m.id === v)?.inputs ?? []).includes('beta');
    for (const n of results.meta.sizes.filter((x) => x >= 256)) {
      const a = okRow(results, 'attnlab-simd', v, n), l = okRow(results, 'attnlab-simd', 'linear', n);
      if (!a && !l) continue;
      const ratio = a && l ? a.median_ms / l.median_ms : null;
      const detail = a && l ? `${fmtMs(a.median_ms)} ms / ${fmtMs(l.median_ms)} ms` : a ? 'linear not measured' : whyMissing(results, 'attnlab-simd', v, n);
      add({ group: 'recurrent', target: `${v} / linear time, SIMD build${delta ? ' (delta rule: recorded, not held)' : ''}`, n, value: ratio, shown: ratio == null ? null : x2(ratio), required: delta ? 'recorded' : '≤ 1.5×', met: ratio == null || delta ? null : ratio <= 1.5, detail });
    }
  }
}

/** Every target, computed from this run's rows. met: true / false / null (not measured). */
export function computeTargets(results) {
  const T = [];
  const add = (t) => T.push(t);
  softmaxTargets(results, add);
  linearTargets(results, add);
  synthesizerTargets(results, add);
  scalarTargets(results, add);
  recurrentTargets(results, add);
  return T;
}
