// Type declarations for the `attnlab` package (hand-written; keep in step with attnlab.js).
// The math of every variant is in docs/contract.md; shapes are row-major Float32Arrays. The ids
// below mirror src/c/variants.def, which is what `lab.variants` reports at run time.

/** The variant ids of src/c/variants.def when this file was written; `lab.variants` is the list. */
export type KnownVariantId =
  | 'softmax'
  | 'dense'
  | 'dense1'
  | 'random'
  | 'factorized-dense'
  | 'factorized-random'
  | 'mixture'
  | 'linear'
  | 'efficient'
  | 'taylor'
  | 'fixed';
/** A variant id: a known one, or any id a newer registry adds (the string & {} keeps completion). */
export type VariantId = KnownVariantId | (string & {});

/** A variant a mixture may combine: one marked mixable (`lab.options.components.values`). */
export type MixtureComponent = VariantId;

export type FixedPattern = 'current' | 'previous' | 'next' | 'left' | 'right' | 'first' | 'last';

/** Which WebAssembly module an instance runs. */
export type BuildName = 'relaxed' | 'simd' | 'scalar';

export type AttnErrorCode = 'SHAPE' | 'VALUE' | 'UNKNOWN' | 'UNSUPPORTED' | 'MEMORY' | 'LOAD' | 'DISPOSED';

/** Thrown for every bad input; `code` says which kind. The instance keeps working. */
export class AttnError extends Error {
  readonly name: 'AttnError';
  readonly code: AttnErrorCode;
  constructor(code: AttnErrorCode, message: string);
}

/** A row-major matrix: a typed array of numbers or a plain array of numbers. */
export type Matrix = Float32Array | Float64Array | Int32Array | Uint8Array | readonly number[];

/** Dimensions and arrays of one call; which are needed depends on the variant (see `variants`). */
export interface AttentionInputs {
  n: number;
  d?: number;
  dv: number;
  h?: number;
  L?: number;
  a?: number;
  b?: number;
  rank?: number;
  /** [n, d] */ q?: Matrix;
  /** [n, d] */ k?: Matrix;
  /** [n, dv] */ v?: Matrix;
  /** [n, d] */ x?: Matrix;
  /** dense: [d, h] */ w1?: Matrix;
  /** dense: [h] */ b1?: Matrix;
  /** dense: [h, L] */ w2?: Matrix;
  /** dense: [L] */ b2?: Matrix;
  /** dense1: [d, L] */ w?: Matrix;
  /** random: [L, L] */ r?: Matrix;
  /** factorized-dense: [d, a] */ wa?: Matrix;
  /** factorized-dense: [a] */ ba?: Matrix;
  /** factorized-dense: [d, b] */ wb?: Matrix;
  /** factorized-dense: [b] */ bb?: Matrix;
  /** factorized-random: [L, rank] */ r1?: Matrix;
  /** factorized-random: [L, rank] */ r2?: Matrix;
}

/** Every option may be null, which means its default. */
export interface AttentionOptions {
  /** Row i uses only columns j <= i. Default false. */
  causal?: boolean | null;
  /** Also return the n x n effective attention matrix. Default false. */
  weights?: boolean | null;
  /** linear, efficient, taylor: also return `state` and `normalizer`, what they keep instead of A. */
  state?: boolean | null;
  /** softmax: logit scale, default 1/sqrt(d). */
  scale?: number | null;
  /** linear, taylor: denominator epsilon, default 1e-6. */
  eps?: number | null;
  /** factorized-dense: default 'kronecker'. */
  tiling?: 'kronecker' | 'tile' | null;
  /** mixture: which logits to mix. */
  components?: MixtureComponent[] | null;
  /** mixture: non-negative weights summing to 1 (within 1e-5), one per component. */
  alpha?: ArrayLike<number> | null;
  /** mixture: alternative to alpha; alpha = softmax(alphaLogits). */
  alphaLogits?: ArrayLike<number> | null;
  /** fixed: which pattern. */
  pattern?: FixedPattern | null;
  /** fixed left/right: window w, default 3. */
  window?: number | null;
}

export interface AttentionResult {
  /** [n, dv] */
  output: Float32Array;
  /** [n, n], only when options.weights is true. */
  weights?: Float32Array;
  /**
   * [F, dv], only when options.state is true; F = d (taylor: d + 1). Over all n keys (causal: the
   * last prefix, the same sums). linear: sum_j phi(k_j) v_j^T; taylor: [sum_j v_j ; sum_j kh_j v_j^T];
   * efficient: softmax_positions(k)^T v.
   */
  state?: Float32Array;
  /** [F], with state. linear: sum_j phi(k_j); taylor: [n ; sum_j kh_j]; efficient: log sum_j exp(k_jc). */
  normalizer?: Float32Array;
}

/** attentionGrad's options: attention()'s without weights and state. */
export type GradOptions = Omit<AttentionOptions, 'weights' | 'state'>;

export interface GradResult {
  /** [n, dv]: y, as attention() returns it. */
  output: Float32Array;
  /**
   * One gradient per array the call reads, with that array's shape (entries of an L-sized
   * parameter the call does not read are 0); a mixture adds alpha or alphaLogits.
   */
  grads: Partial<Record<'q' | 'k' | 'v' | 'x' | 'w1' | 'b1' | 'w2' | 'b2' | 'w' | 'r' | 'wa' | 'ba' | 'wb' | 'bb' | 'r1' | 'r2' | 'alpha' | 'alphaLogits', Float32Array>>;
}

export interface InputSpec {
  /** Array name, as a key of AttentionInputs. */
  name: string;
  /** Dimension names whose product is the array's length, e.g. ['n', 'd']. */
  shape: string[];
}

export interface VariantInfo {
  id: VariantId;
  label: string;
  /** 'softmax' (softmax over logits), 'synthesizer', 'linear' (no n x n in the forward pass), 'fixed'. */
  family: 'softmax' | 'synthesizer' | 'linear' | 'fixed';
  /** One line on what the variant does. */
  summary: string;
  /** The formula, in plain text. */
  formula: string;
  /** Time cost of the forward pass, e.g. 'O(n²·d)'. */
  cost: string;
  /** Dimension names the variant reads, e.g. ['n', 'd', 'dv']. */
  dims: string[];
  /** Arrays the variant reads (for mixture: the union over all possible components). */
  inputs: InputSpec[];
  /** Option names the variant accepts (besides causal and weights, which every variant accepts). */
  options: string[];
  /** Whether a mixture may combine this variant's logits. */
  mixable: boolean;
}

export interface OptionInfo {
  type: 'boolean' | 'number' | 'integer' | 'enum' | 'list' | 'numbers';
  /** null where the default depends on the inputs (scale) or there is none (mixture's lists). */
  default: boolean | number | string | null;
  /** The accepted values of an 'enum', or the allowed entries of a 'list'. */
  values?: readonly string[];
  description: string;
  /** The variant ids that accept the option. */
  appliesTo: readonly VariantId[];
  /** The smallest accepted value ('number', 'integer'). */
  min?: number;
  /** The most entries a 'list' takes. */
  max?: number;
  /** Whether attentionGrad takes the option too (weights and state are attention()'s only). */
  grad: boolean;
  /** pattern: the values allowed with causal: true (the others look ahead). */
  causalValues?: readonly string[];
}

export interface DimInfo {
  description: string;
  /** The dimension a missing value stands for (L: 'n'). */
  defaultsTo?: string;
}

export interface Features {
  simd: boolean;
  relaxedSimd: boolean;
}

export interface InitOptions {
  /** 'auto' (default) picks relaxed, then simd, then scalar, by what the engine validates. */
  simd?: 'auto' | 'relaxed' | boolean;
  /** The module's bytes; skips fetching/reading. Must match the chosen build. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Maps a file name such as 'attnlab-simd.wasm' to the URL or path to load it from. */
  locateFile?: (file: string) => string | URL;
  /** An instance of your own, not the cached one every other init() caller shares. */
  fresh?: boolean;
}

export interface AttnLab {
  /** true when a SIMD build (simd or relaxed) was loaded. */
  readonly simd: boolean;
  readonly build: BuildName;
  readonly version: string;
  readonly variants: readonly VariantInfo[];
  /** Every option name with its type, default and accepted values. */
  readonly options: Readonly<Record<keyof AttentionOptions, OptionInfo>>;
  /** Every dimension name (n, d, dv, h, L, a, b, rank) with what it means. */
  readonly dims: Readonly<Record<'n' | 'd' | 'dv' | 'h' | 'L' | 'a' | 'b' | 'rank', DimInfo>>;
  /** Run one variant. Synchronous. Throws AttnError on bad input. */
  attention(id: VariantId, inputs: AttentionInputs, options?: AttentionOptions): AttentionResult;
  /**
   * The backward pass: y and the gradient of sum(dOutput * y) with respect to every array the
   * variant reads (a mixture: also `alpha`, or `alphaLogits` when the weights were given as
   * logits). dOutput: [n, dv]. Options as for attention, without weights and state. Synchronous;
   * the same checks and errors as attention().
   */
  attentionGrad(id: VariantId, inputs: AttentionInputs, dOutput: Matrix, options?: GradOptions): GradResult;
  /** Bytes of WebAssembly memory the instance holds now (grows to the largest call, never shrinks). */
  memoryBytes(): number;
  /**
   * Frees the instance; later calls throw DISPOSED. The next init() with the same options makes a
   * new one. The cached instance is shared by every init() caller of that build, so disposing of
   * it ends it for all of them: dispose only an instance from init({ fresh: true }), or one you
   * know nobody else holds.
   */
  dispose(): void;
}

/** Loads (once per build, cached and shared; fresh: true for an instance of your own) and returns an instance. */
export function init(options?: InitOptions): Promise<AttnLab>;

/** What the current engine can run. */
export function features(): Features;

export const version: string;
