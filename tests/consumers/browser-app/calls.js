// The attention calls the app makes, with their inputs. Deterministic and dependency-free, so the
// test can make the same calls in Node and compare the numbers.

/** n x cols row-major values in (-1, 1), rounded to float32. */
function matrix(rows, cols, seed) {
  const a = new Float32Array(rows * cols);
  for (let i = 0; i < a.length; i++) a[i] = Math.fround(Math.sin(seed * 12.9898 + i * 0.7311) * 0.9);
  return a;
}

const n = 7;
const d = 5;
const dv = 3;

export const CALLS = [
  { id: 'softmax', inputs: () => ({ n, d, dv, q: matrix(n, d, 1), k: matrix(n, d, 2), v: matrix(n, dv, 3) }),
    options: { weights: true } },
  { id: 'linear', inputs: () => ({ n, d, dv, q: matrix(n, d, 1), k: matrix(n, d, 2), v: matrix(n, dv, 3) }),
    options: { causal: true, weights: true } },
  { id: 'fixed', inputs: () => ({ n, dv, v: matrix(n, dv, 3) }), options: { pattern: 'left', window: 2 } },
];

/** Runs every call on `lab`; plain arrays, ready for JSON. */
export function runCalls(lab) {
  return CALLS.map(({ id, inputs, options }) => {
    const { output, weights } = lab.attention(id, inputs(), options);
    return { id, output: Array.from(output), weights: weights ? Array.from(weights) : null };
  });
}
