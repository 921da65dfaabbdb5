// experiments-worker.mjs — one worker thread of `npm run experiments`: loads the binding once,
// then trains the runs it is sent, one at a time, and posts each result back.
//
// A run: { id, task, taskOptions, variant: { name, variant, options, freezeParam }, seed,
//          settings: the task defaults (possibly scaled by --steps-scale) }.
// The model's seed and the training data's seed are both the run's seed, so a run is a pure
// function of (task, variant, seed, settings, build).
import { parentPort, workerData } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { modelConfig } from '../web/experiment/variants.js';

const { init, tasks } = await import(pathToFileURL(workerData.binding).href);
const { train } = await import(pathToFileURL(workerData.train).href);
// one thread per worker: `npm run experiments` runs a worker per core already, and training is
// bit-identical at every thread count
const lab = await init({ threads: 1 });

async function run(r) {
  const task = tasks[r.task](r.taskOptions);
  const s = r.settings;
  const config = modelConfig(task, r.variant, s, r.seed);
  const history = [];
  const out = { id: r.id, task: r.task, variant: r.variant.name, seed: r.seed, config, settings: s, build: lab.build };
  let model;
  try {
    model = lab.model(config);
    out.parameterCount = model.parameterCount;
    const res = await train(model, task, {
      steps: s.steps, batch: s.batch, lr: s.lr, warmup: s.warmup, evalEvery: s.evalEvery, evalBatch: s.evalBatch,
      seed: r.seed, onProgress: (p) => history.push(p),
    });
    Object.assign(out, { history, final: res.final, steps: res.steps, ms: res.ms, trainMs: res.trainMs,
      msPerStep: res.trainMs / res.steps });
    if (config.variant === 'mixture') out.alpha = history.at(-1).alpha;
  } catch (err) {
    // A run that fails (a diverged loss) is recorded with what it reached, not dropped.
    out.history = history;
    out.error = `${err.name}: ${err.message}`;
    out.final = history.length ? { ...history.at(-1) } : null;
    out.steps = history.length ? history.at(-1).step : 0;
  } finally {
    model?.dispose();
  }
  return out;
}

parentPort.on('message', async (r) => {
  if (r === null) { process.exit(0); }
  parentPort.postMessage(await run(r));
});
parentPort.postMessage({ ready: true, build: lab.build });
