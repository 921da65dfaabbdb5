// model-hashes.mjs — trains a fixed set of small models on every build and thread count and
// prints one sha256 per model (parameters and AdamW moments after training, the last loss), so a
// refactor or a speed change can show that training is bit-identical before and after:
//
//   node --experimental-wasm-relaxed-simd scripts/model-hashes.mjs > before.txt
//   ...change...
//   node --experimental-wasm-relaxed-simd scripts/model-hashes.mjs > after.txt && diff before.txt after.txt
//
// The set: every variant of the experiments (src/js/experiment.js: the binding's variants,
// frozen random included),
// 1 to 3 heads, batches of 2 to 32 sequences, on copy; each trains 6 steps. Builds: simd, scalar,
// relaxed (when the engine validates it); threads: 1, 2, 3. Models are hashed through save(),
// the parameters and moments of its body (docs/model.md, "Saved models").
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { init, features, tasks } from '../dist/attnlab.js';
import { experimentVariants, modelConfig } from '../src/js/experiment.js';
import { readSaved } from '../src/js/model-file.js';

const { values: args } = parseArgs({ options: { builds: { type: 'string' }, threads: { type: 'string' } } });
const builds = (args.builds ?? `simd,scalar${features().relaxedSimd ? ',relaxed' : ''}`).split(',');
const threadCounts = (args.threads ?? '1,2,3').split(',').map(Number);
const SHAPES = [{ heads: 1, batch: 2 }, { heads: 2, batch: 8 }, { heads: 4, batch: 32 }];

// The parameters and AdamW moments in a saved file: version 1 also holds the gradients (skipped
// here), version 2 ends with a checksum.
function parametersAndMoments(bytes) {
  const { version, body } = readSaved(bytes); // the package's reader (src/js/model-file.js)
  if (version !== 1) return body;
  const section = body.length / 4;
  return Buffer.concat([body.subarray(0, section), body.subarray(2 * section)]);
}

const task = tasks.copy({ seqLen: 16, vocab: 12 });
for (const build of builds) {
  for (const threads of threadCounts) {
    const lab = await init({ simd: build === 'relaxed' ? 'relaxed' : build === 'simd', threads, fresh: true });
    for (const v of experimentVariants(lab.variants)) {
      for (const { heads, batch } of SHAPES) {
        const model = lab.model(modelConfig(task, v, { dModel: 24, heads: heads === 4 ? 3 : heads, layers: 2, dFF: 32 }, 5));
        let loss = 0;
        for (let s = 0; s < 6; s++) {
          const { tokens, targets } = task.sample(batch, 100 + s);
          loss = model.trainStep(tokens, targets, { lr: 3e-3 }).loss;
        }
        const hash = createHash('sha256').update(parametersAndMoments(model.save())).update(Float32Array.of(loss)).digest('hex').slice(0, 16);
        console.log(`${build} threads=${threads} ${v.name} heads=${model.config.heads} batch=${batch} ${hash}`);
        model.dispose();
      }
    }
    lab.dispose();
  }
}
