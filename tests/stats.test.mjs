// stats.test.mjs — scripts/lib/stats.mjs against values computed elsewhere, each with its source.
//
// Where a value comes from a published table or a documented R/numpy example, the comment says so.
// The rest were computed independently of stats.mjs with Python's standard library (no scipy or R
// on this machine), by methods that share no code or algorithm with it:
//   - Wilson: the closed form with z = statistics.NormalDist().inv_cdf(0.975);
//   - t quantiles: bisection on 0.5 + ∫₀ᵗ (Simpson, 20 000 intervals) of the t density written out
//     with math.lgamma — no incomplete beta, no Newton;
//   - Fisher: exact rational hypergeometric probabilities (fractions.Fraction, math.comb), summed
//     over the outcomes no more likely than the observed one — no logarithms, no tolerance;
//   - quantiles: statistics.quantiles(method='inclusive'), which is type 7.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  Z95, betaInc, bootstrapCI, fisherExact, formatMeanCI, formatProportion, holm, lgamma, meanCI, median,
  normalQuantile, quantile, tCdf, tQuantile, wilson,
} from '../scripts/lib/stats.mjs';
import { mulberry32 } from '../src/js/prng.js';

/** |actual − expected| ≤ tol (absolute), or relative when rel is set; the message names the call. */
function close(actual, expected, tol, call, { rel = false } = {}) {
  const err = Math.abs(actual - expected);
  const bound = rel ? tol * Math.abs(expected) : tol;
  assert.ok(err <= bound, `${call} = ${actual}, expected ${expected} (error ${err.toExponential(2)} > ${bound.toExponential(2)})`);
}

test('wilson: published intervals', () => {
  // Newcombe, "Two-sided confidence intervals for the single proportion: comparison of seven
  // methods", Statistics in Medicine 17:857–872 (1998), worked examples, method 3 (score, no
  // continuity correction), printed to 4 decimals. The same 4 decimals come out of the closed form
  // in Python (comment at the top).
  const table = [
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ];
  for (const [k, n, lo, hi] of table) {
    const w = wilson(k, n);
    close(w.lo, lo, 5e-5, `wilson(${k}, ${n}).lo`);
    close(w.hi, hi, 5e-5, `wilson(${k}, ${n}).hi`);
    close(w.p, k / n, 0, `wilson(${k}, ${n}).p`);
  }
});

test('wilson: small n against the closed form computed in Python', () => {
  // Python: p=k/n; d=1+z*z/n; c=(p+z*z/(2n))/d; h=z/d*sqrt(p(1-p)/n+z*z/(4n*n)); (c-h, c+h),
  // z = NormalDist().inv_cdf(0.975). 0/5 → hi = z²/(n + z²) is also the textbook "rule" form.
  const table = [
    [0, 5, 0, 0.4344825],
    [5, 5, 0.5655175, 1],
    [3, 5, 0.2307243, 0.8823792],
    [1, 3, 0.0614919, 0.7923404],
    [0, 1, 0, 0.7934507],
    [1, 1, 0.2065493, 1],
    [29, 29, 0.8830302, 1],
    [81, 263, 0.2552885, 0.3662096],
  ];
  for (const [k, n, lo, hi] of table) {
    const w = wilson(k, n);
    close(w.lo, lo, 1e-7, `wilson(${k}, ${n}).lo`);
    close(w.hi, hi, 1e-7, `wilson(${k}, ${n}).hi`);
  }
});

test('wilson: edges are exact and the interval always holds p', () => {
  assert.deepEqual(wilson(0, 0), { p: NaN, lo: 0, hi: 1 }, 'wilson(0, 0)');
  for (let n = 1; n <= 60; n++) {
    assert.equal(wilson(0, n).lo, 0, `wilson(0, ${n}).lo`);
    assert.equal(wilson(n, n).hi, 1, `wilson(${n}, ${n}).hi`);
    for (let k = 0; k <= n; k++) {
      const w = wilson(k, n);
      assert.ok(w.lo >= 0 && w.lo <= w.p && w.p <= w.hi && w.hi <= 1, `wilson(${k}, ${n}) = ${JSON.stringify(w)}`);
      // Symmetry: the interval of n−k is the mirror image of that of k.
      const m = wilson(n - k, n);
      close(m.lo, 1 - w.hi, 1e-12, `wilson(${n - k}, ${n}).lo vs 1 − wilson(${k}, ${n}).hi`);
    }
  }
  // A wider z gives a wider interval; z = 2.5758293 (99 %) for 3/5, Python closed form.
  const w99 = wilson(3, 5, normalQuantile(0.995));
  close(w99.lo, 0.1686562, 1e-6, 'wilson(3, 5, z99).lo');
  close(w99.hi, 0.9172921, 1e-6, 'wilson(3, 5, z99).hi');
  assert.throws(() => wilson(6, 5), /wilson: successes \(6\) > n \(5\)/);
  assert.throws(() => wilson(-1, 5), /wilson: successes/);
  assert.throws(() => wilson(1.5, 5), /wilson: successes/);
  assert.throws(() => wilson(1, 5, 0), /wilson: z/);
});

test('tQuantile: textbook two-sided 95 % values and others', () => {
  // qt(0.975, df) to 6 decimals as in every t table (e.g. NIST/SEMATECH e-Handbook of Statistical
  // Methods, table 1.3.6.7.2) and R's qt(); 9 decimals from the independent Python bisection.
  const table = [
    [0.975, 1, 12.706204736], [0.975, 2, 4.302652730], [0.975, 3, 3.182446305],
    [0.975, 4, 2.776445105], [0.975, 5, 2.570581836], [0.975, 9, 2.262157163],
    [0.975, 10, 2.228138852], [0.975, 30, 2.042272456], [0.975, 100, 1.983971519],
    [0.995, 1, 63.656741163], [0.995, 2, 9.924843201], [0.95, 10, 1.812461123],
    [0.9, 7, 1.414923928], [0.975, 2.5, 3.574654842],
  ];
  for (const [p, df, t] of table) {
    close(tQuantile(p, df), t, 1e-6, `tQuantile(${p}, ${df})`);
    close(tQuantile(1 - p, df), -t, 1e-6, `tQuantile(${1 - p}, ${df})`);
  }
  // df → ∞ tends to the normal quantile.
  close(tQuantile(0.975, 1e7), Z95, 1e-6, 'tQuantile(0.975, 1e7)');
});

test('tQuantile inverts tCdf over a grid of p and df', () => {
  for (const df of [1, 1.5, 2, 3, 4, 7, 12, 29, 64, 250, 5000]) {
    for (const p of [1e-6, 0.001, 0.01, 0.025, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.975, 0.99, 0.999, 1 - 1e-6]) {
      const t = tQuantile(p, df);
      close(tCdf(t, df), p, 1e-12, `tCdf(tQuantile(${p}, ${df}), ${df})`);
    }
  }
  assert.equal(tQuantile(0.5, 3), 0);
  assert.equal(tQuantile(1, 3), Infinity);
  assert.equal(tQuantile(0, 3), -Infinity);
  assert.ok(Number.isNaN(tQuantile(1.5, 3)), 'tQuantile(1.5, 3) is NaN');
  assert.throws(() => tQuantile(0.9, 0), /tQuantile: df/);
  // tCdf(1, 1) = 3/4 (Cauchy), tCdf(√2, 2) = ½ + ½·√2/√4 (closed form t/(2√(2+t²)) + ½).
  close(tCdf(1, 1), 0.75, 1e-14, 'tCdf(1, 1)');
  close(tCdf(Math.SQRT2, 2), 0.5 + Math.SQRT2 / (2 * 2), 1e-14, 'tCdf(√2, 2)');
});

test('normalQuantile: textbook values and Python NormalDist.inv_cdf', () => {
  // z table: 1.644854 (90 %), 1.959964 (95 %), 2.575829 (99 %), 3.090232 (p = 0.999); the full
  // digits are NormalDist().inv_cdf(p).
  const table = [[0.95, 1.6448536269514715], [0.975, 1.959963984540054], [0.995, 2.5758293035489004],
    [0.999, 3.090232306167813], [0.5, 0], [0.001, -3.090232306167813], [1e-10, -6.361340902404056]];
  for (const [p, z] of table) close(normalQuantile(p), z, 1e-14, `normalQuantile(${p})`, { rel: z !== 0 });
  assert.equal(normalQuantile(0), -Infinity);
  assert.ok(Number.isNaN(normalQuantile(-0.1)));
});

test('lgamma and betaInc: known values', () => {
  // ln Γ: Γ(½) = √π, Γ(3/2) = √π/2, Γ(10) = 9! = 362880; ln Γ(100) = 359.13420536957540 (A&S).
  close(lgamma(0.5), 0.5 * Math.log(Math.PI), 1e-14, 'lgamma(0.5)');
  close(lgamma(1.5), Math.log(Math.sqrt(Math.PI) / 2), 1e-14, 'lgamma(1.5)');
  close(lgamma(10), Math.log(362880), 1e-13, 'lgamma(10)');
  close(lgamma(100), 359.1342053695754, 1e-12, 'lgamma(100)', { rel: true });
  assert.equal(lgamma(1), 0);
  assert.equal(lgamma(2), 0);
  // I_x(1, 1) = x; I_x(a, 1) = x^a; I_x(1, b) = 1 − (1 − x)^b; I_½(a, a) = ½.
  for (const x of [0.01, 0.3, 0.5, 0.77, 0.999]) {
    close(betaInc(x, 1, 1), x, 1e-14, `betaInc(${x}, 1, 1)`);
    close(betaInc(x, 3.5, 1), x ** 3.5, 1e-13, `betaInc(${x}, 3.5, 1)`);
    close(betaInc(x, 1, 4), 1 - (1 - x) ** 4, 1e-13, `betaInc(${x}, 1, 4)`);
  }
  for (const a of [0.5, 2, 17, 300]) close(betaInc(0.5, a, a), 0.5, 1e-12, `betaInc(0.5, ${a}, ${a})`);
});

test('meanCI: Student t intervals', () => {
  // R, example(t.test): Student's sleep data, paired differences (group 2 − group 1);
  // t.test(extra ~ group, data = sleep, paired = TRUE) prints the 95 % CI -2.4598858 -0.7001142
  // for group 1 − group 2, so 0.7001142 … 2.4598858 for these differences, mean 1.58.
  const sleep = [1.2, 2.4, 1.3, 1.3, 0.0, 1.0, 1.8, 0.8, 4.6, 1.4];
  const s = meanCI(sleep);
  close(s.mean, 1.58, 1e-12, 'meanCI(sleep).mean');
  close(s.lo, 0.7001142, 1e-7, 'meanCI(sleep).lo');
  close(s.hi, 2.4598858, 1e-7, 'meanCI(sleep).hi');
  close(s.sd, 1.2299954832798732, 1e-12, 'meanCI(sleep).sd'); // statistics.stdev
  assert.equal(s.n, 10);
  // t.test(1:4)$conf.int = 0.4457397 4.5542603 (mean 2.5 ± 3.182446·1.290994/2).
  const r = meanCI([1, 2, 3, 4]);
  close(r.lo, 0.4457397, 1e-7, 'meanCI([1, 2, 3, 4]).lo');
  close(r.hi, 4.5542603, 1e-7, 'meanCI([1, 2, 3, 4]).hi');
  // 90 % level: t(0.95, 3) = 2.353363 → 2.5 ± 1.519090.
  const r90 = meanCI([1, 2, 3, 4], 0.9);
  close(r90.hi - r90.mean, 2.353363435 * 1.2909944487 / 2, 1e-8, 'meanCI([1, 2, 3, 4], 0.9) half-width');
});

test('meanCI: edges', () => {
  const none = meanCI([]);
  for (const k of ['mean', 'lo', 'hi', 'sd']) assert.ok(Number.isNaN(none[k]), `meanCI([]).${k} is NaN`);
  assert.equal(none.n, 0);
  const one = meanCI([0.7]);
  assert.equal(one.mean, 0.7, 'meanCI([0.7]).mean');
  assert.ok(Number.isNaN(one.lo) && Number.isNaN(one.hi) && Number.isNaN(one.sd), 'meanCI([0.7]): no interval');
  assert.deepEqual(meanCI([0.5, 0.5, 0.5]), { mean: 0.5, lo: 0.5, hi: 0.5, sd: 0, n: 3 }, 'meanCI([0.5, 0.5, 0.5])');
  assert.throws(() => meanCI([1, undefined, 3]), /meanCI: xs\[1\] is undefined/);
  assert.throws(() => meanCI([1, NaN]), /meanCI: xs\[1\] is NaN/);
  assert.throws(() => meanCI([1, 2], 95), /meanCI: level/);
  // Large offsets do not cost precision (two-pass variance).
  const big = meanCI([1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4]);
  close(big.sd, 1.2909944487358056, 1e-9, 'meanCI([1e9+1 … 1e9+4]).sd');
});

test('fisherExact: known tables', () => {
  const table = [
    // Small tables worked by hand: [[0,3],[1,2]] both outcomes have P = ½; [[3,0],[0,3]] = 2/C(6,3).
    [[0, 3, 1, 2], 1],
    [[3, 0, 0, 3], 0.1],
    // Fisher's lady tasting tea (R, example(fisher.test): TeaTasting, two-sided p = 0.4857).
    [[3, 1, 1, 3], 0.4857142857142857],
    // 2/C(20, 10) = 2/184756.
    [[10, 0, 0, 10], 1.082508822e-5],
    // R, example(fisher.test): Convictions (2, 10, 15, 3 by column) → p-value = 0.0005367.
    [[2, 15, 10, 3], 5.367241191e-4],
    // Wikipedia "Fisher's exact test" worked example (dieting by sex) → p ≈ 0.002759.
    [[1, 9, 11, 3], 2.759456185e-3],
    // The rest from exact rational arithmetic in Python.
    [[12, 5, 7, 7], 0.288308104],
    [[2, 7, 8, 2], 2.301413757e-2],
    [[40, 10, 25, 25], 3.052059336e-3],
    [[7, 200, 1, 300], 9.135222194e-3],
    [[0, 50, 6, 44], 2.666107631e-2],
    [[500, 400, 400, 500], 2.991340555e-6],
    [[5000, 4000, 4000, 5000], 2.945679174e-50],
  ];
  for (const [[a, b, c, d], p] of table) close(fisherExact(a, b, c, d), p, 1e-8, `fisherExact(${a}, ${b}, ${c}, ${d})`, { rel: true });
});

test('holm: adjusted p-values worked by hand from the definition', () => {
  const cases = [
    // sorted input: 5·0.01, 4·0.02, 3·0.03 = 0.09, then 2·0.04 = 0.08 and 1·0.05 stay at the running 0.09
    [[0.01, 0.02, 0.03, 0.04, 0.05], [0.05, 0.08, 0.09, 0.09, 0.09]],
    // unsorted: 0.01 → 3·0.01 = 0.03; 0.03 → 2·0.03 = 0.06; 0.04 → max(0.06, 0.04) = 0.06
    [[0.04, 0.01, 0.03], [0.06, 0.03, 0.06]],
    // capped at 1; a single p is its own adjustment
    [[0.5, 0.6], [1, 1]],
    [[0.2], [0.2]],
    // twelve comparisons of five seeds each: the smallest possible Fisher p, 2/C(10, 5) = 0.00794,
    // becomes 12·0.00794 = 0.0952 (no comparison of 5 against 5 can be significant at 5 % then)
    [[2 / 252, ...Array(11).fill(1)], [24 / 252, ...Array(11).fill(1)]],
    // a comparison that could not be made (NaN) is left out of m and kept as it was
    [[0.01, NaN, 0.02], [0.02, NaN, 0.02]],
    [[], []],
  ];
  for (const [ps, want] of cases) {
    const got = holm(ps);
    assert.equal(got.length, want.length, `holm(${ps}) length`);
    got.forEach((p, i) => (Number.isNaN(want[i]) ? assert.ok(Number.isNaN(p), `holm(${ps})[${i}] = ${p}, expected NaN`) : close(p, want[i], 1e-12, `holm(${ps})[${i}]`)));
  }
  assert.throws(() => holm([0.1, 1.5]), /holm: p-values must lie in \[0, 1\], got 1.5 at index 1/);
});

test('fisherExact: edges, symmetry and bad input', () => {
  // A single possible table (an empty row or column, or nothing at all) is p = 1.
  for (const t of [[0, 0, 0, 0], [5, 0, 0, 0], [0, 5, 0, 5], [3, 0, 4, 0]]) assert.equal(fisherExact(...t), 1, `fisherExact(${t.join(', ')})`);
  // The most likely table, and every table with margins (5, 5 | 5, 5) that is as likely, give 1.
  close(fisherExact(5, 5, 5, 5), 1, 1e-12, 'fisherExact(5, 5, 5, 5)');
  // Transposing the table or swapping its rows or columns does not change a two-sided p.
  const rnd = mulberry32(7);
  for (let i = 0; i < 200; i++) {
    const [a, b, c, d] = [0, 0, 0, 0].map(() => Math.floor(rnd() * 15));
    const p = fisherExact(a, b, c, d);
    assert.ok(p > 0 && p <= 1, `fisherExact(${a}, ${b}, ${c}, ${d}) = ${p}`);
    close(fisherExact(a, c, b, d), p, 1e-9, `fisherExact(${a}, ${c}, ${b}, ${d}) (transposed)`, { rel: true });
    close(fisherExact(c, d, a, b), p, 1e-9, `fisherExact(${c}, ${d}, ${a}, ${b}) (rows swapped)`, { rel: true });
    close(fisherExact(b, a, d, c), p, 1e-9, `fisherExact(${b}, ${a}, ${d}, ${c}) (columns swapped)`, { rel: true });
  }
  assert.throws(() => fisherExact(1, -1, 2, 3), /fisherExact\(1, -1, 2, 3\): b must be a non-negative integer/);
  assert.throws(() => fisherExact(1, 2.5, 2, 3), /fisherExact/);
});

test('quantile and median: type 7', () => {
  // numpy.percentile docs: a = [[10, 7, 4], [3, 2, 1]], np.percentile(a, 50) → 3.5.
  close(median([10, 7, 4, 3, 2, 1]), 3.5, 0, 'median([10, 7, 4, 3, 2, 1])');
  // R: quantile(1:4, 0.25) = 1.75 (type 7 default).
  close(quantile([4, 3, 2, 1], 0.25), 1.75, 1e-15, 'quantile([4, 3, 2, 1], 0.25)');
  // Python statistics.quantiles(x, n=10 and n=4, method='inclusive').
  const x = [3.1, 1.4, 15.9, 2.6, 5.3, 5.8, 9.7, 9.3, 2.3, 8.4];
  const deciles = [2.21, 2.54, 2.95, 4.42, 5.55, 6.84, 8.67, 9.38, 10.32];
  deciles.forEach((q, i) => close(quantile(x, (i + 1) / 10), q, 1e-12, `quantile(x, ${(i + 1) / 10})`));
  close(quantile(x, 0.25), 2.725, 1e-12, 'quantile(x, 0.25)');
  close(quantile(x, 0.75), 9.075, 1e-12, 'quantile(x, 0.75)');
  assert.equal(quantile(x, 0), 1.4);
  assert.equal(quantile(x, 1), 15.9);
  assert.equal(median(x), 5.55);
  assert.deepEqual(x.slice(0, 3), [3.1, 1.4, 15.9], 'quantile does not sort its input');
  assert.ok(Number.isNaN(median([])), 'median([]) is NaN');
  assert.equal(median([4]), 4);
  assert.throws(() => quantile(x, 1.2), /quantile: p/);
  assert.throws(() => median(['a']), /median: xs\[0\]/);
});

test('bootstrapCI: deterministic, seeded, sensible', () => {
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const xs = [0.2, 0.5, 0.9, 0.4, 0.7, 0.1, 0.8];
  const a = bootstrapCI(xs, mean, { reps: 500, seed: 42 });
  const b = bootstrapCI(xs, mean, { reps: 500, seed: 42 });
  assert.deepEqual(a, b, 'bootstrapCI(xs, mean, { reps: 500, seed: 42 }) twice');
  assert.notDeepEqual(bootstrapCI(xs, mean, { reps: 500, seed: 43 }), a, 'another seed gives other resamples');
  assert.equal(a.estimate, mean(xs));
  assert.ok(a.lo < a.estimate && a.estimate < a.hi, `bootstrapCI(xs, mean) = ${JSON.stringify(a)}`);
  // One resample, worked by hand from mulberry32(9): indices ⌊u·n⌋.
  const u = mulberry32(9);
  const idx = xs.map(() => Math.floor(u() * xs.length));
  const one = bootstrapCI(xs, mean, { reps: 1, seed: 9 });
  close(one.lo, mean(idx.map((i) => xs[i])), 1e-15, 'bootstrapCI(xs, mean, { reps: 1, seed: 9 }).lo');
  // For many normal-ish values the percentile interval of the mean is close to the t interval.
  const g = mulberry32(5);
  const many = Array.from({ length: 400 }, () => g() + g() + g() + g());
  const t = meanCI(many), bs = bootstrapCI(many, mean, { reps: 4000, seed: 1 });
  const ratio = (bs.hi - bs.lo) / (t.hi - t.lo);
  assert.ok(ratio > 0.9 && ratio < 1.1, `bootstrapCI(400 values) width / meanCI width = ${ratio}`);
  // Edges.
  assert.deepEqual(bootstrapCI([3], mean, { reps: 10 }), { estimate: 3, lo: 3, hi: 3, reps: 10, level: 0.95, seed: 1 });
  assert.ok(Number.isNaN(bootstrapCI([], mean).lo), 'bootstrapCI([]) is NaN');
  assert.throws(() => bootstrapCI(xs, () => NaN, { reps: 3 }), /bootstrapCI: stat returned NaN/);
  assert.throws(() => bootstrapCI(xs, mean, { reps: 0 }), /bootstrapCI: reps/);
});

test('formatting', () => {
  assert.equal(formatProportion(3, 5), '3 of 5 (95 % CI 23–88 %)');
  assert.equal(formatProportion(0, 5), '0 of 5 (95 % CI 0–43 %)');
  assert.equal(formatProportion(81, 263, { digits: 1 }), '81 of 263 (95 % CI 25.5–36.6 %)');
  assert.equal(formatProportion(0, 0), '0 of 0 (no data)');
  assert.equal(formatMeanCI({ mean: 0.623, lo: 0.481, hi: 0.765 }, { scale: 100 }), '62.3 [48.1, 76.5]');
  assert.equal(formatMeanCI(meanCI([1, 2, 3, 4]), { digits: 2 }), '2.50 [0.45, 4.55]');
  assert.equal(formatMeanCI(meanCI([0.7]), { scale: 100 }), '70.0 (n = 1, no interval)');
  assert.equal(formatMeanCI(meanCI([])), 'no data');
  assert.equal(formatMeanCI({ mean: -0.0001, lo: -0.02, hi: 0.01 }, { digits: 1, scale: 100 }), '0.0 [-2.0, 1.0]');
  assert.equal(formatMeanCI({ estimate: 2, lo: 1, hi: 3 }, { digits: 0 }), '2 [1, 3]');
});
