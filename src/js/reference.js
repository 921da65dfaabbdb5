// The definitions of every attnlab variant, in float64: one entry per variant id.
//
// This is the project's independent oracle. It is written from the math in docs/contract.md, not
// from the C code: it builds the explicit n×n effective attention matrix A by the definitions (no
// streaming, no prefix-sum tricks, no running maxima) and returns y = A·v. The tests compare every
// build against it (tests/fixtures/make-fixtures.mjs stores its answers), the page explains a hovered cell
// with its numbers (explain) and prints its flop counts (flopCount), and the benchmark uses the
// same counts. Adding a variant adds one entry to `definitions` below.
//
//   reference(id, inputs, options)        -> { output: Float64Array (n×dv), weights: Float64Array (n×n) }
//   referenceRows(id, inputs, options, rows) -> chosen output rows without the n×n matrix
//   logits(id, inputs, options)           -> Float64Array (n×n) | null (linear family, fixed)
//   explain(id, inputs, options, i, j)    -> Step[]: how A[i,j] comes about, numbers plugged in
//   explainOutput(inputs, weights, i, c)  -> Step[]: y[i,c] = Σ_j A[i,j]·v[j,c]
//   intermediates(id, result, dims)       -> what a linear variant keeps instead of A (state: true)
//   flopCount(id, dims, options)          -> { flops, formula } (a multiply-add counts 2)
//   referenceGrad(id, inputs, dOutput, options) -> { output, grads }: the gradient of Σ dOutput ⊙ y
//                                            with respect to every array the variant reads
//   gflops(flops, ms), hasDefinition(id)
//   ACCURACY_BAR                          the contract's bar against this reference: { abs, rel }
//
// A Step is { label, formula, value, terms? }: read it as `label = formula = value`; `terms`, when
// present, are the [a, b] pairs of the sum of products the formula stands for (all of them; a
// display shows the first few). Every entry ends up with
//   weights(inputs, options, causal) -> Float64Array(n*n), weightRow(inputs, options, i),
//   explain(inputs, options, i, j) -> Step[], flops(dims, options) -> { flops, formula },
// and softmax-type entries also with logits(inputs, options) -> Float64Array(n*n). An entry is
// written as one of two kinds:
//   softmaxType({ logitRow, logitSteps, logitFlops }): logitRow(inputs, options, i) gives row i
//     of B (A = softmax_row(B + M)), logitSteps(inputs, options, i, j) the Steps ending with
//     B[i,j], logitFlops(dims, options) the cost of B ({ flops, formula } or null); the rest,
//     including what a mixture needs of a component, is derived;
//   rowwise({ weightRow, explain, flops }): weightRow(inputs, options, i) gives row i of A.
// Linear-family entries may add features(X, n, d) (their kernel feature map φ) and
// intermediates(state, normalizer, dims) (what their state: true arrays mean).
//
// `inputs` holds the dimensions (n, d, dv, h, L, a, b, rank; L defaults to n) and the arrays
// (Float32Array or plain arrays); `options` the binding's options (causal, scale, eps, tiling,
// components, alpha, alphaLogits, pattern, window) with the defaults of the definitions: scale
// 1/√d, eps 1e-6, tiling kronecker, pattern current, window 3. Parameters sized by L contribute
// their first n rows / columns. Not defensive: bad input is the binding's job. No DOM, no Node APIs.

const DEFAULT_EPS = 1e-6;
const DEFAULT_WINDOW = 3;
const NORM_FLOOR = 1e-12; // taylor: q̂ = q / max(‖q‖, 1e-12)

// ---------------------------------------------------------------------------------------------
// Small float64 helpers.

/** Σ_c X[xi + c·xs]·Y[yi + c·ys] for c < len, starting from `init`, and the [x, y] pairs. */
function dotWithTerms(X, xi, xs, Y, yi, ys, len, init = 0, withTerms = false) {
  let s = init;
  const terms = withTerms ? [] : null;
  for (let c = 0; c < len; c++) {
    const x = X[xi + c * xs];
    const y = Y[yi + c * ys];
    s += x * y;
    if (terms) terms.push([x, y]);
  }
  return { value: s, terms };
}

/** Row i of X (rows × inner) times W (inner × cols, row stride sw), plus bias: cols values. */
function affineRow(X, i, inner, W, cols, sw, bias = null) {
  const out = new Float64Array(cols);
  for (let j = 0; j < cols; j++) {
    let s = bias ? bias[j] : 0;
    for (let t = 0; t < inner; t++) s += X[i * inner + t] * W[t * sw + j];
    out[j] = s;
  }
  return out;
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

/** The last column row i may use: i when causal, n - 1 otherwise. */
const lastColumn = (n, causal, i) => (causal ? i : n - 1);
const over = (n, causal, i) => (causal ? `over j' ≤ ${i}` : `over all ${n} columns`);

/** The step of a causally masked cell. */
const maskedStep = (i, j, why) => ({
  label: `A[${i},${j}]`, formula: `0: causal row ${i} uses only columns j ≤ ${i} (${why})`, value: 0,
});

// ---------------------------------------------------------------------------------------------
// Softmax-type variants: B (n×n logits), A = softmax_row(B + M), M[i,j] = −∞ for j > i when causal.

/** max, Σ exp(B − max) and the weights of one logit row over columns 0..last. */
function softmaxRow(B, last) {
  let m = -Infinity;
  for (let j = 0; j <= last; j++) m = Math.max(m, B[j]);
  const e = new Float64Array(last + 1);
  let s = 0;
  for (let j = 0; j <= last; j++) {
    e[j] = Math.exp(B[j] - m);
    s += e[j];
  }
  for (let j = 0; j <= last; j++) e[j] /= s;
  return { max: m, sum: s, weights: e };
}

/**
 * Completes a softmax-type entry: from logitRow / logitSteps / logitFlops derives
 * logits(inputs, options), explain(inputs, options, i, j) and flops(dims, options).
 */
function softmaxType(def) {
  const weightRow = (inputs, options, i) => {
    const n = inputs.n;
    const A = new Float64Array(n); // masked entries (j > i) stay exactly 0
    A.set(softmaxRow(def.logitRow(inputs, options, i), lastColumn(n, !!options.causal, i)).weights);
    return A;
  };
  return rowwise({
    ...def,
    weightRow,
    // dB = A ⊙ (dA − rowsum(dA ⊙ A)): the softmax's backward, row by row; masked entries have A = 0
    weightBackward: def.logitBackward && function weightBackward(inputs, options, A, dA, grad) {
      const n = inputs.n;
      const dB = new Float64Array(n * n);
      for (let i = 0; i < n; i++) {
        let g = 0;
        for (let j = 0; j < n; j++) g += A[i * n + j] * dA[i * n + j];
        for (let j = 0; j < n; j++) dB[i * n + j] = A[i * n + j] * (dA[i * n + j] - g);
      }
      def.logitBackward(inputs, options, dB, grad);
    },
    logits(inputs, options = {}) {
      const n = inputs.n;
      const B = new Float64Array(n * n);
      for (let i = 0; i < n; i++) B.set(def.logitRow(inputs, options, i), i * n);
      return B;
    },
    explain(inputs, options, i, j) {
      const n = inputs.n;
      if (options.causal && j > i) return [maskedStep(i, j, `B[${i},${j}] is masked to −∞`)];
      const last = lastColumn(n, !!options.causal, i);
      const row = def.logitRow(inputs, options, i);
      const { max, sum, weights } = softmaxRow(row, last);
      return [
        ...def.logitSteps(inputs, options, i, j),
        { label: `max B[${i},·]`, formula: `max of B[${i},j'] ${over(n, options.causal, i)}`, value: max },
        { label: `Z${i}`, formula: `Σ_j' exp(B[${i},j'] − max) ${over(n, options.causal, i)}`, value: sum },
        { label: `A[${i},${j}]`, formula: `exp(B[${i},${j}] − max) / Z${i}`, value: weights[j] },
      ];
    },
    flops(dims, options = {}) {
      const av = 2 * dims.n * dims.n * dims.dv;
      const l = def.logitFlops(dims, options);
      if (!l) return { flops: av, formula: '≈ 2n²dv' };
      return { flops: l.flops + av, formula: l.formula === '0' ? '2n²dv' : `${l.formula} + 2n²dv` };
    },
  });
}

/**
 * Completes an entry that has weightRow(inputs, options, i) with weights(inputs, options, causal),
 * and one that has weightBackward(inputs, options, A, dA, grad) with grad(inputs, options, dOutput).
 */
function rowwise(def) {
  const weights = (inputs, options, causal) => {
    const n = inputs.n;
    const o = { ...options, causal: !!causal };
    const A = new Float64Array(n * n);
    for (let i = 0; i < n; i++) A.set(def.weightRow(inputs, o, i), i * n);
    return A;
  };
  return {
    ...def,
    weights,
    // y = A·v: dv = Aᵀ·dO, dA = dO·vᵀ, then the entry's own weightBackward
    grad: def.weightBackward && function grad(inputs, options, dOutput) {
      const { n, dv, v } = inputs;
      const o = { ...options, causal: !!options.causal };
      const A = weights(inputs, o, o.causal);
      const grads = {};
      const grad = gradAccumulator(inputs, grads);
      const dA = new Float64Array(n * n);
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          let s = 0;
          for (let c = 0; c < dv; c++) s += dOutput[i * dv + c] * v[j * dv + c];
          dA[i * n + j] = s;
        }
      }
      def.weightBackward(inputs, o, A, dA, grad);
      const gv = grad('v');
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          const a = A[i * n + j];
          if (a === 0) continue;
          for (let c = 0; c < dv; c++) gv[j * dv + c] += a * dOutput[i * dv + c];
        }
      }
      return { output: matmulAV(A, v, n, dv), grads };
    },
  };
}

/** grad(name, length?) over `grads`: the accumulator of array `name`, made zero on first use. */
function gradAccumulator(inputs, grads) {
  return (name, length = inputs[name].length) => {
    if (!grads[name]) grads[name] = new Float64Array(length);
    return grads[name];
  };
}

const scaleOf = (options, d) => options.scale ?? 1 / Math.sqrt(d);

/** softmax: B = q·kᵀ·scale, scale default 1/√d. */
const softmax = softmaxType({
  logitRow({ n, d, q, k }, options, i) {
    const scale = scaleOf(options, d);
    const out = new Float64Array(n);
    for (let j = 0; j < n; j++) out[j] = dotWithTerms(q, i * d, 1, k, j * d, 1, d).value * scale;
    return out;
  },
  logitSteps({ d, q, k }, options, i, j) {
    const scale = scaleOf(options, d);
    const dot = dotWithTerms(q, i * d, 1, k, j * d, 1, d, 0, true);
    return [
      { label: 'scale', formula: options.scale != null ? 'scale (option)' : `1/√d = 1/√${d}`, value: scale },
      { label: `q${i}·k${j}`, formula: `Σ_c q[${i},c]·k[${j},c]`, value: dot.value, terms: dot.terms },
      { label: `B[${i},${j}]`, formula: `scale·(q${i}·k${j})`, value: dot.value * scale },
    ];
  },
  logitFlops: ({ n, d }) => ({ flops: 2 * n * n * d, formula: '2n²d' }),
  // dq = scale·dB·k, dk = scale·dBᵀ·q
  logitBackward({ n, d, q, k }, options, dB, grad) {
    const scale = scaleOf(options, d);
    const dq = grad('q');
    const dk = grad('k');
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const g = dB[i * n + j] * scale;
        if (g === 0) continue;
        for (let c = 0; c < d; c++) {
          dq[i * d + c] += g * k[j * d + c];
          dk[j * d + c] += g * q[i * d + c];
        }
      }
    }
  },
});

/** dense: B = relu(x·w1 + b1)·w2 + b2, w2 is h×L, b2 has L entries; columns < n. */
function denseHidden({ d, h, x, w1, b1 }, i) {
  const H = affineRow(x, i, d, w1, h, h, b1);
  for (let u = 0; u < h; u++) H[u] = Math.max(0, H[u]);
  return H;
}
const dense = softmaxType({
  logitRow(inputs, options, i) {
    const { n, h, L = n, w2, b2 } = inputs;
    return affineRow(denseHidden(inputs, i), 0, h, w2, n, L, b2);
  },
  logitSteps(inputs, options, i, j) {
    const { n, h, L = n, w2, b2 } = inputs;
    const H = denseHidden(inputs, i);
    const hw = dotWithTerms(H, 0, 1, w2, j, L, h, 0, true);
    return [
      { label: `h${i}·w2[:,${j}]`, formula: `Σ_u h${i}[u]·w2[u,${j}], h${i} = relu(x${i}·w1 + b1) (the hidden row)`, value: hw.value, terms: hw.terms },
      { label: `b2[${j}]`, formula: 'bias', value: b2[j] },
      { label: `B[${i},${j}]`, formula: `b2[${j}] + h${i}·w2[:,${j}]`, value: dotWithTerms(H, 0, 1, w2, j, L, h, b2[j]).value },
    ];
  },
  logitFlops: ({ n, d, h }) => ({ flops: 2 * n * d * h + 2 * n * h * n, formula: '2n·d·h + 2n²h' }),
  // H = relu(Z), Z = x·w1 + b1: dw2[:, j] = Hᵀ·dB[:, j] and db2[j] = Σ_i dB[i,j] for j < n (the
  // other L − n columns: 0), dH = dB·w2[:, :n]ᵀ, dZ = dH where Z > 0, then dw1 = xᵀ·dZ,
  // db1 = Σ_i dZ[i], dx = dZ·w1ᵀ
  logitBackward({ n, d, h, L = n, x, w1, b1, w2 }, options, dB, grad) {
    const [dx, dw1, db1, dw2, db2] = ['x', 'w1', 'b1', 'w2', 'b2'].map((name) => grad(name));
    const dZ = new Float64Array(h);
    for (let i = 0; i < n; i++) {
      const Z = affineRow(x, i, d, w1, h, h, b1);
      for (let u = 0; u < h; u++) {
        const H = Math.max(0, Z[u]);
        let dH = 0;
        for (let j = 0; j < n; j++) {
          const g = dB[i * n + j];
          dH += g * w2[u * L + j];
          dw2[u * L + j] += H * g;
        }
        dZ[u] = Z[u] > 0 ? dH : 0;
      }
      for (let j = 0; j < n; j++) db2[j] += dB[i * n + j];
      for (let u = 0; u < h; u++) db1[u] += dZ[u];
      for (let t = 0; t < d; t++) {
        let s = 0;
        for (let u = 0; u < h; u++) {
          dw1[t * h + u] += x[i * d + t] * dZ[u];
          s += dZ[u] * w1[t * h + u];
        }
        dx[i * d + t] += s;
      }
    }
  },
});

/** dense1: B = x·w, w is d×L; columns < n. */
const dense1 = softmaxType({
  logitRow({ n, d, L = n, x, w }, options, i) {
    return affineRow(x, i, d, w, n, L);
  },
  logitSteps({ n, d, L = n, x, w }, options, i, j) {
    const dot = dotWithTerms(x, i * d, 1, w, j, L, d, 0, true);
    return [{ label: `B[${i},${j}]`, formula: `x${i}·w[:,${j}]`, value: dot.value, terms: dot.terms }];
  },
  logitFlops: ({ n, d }) => ({ flops: 2 * n * d * n, formula: '2n²d' }),
  // dx = dB·w[:, :n]ᵀ, dw[:, j] = xᵀ·dB[:, j] for j < n (the other L − n columns: 0)
  logitBackward({ n, d, L = n, x, w }, options, dB, grad) {
    const dx = grad('x');
    const dw = grad('w');
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const g = dB[i * n + j];
        if (g === 0) continue;
        for (let t = 0; t < d; t++) {
          dx[i * d + t] += g * w[t * L + j];
          dw[t * L + j] += g * x[i * d + t];
        }
      }
    }
  },
});

/** random: B = r[:n, :n], r is L×L. */
const random = softmaxType({
  logitRow({ n, L = n, r }, options, i) {
    const out = new Float64Array(n);
    for (let j = 0; j < n; j++) out[j] = r[i * L + j];
    return out;
  },
  logitSteps({ n, L = n, r }, options, i, j) {
    return [{ label: `B[${i},${j}]`, formula: `r[${i},${j}] (a constant: the input is not used)`, value: r[i * L + j] }];
  },
  logitFlops: () => ({ flops: 0, formula: '0' }),
  // dr[:n, :n] = dB; the rest of r: 0
  logitBackward({ n, L = n }, options, dB, grad) {
    const dr = grad('r');
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) dr[i * L + j] += dB[i * n + j];
  },
});

/**
 * factorized-dense: F_A = x·wa + ba (n×a), F_B = x·wb + bb (n×b);
 * kronecker (default): B[i,j] = F_A[i, ⌊j/b⌋]·F_B[i, j mod b]; tile: B[i,j] = F_A[i, j mod a]·F_B[i, j mod b].
 */
function factorIndex(options, a, b, j) {
  return options.tiling === 'tile' ? j % a : Math.floor(j / b);
}
const factorizedDense = softmaxType({
  logitRow({ n, d, a, b, x, wa, ba, wb, bb }, options, i) {
    const FA = affineRow(x, i, d, wa, a, a, ba);
    const FB = affineRow(x, i, d, wb, b, b, bb);
    const out = new Float64Array(n);
    for (let j = 0; j < n; j++) out[j] = FA[factorIndex(options, a, b, j)] * FB[j % b];
    return out;
  },
  logitSteps({ d, a, b, x, wa, ba, wb, bb }, options, i, j) {
    const pa = factorIndex(options, a, b, j);
    const pb = j % b;
    const fa = dotWithTerms(x, i * d, 1, wa, pa, a, d, ba[pa], true);
    const fb = dotWithTerms(x, i * d, 1, wb, pb, b, d, bb[pb], true);
    const rule = options.tiling === 'tile' ? `tile: j mod a = ${pa}, j mod b = ${pb}` : `kronecker: ⌊j/b⌋ = ${pa}, j mod b = ${pb}`;
    return [
      { label: `F_A[${i},${pa}]`, formula: `x${i}·wa[:,${pa}] + ba[${pa}]`, value: fa.value, terms: fa.terms },
      { label: `F_B[${i},${pb}]`, formula: `x${i}·wb[:,${pb}] + bb[${pb}]`, value: fb.value, terms: fb.terms },
      { label: `B[${i},${j}]`, formula: `F_A[${i},${pa}]·F_B[${i},${pb}] (${rule})`, value: fa.value * fb.value },
    ];
  },
  logitFlops: ({ n, d, a, b }) => ({ flops: 2 * n * d * (a + b) + n * n, formula: '2n·d·(a+b) + n²' }),
  // dF_A[i, pa(j)] += dB[i,j]·F_B[i, j mod b], dF_B[i, j mod b] += dB[i,j]·F_A[i, pa(j)] (pa: the
  // tiling's factor index), then through the affine maps: dwa = xᵀ·dF_A, dba = Σ_i dF_A[i],
  // dx = dF_A·waᵀ + dF_B·wbᵀ, likewise wb, bb
  logitBackward({ n, d, a, b, x, wa, ba, wb, bb }, options, dB, grad) {
    const [dx, dwa, dba, dwb, dbb] = ['x', 'wa', 'ba', 'wb', 'bb'].map((name) => grad(name));
    for (let i = 0; i < n; i++) {
      const FA = affineRow(x, i, d, wa, a, a, ba);
      const FB = affineRow(x, i, d, wb, b, b, bb);
      const dFA = new Float64Array(a);
      const dFB = new Float64Array(b);
      for (let j = 0; j < n; j++) {
        const pa = factorIndex(options, a, b, j);
        const g = dB[i * n + j];
        dFA[pa] += g * FB[j % b];
        dFB[j % b] += g * FA[pa];
      }
      const back = (dF, m, W, dW, dBias) => {
        for (let u = 0; u < m; u++) {
          dBias[u] += dF[u];
          for (let t = 0; t < d; t++) {
            dW[t * m + u] += x[i * d + t] * dF[u];
            dx[i * d + t] += dF[u] * W[t * m + u];
          }
        }
      };
      back(dFA, a, wa, dwa, dba);
      back(dFB, b, wb, dwb, dbb);
    }
  },
});

/** factorized-random: B = r1[:n]·r2[:n]ᵀ, r1 and r2 are L×rank. */
const factorizedRandom = softmaxType({
  logitRow({ n, rank, r1, r2 }, options, i) {
    const out = new Float64Array(n);
    for (let j = 0; j < n; j++) out[j] = dotWithTerms(r1, i * rank, 1, r2, j * rank, 1, rank).value;
    return out;
  },
  logitSteps({ rank, r1, r2 }, options, i, j) {
    const dot = dotWithTerms(r1, i * rank, 1, r2, j * rank, 1, rank, 0, true);
    return [{ label: `B[${i},${j}]`, formula: `r1[${i}]·r2[${j}]`, value: dot.value, terms: dot.terms }];
  },
  logitFlops: ({ n, rank }) => ({ flops: 2 * n * n * rank, formula: '2n²·rank' }),
  // dr1[:n] = dB·r2[:n], dr2[:n] = dBᵀ·r1[:n]; rows n..L−1: 0
  logitBackward({ n, rank, r1, r2 }, options, dB, grad) {
    const dr1 = grad('r1');
    const dr2 = grad('r2');
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const g = dB[i * n + j];
        if (g === 0) continue;
        for (let t = 0; t < rank; t++) {
          dr1[i * rank + t] += g * r2[j * rank + t];
          dr2[j * rank + t] += g * r1[i * rank + t];
        }
      }
    }
  },
});

/** mixture weights: alpha, or softmax(alphaLogits), or uniform when neither is given. */
export function mixtureAlpha(options) {
  const k = options.components.length;
  if (options.alpha != null) return Array.from(options.alpha, Number);
  if (options.alphaLogits == null) return Array.from({ length: k }, () => 1 / k);
  const z = Array.from(options.alphaLogits, Number);
  const m = Math.max(...z);
  const e = z.map((t) => Math.exp(t - m));
  const s = e.reduce((p, t) => p + t, 0);
  return e.map((t) => t / s);
}

/** The definition of mixture component `c`: any entry with logits, looked up in `definitions`. */
function componentDefinition(c) {
  const def = definitions[c];
  if (!def) throw new Error(`reference: mixture component '${c}' has no definition`);
  if (!def.logitRow) throw new Error(`reference: mixture component '${c}' has no logits`);
  if (def === definitions.mixture) throw new Error('reference: a mixture cannot contain a mixture');
  return def;
}

/** mixture: B = Σ_c α_c·B_c over options.components; every component sees the same options. */
const mixture = softmaxType({
  logitRow(inputs, options, i) {
    const alpha = mixtureAlpha(options);
    const out = new Float64Array(inputs.n);
    options.components.forEach((c, idx) => {
      const row = componentDefinition(c).logitRow(inputs, options, i);
      for (let t = 0; t < out.length; t++) out[t] += alpha[idx] * row[t];
    });
    return out;
  },
  logitSteps(inputs, options, i, j) {
    const alpha = mixtureAlpha(options);
    const steps = [];
    const terms = [];
    let value = 0;
    options.components.forEach((c, idx) => {
      const own = componentDefinition(c).logitSteps(inputs, options, i, j);
      const last = own[own.length - 1];
      steps.push({ ...last, label: `B_${c}[${i},${j}]` });
      terms.push([alpha[idx], last.value]);
      value += alpha[idx] * last.value;
    });
    const how = options.alpha != null ? 'α = alpha' : options.alphaLogits != null ? 'α = softmax(alphaLogits)' : 'α uniform';
    steps.push({ label: `B[${i},${j}]`, formula: `Σ_c α_c·B_c[${i},${j}] (${how})`, value, terms });
    return steps;
  },
  logitFlops(dims, options) {
    if (!Array.isArray(options.components)) return null;
    let flops = 0;
    const parts = [];
    for (const c of options.components) {
      const def = definitions[c];
      if (!def || !def.logitFlops) continue;
      const l = def.logitFlops(dims, options);
      flops += l.flops + dims.n * dims.n;
      if (l.formula !== '0') parts.push(l.formula);
    }
    parts.push(`${options.components.length}·n² (mixing)`);
    return { flops, formula: parts.join(' + ') };
  },
  // each component gets α_c·dB (components reading the same array add up); dα_c = Σ dB ⊙ B_c,
  // and through α = softmax(z) for alphaLogits: dz_c = α_c·(dα_c − Σ_c' α_c'·dα_c')
  logitBackward(inputs, options, dB, grad) {
    const alpha = mixtureAlpha(options);
    const k = options.components.length;
    const dAlpha = new Float64Array(k);
    options.components.forEach((c, idx) => {
      const def = componentDefinition(c);
      if (!def.logitBackward) throw new Error(`reference: mixture component '${c}' has no logitBackward`);
      const Bc = def.logits(inputs, options);
      let s = 0;
      for (let t = 0; t < dB.length; t++) s += dB[t] * Bc[t];
      dAlpha[idx] = s;
      def.logitBackward(inputs, options, dB.map((g) => g * alpha[idx]), grad);
    });
    if (options.alphaLogits != null) {
      let s = 0;
      for (let c = 0; c < k; c++) s += alpha[c] * dAlpha[c];
      const dz = grad('alphaLogits', k);
      for (let c = 0; c < k; c++) dz[c] += alpha[c] * (dAlpha[c] - s);
    } else {
      const da = grad('alpha', k);
      for (let c = 0; c < k; c++) da[c] += dAlpha[c];
    }
  },
});

// ---------------------------------------------------------------------------------------------
// Linear-family variants: A built entry by entry from its definition.

/**
 * A kernel feature map as rows: F (n×m) with F[i] = [1 (when `ones`), ...f(X, i)], m = ones + d.
 * linear and taylor are kernel attention A[i,j] ∝ φ(q_i)·φ(k_j); `features` states their φ, so
 * a test can check the S = Σ φ(k_j)·v_jᵀ, z = Σ φ(k_j) form against the definition.
 */
function featureMap(X, n, d, ones, f) {
  const m = ones + d;
  const F = new Float64Array(n * m);
  for (let i = 0; i < n; i++) {
    if (ones) F[i * m] = 1;
    F.set(f(X, i), i * m + ones);
  }
  return { F, m };
}

const linearFlops = ({ n, d, dv }) => ({ flops: 4 * n * d * dv, formula: '≈ 4·n·d·dv' });
const epsOf = (options) => options.eps ?? DEFAULT_EPS;
const phi = (t) => (t > 0 ? t + 1 : Math.exp(t));
const dphi = (t) => (t > 0 ? 1 : Math.exp(t));

/** The row of a normalised kernel: A[i,j] = score(j) / (Σ_{j' ≤ last} score(j') + eps). */
function normalisedRow(scores, last, eps) {
  let denom = 0;
  for (let j = 0; j <= last; j++) denom += scores[j];
  return { sum: denom, denom: denom + eps };
}

/**
 * The backward of A[i,j] = s_j / (Σ_{j' ≤ last} s_j' + eps) for one row: ds_j = (dA[i,j] −
 * Σ_j' dA[i,j']·A[i,j']) / (Σ s + eps), j ≤ last.
 */
function normalisedRowBackward(A, dA, n, i, last, denom) {
  let g = 0;
  for (let j = 0; j <= last; j++) g += dA[i * n + j] * A[i * n + j];
  const ds = new Float64Array(last + 1);
  for (let j = 0; j <= last; j++) ds[j] = (dA[i * n + j] - g) / denom;
  return ds;
}

/** linear: φ(q_i)·φ(k_j) for j ≤ last (φ(t) = elu(t)+1). */
function linearScores({ d, q, k }, i, last) {
  const s = new Float64Array(last + 1);
  for (let j = 0; j <= last; j++) {
    let t = 0;
    for (let c = 0; c < d; c++) t += phi(q[i * d + c]) * phi(k[j * d + c]);
    s[j] = t;
  }
  return s;
}

/** linear: A[i,j] = φ(q_i)·φ(k_j) / (Σ_{j'} φ(q_i)·φ(k_{j'}) + eps), j' ≤ i when causal. */
const linear = rowwise({
  weightRow(inputs, options, i) {
    const { n } = inputs;
    const last = lastColumn(n, !!options.causal, i);
    const s = linearScores(inputs, i, last);
    const { denom } = normalisedRow(s, last, epsOf(options));
    const A = new Float64Array(n);
    for (let j = 0; j <= last; j++) A[j] = s[j] / denom;
    return A;
  },
  features: (X, n, d) => featureMap(X, n, d, 0, (x, i) => Array.from({ length: d }, (_, c) => phi(x[i * d + c]))),
  explain(inputs, options, i, j) {
    const { n, d, q, k } = inputs;
    const causal = !!options.causal;
    if (causal && j > i) return [maskedStep(i, j, 'the prefix sums stop at i')];
    const last = lastColumn(n, causal, i);
    const eps = epsOf(options);
    const s = linearScores(inputs, i, last);
    const { sum, denom } = normalisedRow(s, last, eps);
    const terms = [];
    for (let c = 0; c < d; c++) terms.push([phi(q[i * d + c]), phi(k[j * d + c])]);
    return [
      { label: `φ(q${i})·φ(k${j})`, formula: `Σ_c φ(q[${i},c])·φ(k[${j},c]), φ(t) = elu(t)+1`, value: s[j], terms },
      { label: `Σ_j' φ(q${i})·φ(k_j')`, formula: `the row's denominator without eps, ${over(n, causal, i)}`, value: sum },
      { label: 'eps', formula: options.eps != null ? 'eps (option)' : 'eps (default)', value: eps },
      { label: `A[${i},${j}]`, formula: `φ(q${i})·φ(k${j}) / (Σ_j' φ(q${i})·φ(k_j') + eps)`, value: s[j] / denom },
    ];
  },
  flops: linearFlops,
  // through the normaliser (with eps), then s_ij = φ(q_i)·φ(k_j): dφ(q_i) = Σ_j ds_ij·φ(k_j),
  // dφ(k_j) = Σ_i ds_ij·φ(q_i), and φ'(t) = 1 for t > 0, eᵗ otherwise
  weightBackward(inputs, options, A, dA, grad) {
    const { n, d, q, k } = inputs;
    const dq = grad('q');
    const dk = grad('k');
    const eps = epsOf(options);
    for (let i = 0; i < n; i++) {
      const last = lastColumn(n, options.causal, i);
      const { denom } = normalisedRow(linearScores(inputs, i, last), last, eps);
      const ds = normalisedRowBackward(A, dA, n, i, last, denom);
      for (let j = 0; j <= last; j++) {
        for (let c = 0; c < d; c++) {
          dq[i * d + c] += ds[j] * phi(k[j * d + c]) * dphi(q[i * d + c]);
          dk[j * d + c] += ds[j] * phi(q[i * d + c]) * dphi(k[j * d + c]);
        }
      }
    }
  },
  intermediates: (state, normalizer, { d, dv }) => [
    { name: 'S', label: 'S = Σ_j φ(k_j)·v_jᵀ (d×dv state)', rows: d, cols: dv, data: state, signed: true },
    { name: 'z', label: 'z = Σ_j φ(k_j) (normaliser, d)', rows: 1, cols: d, data: normalizer, signed: false },
  ],
});

/** efficient: ρ_q(q_i) = softmax over the d features of row i. */
function rhoQ({ d, q }, i) {
  const r = new Float64Array(d);
  let m = -Infinity;
  for (let c = 0; c < d; c++) m = Math.max(m, q[i * d + c]);
  let s = 0;
  for (let c = 0; c < d; c++) s += (r[c] = Math.exp(q[i * d + c] - m));
  for (let c = 0; c < d; c++) r[c] /= s;
  return r;
}

/** efficient: ρ_k(k) = softmax over positions 0..last of each k column; (last+1)×d. */
function rhoK({ d, k }, last) {
  const rk = new Float64Array((last + 1) * d);
  for (let c = 0; c < d; c++) {
    let m = -Infinity;
    for (let j = 0; j <= last; j++) m = Math.max(m, k[j * d + c]);
    let s = 0;
    for (let j = 0; j <= last; j++) s += (rk[j * d + c] = Math.exp(k[j * d + c] - m));
    for (let j = 0; j <= last; j++) rk[j * d + c] /= s;
  }
  return rk;
}

/**
 * efficient: ρ_q(q) = softmax over the d features of each q row; ρ_k(k) = softmax over the n
 * positions of each k column (causal: over the prefix j ≤ i); A[i,j] = Σ_c ρ_q[i,c]·ρ_k[j,c].
 */
const efficient = rowwise({
  weightRow(inputs, options, i) {
    const { n, d } = inputs;
    const last = lastColumn(n, !!options.causal, i);
    const rq = rhoQ(inputs, i);
    const rk = rhoK(inputs, last);
    const A = new Float64Array(n);
    for (let j = 0; j <= last; j++) A[j] = dotWithTerms(rq, 0, 1, rk, j * d, 1, d).value;
    return A;
  },
  explain(inputs, options, i, j) {
    const { n, d } = inputs;
    const causal = !!options.causal;
    if (causal && j > i) return [maskedStep(i, j, 'ρ_k runs over the prefix j ≤ i')];
    const rq = rhoQ(inputs, i);
    const rk = rhoK(inputs, lastColumn(n, causal, i));
    const dot = dotWithTerms(rq, 0, 1, rk, j * d, 1, d, 0, true);
    return [{
      label: `A[${i},${j}]`,
      formula: `Σ_c ρ_q(q${i})_c·ρ_k(k)[${j},c]; ρ_q: softmax over the ${d} features of q${i}, ` +
        `ρ_k: softmax of each k column ${causal ? `over positions j ≤ ${i}` : `over all ${n} positions`}`,
      value: dot.value,
      terms: dot.terms,
    }];
  },
  flops: linearFlops,
  // A[i,j] = Σ_c ρ_q[i,c]·ρ_k⁽ⁱ⁾[j,c], ρ_k⁽ⁱ⁾ the column softmax over j ≤ last(i):
  // dρ_q[i,c] = Σ_j dA[i,j]·ρ_k⁽ⁱ⁾[j,c], dρ_k⁽ⁱ⁾[j,c] = dA[i,j]·ρ_q[i,c], each through its softmax
  // (dt = ρ ⊙ (dρ − Σ dρ ⊙ ρ), over the d features of q_i, over the positions j ≤ last of column c)
  weightBackward(inputs, options, A, dA, grad) {
    const { n, d } = inputs;
    const dq = grad('q');
    const dk = grad('k');
    const all = options.causal ? null : rhoK(inputs, n - 1);
    for (let i = 0; i < n; i++) {
      const last = lastColumn(n, options.causal, i);
      const rk = all ?? rhoK(inputs, last);
      const rq = rhoQ(inputs, i);
      const drq = new Float64Array(d);
      for (let j = 0; j <= last; j++) {
        for (let c = 0; c < d; c++) drq[c] += dA[i * n + j] * rk[j * d + c];
      }
      let g = 0;
      for (let c = 0; c < d; c++) g += drq[c] * rq[c];
      for (let c = 0; c < d; c++) dq[i * d + c] += rq[c] * (drq[c] - g);
      for (let c = 0; c < d; c++) {
        let gc = 0;
        for (let j = 0; j <= last; j++) gc += dA[i * n + j] * rq[c] * rk[j * d + c];
        for (let j = 0; j <= last; j++) dk[j * d + c] += rk[j * d + c] * (dA[i * n + j] * rq[c] - gc);
      }
    }
  },
  intermediates: (state, normalizer, { d, dv }) => [
    { name: 'context', label: 'ρ_k(k)ᵀ·v (d×dv context)', rows: d, cols: dv, data: state, signed: true },
    { name: 'lse', label: 'log Σ_j exp(k_jc) (column normaliser, d)', rows: 1, cols: d, data: normalizer, signed: true },
  ],
});

/** taylor: row i of X divided by max(‖X_i‖, 1e-12). */
function unitRow(X, i, d) {
  let s = 0;
  for (let c = 0; c < d; c++) s += X[i * d + c] * X[i * d + c];
  const norm = Math.max(Math.sqrt(s), NORM_FLOOR);
  const Y = new Float64Array(d);
  for (let c = 0; c < d; c++) Y[c] = X[i * d + c] / norm;
  return Y;
}

/**
 * The backward of x̂ = x / max(‖x‖, 1e-12) for row i: dx = (dx̂ − x̂·(x̂·dx̂)) / ‖x‖, or dx̂ / 1e-12
 * where the floor holds. Added into dX.
 */
function unitRowBackward(X, i, d, dXhat, dX) {
  let s = 0;
  for (let c = 0; c < d; c++) s += X[i * d + c] * X[i * d + c];
  const norm = Math.sqrt(s);
  if (!(norm > NORM_FLOOR)) {
    for (let c = 0; c < d; c++) dX[i * d + c] += dXhat[c] / NORM_FLOOR;
    return;
  }
  let g = 0;
  for (let c = 0; c < d; c++) g += X[i * d + c] * dXhat[c];
  g /= norm;
  for (let c = 0; c < d; c++) dX[i * d + c] += (dXhat[c] - (X[i * d + c] / norm) * g) / norm;
}

/** taylor: sim(i,j) = 1 + q̂_i·k̂_j for j ≤ last. */
function taylorScores(qh, khOf, d, last) {
  const s = new Float64Array(last + 1);
  for (let j = 0; j <= last; j++) s[j] = dotWithTerms(qh, 0, 1, khOf(j), 0, 1, d, 1).value;
  return s;
}

/**
 * taylor: q̂ = q/max(‖q‖, 1e-12), likewise k̂; sim(i,j) = 1 + q̂_i·k̂_j;
 * A[i,j] = sim(i,j) / (Σ_{j'} sim(i,j') + eps), j' ≤ i when causal.
 */
const taylor = rowwise({
  weightRow({ n, d, q, k }, options, i) {
    const last = lastColumn(n, !!options.causal, i);
    const s = taylorScores(unitRow(q, i, d), (j) => unitRow(k, j, d), d, last);
    const { denom } = normalisedRow(s, last, epsOf(options));
    const A = new Float64Array(n);
    for (let j = 0; j <= last; j++) A[j] = s[j] / denom;
    return A;
  },
  features: (X, n, d) => featureMap(X, n, d, 1, (x, i) => Array.from(unitRow(x, i, d))),
  explain({ n, d, q, k }, options, i, j) {
    const causal = !!options.causal;
    if (causal && j > i) return [maskedStep(i, j, 'the prefix sums stop at i')];
    const last = lastColumn(n, causal, i);
    const eps = epsOf(options);
    const qh = unitRow(q, i, d);
    const s = taylorScores(qh, (t) => unitRow(k, t, d), d, last);
    const { sum, denom } = normalisedRow(s, last, eps);
    const dot = dotWithTerms(qh, 0, 1, unitRow(k, j, d), 0, 1, d, 0, true);
    return [
      { label: `q̂${i}·k̂${j}`, formula: `Σ_c q̂[${i},c]·k̂[${j},c], q̂ = q/max(‖q‖, 1e-12), k̂ likewise`, value: dot.value, terms: dot.terms },
      { label: `sim(${i},${j})`, formula: `1 + q̂${i}·k̂${j}`, value: s[j] },
      { label: `Σ_j' sim(${i},j')`, formula: `the row's denominator without eps, ${over(n, causal, i)}`, value: sum },
      { label: 'eps', formula: options.eps != null ? 'eps (option)' : 'eps (default)', value: eps },
      { label: `A[${i},${j}]`, formula: `sim(${i},${j}) / (Σ_j' sim(${i},j') + eps)`, value: s[j] / denom },
    ];
  },
  flops: linearFlops,
  // through the normaliser (with eps), then sim(i,j) = 1 + q̂_i·k̂_j: dq̂_i = Σ_j ds_ij·k̂_j,
  // dk̂_j = Σ_i ds_ij·q̂_i, then through each row's normalisation
  weightBackward({ n, d, q, k }, options, A, dA, grad) {
    const dq = grad('q');
    const dk = grad('k');
    const eps = epsOf(options);
    const kh = Array.from({ length: n }, (_, j) => unitRow(k, j, d));
    const dkh = new Float64Array(n * d);
    for (let i = 0; i < n; i++) {
      const last = lastColumn(n, options.causal, i);
      const qh = unitRow(q, i, d);
      const { denom } = normalisedRow(taylorScores(qh, (j) => kh[j], d, last), last, eps);
      const ds = normalisedRowBackward(A, dA, n, i, last, denom);
      const dqh = new Float64Array(d);
      for (let j = 0; j <= last; j++) {
        for (let c = 0; c < d; c++) {
          dqh[c] += ds[j] * kh[j][c];
          dkh[j * d + c] += ds[j] * qh[c];
        }
      }
      unitRowBackward(q, i, d, dqh, dq);
    }
    for (let j = 0; j < n; j++) unitRowBackward(k, j, d, dkh.subarray(j * d, (j + 1) * d), dk);
  },
  // state row 0 is Σ_j v_j and normalizer[0] is n: the "1" feature of φ(x) = [1, x̂]
  intermediates: (state, normalizer, { n, d, dv }) => [
    { name: 'S', label: 'Σ_j k̂_j·v_jᵀ (d×dv state)', rows: d, cols: dv, data: state.slice(dv), signed: true },
    { name: 'z', label: `Σ_j k̂_j (normaliser; denominator n + q̂_i·z with n = ${n})`, rows: 1, cols: d, data: normalizer.slice(1), signed: true },
    { name: 'sv', label: 'Σ_j v_j (dv)', rows: 1, cols: dv, data: state.slice(0, dv), signed: true },
  ],
});

// ---------------------------------------------------------------------------------------------
// fixed patterns (Raganato et al. 2020): row i is uniform over the columns of its span.

/** The columns row i attends to under `pattern` with window w, and a description of the rule. */
function fixedSpan(pattern, w, n, i) {
  switch (pattern) {
    case 'current': return { cols: [i], rule: 'A[i,i] = 1' };
    case 'previous': return { cols: [i === 0 ? 0 : i - 1], rule: 'A[i,i−1] = 1 (row 0 attends to itself)' };
    case 'next': return { cols: [i === n - 1 ? n - 1 : i + 1], rule: 'A[i,i+1] = 1 (the last row attends to itself)' };
    case 'first': return { cols: [0], rule: 'A[i,0] = 1' };
    case 'last': return { cols: [n - 1], rule: 'A[i,n−1] = 1' };
    case 'left': {
      const cols = [];
      for (let j = Math.max(0, i - w); j <= i - 1; j++) cols.push(j);
      return { cols: i === 0 ? [0] : cols, rule: `uniform over j in [max(0, i−${w}), i−1] (row 0 attends to itself)` };
    }
    case 'right': {
      const cols = [];
      for (let j = i + 1; j <= Math.min(n - 1, i + w); j++) cols.push(j);
      return { cols: i === n - 1 ? [n - 1] : cols, rule: `uniform over j in [i+1, min(n−1, i+${w})] (the last row attends to itself)` };
    }
    default: throw new Error(`reference: unknown fixed pattern ${pattern}`);
  }
}

/** The span of row i; a pattern that looks past i has no causal form. */
function fixedRow(n, options, i) {
  const pattern = options.pattern ?? 'current';
  const span = fixedSpan(pattern, options.window ?? DEFAULT_WINDOW, n, i);
  if (options.causal && span.cols.some((j) => j > i)) {
    throw new Error(`reference: fixed pattern ${pattern} has no causal form (row ${i} looks ahead)`);
  }
  return { pattern, ...span };
}

const fixed = rowwise({
  weightRow({ n }, options, i) {
    const A = new Float64Array(n);
    const { cols } = fixedRow(n, options, i);
    for (const j of cols) A[j] = 1 / cols.length;
    return A;
  },
  explain({ n }, options, i, j) {
    const { pattern, cols, rule } = fixedRow(n, options, i);
    const inside = cols.includes(j);
    const span = cols.length === 1 ? `{${cols[0]}}` : `${cols[0]}..${cols[cols.length - 1]}`;
    return [
      { label: `span of row ${i}`, formula: `pattern "${pattern}": ${rule}; columns ${span}`, value: cols.length },
      {
        label: `A[${i},${j}]`,
        formula: inside ? `1 / ${cols.length} (input-independent, no softmax)` : `0: column ${j} is outside the span`,
        value: inside ? 1 / cols.length : 0,
      },
    ];
  },
  flops: ({ n, dv }) => ({ flops: n * dv, formula: '≈ n·dv' }),
  // A reads nothing: v's gradient Aᵀ·dO is all there is
  weightBackward() {},
});

// ---------------------------------------------------------------------------------------------
// The recurrent family (ONNX LinearAttention's update rules), in float64: the scan token by token
// (recurrence), and the variants plain-linear, gla, deltanet and gated-deltanet built on it.

/** The update rules and what each reads: g (a decay, log space) for the gated ones, beta for the delta ones. */
export const RECURRENT_RULES = {
  linear: { gated: false, delta: false },
  gated: { gated: true, delta: false },
  delta: { gated: false, delta: true },
  gated_delta: { gated: true, delta: true },
};

/**
 * Inputs moved, in place, into the range the accuracy bar covers for the recurrent family
 * (docs/contract.md): g = −softplus(g) ≤ 0 (a decay e^g in (0, 1)), beta = sigmoid(beta) in (0, 1),
 * and, where beta is read (the delta rules), every key row scaled to unit norm (its transition
 * I − β·k·kᵀ then never grows the state). Arrays absent are left so; values rounded to float32.
 */
export function recurrentRange(inputs) {
  const { n, d, g, beta, k } = inputs;
  if (g) for (let i = 0; i < g.length; i++) g[i] = Math.fround(-Math.log1p(Math.exp(g[i])));
  if (beta) {
    for (let t = 0; t < beta.length; t++) beta[t] = Math.fround(1 / (1 + Math.exp(-beta[t])));
    for (let t = 0; t < n; t++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += k[t * d + c] * k[t * d + c];
      const norm = Math.sqrt(s);
      for (let c = 0; c < d; c++) k[t * d + c] = Math.fround(norm > 0 ? k[t * d + c] / norm : c === 0 ? 1 : 0);
    }
  }
  return inputs;
}

/**
 * One head, token by token: S [d, dv] starts as s0 (zeros when absent); per token t the gated
 * rules decay row i of S by exp(g[t, i]) (g [n, d], or [n] for one decay a token), u = beta_t (v_t
 * − Sᵀk_t) for the delta rules (after the decay), else v_t; S += k_t uᵀ; y_t = scale·Sᵀq_t, read
 * after the write (scale default 1/√d). Returns { output [n, dv], state [d, dv] } (Float64Array).
 */
export function recurrence(rule, { n, d, dv, q, k, v, g, beta, s0 }, options = {}) {
  const { gated, delta } = RECURRENT_RULES[rule] ?? {};
  if (gated === undefined) throw new Error(`reference: no recurrent update rule '${rule}'`);
  const scale = options.scale ?? 1 / Math.sqrt(d);
  const gCols = gated ? g.length / n : 0;
  const S = Float64Array.from(s0 ?? new Float64Array(d * dv));
  const y = new Float64Array(n * dv), u = new Float64Array(dv);
  for (let t = 0; t < n; t++) {
    if (gated) {
      for (let i = 0; i < d; i++) {
        const a = Math.exp(g[t * gCols + (gCols === 1 ? 0 : i)]);
        for (let j = 0; j < dv; j++) S[i * dv + j] *= a;
      }
    }
    for (let j = 0; j < dv; j++) {
      if (!delta) { u[j] = v[t * dv + j]; continue; }
      let sk = 0;
      for (let i = 0; i < d; i++) sk += S[i * dv + j] * k[t * d + i];
      u[j] = beta[t] * (v[t * dv + j] - sk);
    }
    for (let i = 0; i < d; i++) for (let j = 0; j < dv; j++) S[i * dv + j] += k[t * d + i] * u[j];
    for (let j = 0; j < dv; j++) {
      let s = 0;
      for (let i = 0; i < d; i++) s += S[i * dv + j] * q[t * d + i];
      y[t * dv + j] = scale * s;
    }
  }
  return { output: y, state: S };
}

/**
 * Token t's transition A_t = (I − β_t·k_t·k_tᵀ)·diag(e^{g_t}) as a d×d matrix (row-major): the
 * state after the token is A_t·S + β_t·k_t·v_tᵀ. Without the delta rule no projection (and β = 1),
 * without the gate no decay.
 */
function transition({ gated, delta }, { n, d, k, g, beta }, t) {
  const A = new Float64Array(d * d);
  const gCols = gated ? g.length / n : 0;
  for (let r = 0; r < d; r++) {
    for (let c = 0; c < d; c++) {
      const decay = gated ? Math.exp(g[t * gCols + (gCols === 1 ? 0 : c)]) : 1;
      A[r * d + c] = ((r === c ? 1 : 0) - (delta ? beta[t] * k[t * d + r] * k[t * d + c] : 0)) * decay;
    }
  }
  return A;
}

/**
 * Row i of the effective matrix: W[i,j] = scale·β_j·q_iᵀ·A_i·…·A_{j+1}·k_j for j ≤ i, 0 after
 * (y = W·v when s0 is zero). The row vector q_iᵀ·A_i·…·A_{j+1} grows one transition at a time, each
 * multiplied out as a matrix.
 */
function recurrentWeightRow(rule, inputs, options, i) {
  const { n, d, q, k, beta } = inputs;
  const scale = scaleOf(options, d);
  const W = new Float64Array(n);
  let r = Float64Array.from(q.slice(i * d, (i + 1) * d));
  for (let j = i; j >= 0; j--) {
    let s = 0;
    for (let c = 0; c < d; c++) s += r[c] * k[j * d + c];
    W[j] = scale * (rule.delta ? beta[j] : 1) * s;
    const A = transition(rule, inputs, j);
    const next = new Float64Array(d);
    for (let c = 0; c < d; c++) for (let m = 0; m < d; m++) next[c] += r[m] * A[m * d + c];
    r = next;
  }
  return W;
}

/**
 * The gradient of Σ dOutput ⊙ y through the recurrence, from the math: with S̃ = diag(e^{g_t})·S_{t−1},
 * r = v_t − S̃ᵀk_t, u = β_t·r (delta rules; else u = v_t), S_t = S̃ + k_t·uᵀ and y_t = scale·S_tᵀq_t,
 * going back over t with G = ∂L/∂S_t: G += scale·q_t·dy_tᵀ; dq_t = scale·S_t·dy_t; du = Gᵀk_t;
 * dv_t = β_t·du (else du); dβ_t = du·r; dk_t = G·u − β_t·S̃·du; ∂L/∂S̃ = G − β_t·k_t·duᵀ (else G);
 * dg_t[i] = Σ_j ∂L/∂S̃[i,j]·S̃[i,j]; then G = diag(e^{g_t})·∂L/∂S̃ is ∂L/∂S_{t−1}, and finally ds0.
 */
function recurrentGrad(ruleName, inputs, options, dOutput) {
  const rule = RECURRENT_RULES[ruleName];
  const { n, d, dv, q, k, v, g, beta, s0 } = inputs;
  const scale = scaleOf(options, d);
  const states = [Float64Array.from(s0 ?? new Float64Array(d * dv))]; // states[t + 1] = S_t
  const decayed = [];
  for (let t = 0; t < n; t++) {
    const St = Float64Array.from(states[t]);
    if (rule.gated) for (let i = 0; i < d; i++) for (let j = 0; j < dv; j++) St[i * dv + j] *= Math.exp(g[t * d + i]);
    decayed.push(Float64Array.from(St));
    for (let j = 0; j < dv; j++) {
      let sk = 0;
      for (let i = 0; i < d; i++) sk += St[i * dv + j] * k[t * d + i];
      const u = rule.delta ? beta[t] * (v[t * dv + j] - sk) : v[t * dv + j];
      for (let i = 0; i < d; i++) St[i * dv + j] += k[t * d + i] * u;
    }
    states.push(St);
  }
  const grads = { q: new Float64Array(n * d), k: new Float64Array(n * d), v: new Float64Array(n * dv) };
  if (rule.gated) grads.g = new Float64Array(n * d);
  if (rule.delta) grads.beta = new Float64Array(n);
  let G = new Float64Array(d * dv);
  for (let t = n - 1; t >= 0; t--) {
    const S = states[t + 1], Sd = decayed[t];
    const b = rule.delta ? beta[t] : 1;
    const rvec = new Float64Array(dv), u = new Float64Array(dv), du = new Float64Array(dv);
    for (let j = 0; j < dv; j++) {
      let sk = 0;
      for (let i = 0; i < d; i++) sk += Sd[i * dv + j] * k[t * d + i];
      rvec[j] = v[t * dv + j] - sk;
      u[j] = rule.delta ? b * rvec[j] : v[t * dv + j];
    }
    for (let i = 0; i < d; i++) {
      let dq = 0;
      for (let j = 0; j < dv; j++) {
        G[i * dv + j] += scale * q[t * d + i] * dOutput[t * dv + j];
        dq += scale * S[i * dv + j] * dOutput[t * dv + j];
      }
      grads.q[t * d + i] = dq;
    }
    for (let j = 0; j < dv; j++) for (let i = 0; i < d; i++) du[j] += G[i * dv + j] * k[t * d + i];
    for (let j = 0; j < dv; j++) grads.v[t * dv + j] = b * du[j];
    if (rule.delta) for (let j = 0; j < dv; j++) grads.beta[t] += du[j] * rvec[j];
    for (let i = 0; i < d; i++) {
      let a = 0, c = 0;
      for (let j = 0; j < dv; j++) { a += G[i * dv + j] * u[j]; c += Sd[i * dv + j] * du[j]; }
      grads.k[t * d + i] = a - (rule.delta ? b * c : 0);
    }
    const dSd = Float64Array.from(G);
    if (rule.delta) for (let i = 0; i < d; i++) for (let j = 0; j < dv; j++) dSd[i * dv + j] -= b * k[t * d + i] * du[j];
    if (rule.gated) {
      for (let i = 0; i < d; i++) {
        let s = 0;
        for (let j = 0; j < dv; j++) s += dSd[i * dv + j] * Sd[i * dv + j];
        grads.g[t * d + i] = s;
        for (let j = 0; j < dv; j++) dSd[i * dv + j] *= Math.exp(g[t * d + i]);
      }
    }
    G = dSd;
  }
  if (s0) grads.s0 = G;
  return { output: recurrence(ruleName, inputs, options).output, grads };
}

/** The entry of the recurrent variant with update rule `ruleName`. */
function recurrentEntry(ruleName, name) {
  const rule = RECURRENT_RULES[ruleName];
  const perToken = 4 + (rule.gated ? 1 : 0) + (rule.delta ? 2 : 0);
  const entry = rowwise({
    weightRow: (inputs, options, i) => recurrentWeightRow(rule, inputs, options, i),
    // y = W·v + scale·(A_i·…·A_0·s0)ᵀq_i: the scan itself, so that s0 counts
    output: (inputs, options) => recurrence(ruleName, inputs, options).output,
    explain(inputs, options, i, j) {
      if (j > i) return [maskedStep(i, j, `${name} is causal by construction: the state at token ${i} holds tokens 0..${i}`)];
      const { d, beta } = inputs;
      const W = recurrentWeightRow(rule, inputs, options, i)[j];
      const scale = scaleOf(options, d);
      const through = i === j ? 'nothing between' : `the transitions of tokens ${j + 1}..${i}`;
      const steps = [
        { label: 'scale', formula: options.scale != null ? 'scale (option)' : `1/√d (default), d = ${d}`, value: scale },
      ];
      if (rule.delta) steps.push({ label: `β${j}`, formula: `beta[${j}]: how much of v${j} token ${j} writes`, value: beta[j] });
      const transitions = rule.gated && rule.delta ? 'A_t = (I − β_t·k_t·k_tᵀ)·diag(e^{g_t})'
        : rule.delta ? 'A_t = I − β_t·k_t·k_tᵀ' : rule.gated ? 'A_t = diag(e^{g_t})' : 'A_t = I';
      steps.push({
        label: `A[${i},${j}]`,
        formula: `implicit, computed for display: scale${rule.delta ? `·β${j}` : ''}·q${i}ᵀ·(A_${i}…A_${j + 1})·k${j} over ${through}, ${transitions}`,
        value: W,
      });
      return steps;
    },
    flops: ({ n, d, dv }) => ({ flops: perToken * n * d * dv, formula: `≈ ${perToken}·n·d·dv` }),
    weightBackward() {}, // not used: grad below
    finalState: (inputs, options) => recurrence(ruleName, inputs, options).state,
    intermediates: (state, _normalizer, { d, dv }) => [
      { name: 'S', label: 'S, the state after the last token (d×dv)', rows: d, cols: dv, data: state, signed: true },
    ],
  });
  return { ...entry, grad: (inputs, options, dOutput) => recurrentGrad(ruleName, inputs, options, dOutput) };
}

const plainLinear = recurrentEntry('linear', 'plain-linear');
const gla = recurrentEntry('gated', 'gla');
const deltanet = recurrentEntry('delta', 'deltanet');
const gatedDeltanet = recurrentEntry('gated_delta', 'gated-deltanet');

// ---------------------------------------------------------------------------------------------
// The table and the functions over it.

/** One entry per variant id (the ids of lab.variants). */
/**
 * The accuracy bar of docs/contract.md: every float32 result y of a build is within
 * abs + rel·|ref| of this reference's ref, elementwise (for the recurrent family under the input
 * conditions the contract states). The benchmark measures errors in units of it; the tests keep
 * their own copy of the contract's numbers and check this one against it.
 */
export const ACCURACY_BAR = Object.freeze({ abs: 1e-5, rel: 1e-4 });

export const definitions = {
  softmax,
  dense,
  dense1,
  random,
  'factorized-dense': factorizedDense,
  'factorized-random': factorizedRandom,
  mixture,
  linear,
  efficient,
  taylor,
  fixed,
  'plain-linear': plainLinear,
  gla,
  deltanet,
  'gated-deltanet': gatedDeltanet,
};

export function hasDefinition(id) {
  return Object.prototype.hasOwnProperty.call(definitions, id);
}

function definitionOf(id) {
  if (!hasDefinition(id)) throw new Error(`reference: variant '${id}' has no definition in src/js/reference.js`);
  return definitions[id];
}

/** Output y = A·v and the effective matrix A (both Float64Array). */
export function reference(id, inputs, options = {}) {
  const def = definitionOf(id);
  const { n, dv } = inputs;
  const causal = !!options.causal;
  const A = def.weights(inputs, options, causal);
  return { output: def.output ? def.output(inputs, options) : matmulAV(A, inputs.v, n, dv), weights: A };
}

/**
 * Rows `rows` of the output, each from its own row of A: O(n) memory, for n too large for the
 * n×n matrix. Float64Array(rows.length × dv), the same numbers as reference()'s rows.
 */
export function referenceRows(id, inputs, options, rows) {
  const def = definitionOf(id);
  const { n, dv, v } = inputs;
  const o = { ...options, causal: !!options.causal };
  const y = new Float64Array(rows.length * dv);
  if (def.output) { // the recurrent family: the scan (s0 counts), then the rows
    const all = def.output(inputs, o);
    rows.forEach((i, t) => y.set(all.subarray(i * dv, (i + 1) * dv), t * dv));
    return y;
  }
  rows.forEach((i, t) => {
    const A = def.weightRow(inputs, o, i);
    for (let c = 0; c < dv; c++) {
      let s = 0;
      for (let j = 0; j < n; j++) s += A[j] * v[j * dv + c];
      y[t * dv + c] = s;
    }
  });
  return y;
}

/** The n×n logits B of a softmax-type variant; null for variants without logits. */
export function logits(id, inputs, options = {}) {
  const def = definitionOf(id);
  return def.logits ? def.logits(inputs, options) : null;
}

/** How A[i,j] comes about, as Steps; [] for an id without a definition. */
export function explain(id, inputs, options, i, j) {
  if (!hasDefinition(id)) return [];
  return definitions[id].explain(inputs, options ?? {}, i, j);
}

/** y[i,c] = Σ_j A[i,j]·v[j,c], the non-zero terms ordered by size. Any variant. */
export function explainOutput({ n, dv, v }, weights, i, c) {
  const terms = [];
  let s = 0;
  for (let j = 0; j < n; j++) {
    const a = weights[i * n + j];
    s += a * v[j * dv + c];
    if (a !== 0) terms.push([a, v[j * dv + c]]);
  }
  terms.sort((p, q) => Math.abs(q[0] * q[1]) - Math.abs(p[0] * p[1]));
  return [{ label: `y[${i},${c}]`, formula: `Σ_j A[${i},j]·v[j,${c}]`, value: s, terms }];
}

/**
 * What a linear-family variant keeps instead of A, as the binding returns it with `state: true`:
 * [{ name, label, rows, cols, data, signed }]; [] for other variants or without state.
 */
export function intermediates(id, result, dims) {
  const def = definitions[id];
  if (!def || !def.intermediates || !result.state) return [];
  return def.intermediates(result.state, result.normalizer, dims);
}

/**
 * The gradient of Σ dOutput ⊙ y with respect to every array variant `id` reads (a mixture: its
 * components' arrays and v, plus alpha or alphaLogits), as Float64Arrays shaped like the inputs,
 * and the output y: { output, grads: { name: Float64Array, ... } }. Parameters sized by L get 0
 * outside their first n rows / columns.
 */
export function referenceGrad(id, inputs, dOutput, options = {}) {
  const def = definitionOf(id);
  if (!def.grad) throw new Error(`reference: variant '${id}' has no grad in src/js/reference.js`);
  return def.grad(inputs, options, dOutput);
}

/** Floating-point operations of one call (a multiply-add counts 2; exp and division do not count). */
export function flopCount(id, dims, options = {}) {
  if (!hasDefinition(id)) return { flops: NaN, formula: `no definition for '${id}' in src/js/reference.js` };
  return definitions[id].flops(dims, options);
}

export function gflops(flops, ms) {
  return ms > 0 ? flops / (ms * 1e6) : NaN;
}
