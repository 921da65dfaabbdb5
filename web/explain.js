// Tooltip text for a hovered cell. The numbers come from the definitions module
// (../dist/reference.js: explain, explainOutput), one Step per line; this file only formats them,
// so the page holds no per-variant math. A Step reads `label = formula = value`, and when it has
// `terms` (the products of a sum) the first few follow: "(a)×(b) + … (d terms)".

import { explain, explainOutput } from '../dist/reference.js';
import { WEIGHTS_MAX_N } from './gen.js';

/** Number text for the page: 4 significant digits, exponent form when very large or small. */
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

/** fmt, in parentheses when negative (inside a product). */
export const paren = (x) => (x < 0 ? `(${fmt(x)})` : fmt(x));

const TERMS_SHOWN = 4;

function termsText(terms) {
  const parts = terms.slice(0, TERMS_SHOWN).map(([a, b]) => `${paren(a)}×${paren(b)}`);
  if (terms.length > TERMS_SHOWN) parts.push(`… (${terms.length} terms)`);
  return parts.join(' + ');
}

/** One line per Step: "label = formula = value", the first terms of a sum in between. */
export function formatSteps(steps) {
  return steps.map((s) => {
    const sum = s.terms?.length ? ` = ${termsText(s.terms)}` : '';
    return `${s.label} = ${s.formula}${sum} = ${fmt(s.value)}`;
  });
}

/** The value of the last step named `prefix[i,j]` (the definitions' own number for that cell). */
function valueOf(steps, label) {
  for (let k = steps.length - 1; k >= 0; k--) if (steps[k].label === label) return steps[k].value;
  return null;
}

/** Arrays and dims of a result, as the definitions module takes them. */
const inputsOf = (r) => ({ ...r.dims, ...r.inputs });

/**
 * Explains A[i,j] of result r ({ id, inputs, dims, options, weights }).
 * Returns { lines, computed }: computed is the definitions' value of A[i,j] (float64), or null.
 */
export function describeWeight(r, i, j) {
  const n = r.dims.n;
  const steps = explain(r.id, inputsOf(r), r.options, i, j);
  const lines = formatSteps(steps);
  if (!steps.length && r.weights) lines.push(`A[${i},${j}] = ${fmt(r.weights[i * n + j])} (no definition of ${r.id} to explain it)`);
  if (r.weights) {
    let s = 0;
    for (let t = 0; t < n; t++) s += r.weights[i * n + t];
    lines.push(`row ${i} sums to ${fmt(s, 6)}`);
  }
  return { lines, computed: valueOf(steps, `A[${i},${j}]`) };
}

/** Explains y[i,c] = Σ_j A[i,j]·v[j,c] of result r. */
export function describeOutput(r, i, c) {
  const { dv } = r.dims;
  const y = r.output[i * dv + c];
  if (!r.weights || !r.inputs.v) {
    return { lines: [`y[${i},${c}] = ${fmt(y)}`, `A is only requested for n ≤ ${WEIGHTS_MAX_N}, so the sum is not shown.`], computed: null };
  }
  const steps = explainOutput(inputsOf(r), r.weights, i, c);
  const lines = formatSteps(steps).map((l) => l.replace(/\((\d+) terms\)/, '($1 non-zero terms)'));
  return { lines, computed: valueOf(steps, `y[${i},${c}]`) };
}
