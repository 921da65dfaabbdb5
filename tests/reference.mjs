// An independent float64 reference for every attnlab variant, written straight from the formulas of
// SPEC §2: it builds the explicit n×n effective attention matrix A by the definitions (no streaming,
// no prefix-sum tricks, no running maxima) and returns y = A·v. Everything is Float64Array.
//
//   reference(id, inputs, options) -> { output: Float64Array (n×dv), weights: Float64Array (n×n) }
//
// `inputs` holds the dimensions (n, d, dv, h, L, a, b, rank) and the arrays (Float32Array or plain
// arrays); `options` the SPEC options (causal, scale, eps, tiling, components, alpha, alphaLogits,
// pattern, window). L defaults to n; parameters sized by L contribute their first n rows / columns.
// This module is deliberately not defensive: bad input is the binding's job, not the reference's.

const SYNTH_LOGITS = {
  softmax: softmaxLogits,
  dense: denseLogits,
  dense1: dense1Logits,
  random: randomLogits,
  'factorized-dense': factorizedDenseLogits,
  'factorized-random': factorizedRandomLogits,
};

export function reference(id, inputs, options = {}) {
  const n = inputs.n;
  const dv = inputs.dv;
  const causal = !!options.causal;
  let A;
  if (id in SYNTH_LOGITS) {
    A = softmaxRows(SYNTH_LOGITS[id](inputs, options), n, causal);
  } else if (id === 'mixture') {
    A = softmaxRows(mixtureLogits(inputs, options), n, causal);
  } else if (id === 'linear') {
    A = linearWeights(inputs, options, causal);
  } else if (id === 'efficient') {
    A = efficientWeights(inputs, causal);
  } else if (id === 'taylor') {
    A = taylorWeights(inputs, options, causal);
  } else if (id === 'fixed') {
    A = fixedWeights(n, options, causal);
  } else {
    throw new Error(`reference: unknown variant ${id}`);
  }
  return { output: matmulAV(A, inputs.v, n, dv), weights: A };
}

// ---------------------------------------------------------------------------------------------
// Small dense linear algebra in float64.

/** C = X (rows×inner, row stride sx) · W (inner×cols, row stride sw) [+ bias], first `cols` columns. */
function matmul(X, rows, inner, W, cols, sw = cols, bias = null) {
  const C = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      let s = bias ? bias[j] : 0;
      for (let t = 0; t < inner; t++) s += X[i * inner + t] * W[t * sw + j];
      C[i * cols + j] = s;
    }
  }
  return C;
}

function matmulAV(A, v, n, dv) {
  const y = new Float64Array(n * dv);
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < dv; c++) {
      let s = 0;
      for (let j = 0; j < n; j++) s += A[i * n + j] * v[j * dv + c];
      y[i * dv + c] = s;
    }
  }
  return y;
}

/** softmax_row(B + M): M[i,j] = -∞ for j > i when causal; the row maximum is subtracted. */
function softmaxRows(B, n, causal) {
  const A = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    const last = causal ? i : n - 1;
    let m = -Infinity;
    for (let j = 0; j <= last; j++) m = Math.max(m, B[i * n + j]);
    let s = 0;
    for (let j = 0; j <= last; j++) {
      const e = Math.exp(B[i * n + j] - m);
      A[i * n + j] = e;
      s += e;
    }
    for (let j = 0; j <= last; j++) A[i * n + j] /= s;
    // masked entries (j > i) stay exactly 0
  }
  return A;
}

// ---------------------------------------------------------------------------------------------
// Logits B (n×n) of the softmax-type variants.

/** softmax: B = q·kᵀ·scale, scale default 1/√d. */
function softmaxLogits({ n, d, q, k }, options) {
  const scale = options.scale ?? 1 / Math.sqrt(d);
  const B = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += q[i * d + c] * k[j * d + c];
      B[i * n + j] = s * scale;
    }
  }
  return B;
}

/** dense: B = relu(x·w1 + b1)·w2 + b2, w2 is h×L, b2 has L entries; columns < n. */
function denseLogits({ n, d, h, L = n, x, w1, b1, w2, b2 }) {
  const H = matmul(x, n, d, w1, h, h, b1);
  for (let t = 0; t < H.length; t++) H[t] = Math.max(0, H[t]);
  return matmul(H, n, h, w2, n, L, b2);
}

/** dense1: B = x·w, w is d×L; columns < n. */
function dense1Logits({ n, d, L = n, x, w }) {
  return matmul(x, n, d, w, n, L);
}

/** random: B = r[:n, :n], r is L×L. */
function randomLogits({ n, L = n, r }) {
  const B = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) B[i * n + j] = r[i * L + j];
  return B;
}

/**
 * factorized-dense: F_A = x·wa + ba (n×a), F_B = x·wb + bb (n×b);
 * kronecker (default): B[i,j] = F_A[i, ⌊j/b⌋]·F_B[i, j mod b]; tile: B[i,j] = F_A[i, j mod a]·F_B[i, j mod b].
 */
function factorizedDenseLogits({ n, d, a, b, x, wa, ba, wb, bb }, options) {
  const FA = matmul(x, n, d, wa, a, a, ba);
  const FB = matmul(x, n, d, wb, b, b, bb);
  const tile = options.tiling === 'tile';
  const B = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const pa = tile ? j % a : Math.floor(j / b);
      B[i * n + j] = FA[i * a + pa] * FB[i * b + (j % b)];
    }
  }
  return B;
}

/** factorized-random: B = r1[:n]·r2[:n]ᵀ, r1 and r2 are L×rank. */
function factorizedRandomLogits({ n, rank, r1, r2 }) {
  const B = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let t = 0; t < rank; t++) s += r1[i * rank + t] * r2[j * rank + t];
      B[i * n + j] = s;
    }
  }
  return B;
}

/** mixture: B = Σ_c α_c·B_c; α = alpha, or softmax(alphaLogits). */
function mixtureLogits(inputs, options) {
  const n = inputs.n;
  const components = options.components;
  let alpha;
  if (options.alpha !== undefined) {
    alpha = Array.from(options.alpha, Number);
  } else {
    const z = Array.from(options.alphaLogits, Number);
    const m = Math.max(...z);
    const e = z.map((t) => Math.exp(t - m));
    const s = e.reduce((p, t) => p + t, 0);
    alpha = e.map((t) => t / s);
  }
  const B = new Float64Array(n * n);
  components.forEach((c, idx) => {
    const Bc = SYNTH_LOGITS[c](inputs, options);
    for (let t = 0; t < B.length; t++) B[t] += alpha[idx] * Bc[t];
  });
  return B;
}

// ---------------------------------------------------------------------------------------------
// Linear-family variants: A built entry by entry from its definition.

/** linear: φ(t) = elu(t)+1; A[i,j] = φ(q_i)·φ(k_j) / (Σ_{j'} φ(q_i)·φ(k_{j'}) + eps), j' ≤ i when causal. */
function linearWeights({ n, d, q, k }, options, causal) {
  const eps = options.eps ?? 1e-6;
  const phi = (t) => (t > 0 ? t + 1 : Math.exp(t));
  const A = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    const last = causal ? i : n - 1;
    let denom = 0;
    for (let j = 0; j <= last; j++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += phi(q[i * d + c]) * phi(k[j * d + c]);
      A[i * n + j] = s;
      denom += s;
    }
    denom += eps;
    for (let j = 0; j <= last; j++) A[i * n + j] /= denom;
  }
  return A;
}

/**
 * efficient: ρ_q(q) = softmax over the d features of each q row; ρ_k(k) = softmax over the n
 * positions of each k column (causal: over the prefix j ≤ i); A[i,j] = Σ_c ρ_q[i,c]·ρ_k[j,c].
 */
function efficientWeights({ n, d, q, k }, causal) {
  const rq = new Float64Array(n * d);
  for (let i = 0; i < n; i++) {
    let m = -Infinity;
    for (let c = 0; c < d; c++) m = Math.max(m, q[i * d + c]);
    let s = 0;
    for (let c = 0; c < d; c++) s += (rq[i * d + c] = Math.exp(q[i * d + c] - m));
    for (let c = 0; c < d; c++) rq[i * d + c] /= s;
  }
  const A = new Float64Array(n * n);
  const colSoftmax = (i, last) => {
    // ρ_k over positions 0..last, column by column; returns (last+1)×d
    const rk = new Float64Array((last + 1) * d);
    for (let c = 0; c < d; c++) {
      let m = -Infinity;
      for (let j = 0; j <= last; j++) m = Math.max(m, k[j * d + c]);
      let s = 0;
      for (let j = 0; j <= last; j++) s += (rk[j * d + c] = Math.exp(k[j * d + c] - m));
      for (let j = 0; j <= last; j++) rk[j * d + c] /= s;
    }
    return rk;
  };
  const full = causal ? null : colSoftmax(0, n - 1);
  for (let i = 0; i < n; i++) {
    const last = causal ? i : n - 1;
    const rk = causal ? colSoftmax(i, last) : full;
    for (let j = 0; j <= last; j++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += rq[i * d + c] * rk[j * d + c];
      A[i * n + j] = s;
    }
  }
  return A;
}

/**
 * taylor: q̂ = q/max(‖q‖, 1e-12), likewise k̂; sim(i,j) = 1 + q̂_i·k̂_j;
 * A[i,j] = sim(i,j) / (Σ_{j'} sim(i,j') + eps), j' ≤ i when causal.
 */
function taylorWeights({ n, d, q, k }, options, causal) {
  const eps = options.eps ?? 1e-6;
  const normalize = (X) => {
    const Y = new Float64Array(n * d);
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += X[i * d + c] * X[i * d + c];
      const norm = Math.max(Math.sqrt(s), 1e-12);
      for (let c = 0; c < d; c++) Y[i * d + c] = X[i * d + c] / norm;
    }
    return Y;
  };
  const qh = normalize(q);
  const kh = normalize(k);
  const A = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    const last = causal ? i : n - 1;
    let denom = 0;
    for (let j = 0; j <= last; j++) {
      let s = 1;
      for (let c = 0; c < d; c++) s += qh[i * d + c] * kh[j * d + c];
      A[i * n + j] = s;
      denom += s;
    }
    denom += eps;
    for (let j = 0; j <= last; j++) A[i * n + j] /= denom;
  }
  return A;
}

// ---------------------------------------------------------------------------------------------
// fixed patterns (Raganato et al. 2020).

function fixedWeights(n, options, causal) {
  const pattern = options.pattern;
  const w = options.window ?? 3;
  if (causal && (pattern === 'next' || pattern === 'right' || pattern === 'last')) {
    throw new Error(`reference: fixed pattern ${pattern} has no causal form`);
  }
  const A = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    let cols;
    switch (pattern) {
      case 'current': cols = [i]; break;
      case 'previous': cols = [i === 0 ? 0 : i - 1]; break;
      case 'next': cols = [i === n - 1 ? n - 1 : i + 1]; break;
      case 'first': cols = [0]; break;
      case 'last': cols = [n - 1]; break;
      case 'left': {
        cols = [];
        for (let j = Math.max(0, i - w); j <= i - 1; j++) cols.push(j);
        if (i === 0) cols = [0];
        break;
      }
      case 'right': {
        cols = [];
        for (let j = i + 1; j <= Math.min(n - 1, i + w); j++) cols.push(j);
        if (i === n - 1) cols = [n - 1];
        break;
      }
      default: throw new Error(`reference: unknown fixed pattern ${pattern}`);
    }
    for (const j of cols) A[i * n + j] = 1 / cols.length;
  }
  return A;
}
