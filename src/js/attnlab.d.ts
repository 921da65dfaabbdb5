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
  | 'fixed'
  | 'plain-linear'
  | 'gla'
  | 'deltanet'
  | 'gated-deltanet';
/** A variant id: a known one, or any id a newer registry adds (the string & {} keeps completion). */
export type VariantId = KnownVariantId | (string & {});

/** A variant a mixture may combine: one marked mixable (`lab.options.components.values`). */
export type MixtureComponent = VariantId;

export type FixedPattern = 'current' | 'previous' | 'next' | 'left' | 'right' | 'first' | 'last';

/** Which WebAssembly module an instance runs. */
export type BuildName = 'relaxed' | 'simd' | 'scalar';

/**
 * What went wrong (docs/contract.md, "Errors"). BROKEN: a threaded instance whose call trapped in
 * WebAssembly (a worker thread failed, a stack overflowed); it throws BROKEN from then on, and
 * init({ fresh: true }) gives a new one.
 */
export type AttnErrorCode = 'SHAPE' | 'VALUE' | 'UNKNOWN' | 'UNSUPPORTED' | 'MEMORY' | 'LOAD' | 'DISPOSED' | 'BROKEN';

/** Thrown for every bad input; `code` says which kind. The instance keeps working, except after BROKEN. */
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
  /** gla, gated-deltanet: [n, d], the decay in log space (S's row i is multiplied by exp(g[t, i])) */ g?: Matrix;
  /** deltanet, gated-deltanet: [n], how much of each token's value is written */ beta?: Matrix;
  /** the recurrent family: [d, dv], the state before the first token (optional; default zeros) */ s0?: Matrix;
}

/** Every option may be null, which means its default. */
export interface AttentionOptions {
  /** Row i uses only columns j <= i. Default false; the recurrent family is causal by construction:
   * its default is true and false is UNSUPPORTED. */
  causal?: boolean | null;
  /** Also return the n x n effective attention matrix. Default false. */
  weights?: boolean | null;
  /** linear, efficient, taylor: also return `state` and `normalizer`, what they keep instead of A;
   * the recurrent family: `state`, S after the last token (ONNX's present_state). */
  state?: boolean | null;
  /**
   * Keep what the backward pass needs: the result (a KeptResult) also has `backward(dOutput)`,
   * attentionGrad's gradients without running the forward pass again, and for softmax-type
   * variants `lse`. Not with weights or state (UNSUPPORTED).
   */
  keep?: boolean | null;
  /** softmax: logit scale; the recurrent family: read-out scale (y_t = scale * S_t^T q_t). Default 1/sqrt(d). */
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
   * efficient: softmax_positions(k)^T v. The recurrent family: [d, dv], S after the last token.
   */
  state?: Float32Array;
  /** [F], with state (not the recurrent family's, which keeps none). linear: sum_j phi(k_j); taylor: [n ; sum_j kh_j]; efficient: log sum_j exp(k_jc). */
  normalizer?: Float32Array;
}

/** attentionGrad's options: attention()'s without weights, state and keep. */
export type GradOptions = Omit<AttentionOptions, 'weights' | 'state' | 'keep'>;

export interface GradResult {
  /** [n, dv]: y, as attention() returns it. */
  output: Float32Array;
  /**
   * One gradient per array the call reads, with that array's shape (entries of an L-sized
   * parameter the call does not read are 0); a mixture adds alpha or alphaLogits.
   */
  grads: Partial<Record<'q' | 'k' | 'v' | 'x' | 'w1' | 'b1' | 'w2' | 'b2' | 'w' | 'r' | 'wa' | 'ba' | 'wb' | 'bb' | 'r1' | 'r2' | 'g' | 'beta' | 's0' | 'alpha' | 'alphaLogits', Float32Array>>;
}

/** What attention() returns with keep: true. */
export interface KeptResult extends AttentionResult {
  /**
   * [n], softmax-type variants (softmax, the Synthesizer variants, mixture) only: each row's
   * log-sum-exp of its masked logits, lse_i = log sum_j exp(B_ij + M_ij), so A_ij = exp(B_ij + M_ij - lse_i).
   * The linear family and fixed keep nothing but y (their backward pass recomputes its forward sweeps).
   */
  lse?: Float32Array;
  /**
   * The backward pass from this forward pass: { output, grads } exactly as attentionGrad(id,
   * inputs, dOutput, options) returns them (the same bits, on every build and thread count),
   * without running the forward pass again. dOutput: [n, dv]. It uses the binding's own copies of
   * the inputs, y and lse (a recurrent variant: its state's checkpoints every ceil(sqrt(n)) tokens,
   * not returned) in JavaScript memory (nothing to dispose of), so it may run any number
   * of times, and later calls or changes to the arrays you passed or got back do not change it.
   * Throws DISPOSED once the instance is disposed; SHAPE or VALUE for a bad dOutput.
   */
  backward(dOutput: Matrix): GradResult;
}

export interface InputSpec {
  /** Array name, as a key of AttentionInputs. */
  name: string;
  /** Dimension names whose product is the array's length, e.g. ['n', 'd']. */
  shape: string[];
  /** true for an array the caller may leave out (the recurrent family's s0). */
  optional?: true;
}

export interface VariantInfo {
  id: VariantId;
  label: string;
  /** 'softmax' (softmax over logits), 'synthesizer', 'linear' (no n x n in the forward pass), 'fixed',
   * 'recurrent' (a state updated token by token: gated and delta-rule linear attention). */
  family: 'softmax' | 'synthesizer' | 'linear' | 'fixed' | 'recurrent';
  /** Whether a kept forward pass (`keep: true`) returns each row's log-sum-exp as `lse`: the
   * softmax-type families (softmax, synthesizer), which stream softmax over tiles of logits. */
  keepsLse: boolean;
  /** Whether `state: true` returns the state the variant keeps instead of A: the linear and recurrent families. */
  keepsState: boolean;
  /** Whether that state comes with a `normalizer`: the linear family. */
  keepsNormalizer: boolean;
  /** Whether the variant is causal by construction (the recurrent family): causal defaults to true, false is UNSUPPORTED. */
  causalOnly: boolean;
  /** Whether `lab.model` can take the variant (not yet the recurrent family, whose layer is not built). */
  inModels: boolean;
  /** Whether `weights: true` may return entries of either sign (the recurrent family's effective W:
   * q and k meet without a softmax or a positive feature map); every other variant's are >= 0. */
  signedWeights: boolean;
  /** Whether its A depends on none of the call's arrays, only on the positions (the fixed
   * patterns): a map of it shows a pattern, not a distribution the inputs shaped. */
  inputFree: boolean;
  /** Whether its logits are (all or, for the mixture, in part) parameters a model learns — r, or
   * projections of x — rather than q·k (the Synthesizers): outside a trained model they are the
   * caller's numbers, untrained. */
  learnedLogits: boolean;
  /** Whether its forward pass costs n² (it scores every pair of positions: the softmax-type
   * families); otherwise its cost is linear in n (the linear family, fixed patterns). */
  quadratic: boolean;
  /** Whether the variant combines others (the mixture: it takes `components` and reads their arrays). */
  composite: boolean;
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
  /** Whether attentionGrad takes the option too (weights, state and keep are attention()'s only). */
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
  /**
   * Threads that split each call (docs/contract.md, "Threads"). 'auto' (default): the cores
   * available, up to 8, where this thread may block and share memory (Node, a Worker of a
   * cross-origin isolated page), else 1. A number N > 1 where threads cannot run throws
   * UNSUPPORTED. With N > 1 the threaded module ('attnlab-simd-threads.wasm', ...) is loaded.
   */
  threads?: 'auto' | number;
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
  /** Threads that run each call: 1 on the single-threaded module, else the pool's size. */
  readonly threads: number;
  readonly version: string;
  readonly variants: readonly VariantInfo[];
  /** Every option name with its type, default and accepted values. */
  readonly options: Readonly<Record<keyof AttentionOptions, OptionInfo>>;
  /** Every dimension name (n, d, dv, h, L, a, b, rank) with what it means. */
  readonly dims: Readonly<Record<'n' | 'd' | 'dv' | 'h' | 'L' | 'a' | 'b' | 'rank', DimInfo>>;
  /**
   * Run one variant. Synchronous. Throws AttnError on bad input. With keep: true the result also
   * carries lse and backward(dOutput) (KeptResult).
   */
  attention(id: VariantId, inputs: AttentionInputs, options: AttentionOptions & { keep: true }): KeptResult;
  attention(id: VariantId, inputs: AttentionInputs, options?: AttentionOptions): AttentionResult;
  /**
   * The backward pass: y and the gradient of sum(dOutput * y) with respect to every array the
   * variant reads (a mixture: also `alpha`, or `alphaLogits` when the weights were given as
   * logits). dOutput: [n, dv]. Options as for attention, without weights and state. Synchronous;
   * the same checks and errors as attention().
   */
  attentionGrad(id: VariantId, inputs: AttentionInputs, dOutput: Matrix, options?: GradOptions): GradResult;
  /** A small transformer whose attention is one variant (docs/model.md). */
  model(config: ModelConfig): Model;
  /** Trains a model on a task: warmup then cosine decay, held-out evaluation, progress, abort. */
  train(model: Model, task: Task, options?: TrainOptions | null): Promise<TrainResult>;
  /**
   * A model from the bytes model.save() gave (format version 2, or version 1 of earlier
   * releases). Everything the file declares is checked before anything is allocated: a file that
   * is corrupted (its CRC-32 does not match), truncated, longer than its header says, holds
   * non-finite values or a step count AdamW cannot continue from is VALUE; one declaring a model
   * over WebAssembly's 4 GiB or more than 4096 heads in all (layers * heads) is MEMORY.
   * resetOptimizer: keep the parameters only (step 0, fresh AdamW moments), to fine-tune a trained
   * model on another task of the same vocabulary and sequence length.
   */
  loadModel(bytes: Uint8Array | ArrayBuffer, options?: { resetOptimizer?: boolean | null } | null): Model;
  /** Bytes of WebAssembly memory the instance holds now (grows to the largest call, never shrinks). */
  memoryBytes(): number;
  /**
   * Frees the instance (a threaded one's workers end now); later calls throw DISPOSED. The next
   * init() with the same options makes a new one. A threaded instance dropped without dispose()
   * has its workers stopped when it is garbage-collected, at a moment nobody controls. The cached instance is shared by every init() caller of that build, so disposing of
   * it ends it for all of them: dispose only an instance from init({ fresh: true }), or one you
   * know nobody else holds.
   */
  dispose(): void;
}

/** A model's configuration: sizes, the attention variant and its options, the seed. */
export interface ModelConfig {
  /** The attention of every head; default 'softmax'. */
  variant?: VariantId;
  /** The variant's attention options (scale, eps, tiling, window; a mixture's components). A model
   * sets causal itself, learns a mixture's weights per head, and gives fixed heads their patterns
   * in turn, so causal, weights, state, alpha, alphaLogits and pattern are not taken. */
  options?: Omit<GradOptions, 'causal' | 'alpha' | 'alphaLogits' | 'pattern'> & {
    /** fixed only: head h of every layer takes patterns[h % patterns.length] (1 to 16 names; a
     * causal model cannot take next, right or last). Default: previous, current, next, left,
     * right, first, last in turn (a causal model skips the look-ahead ones). */
    patterns?: readonly FixedPattern[] | null;
  };
  vocab: number;
  seqLen: number;
  dModel: number;
  /** Must divide dModel. */
  heads: number;
  layers: number;
  dFF: number;
  /** Default false. */
  causal?: boolean;
  /** Initialisation; default 0. */
  seed?: number;
  /** Parameter names kept at their initial values (['l0.h0.r'] is the Synthesizer's fixed random). */
  freeze?: readonly string[];
  /** dense's hidden width; default dModel / heads. */
  hidden?: number;
  /** factorized-random's rank; default min(8, seqLen). */
  rank?: number;
  /** AdamW's decay of the matrices; default 0.01. */
  weightDecay?: number;
  /** The initial standard deviation of r, r1, r2 (random, factorized-random), in (0, 1e6]; default 0.2. */
  rStd?: number;
}

export interface LossResult {
  /** Mean cross-entropy over the positions whose target is not -1. */
  loss: number;
  /** The fraction of those positions whose argmax is the target. */
  accuracy: number;
  /** How many positions had a target. */
  counted: number;
}

export interface GenerateResult {
  /** The prompt, then the generated tokens. */
  tokens: Int32Array;
  /** Per generated token: milliseconds (performance.now()) of the step that gave its logits and the draw. */
  msPerToken: Float64Array;
  /** [count * vocab]: the logits each generated token was drawn from. */
  logits: Float32Array;
}

export interface Model {
  /** The configuration as given, with defaults filled in (hidden and rank: 0 = their defaults). */
  readonly config: Readonly<Required<Omit<ModelConfig, 'options' | 'freeze'>>> & { options: Readonly<NonNullable<ModelConfig['options']>>; freeze: readonly string[] };
  readonly parameterCount: number;
  /** trainStep calls so far. */
  readonly step: number;
  /**
   * One AdamW step on a batch: tokens and targets are [batch * seqLen]; -1 = no loss there. All
   * or nothing: a loss or gradient that is not finite, or an update that would leave a parameter
   * non-finite, throws VALUE and leaves the model as it was (parameters, moments, step). A model
   * takes at most 2^31 - 2 steps.
   */
  trainStep(tokens: ArrayLike<number>, targets: ArrayLike<number>, options: { lr: number }): LossResult & { gradNorm: number };
  evaluate(tokens: ArrayLike<number>, targets: ArrayLike<number>): LossResult;
  /** Logits [batch * seqLen * vocab]; VALUE (never a NaN) when they leave float32's range. */
  forward(tokens: ArrayLike<number>): Float32Array;
  parameters(): Record<string, Float32Array>;
  /** The gradient of the mean loss of this batch, per parameter (frozen: zeros). */
  gradients(tokens: ArrayLike<number>, targets: ArrayLike<number>): Record<string, Float32Array>;
  /** A mixture's weights now: softmax of head (layer, head)'s learned logits. */
  alpha(where?: { layer?: number; head?: number } | null): Float32Array;
  /**
   * Continues prompt by count tokens, decoding one position at a time (a causal model only;
   * prompt + count <= seqLen). temperature 0 takes the argmax; otherwise tokens are drawn from
   * softmax(logits / temperature) with mulberry32(seed). Defaults: temperature 1, seed 0.
   */
  generate(prompt: ArrayLike<number>, count: number, options?: { temperature?: number | null; seed?: number | null } | null): GenerateResult;
  /** The attention matrix [seqLen * seqLen] of head (layer, head) on one sequence of seqLen tokens. */
  attentionMap(tokens: ArrayLike<number>, where?: { layer?: number; head?: number } | null): Float32Array;
  /** Configuration, step count, parameters and optimizer state (format version 2, with a CRC-32). */
  save(): Uint8Array;
  dispose(): void;
}

export interface TrainOptions {
  /** Default: the task's defaults. */
  steps?: number;
  batch?: number;
  lr?: number;
  warmup?: number;
  /** Evaluate on the held-out set every this many steps (default steps / 20) and at the end. */
  evalEvery?: number;
  /** Held-out sequences (default 256). */
  evalBatch?: number;
  /** Data seed (default 0): step s trains on task.sample(batch, seed + s). */
  seed?: number;
  onProgress?: (progress: TrainProgress) => void;
  /**
   * Stops after the current step; the result then has aborted: true. Aborted before the first
   * step (before the call, or while paused), train() rejects with the signal's reason instead. An
   * abort while paused ends the wait at once, even if the pause promise never settles.
   */
  signal?: AbortSignal;
  /**
   * Called before every step with the steps taken so far; a returned promise holds training until
   * it settles (a page's pause / step). It never changes the numbers; time spent waiting on it is
   * left out of elapsedMs and ms.
   */
  pause?: (at: { step: number }) => PromiseLike<unknown> | void;
}

export interface TrainProgress {
  step: number;
  loss: number;
  accuracy: number;
  evalLoss: number;
  evalAccuracy: number;
  /** evalLoss / ln 2: held-out bits per predicted token (text: bits per character); evalLoss is in nats. */
  evalBits: number;
  lr: number;
  msPerStep: number;
  elapsedMs: number;
  /** Mixtures: alpha[layer][head], the component weights now. */
  alpha?: number[][][];
}

export interface TrainResult {
  history: TrainProgress[];
  final: { loss: number; accuracy: number; evalLoss: number; evalAccuracy: number; evalBits: number };
  steps: number;
  ms: number;
  trainMs: number;
  aborted: boolean;
}

/**
 * sample()'s splits: 'train'; 'validation', where a study chooses its settings (a learning rate);
 * 'heldout', where it reports. A text of your own has no 'validation' (its last 10 % is its only
 * held-out part): asking for it throws.
 */
export type Split = 'train' | 'validation' | 'heldout';

export interface TaskBatch {
  tokens: Int32Array;
  /** -1 where there is no loss. */
  targets: Int32Array;
}

export interface Task {
  readonly name: string;
  readonly vocab: number;
  readonly seqLen: number;
  readonly causal: boolean;
  readonly defaults: Readonly<Record<string, number>>;
  /** The task's arguments, resolved (the defaults filled in). */
  readonly options: Readonly<Record<string, unknown>>;
  /** A batch drawn from the seed, from the split's own stream (or chapters). */
  sample(batch: number, seed: number, split?: Split): TaskBatch;
  /** Sequence i of tokens, readable. */
  describe(tokens: ArrayLike<number>, i: number): string;
  /** A token, readable. */
  tokenName(token: number): string;
}

/**
 * The text corpus (the King James Bible, one verse a line) and its index (each book's name,
 * testament and verses per chapter), as loadCorpus() of 'attnlab/corpus' returns it.
 */
export interface Corpus {
  readonly text: string;
  readonly index: {
    readonly name?: string;
    readonly books: ReadonlyArray<{ readonly name: string; readonly testament: 'OT' | 'NT' | string; readonly verses: readonly number[] }>;
    readonly [key: string]: unknown;
  };
}

/** A set of windows (text): every held-out character once (heldOutWindows) or a fixed subset (evalWindows). */
export interface TextWindows extends TaskBatch {
  /** The text position of each window's first token. */
  starts: Int32Array;
}

/** tasks.text(): next-character prediction on a string of your own, or on the corpus. */
export interface TextTask extends Task {
  readonly chars: readonly string[];
  /** Characters in the text (the corpus or the string). */
  readonly length: number;
  sample(batch: number, seed: number, split?: Split): TextWindows;
  /** Every held-out character predicted exactly once. */
  heldOutWindows(): TextWindows;
  /** Corpus only: 128 evenly spaced windows of heldOutWindows(), what train() evaluates as it goes. */
  evalWindows?(): TextWindows;
  /** Corpus only: every validation character predicted exactly once. */
  validationWindows?(): TextWindows;
  /**
   * Corpus only: every character of the split predicted exactly once with full context: each
   * window owns its last `stride` positions (1 … seqLen), so each prediction sees at least
   * seqLen − stride characters before it. Throws AttnError VALUE for another stride or split.
   */
  strideWindows?(stride: number, split?: 'heldout' | 'validation'): TextWindows;
  /** A string of your own: where its held-out part (the last 10 %) begins. */
  readonly split?: number;
  /** Corpus only: its size and split (every 10th chapter held out). */
  readonly corpus?: {
    readonly name: string; readonly characters: number; readonly verses: number; readonly chapters: number;
    readonly heldOutEvery: number; readonly heldOutChapters: number; readonly trainCharacters: number; readonly heldOutCharacters: number;
  };
  /** Corpus only: whether a text position lies in a held-out chapter. */
  isHeldOut?(position: number): boolean;
  /** Corpus only: the split of the chapter a text position lies in. */
  splitOf?(position: number): Split;
  tokenName(token: number): string;
  /** The token ids of a string of the vocabulary's characters. */
  encode(text: string): Int32Array;
}

/** One verse of the corpus, as tasks.verses().verse(i) describes it. */
export interface VerseInfo {
  index: number;
  book: string;
  chapter: number;
  verse: number;
  testament: string;
  text: string;
  /** Its class index. */
  label: number;
  heldOut: boolean;
  /** The split of its chapter. */
  split: Split;
}

/** tasks.verses(): which part of the Bible a verse comes from, answered at its last position. */
export interface VersesTask extends Task {
  readonly chars: readonly string[];
  /** A class is answered with the token of its letter (A..H for groups, O and N for testaments). */
  readonly classes: ReadonlyArray<{ readonly name: string; readonly letter: string; readonly token: number }>;
  /** 1 / classes. */
  readonly chance: number;
  /** The padding token ("\n") before a verse shorter than seqLen. */
  readonly padding: number;
  /** The verses of each class in each split. */
  readonly counts: { readonly train: readonly number[]; readonly validation: readonly number[]; readonly heldout: readonly number[] };
  sample(batch: number, seed: number, split?: Split): TaskBatch & { verses: Int32Array; labels: Int32Array };
  /** Every verse of a held-out split once (classes as unbalanced as the Bible), for balanced accuracy. */
  allVerses(split?: 'heldout' | 'validation'): TaskBatch & { verses: Int32Array; labels: Int32Array };
  verse(index: number): VerseInfo;
  tokenName(token: number): string;
}

/** Tasks that separate the variants, deterministic from a seed (src/js/tasks.js). */
export const tasks: {
  /**
   * Multi-query associative recall: pairs (key, value), then queries of the keys. layout 'sparse':
   * the queries at random positions of the query region, amid filler; 'dense': the queries back to
   * back, each key followed by its value (seqLen in [2·pairs + 1, 4·pairs]; queries follows from it).
   */
  recall(options?: { pairs?: number; seqLen?: number; vocab?: number; queries?: number; layout?: 'sparse' | 'dense' }): Task;
  copy(options?: { seqLen?: number; vocab?: number }): Task;
  reverse(options?: { seqLen?: number; vocab?: number }): Task;
  sort(options?: { seqLen?: number; vocab?: number }): Task;
  /** Without text: the corpus (Node reads the shipped one; a browser passes { corpus: await loadCorpus() }). */
  text(options?: { text?: string; corpus?: Corpus; seqLen?: number }): TextTask;
  verses(options?: { label?: 'group' | 'testament'; corpus?: Corpus; seqLen?: number }): VersesTask;
};

/** A model evaluated on every held-out character of a text task (all of task.heldOutWindows()), batch windows at a time. */
export function evaluateHeldOut(model: Model, task: Task, options?: { batch?: number; evalBatch?: number; seed?: number; stride?: number }):
  { loss: number; accuracy: number; bits: number; counted: number; ms: number };

/** Loads (once per build, cached and shared; fresh: true for an instance of your own) and returns an instance. */
export function init(options?: InitOptions): Promise<AttnLab>;

/** What the current engine can run. */
export function features(): Features;

export const version: string;
