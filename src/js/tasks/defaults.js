// tasks/defaults.js — each task's default model and training settings (its `defaults`). A plain
// ES module: no DOM, no Node imports, no work at import time.
//
// Defaults: chosen by pilot runs of softmax alone (the goal: >= 90 % held-out accuracy within 60 s of
// one-thread training; text: <= 2.4 held-out bits per character within 3 minutes), never by how
// another variant does; the experiments (scripts/experiments.mjs) train them all with these. The
// pilot runs, their settings and results, task by task: experiments/pilots/defaults.md. evalBatch
// (256 held-out sequences) and evalEvery (steps / 20) are train()'s own defaults.

export const DEFAULTS = {
  recall: { dModel: 64, heads: 2, layers: 2, dFF: 256, steps: 2000, batch: 32, lr: 3e-4, warmup: 1000 },
  copy: { dModel: 64, heads: 2, layers: 2, dFF: 128, steps: 400, batch: 32, lr: 3e-3, warmup: 40 },
  reverse: { dModel: 64, heads: 2, layers: 2, dFF: 128, steps: 400, batch: 32, lr: 3e-3, warmup: 40 },
  sort: { dModel: 64, heads: 2, layers: 2, dFF: 128, steps: 800, batch: 32, lr: 3e-3, warmup: 80 },
  text: { dModel: 64, heads: 4, layers: 2, dFF: 256, steps: 1500, batch: 16, lr: 5e-3, warmup: 100 },
  verses: { dModel: 64, heads: 4, layers: 2, dFF: 256, steps: 1000, batch: 32, lr: 3e-3, warmup: 50 },
};
