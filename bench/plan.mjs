// What the benchmark runs: the variants (from the binding's registry, lab.variants), their
// dimensions, inputs and options at each size, their flop counts (src/js/reference.js), and which
// contender skips which measurement, with the reason recorded as "n/a: reason".
import { uniformArray } from '../src/js/prng.js';
import { flopCount, recurrentRange } from '../src/js/reference.js';
import { factorA } from '../src/js/reference-model.js';

export const D = 64, DV = 64, H = 64, RANK = 8;
/** Above this n a call takes seconds: no warm-up at the size itself, the instance is pre-warmed at PREWARM_N. */
export const HUGE_N = 8192;
export const PREWARM_N = 1024;
/** Options the benchmark passes to a variant (the others run with their defaults). */
export const BENCH_OPTIONS = { mixture: { components: ['softmax', 'dense1'], alpha: [0.5, 0.5] } };
const MAX_INPUT_BYTES = 256 * 2 ** 20;
const MAX_PREDICTED_MS = 6000; // the SIMD build, the main subject, gets 25 s
const MAX_PREDICTED_MS_SIMD = 25000;

/** Whether a variant (an entry of lab.variants) scores n×n pairs: its family's fact. */
export const quadratic = (variant) => variant.quadratic;

/** The dimensions at size n: L = n, a·b = n with a the largest divisor of n not above √n. */
export function dimsFor(n) {
  const a = factorA(n);
  return { n, d: D, dv: DV, h: H, L: n, a, b: n / a, rank: RANK };
}

const elements = (shape, dims) => shape.reduce((p, s) => p * dims[s], 1);

/**
 * Inputs of one size, generated on first use (a skipped variant allocates nothing): array `name`
 * is uniformArray(count, n, name) from src/js/prng.js, which native.c reproduces. dims: the
 * benchmark's at n unless given (bench/recurrent.mjs's widths).
 */
export function makeInputs(n, dims = dimsFor(n)) {
  const cache = new Map();
  return {
    dims,
    seed: n,
    get(name, shape) {
      if (!cache.has(name)) cache.set(name, uniformArray(elements(shape, dims), n, name));
      return cache.get(name);
    },
  };
}

/** The variants to run: lab.variants, or those --only names (in the registry's order). */
export function selectVariants(registry, only) {
  for (const id of only ?? []) if (!registry.some((v) => v.id === id)) throw new Error(`--only: unknown variant ${id}`);
  const mixable = registry.filter((v) => v.mixable).map((v) => v.id);
  for (const [id, o] of Object.entries(BENCH_OPTIONS)) {
    const bad = (o.components ?? []).filter((c) => mixable.length && !mixable.includes(c));
    if (bad.length) throw new Error(`bench/plan.mjs: ${id} mixes ${bad.join(', ')}, which the registry does not mark mixable`);
  }
  return registry.filter((v) => !only || only.includes(v.id));
}

export const callOptions = (variant) => ({ ...(BENCH_OPTIONS[variant.id] ?? {}) });

/** The arrays a call reads: the variant's inputs, or for a mixture those of its components. */
export function neededInputs(variant, registry) {
  const components = callOptions(variant).components;
  if (!components) return variant.inputs;
  const names = new Set(components.flatMap((c) => registry.find((v) => v.id === c).inputs.map((i) => i.name)));
  return variant.inputs.filter((i) => names.has(i.name));
}

/**
 * The inputs object for lab.attention(): the dims the variant reads and the arrays it needs. The
 * recurrent family's are moved into the range its accuracy bar covers (recurrentRange: uniform g
 * would put decays above 1, which overflow the state long before n = 16,384), in copies: the
 * cached arrays serve every variant. s0 is left out (the state starts at zero).
 */
export function callInputs(variant, registry, inp) {
  const o = {};
  for (const name of variant.dims) o[name] = inp.dims[name];
  for (const i of neededInputs(variant, registry)) if (!i.optional) o[i.name] = inp.get(i.name, i.shape);
  if (variant.family === 'recurrent') {
    for (const name of ['k', 'g', 'beta']) if (o[name]) o[name] = o[name].slice();
    recurrentRange(o);
  }
  return o;
}

/** { flops, formula } of one call (src/js/reference.js); flops null when it has no count. */
export function flops(variant, dims) {
  const f = flopCount(variant.id, dims, callOptions(variant));
  return { flops: Number.isFinite(f.flops) ? f.flops : null, formula: f.formula };
}

const inputBytes = (variant, registry, dims) => neededInputs(variant, registry).reduce((s, i) => s + 4 * elements(i.shape, dims), 0);

/**
 * Which measurement is skipped, and why. Softmax-type variants cost O(n²): at n = 16384 one call
 * takes seconds on the fast builds and far longer on the slow ones, so the slow contenders run a
 * subset there (keeps the full run under ~10 minutes). observe() learns from each row: the time at
 * the largest size so far (to predict the next), and whether softmax streams (its memory at 4096).
 */
export class Plan {
  #lastTime = new Map();
  #registry;
  streaming = null;
  notes = [
    'plain-js softmax is skipped above n = 4096 (one call would take minutes).',
    `A variant whose inputs exceed ${MAX_INPUT_BYTES / 2 ** 20} MiB is skipped at that size (random: r is L×L floats, 1 GiB at n = 16384).`,
    'softmax-type variants run at n = 16384 because the library streams (online softmax over key blocks, no n×n buffer); the run checks this from softmax\'s memory at n = 4096.',
    'Time budget (keeps the full run under ~10 minutes): the scalar build runs softmax-type variants other than softmax only up to n = 1024, and softmax up to 4096; at n = 16384 the relaxed build and native run softmax but no Synthesizer variant; the SIMD build runs everything.',
    `At n = 16384 a softmax-type measurement whose call would take over ${MAX_PREDICTED_MS / 1000} s (${MAX_PREDICTED_MS_SIMD / 1000} s on the SIMD build), predicted from its time at the previous size (∝ n²), is skipped.`,
    'onnxruntime-web and tfjs-wasm are skipped at n = 16384: they materialise the n×n logits and probabilities (>= 2 GiB).',
  ];

  constructor(registry) { this.#registry = registry; }

  /** The reason `contender` skips `variant` at n, or null. */
  skip(contender, variant, n) {
    const huge = n > HUGE_N, sq = quadratic(variant), id = variant.id;
    if (inputBytes(variant, this.#registry, dimsFor(n)) > MAX_INPUT_BYTES) return `its inputs exceed ${MAX_INPUT_BYTES / 2 ** 20} MiB at this n`;
    if (sq && huge && this.streaming === false) return 'the library is not streaming here (softmax at n = 4096 held n×n memory)';
    if (contender === 'attnlab-scalar' && sq && (huge || (n >= 4096 && id !== 'softmax'))) return 'time budget (scalar build: softmax up to 4096, other softmax-type variants up to 1024)';
    if ((contender === 'attnlab-relaxed' || contender === 'native') && sq && huge && id !== 'softmax') return 'time budget (only softmax among the softmax-type variants at this n)';
    if (contender === 'plain-js' && id === 'softmax' && n > 4096) return 'skipped above n = 4096';
    if ((contender === 'onnxruntime-web' || contender === 'tfjs-wasm') && huge) return 'materialises n×n (>= 2 GiB at this n)';
    return huge && sq ? this.#predictedTooSlow(contender, id, n) : null;
  }

  #predictedTooSlow(contender, id, n) {
    const prev = this.#lastTime.get(`${contender} ${id}`);
    if (!prev) return null;
    const predicted = prev.ms * (n / prev.n) ** 2;
    if (predicted <= (contender === 'attnlab-simd' ? MAX_PREDICTED_MS_SIMD : MAX_PREDICTED_MS)) return null;
    return `time budget: one call would take about ${(predicted / 1000).toFixed(0)} s (from ${prev.ms.toFixed(0)} ms at n = ${prev.n})`;
  }

  /** Learns from a measured row; ref: the row is the reference build's. */
  observe(row, ref) {
    if (row.status !== 'ok') return;
    this.#lastTime.set(`${row.contender} ${row.variant}`, { n: row.n, ms: row.median_ms });
    if (ref && row.variant === 'softmax' && row.n === 4096 && row.peak_memory_bytes != null) {
      this.streaming = row.peak_memory_bytes < row.n * row.n * 4;
      if (!this.streaming) this.notes.push(`softmax at n = 4096 held ${(row.peak_memory_bytes / 2 ** 20).toFixed(1)} MiB of wasm memory (>= n²·4 bytes): not streaming, so softmax-type variants are skipped above 4096.`);
    }
  }
}
