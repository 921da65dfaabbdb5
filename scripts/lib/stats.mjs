// stats.mjs — the small statistics the experiment reports need, in plain float64 JavaScript with
// no dependencies: intervals for a proportion (Wilson) and for a mean (Student t), Fisher's exact
// test for a 2×2 table, a seeded percentile bootstrap, quantiles, and the text the reports print.
//
//   wilson(k, n, z?)              → { p, lo, hi }              Wilson score interval of k/n
//   meanCI(xs, level?)            → { mean, lo, hi, sd, n }    mean ± t·sd/√n
//   fisherExact(a, b, c, d)       → p                          two-sided exact p of [[a, b], [c, d]]
//   bootstrapCI(xs, stat, opts?)  → { estimate, lo, hi, reps, level, seed }
//   median(xs), quantile(xs, p)   → number                     type 7 (R's and numpy's default)
//   tQuantile(p, df), tCdf(t, df), normalQuantile(p), lgamma(x), betaInc(x, a, b)
//   formatProportion(k, n, opts?) → "3 of 5 (95 % CI 23–88 %)"
//   formatMeanCI(ci, opts?)       → "62.3 [48.1, 76.5]"
//
// Inputs are checked: a non-finite number or a negative count throws (TypeError / RangeError, the
// message names the function and the argument), so a failed run that left `undefined` in an array
// is an error, never a silently shifted mean. Empty inputs return NaN where no answer exists.
// Intervals are not clamped to the range the data can take (a t interval of accuracies can pass
// 100 %): that is the interval's honest width; clamp when printing if you must.
//
// A plain ES module: no DOM, no Node APIs.
import { mulberry32 } from '../../src/js/prng.js';

/** z for a two-sided 95 % interval: Φ⁻¹(0.975). */
export const Z95 = 1.959963984540054;

function checkNumbers(fn, name, xs) {
  if (!xs || typeof xs.length !== 'number') throw new TypeError(`${fn}: ${name} must be an array of numbers, got ${xs}`);
  for (let i = 0; i < xs.length; i++) {
    if (typeof xs[i] !== 'number' || !Number.isFinite(xs[i])) {
      throw new TypeError(`${fn}: ${name}[${i}] is ${xs[i]}, not a finite number`);
    }
  }
}

function checkCount(fn, name, v) {
  if (!Number.isInteger(v) || v < 0) throw new RangeError(`${fn}: ${name} must be a non-negative integer, got ${v}`);
}

function checkLevel(fn, level) {
  if (!(level > 0 && level < 1)) throw new RangeError(`${fn}: level must be in (0, 1), got ${level}`);
}

// ---------------------------------------------------------------------------------------------
// Proportions

/**
 * Wilson score interval: centre (p̂ + z²/2n)/(1 + z²/n), half-width z/(1 + z²/n)·√(p̂(1−p̂)/n + z²/4n²),
 * p̂ = k/n. The interval that R's prop.test(k, n, correct = FALSE) and statsmodels'
 * proportion_confint(method = 'wilson') give. Returns { p, lo, hi }; k = 0 gives lo = 0 exactly,
 * k = n gives hi = 1 exactly, n = 0 gives { p: NaN, lo: 0, hi: 1 } (no information).
 */
export function wilson(successes, n, z = Z95) {
  checkCount('wilson', 'n', n);
  checkCount('wilson', 'successes', successes);
  if (successes > n) throw new RangeError(`wilson: successes (${successes}) > n (${n})`);
  if (!(z > 0) || !Number.isFinite(z)) throw new RangeError(`wilson: z must be a positive number, got ${z}`);
  if (n === 0) return { p: NaN, lo: 0, hi: 1 };
  const p = successes / n, z2 = z * z;
  const d = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / d;
  const half = (z / d) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return {
    p,
    lo: successes === 0 ? 0 : Math.max(0, centre - half),
    hi: successes === n ? 1 : Math.min(1, centre + half),
  };
}

// ---------------------------------------------------------------------------------------------
// Special functions

const LANCZOS = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
  -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];

/**
 * ln Γ(x) for x > 0: Lanczos (g = 7, 9 terms), ln √(2π) + (x − ½)·ln(t) − t + ln A(x), t = x + 6.5;
 * relative error about 1e-15. lgamma(1) = lgamma(2) = 0 exactly. x ≤ 0 or NaN → NaN.
 */
export function lgamma(x) {
  if (!(x > 0)) return NaN;
  if (x === 1 || x === 2) return 0;
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lgamma(1 - x); // reflection
  x -= 1;
  let a = LANCZOS[0];
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i] / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the incomplete beta (modified Lentz), for x < (a + 1)/(a + b + 2). */
function betaCF(x, a, b) {
  const TINY = 1e-300;
  let c = 1, d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 10000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d; if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c; if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d; h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d; if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c; if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-16) return h;
  }
  return h; // not reached for the a, b the t distribution uses (converges in O(√max(a, b)) terms)
}

/**
 * Regularized incomplete beta I_x(a, b) = B(x; a, b)/B(a, b), a, b > 0, by its continued fraction
 * (using I_x(a, b) = 1 − I_{1−x}(b, a) where that converges faster). x ≤ 0 → 0, x ≥ 1 → 1.
 */
export function betaInc(x, a, b) {
  if (!(a > 0 && b > 0) || Number.isNaN(x)) return NaN;
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const lnFront = lgamma(a + b) - lgamma(a) - lgamma(b) + a * Math.log(x) + b * Math.log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return (Math.exp(lnFront) * betaCF(x, a, b)) / a;
  return 1 - (Math.exp(lnFront) * betaCF(1 - x, b, a)) / b;
}

function checkDf(fn, df) {
  if (!(df > 0) || !Number.isFinite(df)) throw new RangeError(`${fn}: df must be a positive finite number, got ${df}`);
}

/**
 * Student t CDF: P(T ≤ t) = 1 − ½·I_{df/(df+t²)}(df/2, ½) for t ≥ 0, and by symmetry below 0.
 * t = ±Infinity → 1 / 0; df may be fractional (Welch); df ≤ 0 throws.
 */
export function tCdf(t, df) {
  checkDf('tCdf', df);
  if (Number.isNaN(t)) return NaN;
  if (t === Infinity) return 1;
  if (t === -Infinity) return 0;
  const tail = 0.5 * betaInc(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** Student t density: Γ((ν+1)/2)/(√(νπ)·Γ(ν/2))·(1 + t²/ν)^(−(ν+1)/2). */
function tPdf(t, df) {
  return Math.exp(lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * Math.log(df * Math.PI)
    - ((df + 1) / 2) * Math.log1p((t * t) / df));
}

/**
 * Student t quantile: the t with tCdf(t, df) = p. df = 1 is tan(π(p − ½)) and df = 2 is
 * (2p − 1)/√(2p(1 − p)) in closed form; other df solve tCdf(t) = p by Newton steps kept inside a
 * bisection bracket (converged to ~1e-13 relative; the tests hold it to 1e-6 against tables).
 * p = 0.5 → 0, p = 0 → −Infinity, p = 1 → Infinity, p outside [0, 1] or NaN → NaN.
 */
export function tQuantile(p, df) {
  checkDf('tQuantile', df);
  if (!(p >= 0 && p <= 1)) return NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  if (p === 0.5) return 0;
  if (p < 0.5) return -tQuantile(1 - p, df);
  if (df === 1) return Math.tan(Math.PI * (p - 0.5));
  if (df === 2) return (2 * p - 1) / Math.sqrt(2 * p * (1 - p));
  // Solve the upper tail q = 1 − p = ½·I_x(df/2, ½) to keep precision near p = 1.
  const q = 1 - p;
  const upper = (t) => 0.5 * betaInc(df / (df + t * t), df / 2, 0.5);
  let lo = 0, hi = 1;
  while (upper(hi) > q) { lo = hi; hi *= 2; if (hi > 1e300) return Infinity; }
  let t = Math.min(Math.max(normalQuantile(p), lo), hi);
  if (!(t > lo && t < hi)) t = (lo + hi) / 2;
  for (let i = 0; i < 200; i++) {
    const f = upper(t) - q; // decreasing in t
    if (f > 0) lo = t; else hi = t;
    let next = t + f / tPdf(t, df); // Newton: d(upper)/dt = −pdf
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;
    if (Math.abs(next - t) <= 1e-15 * Math.abs(t) || hi - lo <= 1e-15 * hi) return next;
    t = next;
  }
  return t;
}

/**
 * Standard normal quantile Φ⁻¹(p): Wichura's AS241 (PPND16, Applied Statistics 37:477, 1988),
 * relative error about 1e-16; the same algorithm as Python's statistics.NormalDist.inv_cdf.
 * p = 0 → −Infinity, p = 1 → Infinity, outside [0, 1] or NaN → NaN.
 */
export function normalQuantile(p) {
  if (!(p >= 0 && p <= 1)) return NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  const q = p - 0.5;
  if (Math.abs(q) <= 0.425) {
    const r = 0.180625 - q * q;
    return (q * horner(AS241.a, r)) / horner(AS241.b, r);
  }
  let r = Math.sqrt(-Math.log(q <= 0 ? p : 1 - p));
  const [num, den] = r <= 5 ? [AS241.c, AS241.d] : [AS241.e, AS241.f];
  r -= r <= 5 ? 1.6 : 5;
  const x = horner(num, r) / horner(den, r);
  return q < 0 ? -x : x;
}

/** c₀ + c₁r + c₂r² + … by Horner's rule (coefficients from the constant term up). */
function horner(c, r) {
  let s = 0;
  for (let i = c.length - 1; i >= 0; i--) s = s * r + c[i];
  return s;
}

// AS241's coefficients, constant term first (Wichura 1988, PPND16).
const AS241 = {
  a: [3.3871328727963666080e0, 1.3314166789178437745e2, 1.9715909503065514427e3, 1.3731693765509461125e4,
    4.5921953931549871457e4, 6.7265770927008700853e4, 3.3430575583588128105e4, 2.5090809287301226727e3],
  b: [1, 4.2313330701600911252e1, 6.8718700749205790830e2, 5.3941960214247511077e3,
    2.1213794301586595867e4, 3.9307895800092710610e4, 2.8729085735721942674e4, 5.2264952788528545610e3],
  c: [1.42343711074968357734e0, 4.63033784615654529590e0, 5.76949722146069140550e0, 3.64784832476320460504e0,
    1.27045825245236838258e0, 2.41780725177450611770e-1, 2.27238449892691845833e-2, 7.74545014278341407640e-4],
  d: [1, 2.05319162663775882187e0, 1.67638483018380384940e0, 6.89767334985100004550e-1,
    1.48103976427480074590e-1, 1.51986665636164571966e-2, 5.47593808499534494600e-4, 1.05075007164441684324e-9],
  e: [6.65790464350110377720e0, 5.46378491116411436990e0, 1.78482653991729133580e0, 2.96560571828504891230e-1,
    2.65321895265761230930e-2, 1.24266094738807843860e-3, 2.71155556874348757815e-5, 2.01033439929228813265e-7],
  f: [1, 5.99832206555887937690e-1, 1.36929880922735805310e-1, 1.48753612908506148525e-2,
    7.86869131145613259100e-4, 1.84631831751005468180e-5, 1.42151175831644588870e-7, 2.04426310338993978564e-15],
};

// ---------------------------------------------------------------------------------------------
// Means, quantiles, bootstrap

/**
 * Mean with a Student t interval: x̄ ± t_{(1+level)/2, n−1}·s/√n, s the sample standard deviation
 * (n − 1 in the denominator, two-pass). Returns { mean, lo, hi, sd, n }. n = 1 → sd, lo and hi are
 * NaN (one value says nothing about spread: no interval, rather than a zero-width one); n = 0 →
 * everything NaN; all values equal → lo = hi = mean. xs with a non-finite entry throws.
 */
export function meanCI(xs, level = 0.95) {
  checkNumbers('meanCI', 'xs', xs);
  checkLevel('meanCI', level);
  const n = xs.length;
  if (n === 0) return { mean: NaN, lo: NaN, hi: NaN, sd: NaN, n };
  let s = 0;
  for (const x of xs) s += x;
  const mean = s / n;
  if (n === 1) return { mean, lo: NaN, hi: NaN, sd: NaN, n };
  let ss = 0;
  for (const x of xs) ss += (x - mean) * (x - mean);
  const sd = Math.sqrt(ss / (n - 1));
  const half = tQuantile((1 + level) / 2, n - 1) * (sd / Math.sqrt(n));
  return { mean, lo: mean - half, hi: mean + half, sd, n };
}

/** Type 7 quantile of an already sorted array (h = (n − 1)p, linear between neighbours). */
function sortedQuantile(sorted, p) {
  const n = sorted.length;
  if (n === 0) return NaN;
  const h = (n - 1) * p;
  const i = Math.floor(h);
  if (i >= n - 1) return sorted[n - 1];
  return sorted[i] + (h - i) * (sorted[i + 1] - sorted[i]);
}

/**
 * Quantile, type 7 (R's default, numpy's 'linear'): with the values sorted x₀ ≤ … ≤ x_{n−1} and
 * h = (n − 1)·p, x_⌊h⌋ + (h − ⌊h⌋)(x_⌊h⌋+1 − x_⌊h⌋). p = 0 → min, p = 1 → max, n = 0 → NaN;
 * p outside [0, 1] throws. Does not modify xs.
 */
export function quantile(xs, p) {
  checkNumbers('quantile', 'xs', xs);
  if (!(p >= 0 && p <= 1)) throw new RangeError(`quantile: p must be in [0, 1], got ${p}`);
  return sortedQuantile(Float64Array.from(xs).sort(), p);
}

/** Median: quantile(xs, 0.5), the mean of the two middle values for even n; n = 0 → NaN. */
export function median(xs) {
  checkNumbers('median', 'xs', xs);
  return sortedQuantile(Float64Array.from(xs).sort(), 0.5);
}

/**
 * Percentile bootstrap: `reps` resamples of xs with replacement (indices ⌊u·n⌋, u from
 * mulberry32(seed)), stat of each, and the type 7 quantiles (1 ∓ level)/2 of those. Returns
 * { estimate: stat(xs), lo, hi, reps, level, seed }; the same xs, stat and seed give the same
 * bytes. n = 0 → estimate/lo/hi NaN; n = 1 → lo = hi = estimate (every resample is the same).
 * With very few values (3 seeds) the percentile bootstrap is too narrow — it cannot see beyond the
 * values observed — so prefer meanCI or an exact method there. stat gets a plain array and must
 * return a number; a non-finite stat of a resample throws.
 */
export function bootstrapCI(xs, stat, { reps = 2000, seed = 1, level = 0.95 } = {}) {
  checkNumbers('bootstrapCI', 'xs', xs);
  if (typeof stat !== 'function') throw new TypeError('bootstrapCI: stat must be a function of an array');
  checkCount('bootstrapCI', 'reps', reps);
  if (reps < 1) throw new RangeError('bootstrapCI: reps must be at least 1');
  checkLevel('bootstrapCI', level);
  const n = xs.length;
  if (n === 0) return { estimate: NaN, lo: NaN, hi: NaN, reps, level, seed };
  const estimate = stat(Array.from(xs));
  const rnd = mulberry32(seed);
  const values = new Float64Array(reps);
  const sample = new Array(n);
  for (let r = 0; r < reps; r++) {
    for (let i = 0; i < n; i++) sample[i] = xs[Math.floor(rnd() * n)];
    const v = stat(sample.slice());
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new TypeError(`bootstrapCI: stat returned ${v} for resample ${r} (seed ${seed})`);
    }
    values[r] = v;
  }
  values.sort();
  return { estimate, lo: sortedQuantile(values, (1 - level) / 2), hi: sortedQuantile(values, (1 + level) / 2), reps, level, seed };
}

// ---------------------------------------------------------------------------------------------
// Fisher's exact test

/** ln C(n, k) = lnΓ(n+1) − lnΓ(k+1) − lnΓ(n−k+1). */
function lchoose(n, k) {
  return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1);
}

/**
 * Fisher's exact test, two-sided, of the table [[a, b], [c, d]] (rows a+b, c+d; columns a+c, b+d):
 * with the margins fixed, P(x) = C(a+b, x)·C(c+d, a+c−x)/C(n, a+c) for x in max(0, a+c−(c+d)) …
 * min(a+b, a+c); p = Σ P(x) over the x with P(x) ≤ P(a)·(1 + 1e-7) — R's fisher.test rule, so
 * that ties lost to rounding still count. Computed in log space (fine for n in the millions).
 * Returns a number in (0, 1]; a table with an empty row or column (one possible x) → 1; all
 * zero → 1. Counts must be non-negative integers (else RangeError).
 */
export function fisherExact(a, b, c, d) {
  for (const [name, v] of [['a', a], ['b', b], ['c', c], ['d', d]]) checkCount(`fisherExact(${a}, ${b}, ${c}, ${d})`, name, v);
  const r1 = a + b, r2 = c + d, c1 = a + c, n = r1 + r2;
  const xMin = Math.max(0, c1 - r2), xMax = Math.min(r1, c1);
  if (xMin === xMax) return 1;
  const base = lchoose(n, c1);
  const logP = (x) => lchoose(r1, x) + lchoose(r2, c1 - x) - base;
  const obs = logP(a) + Math.log1p(1e-7);
  const kept = [];
  let top = -Infinity;
  for (let x = xMin; x <= xMax; x++) {
    const lp = logP(x);
    if (lp <= obs) { kept.push(lp); if (lp > top) top = lp; }
  }
  let s = 0;
  for (const lp of kept) s += Math.exp(lp - top);
  return Math.min(1, Math.exp(top + Math.log(s)));
}

/**
 * Holm's step-down adjustment of m p-values for testing them together (family-wise error): sort
 * ascending p(1) ≤ … ≤ p(m), adjusted p(i) = max over j ≤ i of min(1, (m − j + 1)·p(j)); returned
 * in the input order. Entries that are not finite (a comparison that could not be made) are left as
 * they are and do not count in m. Holm (1979); R's p.adjust(p, "holm").
 */
export function holm(ps) {
  const idx = ps.map((p, i) => [p, i]).filter(([p]) => Number.isFinite(p)).sort((x, y) => x[0] - y[0]);
  const out = ps.slice();
  const m = idx.length;
  let running = 0;
  idx.forEach(([p, i], j) => {
    if (p < 0 || p > 1) throw new RangeError(`holm: p-values must lie in [0, 1], got ${p} at index ${i}`);
    running = Math.max(running, Math.min(1, (m - j) * p));
    out[i] = running;
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Text

/** toFixed without "-0.0" (a value that rounds to zero prints as 0). */
function fixed(v, digits) {
  const s = v.toFixed(digits);
  return /^-0(\.0*)?$/.test(s) ? s.slice(1) : s;
}

/**
 * "k of n (95 % CI lo–hi %)", the Wilson interval in percent with `digits` decimals (default 0):
 * formatProportion(3, 5) → "3 of 5 (95 % CI 23–88 %)". n = 0 → "0 of 0 (no data)".
 */
export function formatProportion(k, n, { digits = 0, z = Z95, label = '95 % CI' } = {}) {
  const w = wilson(k, n, z);
  if (n === 0) return '0 of 0 (no data)';
  return `${k} of ${n} (${label} ${fixed(100 * w.lo, digits)}–${fixed(100 * w.hi, digits)} %)`;
}

/**
 * "mean [lo, hi]" of a meanCI / bootstrapCI result, each multiplied by `scale` (100 for a
 * proportion in percent) with `digits` decimals (default 1): formatMeanCI({ mean: 0.623, lo: 0.481,
 * hi: 0.765 }, { scale: 100 }) → "62.3 [48.1, 76.5]". Missing bounds (n = 1) → "62.3 (n = 1, no
 * interval)"; a NaN mean (no data) → "no data". Reads `estimate` when there is no `mean`.
 */
export function formatMeanCI(ci, { digits = 1, scale = 1 } = {}) {
  const m = ci.mean ?? ci.estimate;
  if (!Number.isFinite(m)) return 'no data';
  const f = (v) => fixed(scale * v, digits);
  if (!Number.isFinite(ci.lo) || !Number.isFinite(ci.hi)) return `${f(m)} (n = ${ci.n ?? '?'}, no interval)`;
  return `${f(m)} [${f(ci.lo)}, ${f(ci.hi)}]`;
}
