// Deterministic pseudo-random numbers shared by the tests, the page and the benchmark.
//
// Every array gets its own stream, seeded from (seed, array name), so two calls with the same seed
// see the same q, k, v, ... whatever else they generate. The numbers are part of the project's
// memory: the committed fixtures store a checksum of the inputs made from these streams and page
// links store only a seed, so any change here must keep them bit-identical (or regenerate the
// fixtures with `npm run fixtures`).
//
// A plain ES module: no DOM, no Node APIs.

/** mulberry32: a small, fast 32-bit PRNG. Returns a function giving floats in [0, 1). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a hash of a string, as an unsigned 32-bit integer. */
export function hashString(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** The seed of the stream for array `name` under `seed`. */
export function streamSeed(seed, name) {
  return (hashString(name) ^ Math.imul(seed >>> 0, 0x9e3779b1)) >>> 0;
}

/** Float32Array of `len` values uniform in [-magnitude, magnitude], from stream (seed, name). */
export function uniformArray(len, seed, name, magnitude = 1) {
  const rnd = mulberry32(streamSeed(seed, name));
  const out = new Float32Array(len);
  for (let i = 0; i < len; i++) out[i] = Math.fround((2 * rnd() - 1) * magnitude);
  return out;
}

/**
 * Approximately standard normal numbers from stream (seed, name): the Irwin–Hall sum of four
 * uniforms, centred and scaled to unit variance, so bounded by ±√12 ≈ 3.46.
 */
export function normalStream(seed, name) {
  const u = mulberry32(streamSeed(seed, name));
  return () => (u() + u() + u() + u() - 2) * Math.sqrt(3);
}
