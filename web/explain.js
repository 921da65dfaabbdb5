// Formulas with the numbers plugged in (for the hover tooltip) and the small intermediates the
// linear variants really compute. Everything here is for display: the binding computes y and A.
// Ids without a dedicated explanation fall back to the family (softmax-type: the logit difference
// recovered from A) or to the generic y = A·v, so a new variant in C still gets a sensible tooltip.
// No DOM here: the worker imports intermediates().

export function fmt(x, digits = 4) {
  if (x == null || Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : '−∞';
  if (x === 0) return '0';
  const a = Math.abs(x);
  let s;
  if (a >= 1e5 || a < 1e-4) s = x.toExponential(digits - 1).replace(/\.?0+e/, 'e');
  else s = String(Number(x.toPrecision(digits)));
  return s.replace('-', '−');
}

const paren = (x) => (x < 0 ? `(${fmt(x)})` : fmt(x));

/** "a1×b1 + a2×b2 + … (n terms)" with at most `max` terms shown. */
function dotTerms(a, b, max = 4) {
  const parts = [];
  for (let c = 0; c < Math.min(a.length, max); c++) parts.push(`${paren(a[c])}×${paren(b[c])}`);
  if (a.length > max) parts.push(`… (${a.length} terms)`);
  return parts.join(' + ');
}

const row = (m, i, cols) => Array.from(m.subarray(i * cols, (i + 1) * cols));
const col = (m, j, rows, cols) => Array.from({ length: rows }, (_, r) => m[r * cols + j]);
const dot = (a, b) => a.reduce((s, x, c) => s + x * b[c], 0);
const phi = (t) => (t > 0 ? t + 1 : Math.exp(t));

function scaleOf(opts, dims) {
  return opts.scale ?? 1 / Math.sqrt(dims.d);
}

/**
 * Logit row B[i, 0..n) of a softmax-type variant, with a text for cell j. Returns null for ids
 * this page does not know (the caller then falls back to ln(A[i,j] / max A[i,·])).
 */
export function logitRow(id, ctx, i, j, depth = 0) {
  const { inputs: X, dims, options: opts } = ctx;
  const { n, d } = dims;
  const out = new Float64Array(n);
  let text = '';
  switch (id) {
    case 'softmax': {
      if (!X.q || !X.k) return null;
      const s = scaleOf(opts, dims);
      const qi = row(X.q, i, d);
      for (let t = 0; t < n; t++) out[t] = s * dot(qi, row(X.k, t, d));
      text = `B[${i},${j}] = scale·(q${i}·k${j}) = ${fmt(s)} × (${dotTerms(qi, row(X.k, j, d))}) = ${fmt(out[j])}`;
      break;
    }
    case 'dense': {
      const { h, L } = dims;
      if (!X.x || !X.w1 || !X.b1 || !X.w2 || !X.b2) return null;
      const xi = row(X.x, i, d);
      const hid = Array.from({ length: h }, (_, u) => Math.max(0, X.b1[u] + dot(xi, col(X.w1, u, d, h))));
      for (let t = 0; t < n; t++) out[t] = X.b2[t] + dot(hid, col(X.w2, t, h, L));
      text = `h${i} = relu(x${i}·w1 + b1) = [${hid.slice(0, 4).map((x) => fmt(x)).join(', ')}${h > 4 ? ', …' : ''}]; ` +
        `B[${i},${j}] = h${i}·w2[:,${j}] + b2[${j}] = ${dotTerms(hid, col(X.w2, j, h, L))} + ${paren(X.b2[j])} = ${fmt(out[j])}`;
      break;
    }
    case 'dense1': {
      const { L } = dims;
      if (!X.x || !X.w) return null;
      const xi = row(X.x, i, d);
      for (let t = 0; t < n; t++) out[t] = dot(xi, col(X.w, t, d, L));
      text = `B[${i},${j}] = x${i}·w[:,${j}] = ${dotTerms(xi, col(X.w, j, d, L))} = ${fmt(out[j])}`;
      break;
    }
    case 'random': {
      const { L } = dims;
      if (!X.r) return null;
      for (let t = 0; t < n; t++) out[t] = X.r[i * L + t];
      text = `B[${i},${j}] = r[${i},${j}] = ${fmt(out[j])} (a constant: the input is not used)`;
      break;
    }
    case 'factorized-dense': {
      const { a, b } = dims;
      if (!X.x || !X.wa || !X.ba || !X.wb || !X.bb) return null;
      const xi = row(X.x, i, d);
      const FA = Array.from({ length: a }, (_, u) => X.ba[u] + dot(xi, col(X.wa, u, d, a)));
      const FB = Array.from({ length: b }, (_, u) => X.bb[u] + dot(xi, col(X.wb, u, d, b)));
      const tile = opts.tiling === 'tile';
      const ia = (t) => (tile ? t % a : Math.floor(t / b));
      for (let t = 0; t < n; t++) out[t] = FA[ia(t)] * FB[t % b];
      text = `F_A[${i},${ia(j)}] = ${fmt(FA[ia(j)])}, F_B[${i},${j % b}] = ${fmt(FB[j % b])} (${tile ? 'tile: j mod a, j mod b' : 'kronecker: ⌊j/b⌋, j mod b'}); ` +
        `B[${i},${j}] = ${paren(FA[ia(j)])}×${paren(FB[j % b])} = ${fmt(out[j])}`;
      break;
    }
    case 'factorized-random': {
      const { rank } = dims;
      if (!X.r1 || !X.r2) return null;
      const ri = row(X.r1, i, rank);
      for (let t = 0; t < n; t++) out[t] = dot(ri, row(X.r2, t, rank));
      text = `B[${i},${j}] = r1[${i}]·r2[${j}] = ${dotTerms(ri, row(X.r2, j, rank))} = ${fmt(out[j])}`;
      break;
    }
    case 'mixture': {
      if (depth > 0 || !Array.isArray(opts.components)) return null;
      const alpha = mixtureAlpha(opts);
      const parts = [];
      for (let c = 0; c < opts.components.length; c++) {
        const sub = logitRow(opts.components[c], { ...ctx, options: opts.components[c] === 'softmax' ? { scale: opts.scale } : { tiling: opts.tiling } }, i, j, depth + 1);
        if (!sub) return null;
        for (let t = 0; t < n; t++) out[t] += alpha[c] * sub.row[t];
        parts.push(`${fmt(alpha[c])}×${paren(sub.row[j])} (${opts.components[c]})`);
      }
      text = `B[${i},${j}] = Σ_c α_c·B_c[${i},${j}] = ${parts.join(' + ')} = ${fmt(out[j])}`;
      break;
    }
    default:
      return null;
  }
  return { row: out, text };
}

export function mixtureAlpha(opts) {
  if (opts.alpha) return Array.from(opts.alpha);
  if (opts.alphaLogits) {
    const m = Math.max(...opts.alphaLogits);
    const e = Array.from(opts.alphaLogits, (t) => Math.exp(t - m));
    const s = e.reduce((p, t) => p + t, 0);
    return e.map((t) => t / s);
  }
  return opts.components.map(() => 1 / opts.components.length);
}

/**
 * Explains A[i,j]. ctx: { id, family, inputs, dims, options, weights }.
 * Returns { lines: string[], computed: number|null } where computed is the page's own
 * recomputation (null when only the binding's value is known).
 */
export function explainWeight(ctx, i, j) {
  const { id, family, dims, options: opts, weights: W, inputs: X } = ctx;
  const { n, d } = dims;
  const causal = !!opts.causal;
  const value = W ? W[i * n + j] : NaN;
  const lines = [];
  const masked = causal && j > i;
  if (masked && family !== 'fixed') {
    lines.push(`masked: causal row ${i} may only use columns j ≤ ${i}${family === 'linear' ? ' (the prefix sums stop at i)' : ' (logit = −∞)'}, so A = 0`);
    return { lines, computed: 0 };
  }
  const J = causal ? i + 1 : n;
  if (family === 'softmax' || family === 'synthesizer') {
    const lr = logitRow(id, ctx, i, j);
    if (lr) {
      let m = -Infinity;
      for (let t = 0; t < J; t++) m = Math.max(m, lr.row[t]);
      let z = 0;
      for (let t = 0; t < J; t++) z += Math.exp(lr.row[t] - m);
      const a = Math.exp(lr.row[j] - m) / z;
      lines.push(lr.text);
      lines.push(`A[${i},${j}] = exp(B[${i},${j}] − max_j B[${i},·]) / Σ_j' exp(B[${i},j'] − max) = exp(${fmt(lr.row[j])} − ${fmt(m)}) / ${fmt(z)} = ${fmt(a)}`);
      return { lines, computed: a };
    }
    if (W) {
      let mx = 0;
      for (let t = 0; t < J; t++) mx = Math.max(mx, W[i * n + t]);
      lines.push(`A[${i},${j}] = softmax_row(B)[${i},${j}] = ${fmt(value)}; B[${i},${j}] − max_j B[${i},·] = ln(A[${i},${j}] / max A[${i},·]) = ${fmt(Math.log(value / mx))}`);
    }
    return { lines, computed: null };
  }
  if (id === 'linear' && X.q && X.k) {
    const eps = opts.eps ?? 1e-6;
    const fq = row(X.q, i, d).map(phi);
    const num = dot(fq, row(X.k, j, d).map(phi));
    let den = 0;
    for (let t = 0; t < J; t++) den += dot(fq, row(X.k, t, d).map(phi));
    const a = num / (den + eps);
    lines.push(`φ(t) = elu(t)+1; φ(q${i})·φ(k${j}) = ${dotTerms(fq, row(X.k, j, d).map(phi))} = ${fmt(num)}`);
    lines.push(`A[${i},${j}] = φ(q${i})·φ(k${j}) / (Σ_{j'${causal ? '≤' + i : ''}} φ(q${i})·φ(k_j') + eps) = ${fmt(num)} / (${fmt(den)} + ${fmt(eps)}) = ${fmt(a)}`);
    return { lines, computed: a };
  }
  if (id === 'taylor' && X.q && X.k) {
    const eps = opts.eps ?? 1e-6;
    const unit = (v) => {
      const nr = Math.max(Math.sqrt(dot(v, v)), 1e-12);
      return v.map((x) => x / nr);
    };
    const qh = unit(row(X.q, i, d));
    const sims = [];
    for (let t = 0; t < J; t++) sims.push(1 + dot(qh, unit(row(X.k, t, d))));
    const den = sims.reduce((p, t) => p + t, 0);
    const a = sims[j] / (den + eps);
    lines.push(`sim(${i},${j}) = 1 + q̂${i}·k̂${j} = 1 + ${fmt(sims[j] - 1)} = ${fmt(sims[j])}`);
    lines.push(`A[${i},${j}] = sim / (Σ_{j'${causal ? '≤' + i : ''}} sim(${i},j') + eps) = ${fmt(sims[j])} / (${fmt(den)} + ${fmt(eps)}) = ${fmt(a)}`);
    return { lines, computed: a };
  }
  if (id === 'efficient' && X.q && X.k) {
    const qi = row(X.q, i, d);
    const mq = Math.max(...qi);
    const eq = qi.map((x) => Math.exp(x - mq));
    const sq = eq.reduce((p, t) => p + t, 0);
    const rq = eq.map((x) => x / sq);
    const rk = [];
    for (let c = 0; c < d; c++) {
      let mk = -Infinity;
      for (let t = 0; t < J; t++) mk = Math.max(mk, X.k[t * d + c]);
      let sk = 0;
      for (let t = 0; t < J; t++) sk += Math.exp(X.k[t * d + c] - mk);
      rk.push(Math.exp(X.k[j * d + c] - mk) / sk);
    }
    const a = dot(rq, rk);
    lines.push(`ρ_q(q${i}) = softmax over features; ρ_k(k) = softmax over positions${causal ? ` j ≤ ${i}` : ''}`);
    lines.push(`A[${i},${j}] = Σ_c ρ_q(q${i})_c·ρ_k(k)[${j},c] = ${dotTerms(rq, rk)} = ${fmt(a)}`);
    return { lines, computed: a };
  }
  if (id === 'fixed') {
    const p = opts.pattern ?? 'current';
    const w = opts.window ?? 3;
    const a = fixedWeight(p, w, n, i, j);
    const rule = {
      current: 'A[i,i] = 1',
      previous: 'A[i,i−1] = 1 (row 0 attends to itself)',
      next: 'A[i,i+1] = 1 (the last row attends to itself)',
      left: `uniform over j in [max(0, i−${w}), i−1] (row 0 attends to itself)`,
      right: `uniform over j in [i+1, min(n−1, i+${w})] (the last row attends to itself)`,
      first: 'A[i,0] = 1',
      last: 'A[i,n−1] = 1',
    }[p] ?? p;
    lines.push(`pattern "${p}": ${rule}; input-independent, no softmax → A[${i},${j}] = ${a == null ? '?' : fmt(a)}`);
    return { lines, computed: a };
  }
  return { lines, computed: null };
}

export function fixedWeight(p, w, n, i, j) {
  switch (p) {
    case 'current': return j === i ? 1 : 0;
    case 'previous': return j === Math.max(0, i - 1) ? 1 : 0;
    case 'next': return j === Math.min(n - 1, i + 1) ? 1 : 0;
    case 'first': return j === 0 ? 1 : 0;
    case 'last': return j === n - 1 ? 1 : 0;
    case 'left': {
      if (i === 0) return j === 0 ? 1 : 0;
      const lo = Math.max(0, i - w);
      return j >= lo && j < i ? 1 / (i - lo) : 0;
    }
    case 'right': {
      if (i === n - 1) return j === i ? 1 : 0;
      const hi = Math.min(n - 1, i + w);
      return j > i && j <= hi ? 1 / (hi - i) : 0;
    }
    default: return null;
  }
}

/** Explains y[i,c] = Σ_j A[i,j]·v[j,c], listing the largest terms. */
export function explainOutput(ctx, i, c) {
  const { dims, weights: W, inputs: X, output: Y, family } = ctx;
  const { n, dv } = dims;
  const y = Y[i * dv + c];
  if (!W || !X.v) {
    return { lines: [`y[${i},${c}] = ${fmt(y)}` + (family === 'linear' ? ' (computed without A: φ(q_i)ᵀ·S / normaliser)' : ''), `A is only requested for n ≤ 256, so the sum is not shown.`], computed: null };
  }
  const terms = [];
  let s = 0;
  for (let j = 0; j < n; j++) {
    const a = W[i * n + j];
    const t = a * X.v[j * dv + c];
    s += t;
    if (a !== 0) terms.push({ j, a, v: X.v[j * dv + c], t });
  }
  terms.sort((p, q) => Math.abs(q.t) - Math.abs(p.t));
  const shown = terms.slice(0, 4).map((t) => `${fmt(t.a)}×${paren(t.v)} (j=${t.j})`);
  const rest = terms.length > 4 ? ` + … (${terms.length} non-zero terms)` : '';
  return { lines: [`y[${i},${c}] = Σ_j A[${i},j]·v[j,${c}] = ${shown.join(' + ')}${rest} = ${fmt(s)}`], computed: s };
}

/**
 * The small intermediates a linear variant computes instead of A, as the library returns them with
 * `state: true` (over all j; with causal, the last prefix, which is the same sums).
 * Returns [{ name, label, rows, cols, data: Float32Array, signed }].
 */
export function intermediates(id, result, dims) {
  const { n, d, dv } = dims;
  const { state, normalizer } = result;
  if (!state || !normalizer) return [];
  if (id === 'linear') {
    return [
      { name: 'S', label: 'S = Σ_j φ(k_j)·v_jᵀ (d×dv state)', rows: d, cols: dv, data: state, signed: true },
      { name: 'z', label: 'z = Σ_j φ(k_j) (normaliser, d)', rows: 1, cols: d, data: normalizer, signed: false },
    ];
  }
  if (id === 'efficient') {
    return [
      { name: 'context', label: 'ρ_k(k)ᵀ·v (d×dv context)', rows: d, cols: dv, data: state, signed: true },
      { name: 'lse', label: 'log Σ_j exp(k_jc) (column normaliser, d)', rows: 1, cols: d, data: normalizer, signed: true },
    ];
  }
  if (id === 'taylor') { // state row 0 is Σ_j v_j, normalizer[0] is n: the "1" feature
    return [
      { name: 'S', label: 'Σ_j k̂_j·v_jᵀ (d×dv state)', rows: d, cols: dv, data: state.slice(dv), signed: true },
      { name: 'z', label: `Σ_j k̂_j (normaliser; denominator n + q̂_i·z with n = ${n})`, rows: 1, cols: d, data: normalizer.slice(1), signed: true },
      { name: 'sv', label: 'Σ_j v_j (dv)', rows: 1, cols: dv, data: state.slice(0, dv), signed: true },
    ];
  }
  return [];
}
