// The variants the experiments train (in table order) and the model config of one run: the one
// list behind the page's Experiment view (web/experiment/config.js), `npm run experiments`
// (scripts/study/plan.mjs, run-job.mjs) and the training benchmark (bench/training.mjs), so all
// three train the same models. The list is every variant of the binding (lab.variants, in its
// order, each named by its id) that a model can hold (lab.variants[i].inModels: not yet the
// recurrent family), so a new variant is trained everywhere by itself, with the
// curated extras (EXTRAS) after their variant. It lives in web/ so that web/ and dist/ alone
// still make a working page on a static host; Node imports it from here. A plain ES module: no
// DOM, no Node APIs.
//
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
