// Floating-point operation counts used for GFLOP/s (a multiply-add counts as 2). Dense counts:
// causal masking is not discounted, exp and division are not counted. Ids without an entry fall
// back to their family (softmax/synthesizer: the 2n²dv of A·v; linear: 4·n·d·dv; fixed: n·dv).

const SOFTMAX_AV = (x) => 2 * x.n * x.n * x.dv;

/** Logit cost (flops, formula) of softmax-type ids, used alone and inside a mixture. */
const LOGITS = {
  softmax: { f: (x) => 2 * x.n * x.n * x.d, s: '2n²d' },
  dense: { f: (x) => 2 * x.n * x.d * x.h + 2 * x.n * x.h * x.n, s: '2n·d·h + 2n²h' },
  dense1: { f: (x) => 2 * x.n * x.d * x.n, s: '2n²d' },
  random: { f: () => 0, s: '0' },
  'factorized-dense': { f: (x) => 2 * x.n * x.d * (x.a + x.b) + x.n * x.n, s: '2n·d·(a+b) + n²' },
  'factorized-random': { f: (x) => 2 * x.n * x.n * x.rank, s: '2n²·rank' },
};

/**
 * @param {{id:string, family:string}} info
 * @param {{n,d,dv,h,L,a,b,rank}} dims
 * @param {object} options API options (components for a mixture)
 * @returns {{ flops: number, formula: string }}
 */
export function flopCount(info, dims, options = {}) {
  const x = dims;
  const id = info.id;
  if (LOGITS[id]) {
    const l = LOGITS[id];
    const formula = l.s === '0' ? '2n²dv' : `${l.s} + 2n²dv`;
    return { flops: l.f(x) + SOFTMAX_AV(x), formula };
  }
  if (Array.isArray(options.components)) {
    let f = 0;
    const parts = [];
    for (const c of options.components) {
      const l = LOGITS[c];
      if (!l) continue;
      f += l.f(x) + x.n * x.n;
      if (l.s !== '0') parts.push(l.s);
    }
    parts.push(`${options.components.length}·n² (mixing)`);
    return { flops: f + SOFTMAX_AV(x), formula: `${parts.join(' + ')} + 2n²dv` };
  }
  switch (info.family) {
    case 'linear':
      return { flops: 4 * x.n * x.d * x.dv, formula: '≈ 4·n·d·dv' };
    case 'fixed':
      return { flops: x.n * x.dv, formula: '≈ n·dv' };
    default:
      return { flops: SOFTMAX_AV(x), formula: '≈ 2n²dv' };
  }
}

export function gflops(flops, ms) {
  return ms > 0 ? flops / (ms * 1e6) : NaN;
}
