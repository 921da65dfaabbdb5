// experiment.js — the facts of the experiments, in the package so that the page (from dist/), the
// study (`npm run experiments`, scripts/study/), the benchmark and the tests read one copy: the
// variants the experiments train and the model config of one run, the accuracy at which a run
// counts as having learned, the evaluations per run, the chance level of each task, and the cost
// shape the study and bench/throughput.mjs time. A plain ES module: no DOM, no Node APIs, no work
// at import.
//
// The list of variants is every variant of the binding (lab.variants, in its order, each named by
// its id) that a model can hold (lab.variants[i].inModels: not yet the recurrent family), so a new
// variant is trained everywhere by itself, with the curated extras (EXTRAS) after their variant.
// An entry: { name (the table's), variant (a lab.variants id), options? (attention options),
//             freezeParam? (a per-head parameter kept at its initial value in every head),
//             rStd? (the initial scale of r, r1, r2: docs/model.md) }.

/**
 * Runs of a variant trained otherwise than plainly, listed after it. random-frozen is the
 * Synthesizer paper's fixed Random: r drawn once and never trained. At rStd 1 (logits of unit
 * variance) its rows are a random alignment (mean entropy 3.02 nats over 32 positions against
 * 3.47 for uniform); random-frozen-0.2, the model's default scale, is kept as a labelled contrast:
 * its rows are within 1 % of uniform, a causal mean more than an alignment.
 */
export const EXTRAS = [
  { name: 'random-frozen', variant: 'random', freezeParam: 'r', rStd: 1 },
  { name: 'random-frozen-0.2', variant: 'random', freezeParam: 'r' },
];

/** The attention options a variant trains with here when it cannot train without: the mixture's components. */
const TRAINED_WITH = { mixture: { components: ['softmax', 'random'] } };

/** The experiments' variants of a binding: every entry of `labVariants` (lab.variants) a model can hold, each followed by its extras. */
export function experimentVariants(labVariants) {
  const list = [];
  for (const { id, inModels } of labVariants) {
    if (!inModels) continue;
    list.push(TRAINED_WITH[id] ? { name: id, variant: id, options: structuredClone(TRAINED_WITH[id]) } : { name: id, variant: id });
    for (const extra of EXTRAS) if (extra.variant === id) list.push(structuredClone(extra));
  }
  return list;
}

/** The lab.model config of entry `v` on `task` with sizes `s` ({ dModel, heads, layers, dFF }). */
export function modelConfig(task, v, s, seed) {
  const config = {
    variant: v.variant, vocab: task.vocab, seqLen: task.seqLen, dModel: s.dModel, heads: s.heads,
    layers: s.layers, dFF: s.dFF, causal: task.causal, seed,
  };
  if (v.options) config.options = v.options;
  if (v.rStd !== undefined) config.rStd = v.rStd;
  if (v.freezeParam) {
    config.freeze = [];
    for (let l = 0; l < s.layers; l++) for (let h = 0; h < s.heads; h++) config.freeze.push(`l${l}.h${h}.${v.freezeParam}`);
  }
  return config;
}

/** An accuracy task counts as learned by a run whose final held-out accuracy reaches this. */
export const THRESHOLD = 0.9;
/** Evaluations per run of the study: evalEvery = steps / EVAL_POINTS (recall, 2,000 steps: every 50). */
export const EVAL_POINTS = 40;

/**
 * The chance level of a task (a task object of tasks.js) and how it is reached: accuracy tasks
 * { value (a fraction), why }; text { value (bits per character of a uniform guess), why }; null
 * for a task without one.
 */
export function chanceOf(task) {
  switch (task.name) {
    case 'copy': case 'reverse': case 'sort': return { value: 1 / (task.vocab - 1), why: `one of the ${task.vocab - 1} content tokens` };
    // not a uniform guess over the vocabulary (1 / (vocab − 1)): the plateau of a model that has
    // learned which tokens are values but not the lookup; a model can sit below it (fixed does)
    case 'recall': return { value: 1 / task.options.pairs, why: `a guess among the ${task.options.pairs} values of the sequence: the plateau without the lookup (loss ln ${task.options.pairs}); a uniform guess over the vocabulary is ${(100 / (task.vocab - 1)).toFixed(1)} %` };
    case 'verses': return { value: task.chance, why: `one of ${task.classes.length} classes (balanced accuracy)` };
    case 'text': return { value: Math.log2(task.vocab), why: `bits per character of a uniform guess over ${task.vocab} characters` };
    default: return null;
  }
}

/** The cost measurements (the study's cost pass and bench/throughput.mjs): softmax against the O(n) family. */
export const COST_VARIANTS = ['softmax', 'linear', 'efficient', 'taylor'];
export const COST_SEQLENS = [64, 128, 256, 512, 1024, 2048];
export const COST_TOKENS = 4096; // per training step: batch = COST_TOKENS / seqLen
export const COST_MODEL = { dModel: 64, heads: 4, layers: 2, dFF: 256 };
export const COST_VOCAB = 64;
/**
 * The batch every cost step trains on: COST_TOKENS tokens from a fixed LCG, targets the next token
 * (wrapping); the numbers a step computes do not change its cost, so one fixed batch serves every
 * variant and length.
 */
export function costBatch() {
  let x = 7;
  const tokens = Int32Array.from({ length: COST_TOKENS }, () => (x = (x * 1103515245 + 12345) >>> 0) % COST_VOCAB);
  const targets = Int32Array.from(tokens, (t, i) => tokens[(i + 1) % COST_TOKENS]);
  return { tokens, targets };
}
