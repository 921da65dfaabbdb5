// Types of the subpath 'attnlab/prng' (src/js/prng.js): the deterministic streams the tests, the
// page and the benchmark draw their numbers from.

/** mulberry32: a small 32-bit PRNG; the function it returns gives floats in [0, 1). */
export function mulberry32(seed: number): () => number;
/** FNV-1a hash of a string, an unsigned 32-bit integer. */
export function hashString(s: string): number;
/** The seed of the stream for array `name` under `seed`. */
export function streamSeed(seed: number, name: string): number;
/** `len` float32 values uniform in [-magnitude, magnitude], from stream (seed, name). */
export function uniformArray(len: number, seed: number, name: string, magnitude?: number): Float32Array;
/** Approximately standard normal numbers from stream (seed, name) (Irwin–Hall of four uniforms, within ±√12). */
export function normalStream(seed: number, name: string): () => number;
