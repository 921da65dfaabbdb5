// The whole public API of `attnlab`, used from TypeScript through the package's attnlab.d.ts.
// tests/types.test.mjs type-checks this file with a strict `tsc --noEmit`, then compiles and runs
// exercise() in Node and compares the names declared here (typed objects whose types come from
// the .d.ts, so tsc keeps them complete and exact) with what the runtime reports.
// A member added to attnlab.d.ts makes tsc fail here ("Property 'x' is missing in type ...
// Record<keyof ..., true>"): add it to the list and use it below.

import { init, features, version, AttnError, tasks, evaluateHeldOut } from 'attnlab';
import { loadCorpus } from 'attnlab/corpus';
import subpathTasks, { TASK_NAMES, TASK_KNOBS, DEFAULT_TEXT, CORPUS_FILES, HELD_OUT_EVERY, chapterSplit } from 'attnlab/tasks';
import type { Split, TaskName } from 'attnlab/tasks';
import { reference, explain, flopCount, ACCURACY_BAR, hasDefinition } from 'attnlab/reference';
import type { Step } from 'attnlab/reference';
import { resolveConfig, parameterTable, initParameters, forwardLoss } from 'attnlab/reference-model';
import { mulberry32, uniformArray, streamSeed } from 'attnlab/prng';
import { experimentVariants, modelConfig, chanceOf, THRESHOLD, EVAL_POINTS } from 'attnlab/experiment';
import type { ExperimentVariant } from 'attnlab/experiment';
import { initWebGPU, AttnError as WebGPUError } from 'attnlab/webgpu';
import type { WebGPULab, WebGPUInitOptions, WebGPUAdapterInfo } from 'attnlab/webgpu';
import type {
  AttnLab, AttnErrorCode, AttentionInputs, AttentionOptions, AttentionResult, BuildName, DimInfo, Features,
  FixedPattern, GradOptions, GradResult, InitOptions, InputSpec, KeptResult, KnownVariantId, Matrix, MixtureComponent, OptionInfo,
  VariantId, VariantInfo, Model, ModelConfig, LossResult, GenerateResult, Task, TaskBatch, TrainResult, TrainOptions,
  Corpus, TextTask, VersesTask, VerseInfo,
} from 'attnlab';

/** What the runner provides: the package's .wasm files, as bytes and as a location. */
export interface Env {
  wasmBytes(file: string): Promise<Uint8Array>;
  wasmLocation(file: string): string | URL;
}

// Exact key lists: Record<K, true> needs every key of K and rejects any other.
const OPTION_KEYS: Record<keyof AttentionOptions, true> = {
  causal: true, weights: true, state: true, keep: true, scale: true, eps: true, tiling: true, components: true, alpha: true,
  alphaLogits: true, pattern: true, window: true,
};
const WEBGPU_KEYS: Record<keyof WebGPULab, true> = {
  adapter: true, variants: true, options: true, dims: true, ready: true, gpuTime: true, pipelinesCompiled: true, attention: true, warmup: true, dispose: true,
};
const ADAPTER_KEYS: Record<keyof WebGPUAdapterInfo, true> = { vendor: true, architecture: true, description: true };

/** attnlab/webgpu as a program uses it: the GPU when there is one, else the reason (Node: UNSUPPORTED). */
async function onGpu(): Promise<{ code: AttnErrorCode | 'none'; sameClass: boolean }> {
  const options: WebGPUInitOptions = { powerPreference: 'high-performance' };
  try {
    const gpu: WebGPULab = await initWebGPU(options);
    const r: AttentionResult = await gpu.attention('softmax', { n: 2, d: 1, dv: 1, q: [1, 2], k: [1, 2], v: [1, 2] }, { causal: true });
    void r.output;
    await gpu.warmup(['softmax'], { d: 64, dv: 64 });
    gpu.dispose();
    return { code: 'none', sameClass: WebGPUError === AttnError };
  } catch (err: unknown) {
    if (!(err instanceof WebGPUError)) throw err;
    return { code: err.code, sameClass: WebGPUError === AttnError };
  }
}

const DIM_KEYS: Record<keyof AttnLab['dims'], true> = { n: true, d: true, dv: true, h: true, L: true, a: true, b: true, rank: true };
const INPUT_KEYS: Record<keyof AttentionInputs, true> = {
  n: true, d: true, dv: true, h: true, L: true, a: true, b: true, rank: true, q: true, k: true, v: true, x: true, w1: true,
  b1: true, w2: true, b2: true, w: true, r: true, wa: true, ba: true, wb: true, bb: true, r1: true, r2: true, g: true,
  beta: true, s0: true,
};
const VARIANT_INFO_KEYS: Record<keyof VariantInfo, true> = {
  id: true, label: true, family: true, summary: true, formula: true, cost: true, dims: true, inputs: true, options: true,
  mixable: true, keepsLse: true, keepsState: true, keepsNormalizer: true, quadratic: true, composite: true, causalOnly: true,
  inModels: true, signedWeights: true, inputFree: true, learnedLogits: true,
};
const OPTION_INFO_KEYS: Record<keyof OptionInfo, true> = {
  type: true, default: true, values: true, description: true, appliesTo: true, min: true, max: true, grad: true,
  causalValues: true,
};
const GRAD_OPTION_KEYS: Record<keyof GradOptions, true> = {
  causal: true, scale: true, eps: true, tiling: true, components: true, alpha: true, alphaLogits: true, pattern: true,
  window: true,
};
const GRAD_KEYS: Record<keyof GradResult['grads'], true> = {
  q: true, k: true, v: true, x: true, w1: true, b1: true, w2: true, b2: true, w: true, r: true, wa: true, ba: true, wb: true,
  bb: true, r1: true, r2: true, g: true, beta: true, s0: true, alpha: true, alphaLogits: true,
};
const GRAD_RESULT_KEYS: Record<keyof GradResult, true> = { output: true, grads: true };
const KEPT_RESULT_KEYS: Record<keyof KeptResult, true> = {
  output: true, weights: true, state: true, normalizer: true, lse: true, backward: true,
};
const DIM_INFO_KEYS: Record<keyof DimInfo, true> = { description: true, defaultsTo: true };
const INPUT_FIELD_KEYS: Record<keyof InputSpec, true> = { name: true, shape: true, optional: true };
const FEATURE_KEYS: Record<keyof Features, true> = { simd: true, relaxedSimd: true };
const INSTANCE_KEYS: Record<keyof AttnLab, true> = {
  simd: true, build: true, threads: true, version: true, variants: true, options: true, dims: true, attention: true, attentionGrad: true,
  memoryBytes: true, dispose: true, model: true, loadModel: true, train: true,
};
const MODEL_KEYS: Record<keyof Model, true> = {
  config: true, parameterCount: true, step: true, trainStep: true, evaluate: true, forward: true, parameters: true,
  gradients: true, alpha: true, generate: true, attentionMap: true, save: true, dispose: true,
};
const TRAIN_OPTION_KEYS: Record<keyof TrainOptions, true> = {
  steps: true, batch: true, lr: true, warmup: true, evalEvery: true, evalBatch: true, seed: true, onProgress: true,
  signal: true, pause: true,
};
const TASK_KEYS: Record<keyof Task, true> = { name: true, vocab: true, seqLen: true, causal: true, defaults: true, options: true, sample: true, describe: true, tokenName: true };
const KNOWN_VARIANTS: Record<KnownVariantId, true> = {
  softmax: true, dense: true, dense1: true, random: true, 'factorized-dense': true, 'factorized-random': true,
  mixture: true, linear: true, efficient: true, taylor: true, fixed: true, 'plain-linear': true, gla: true, deltanet: true,
  'gated-deltanet': true,
};
const PATTERNS: Record<FixedPattern, true> = { current: true, previous: true, next: true, left: true, right: true, first: true, last: true };
const TILINGS: Record<NonNullable<AttentionOptions['tiling']>, true> = { kronecker: true, tile: true };
const BUILDS: Record<BuildName, true> = { relaxed: true, simd: true, scalar: true };
const ERROR_CODES: Record<AttnErrorCode, true> = {
  SHAPE: true, VALUE: true, UNKNOWN: true, UNSUPPORTED: true, MEMORY: true, LOAD: true, DISPOSED: true, BROKEN: true,
};
const INFO_TYPES: Record<OptionInfo['type'], true> = { boolean: true, number: true, integer: true, enum: true, list: true, numbers: true };
const FAMILIES: Record<VariantInfo['family'], true> = { softmax: true, synthesizer: true, linear: true, fixed: true, recurrent: true };

function keys(o: object): string[] {
  return Object.keys(o).sort();
}

function matrix(rows: number, cols: number, seed: number): Float32Array {
  const m = new Float32Array(rows * cols);
  for (let i = 0; i < m.length; i++) m[i] = Math.sin(seed * 3.1 + i * 0.77) * 0.8;
  return m;
}

/** What one call returned, for the runner to check. */
interface CallSummary {
  id: VariantId;
  output: number;
  weights: number | null;
  state: number | null;
  normalizer: number | null;
  finite: boolean;
}

function summarize(id: VariantId, r: AttentionResult): CallSummary {
  const arrays: Float32Array[] = [r.output];
  if (r.weights) arrays.push(r.weights);
  if (r.state) arrays.push(r.state);
  if (r.normalizer) arrays.push(r.normalizer);
  return {
    id,
    output: r.output.length,
    weights: r.weights?.length ?? null,
    state: r.state?.length ?? null,
    normalizer: r.normalizer?.length ?? null,
    finite: arrays.every((a) => a.every(Number.isFinite)),
  };
}

/** An AttnError's code from a call that must fail, or 'none'. Narrows on the code. */
function codeOf(f: () => unknown): AttnErrorCode | 'none' | 'not AttnError' {
  try {
    f();
    return 'none';
  } catch (err: unknown) {
    if (!(err instanceof AttnError)) return 'not AttnError';
    const code: AttnErrorCode = err.code;
    const name: 'AttnError' = err.name;
    const message: string = err.message;
    void name;
    void message;
    switch (code) {
      case 'SHAPE': case 'VALUE': case 'UNKNOWN': case 'UNSUPPORTED': case 'MEMORY': case 'LOAD': case 'DISPOSED': case 'BROKEN':
        return code;
      default: {
        const impossible: never = code; // every code is handled above
        return impossible;
      }
    }
  }
}

export async function exercise(env: Env) {
  const feats: Features = features();
  const simdWanted: InitOptions['simd'] = feats.relaxedSimd ? 'relaxed' : feats.simd ? true : false;

  // init with each option
  const lab: AttnLab = await init();
  const again: AttnLab = await init({ simd: 'auto' });
  const scalar = await init({ simd: false });
  const withSimd = await init({ simd: simdWanted });
  const scalarFile = 'attnlab-scalar.wasm';
  const fromBytes = await init({ simd: false, wasmBinary: await env.wasmBytes(scalarFile) });
  const fromBuffer = await init({ simd: false, wasmBinary: (await env.wasmBytes(scalarFile)).slice().buffer });
  const located = await init({ simd: false, locateFile: (file: string) => env.wasmLocation(file) });
  const fresh = await init({ fresh: true });
  const options: InitOptions = { simd: true, threads: 'auto', fresh: true, locateFile: (file) => env.wasmLocation(file) };
  const full = await init(options);

  const build: BuildName = lab.build;
  const simd: boolean = lab.simd;
  const labVersion: string = lab.version;

  // metadata
  const variants: readonly VariantInfo[] = lab.variants;
  const mixable: MixtureComponent[] = variants.filter((v) => v.mixable).map((v) => v.id);
  const firstInput: InputSpec | undefined = variants[0]?.inputs[0];
  const shapeOfFirst: string[] = firstInput ? firstInput.shape : [];
  const epsDefault: OptionInfo['default'] = lab.options.eps.default;
  const causalPatterns: readonly string[] | undefined = lab.options.pattern.causalValues;
  const lDefaultsTo: string | undefined = lab.dims.L.defaultsTo;
  const windowMin: number | undefined = lab.options.window.min;
  const componentsMax: number | undefined = lab.options.components.max;
  const appliesTo: readonly VariantId[] = lab.options.state.appliesTo;
  const gradTakesWindow: boolean = lab.options.window.grad;
  const dimDescription: string = lab.dims.n.description;

  // attention, several variants, every option
  const n = 6, d = 4, dv = 3, h = 5, L = 8, a = 2, b = 4, rank = 2;
  const q = matrix(n, d, 1), k = matrix(n, d, 2), v = matrix(n, dv, 3), x = matrix(n, d, 4);
  const plain: readonly number[] = Array.from(v);
  const calls: CallSummary[] = [];
  const run = (id: VariantId, inputs: AttentionInputs, opts?: AttentionOptions) => {
    calls.push(summarize(id, lab.attention(id, inputs, opts)));
  };
  run('softmax', { n, d, dv, q, k, v });
  run('softmax', { n, d, dv, q: Float64Array.from(q), k: Array.from(k), v: plain }, { causal: true, weights: true, scale: 0.5 });
  run('dense', { n, d, dv, h, L, x, v, w1: matrix(d, h, 5), b1: matrix(1, h, 6), w2: matrix(h, L, 7), b2: matrix(1, L, 8) },
    { weights: true });
  run('dense1', { n, d, dv, L, x, v, w: matrix(d, L, 9), b2: matrix(1, L, 8) });
  run('random', { n, dv, L, v, r: matrix(L, L, 10) }, { causal: true });
  const fdInputs: AttentionInputs = {
    n, d, dv, a, b, L, x, v, wa: matrix(d, a, 11), ba: matrix(1, a, 12), wb: matrix(d, b, 13), bb: matrix(1, b, 14),
  };
  run('factorized-dense', fdInputs, { tiling: 'tile', weights: true });
  run('factorized-dense', fdInputs, { tiling: 'kronecker' });
  run('factorized-random', { n, dv, L, rank, v, r1: matrix(L, rank, 15), r2: matrix(L, rank, 16) });
  const components: MixtureComponent[] = ['softmax', 'random'];
  const mixInputs: AttentionInputs = { n, d, dv, L, q, k, v, r: matrix(L, L, 10) };
  run('mixture', mixInputs, { components, alpha: [0.25, 0.75], scale: 0.3, weights: true });
  run('mixture', mixInputs, { components, alphaLogits: Float32Array.of(0, 1), causal: true });
  run('linear', { n, d, dv, q, k, v }, { eps: 1e-5, state: true, causal: true });
  run('efficient', { n, d, dv, q, k, v }, { state: true });
  run('taylor', { n, d, dv, q, k, v }, { eps: 1e-6, state: true, weights: true });
  run('fixed', { n, dv, v }, { pattern: 'left', window: 2, causal: true, weights: true });
  run('fixed', { n, dv, v }, { pattern: 'next' });
  const result: AttentionResult = lab.attention('softmax', { n, d, dv, q, k, v }, { weights: true });
  const firstWeight: number | undefined = result.weights?.[0];
  const state: Float32Array | undefined = lab.attention('linear', { n, d, dv, q, k, v }, { state: true }).state;
  const m: Matrix = q;

  // the backward pass
  const gradOptions: GradOptions = { pattern: 'left', window: 2, causal: true };
  const dOutput: Matrix = new Float32Array(n * dv).fill(1);
  const grad: GradResult = lab.attentionGrad('fixed', { n, dv, v }, dOutput, gradOptions);
  const dv0: Float32Array | undefined = grad.grads.v;
  const gradSummary = { output: grad.output.length, grads: keys(grad.grads), v: dv0?.length ?? null, keys: keys(grad) };
  const gradWithArray = lab.attentionGrad('fixed', { n, dv, v: plain }, Array.from(dOutput), { pattern: 'first' });
  gradSummary.grads.push(...keys(gradWithArray.grads).map((g) => `first:${g}`));

  // a kept forward pass, then the backward pass from it
  const kept: KeptResult = lab.attention('softmax', { n, d, dv, q, k, v }, { keep: true, causal: true });
  const lse: Float32Array | undefined = kept.lse;
  const fromKept: GradResult = kept.backward(dOutput);
  const direct: GradResult = lab.attentionGrad('softmax', { n, d, dv, q, k, v }, dOutput, { causal: true });
  const keptSummary = {
    keys: keys(kept), lse: lse?.length ?? null, grads: keys(fromKept.grads),
    same: (['q', 'k', 'v'] as const).every((g) => fromKept.grads[g]?.every((x, i) => Object.is(x, direct.grads[g]?.[i]))),
  };

  const memory: number = lab.memoryBytes();

  // a model trained on a task
  const task: Task = tasks.copy({ seqLen: 8, vocab: 6 });
  const recallTask: Task = tasks.recall({ pairs: 4, vocab: 20, seqLen: 16, layout: 'dense' });
  void recallTask.sample(1, 1);
  const config: ModelConfig = { variant: 'softmax', vocab: task.vocab, seqLen: task.seqLen, dModel: 8, heads: 2, layers: 1, dFF: 16, causal: true, seed: 1 };
  const model: Model = lab.model(config);
  const fixedModel: Model = lab.model({ ...config, variant: 'fixed', options: { patterns: ['first', 'previous'], window: 2 } });
  fixedModel.dispose();
  const batch: TaskBatch = task.sample(4, 1);
  const before: LossResult = model.evaluate(batch.tokens, batch.targets);
  const stepped = model.trainStep(batch.tokens, batch.targets, { lr: 1e-2 });
  const logits: Float32Array = model.forward(batch.tokens);
  const grads: Record<string, Float32Array> = model.gradients(batch.tokens, batch.targets);
  const reloaded: Model = lab.loadModel(model.save());
  const trainOptions: TrainOptions = { steps: 4, batch: 2, evalEvery: 2, evalBatch: 4, pause: ({ step }) => (step === 2 ? Promise.resolve() : undefined) };
  const trained: TrainResult = await lab.train(reloaded, task, trainOptions);
  const generated: GenerateResult = model.generate(batch.tokens.subarray(0, 2), 3, { temperature: 0 });
  const map: Float32Array = model.attentionMap(batch.tokens.subarray(0, task.seqLen), { layer: 0, head: 1 });
  const modelSummary = {
    before: before.loss, after: stepped.loss, gradNorm: stepped.gradNorm, logits: logits.length, step: reloaded.step,
    generated: [generated.tokens.length, generated.msPerToken.length, generated.logits.length], map: map.length,
    trainedSteps: trained.steps, history: trained.history.length,
    parameters: Object.keys(model.parameters()).length, grads: Object.keys(grads).length, count: model.parameterCount,
    described: task.describe(batch.tokens, 0).length > 0, members: [...Object.keys(model), ...Object.getOwnPropertyNames(Object.getPrototypeOf(model))],
  };
  model.dispose();
  reloaded.dispose();

  // the corpus (read from the installed package) and the tasks built on it
  const corpus: Corpus = await loadCorpus();
  const textTask: TextTask = tasks.text({ corpus, seqLen: 16 });
  const verseTask: VersesTask = tasks.verses({ label: 'testament', seqLen: 16 });
  const verseBatch = verseTask.sample(2, 1, 'heldout');
  const verse: VerseInfo = verseTask.verse(verseBatch.verses[0]);
  const verseModel: Model = lab.model({ ...config, vocab: verseTask.vocab, seqLen: verseTask.seqLen });
  const held = evaluateHeldOut(verseModel, verseTask, { evalBatch: 8 });
  verseModel.dispose();
  const corpusSummary = {
    vocab: textTask.vocab, characters: textTask.corpus?.characters ?? 0, evalWindows: textTask.evalWindows?.().starts.length ?? 0,
    classes: verseTask.classes.length, chance: verseTask.chance, bitsAreLoss: held.bits === held.loss / Math.LN2 && verse.heldOut,
    finalBits: trained.final.evalBits === trained.final.evalLoss / Math.LN2,
  };

  // the experiments' facts: their variants, one run's model, a task's chance level
  const entries: ExperimentVariant[] = experimentVariants(lab.variants);
  const pairsTask = tasks.recall();
  const oneRun: Model = lab.model(modelConfig(pairsTask, entries[0], { dModel: 16, heads: 2, layers: 1, dFF: 32 }, 1));
  const experimentSummary = {
    first: entries[0].name, extras: entries.filter((e) => e.name !== e.variant).length, runVocab: oneRun.config.vocab,
    threshold: THRESHOLD, evalPoints: EVAL_POINTS, chance: chanceOf(pairsTask)?.value === 1 / 8,
  };
  oneRun.dispose();

  // the tasks alone, from their subpath: the same factories, their names, knobs and the corpus's split
  const names: readonly TaskName[] = TASK_NAMES;
  const validationSplit: Split = chapterSplit(9);
  const validation: TaskBatch = subpathTasks.copy({ seqLen: 8, vocab: 6 }).sample(2, 1, 'validation');
  // the float64 oracles and the PRNG, from their subpaths
  const qk = uniformArray(2 * 4, 1, 'q');
  const ref = reference('softmax', { n: 2, d: 4, dv: 4, q: qk, k: uniformArray(8, 1, 'k'), v: uniformArray(8, 1, 'v') }, { causal: true });
  const steps: Step[] = explain('softmax', { n: 2, d: 4, dv: 4, q: qk, k: qk, v: qk }, { causal: true }, 1, 0);
  const refConfig = { ...config, registry: { variants: lab.variants, options: lab.options } };
  const refParams = initParameters(refConfig);
  const refLoss = forwardLoss(refConfig, refParams, batch.tokens.subarray(0, task.seqLen), batch.targets.subarray(0, task.seqLen), 1);
  const oraclesSummary = {
    weights: ref.weights.length, upperZero: ref.weights[1] === 0, steps: steps.length > 0, bar: ACCURACY_BAR.abs, known: hasDefinition('softmax'),
    flops: flopCount('softmax', { n: 2, d: 4, dv: 4 }).flops > 0, dh: resolveConfig(refConfig)['dh'], tableMatches: parameterTable(refConfig).length === modelSummary.parameters,
    lossFinite: Number.isFinite(refLoss.loss), random: mulberry32(streamSeed(1, 'x'))() < 1,
  };
  const tasksSummary = {
    same: subpathTasks === tasks, names: names.length, copyKnobs: TASK_KNOBS.copy.length, split: validationSplit,
    validation: validation.tokens.length, text: DEFAULT_TEXT.length > 0, heldOutEvery: HELD_OUT_EVERY, file: CORPUS_FILES.text,
    tokenName: task.tokenName(0), options: Object.keys(task.options).length > 0,
  };

  // errors, narrowed on their code
  const errors = {
    shape: codeOf(() => lab.attention('softmax', { n, d, dv, q: q.subarray(1), k, v })),
    value: codeOf(() => lab.attention('softmax', { n, d, dv, q: q.map(() => NaN), k, v })),
    unknown: codeOf(() => lab.attention('no-such-variant', { n, d, dv, q, k, v })),
    unsupported: codeOf(() => lab.attention('fixed', { n, dv, v }, { pattern: 'next', causal: true })),
    gradWeights: codeOf(() => lab.attentionGrad('fixed', { n, dv, v }, dOutput, { weights: true } as GradOptions)),
    gradShape: codeOf(() => lab.attentionGrad('fixed', { n, dv, v }, dOutput.slice(1))),
    disposed: 'none' as ReturnType<typeof codeOf>,
    load: 'none' as string,
  };
  try {
    await init({ simd: false, locateFile: () => { throw new Error('nowhere'); } });
  } catch (err) {
    if (err instanceof AttnError && err.code === 'LOAD') errors.load = err.code;
  }
  fresh.dispose();
  errors.disposed = codeOf(() => fresh.attention('fixed', { n, dv, v }));
  full.dispose();

  return {
    version, labVersion, build, simd, features: feats, sameCached: lab === again,
    builds: [scalar.build, withSimd.build, fromBytes.build, fromBuffer.build, located.build, full.build],
    freshIsNew: fresh !== lab,
    declared: {
      options: keys(OPTION_KEYS), dims: keys(DIM_KEYS), inputs: keys(INPUT_KEYS), variantInfo: keys(VARIANT_INFO_KEYS),
      optionInfo: keys(OPTION_INFO_KEYS), dimInfo: keys(DIM_INFO_KEYS), inputSpec: keys(INPUT_FIELD_KEYS),
      gradOptions: keys(GRAD_OPTION_KEYS), grads: keys(GRAD_KEYS), gradResult: keys(GRAD_RESULT_KEYS), keptResult: keys(KEPT_RESULT_KEYS),
      features: keys(FEATURE_KEYS), instance: keys(INSTANCE_KEYS), model: keys(MODEL_KEYS), task: keys(TASK_KEYS), trainOptions: keys(TRAIN_OPTION_KEYS), variants: keys(KNOWN_VARIANTS), patterns: keys(PATTERNS),
      tilings: keys(TILINGS), builds: keys(BUILDS), errorCodes: keys(ERROR_CODES), optionTypes: keys(INFO_TYPES),
      families: keys(FAMILIES), webgpu: keys(WEBGPU_KEYS), adapter: keys(ADAPTER_KEYS),
    },
    webgpu: await onGpu(),
    metadata: {
      epsDefault, causalPatterns, lDefaultsTo, windowMin, componentsMax, appliesTo, dimDescription, mixable, shapeOfFirst,
      gradTakesWindow,
    },
    grad: gradSummary,
    kept: keptSummary,
    model: modelSummary,
    corpus: corpusSummary,
    experiment: experimentSummary,
    tasks: tasksSummary,
    oracles: oraclesSummary,
    calls, firstWeight, stateLength: state?.length ?? null, matrixLength: m.length, memory, errors,
  };
}

export type Report = Awaited<ReturnType<typeof exercise>>;

// Wrong calls: each line must be a type error (tsc fails on an unused @ts-expect-error). Never run.
export async function wrongCalls(lab: AttnLab): Promise<void> {
  const v = new Float32Array(3);
  // @ts-expect-error causal is a boolean
  lab.attention('fixed', { n: 3, dv: 1, v }, { causal: 'yes' });
  // @ts-expect-error n is required
  lab.attention('fixed', { dv: 1, v });
  // @ts-expect-error tiling is 'kronecker' or 'tile'
  lab.attention('factorized-dense', { n: 3, dv: 1, v }, { tiling: 'grid' });
  // @ts-expect-error pattern is one of the fixed patterns
  lab.attention('fixed', { n: 3, dv: 1, v }, { pattern: 'diagonal' });
  // @ts-expect-error a model's fixed heads take fixed patterns
  lab.model({ variant: 'fixed', vocab: 4, seqLen: 4, dModel: 4, heads: 1, layers: 1, dFF: 4, options: { patterns: ['sideways'] } });
  // @ts-expect-error an input array is numbers, not a string
  lab.attention('fixed', { n: 3, dv: 1, v: 'abc' });
  // @ts-expect-error no such option
  lab.attention('fixed', { n: 3, dv: 1, v }, { strict: true });
  // @ts-expect-error the variant id is a string
  lab.attention(7, { n: 3, dv: 1, v });
  // @ts-expect-error simd is 'auto', 'relaxed' or a boolean
  await init({ simd: 'fast' });
  // @ts-expect-error no such init option
  await init({ workers: 4 });
  // @ts-expect-error threads is 'auto' or a number
  await init({ threads: 'many' });
  // @ts-expect-error the results are Float32Arrays
  const out: number[] = lab.attention('fixed', { n: 3, dv: 1, v }).output;
  void out;
  // @ts-expect-error attentionGrad does not take weights
  lab.attentionGrad('fixed', { n: 3, dv: 1, v }, v, { weights: true });
  // @ts-expect-error attentionGrad does not take keep
  lab.attentionGrad('fixed', { n: 3, dv: 1, v }, v, { keep: true });
  // @ts-expect-error without keep: true the result has no backward
  lab.attention('fixed', { n: 3, dv: 1, v }).backward(v);
  // @ts-expect-error attentionGrad needs dOutput
  lab.attentionGrad('fixed', { n: 3, dv: 1, v });
  // @ts-expect-error there is no gradient for n
  lab.attentionGrad('fixed', { n: 3, dv: 1, v }, v).grads.n;
  // @ts-expect-error build is read-only
  lab.build = 'scalar';
  // @ts-expect-error not an AttnErrorCode
  new AttnError('NOPE', 'unknown code');
  try {
    lab.attention('fixed', { n: 3, dv: 1, v });
  } catch (err) {
    // @ts-expect-error err is unknown until narrowed
    err.code;
    if (err instanceof AttnError) {
      // @ts-expect-error 'NOPE' is not an AttnErrorCode: no overlap
      if (err.code === 'NOPE') return;
    }
  }
  // @ts-expect-error not an option of lab.options
  lab.options.nope;
  // @ts-expect-error not a dimension of lab.dims
  lab.dims.z;
  // @ts-expect-error features() has no such field
  features().threads;
  // @ts-expect-error keep does not run on WebGPU
  void (async () => (await initWebGPU()).attention('fixed', { n: 3, dv: 1, v }, { keep: true }));
  // @ts-expect-error powerPreference is 'low-power' or 'high-performance'
  void initWebGPU({ powerPreference: 'fast' });
  // @ts-expect-error recall's layout is 'sparse' or 'dense'
  tasks.recall({ layout: 'medium' });
  // @ts-expect-error the splits are 'train', 'validation' and 'heldout'
  task.sample(1, 1, 'test');
}
