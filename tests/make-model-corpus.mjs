// make-model-corpus.mjs — writes tests/fixtures/model-corpus/: small saved models (format version 2)
// of every kind the model API makes, the seed corpus of the loadModel fuzzer in
// tests/model-hostile.test.mjs. Run after a build: node tests/make-model-corpus.mjs
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { init, tasks } from '../dist/attnlab.js';
import { experimentVariants, modelConfig } from '../src/js/experiment.js';

const dir = new URL('./fixtures/model-corpus/', import.meta.url);
mkdirSync(dir, { recursive: true });
for (const f of readdirSync(dir)) rmSync(new URL(f, dir));
const lab = await init({ simd: true, threads: 1 });
const task = tasks.copy({ seqLen: 6, vocab: 5 });
const sizes = { dModel: 4, heads: 2, layers: 1, dFF: 4 };
const write = (name, model, steps) => {
  for (let s = 0; s < steps; s++) {
    const { tokens, targets } = task.sample(2, s);
    model.trainStep(tokens, targets, { lr: 1e-2 });
  }
  writeFileSync(new URL(`${name}.attnmodel`, dir), model.save());
  model.dispose();
};
for (const v of experimentVariants(lab.variants)) write(v.name, lab.model(modelConfig(task, v, sizes, 3)), 2);
write('fixed-patterns', lab.model({ ...modelConfig(task, { variant: 'fixed' }, sizes, 1), options: { patterns: ['first', 'previous', 'current'] } }), 1);
write('dense-hidden', lab.model({ ...modelConfig(task, { variant: 'dense' }, sizes, 1), hidden: 3, causal: false, weightDecay: 0 }), 1);
write('factorized-random-rank', lab.model({ ...modelConfig(task, { variant: 'factorized-random' }, sizes, 2), rank: 2 }), 0);
console.log(`wrote ${readdirSync(dir).length} files to tests/fixtures/model-corpus/`);
