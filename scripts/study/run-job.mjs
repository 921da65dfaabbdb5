// run-job.mjs — runs one job of the study (scripts/study/plan.mjs) on one thread and returns its
// record for experiments/results.json. Used by the worker threads of scripts/experiments.mjs.
//
//   train          a training at the job's learning rate; at the end, as the job asks: the
//                  validation metric (for the sweep), the full held-out metric (text: every test
//                  character, in the windows and again with full context; verses: every test
//                  verse, balanced accuracy), the model saved to the cache (pretraining for
//                  transfer), the row entropy of random heads
//   timing         ms per training step at a task's defaults, alone on the machine
//   cost-train     training tokens per second at one sequence length, alone
//   cost-generate  ms per generated token along a long sequence, alone
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { modelConfig } from '../../src/js/experiment.js';
import { evaluateSet } from '../../src/js/train.js'; // the package's evaluation loop (evaluateHeldOut's)
import { COST_MODEL, COST_TOKENS, COST_VOCAB, costBatch, GENERATE_LENGTH, GENERATE_RUNS, TEXT_STRIDE, VALIDATION_BATCH, loadStudyVariants, variantSpec } from './plan.mjs';

let lib = null;
/** Loads the binding once per thread: one thread per job (the study runs a job per core). */
export async function setup(binding) {
  if (lib) return lib;
  const mod = await import(pathToFileURL(binding).href);
  const lab = await mod.init({ threads: 1, simd: true });
  lib = { lab, tasks: mod.tasks, evaluateHeldOut: mod.evaluateHeldOut, build: lab.build };
  await loadStudyVariants(lab); // variantSpec reads them
  return lib;
}

const now = () => performance.now();
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

function makeTask(spec) {
  return lib.tasks[spec.name](spec.options ?? {});
}

// verses: the mean over classes of each class's accuracy (its classes are unbalanced in the Bible).
function balancedAccuracy(model, task, set) {
  const L = task.seqLen, V = model.config.vocab;
  const k = task.classes.length;
  const right = new Array(k).fill(0), total = new Array(k).fill(0);
  const n = set.labels.length;
  for (let s0 = 0; s0 < n; s0 += 256) {
    const s1 = Math.min(n, s0 + 256);
    const logits = model.forward(set.tokens.subarray(s0 * L, s1 * L));
    for (let s = s0; s < s1; s++) {
      const row = logits.subarray(((s - s0 + 1) * L - 1) * V, (s - s0 + 1) * L * V);
      let best = 0;
      for (let j = 1; j < V; j++) if (row[j] > row[best]) best = j;
      total[set.labels[s]]++;
      if (best === task.classes[set.labels[s]].token) right[set.labels[s]]++;
    }
  }
  const perClass = right.map((r, i) => r / total[i]);
  // the loss from evaluateSet, its accuracy kept as plainAccuracy: spread first, so that it cannot
  // overwrite the balanced one (it did, until every verses run was recorded again)
  const plain = evaluateSet(model, set, 256);
  return { ...plain, plainAccuracy: plain.accuracy, accuracy: perClass.reduce((a, b) => a + b, 0) / k, perClass, counted: n, balanced: true };
}

// The validation metric the sweep chooses by.
function validation(model, task, seed) {
  if (task.name === 'text') return evaluateSet(model, task.validationWindows());
  if (task.name === 'verses') return balancedAccuracy(model, task, task.allVerses('validation'));
  return evaluateSet(model, task.sample(VALIDATION_BATCH, seed, 'validation'));
}

// The reported held-out metric beyond train()'s last evaluation. Text: every test character in
// the 64-character windows, and (strided) again with full context, each scoring saying which.
function fullHeldOut(model, task) {
  if (task.name === 'text') return { ...lib.evaluateHeldOut(model, task), strided: { stride: TEXT_STRIDE, ...lib.evaluateHeldOut(model, task, { stride: TEXT_STRIDE }) } };
  if (task.name === 'verses') return balancedAccuracy(model, task, task.allVerses('heldout'));
  return null;
}

// Mean entropy (nats) of the causal rows softmax(r[i][0..i]) of every random head, against the
// uniform rows' mean ln(i + 1): how far a random head is from a causal mean.
function rowEntropy(model) {
  const params = model.parameters();
  const names = Object.keys(params).filter((n) => /\.h\d+\.r$/.test(n));
  if (!names.length) return null;
  const L = model.config.seqLen;
  let h = 0, u = 0, maxw = 0, rows = 0;
  for (const name of names) {
    const r = params[name];
    for (let i = 0; i < L; i++) {
      const row = model.config.causal ? r.subarray(i * L, i * L + i + 1) : r.subarray(i * L, (i + 1) * L);
      const m = Math.max(...row);
      const e = Array.from(row, (x) => Math.exp(x - m));
      const s = e.reduce((a, b) => a + b, 0);
      let hi = 0, mx = 0;
      for (const x of e) { const p = x / s; if (p > 0) hi -= p * Math.log(p); mx = Math.max(mx, p); }
      h += hi; u += Math.log(row.length); maxw += mx; rows++;
    }
  }
  return { entropy: h / rows, uniform: u / rows, maxWeight: maxw / rows, rows };
}

const cachePath = (cacheDir, key) => path.join(cacheDir, `${key.replace(/[^a-zA-Z0-9.=-]+/g, '_')}.attnmodel`);

async function runTrain(job, ctx) {
  const task = makeTask(job.task);
  const spec = variantSpec(job.variant);
  const s = job.settings;
  const config = modelConfig(task, spec, s, job.seed);
  const out = { key: job.key, parameterCount: 0, build: lib.build, taskSeqLen: task.seqLen, taskVocab: task.vocab };
  let model;
  if (job.pretrained) {
    const file = cachePath(ctx.cacheDir, job.pretrained.key);
    if (!existsSync(file)) { // the pretraining is deterministic: run it again rather than fail
      await runTrain({ ...job.pretrained, saveModel: true }, ctx);
    }
    model = lib.lab.loadModel(readFileSync(file), { resetOptimizer: true });
    out.pretrainedFrom = job.pretrained.key;
  } else {
    model = lib.lab.model(config);
  }
  try {
    out.parameterCount = model.parameterCount;
    const entropyAtStart = rowEntropy(model);
    const history = [];
    const res = await lib.lab.train(model, task, {
      steps: s.steps, batch: s.batch, lr: job.lr, warmup: s.warmup, evalEvery: s.evalEvery, evalBatch: s.evalBatch, seed: job.seed,
      onProgress: (p) => history.push([p.step, p.loss, p.accuracy, p.evalLoss, p.evalAccuracy, Math.round(p.elapsedMs)]),
    });
    out.history = history; // [step, train loss, train accuracy, held-out loss, held-out accuracy, elapsed ms]
    out.final = res.final;
    out.trainMs = res.trainMs;
    out.msPerStep = res.trainMs / res.steps;
    if (job.wantValidation) out.validation = validation(model, task, job.seed);
    if (job.wantFull) out.full = fullHeldOut(model, task);
    if (entropyAtStart) out.rowEntropy = { start: entropyAtStart, end: rowEntropy(model) };
    if (job.saveModel) {
      mkdirSync(ctx.cacheDir, { recursive: true });
      writeFileSync(cachePath(ctx.cacheDir, job.key), model.save());
    }
  } catch (err) {
    out.error = `${err.name}${err.code ? ` ${err.code}` : ''}: ${err.message}`;
  } finally {
    model.dispose();
  }
  return out;
}

// ms per training step at a task's defaults: 10 warm-up steps, then the median of 5 blocks of 10.
function runTiming(job) {
  const task = makeTask(job.task);
  const s = job.settings;
  const model = lib.lab.model(modelConfig(task, variantSpec(job.variant), s, 1));
  const batches = Array.from({ length: 4 }, (_, i) => task.sample(s.batch, 100 + i));
  const step = (i) => model.trainStep(batches[i % 4].tokens, batches[i % 4].targets, { lr: 1e-4 });
  for (let i = 0; i < 10; i++) step(i);
  const blocks = [];
  for (let b = 0; b < 5; b++) {
    const t0 = now();
    for (let i = 0; i < 10; i++) step(i);
    blocks.push((now() - t0) / 10);
  }
  model.dispose();
  return { key: job.key, msPerStep: median(blocks), blocks, build: lib.build };
}

// Training tokens per second at one sequence length (COST_TOKENS a step), one thread, alone.
function runCostTrain(job) {
  const seqLen = job.seqLen, batch = COST_TOKENS / seqLen;
  const model = lib.lab.model({ ...COST_MODEL, variant: variantSpec(job.variant).variant, vocab: COST_VOCAB, seqLen, causal: true, seed: 1 });
  const { tokens, targets } = costBatch();
  for (let i = 0; i < 3; i++) model.trainStep(tokens, targets, { lr: 1e-4 });
  const times = [];
  for (let i = 0; i < 7; i++) {
    const t0 = now();
    model.trainStep(tokens, targets, { lr: 1e-4 });
    times.push(now() - t0);
  }
  model.dispose();
  const ms = median(times);
  return { key: job.key, msPerStep: ms, tokensPerSecond: COST_TOKENS / (ms / 1000), times, batch, build: lib.build };
}

// ms per generated token along GENERATE_LENGTH positions (an untrained model: the cost of a step
// does not depend on the weights), reported as the median over windows of positions.
function runCostGenerate(job) {
  const model = lib.lab.model({ ...COST_MODEL, variant: variantSpec(job.variant).variant, vocab: COST_VOCAB, seqLen: GENERATE_LENGTH, causal: true, seed: 1 });
  // A warm-up as long as the timed runs (V8 tiers the binding's code up over the first hundreds
  // of tokens: a 64-token warm-up left softmax's early positions twice as slow as its later
  // ones), then each position's lowest time over GENERATE_RUNS generations, as bench/ does.
  model.generate([1], GENERATE_LENGTH - 1, { temperature: 0 });
  const msPerToken = new Float64Array(GENERATE_LENGTH - 1).fill(Infinity);
  for (let run = 0; run < GENERATE_RUNS; run++) {
    const times = model.generate([1], GENERATE_LENGTH - 1, { temperature: 0 }).msPerToken;
    for (let i = 0; i < msPerToken.length; i++) msPerToken[i] = Math.min(msPerToken[i], times[i]);
  }
  model.dispose();
  const windows = [];
  for (let a = 16; a < msPerToken.length; a *= 2) {
    const b = Math.min(msPerToken.length, 2 * a);
    windows.push({ from: a, to: b, ms: median(Array.from(msPerToken.subarray(a, b))) });
  }
  return { key: job.key, windows, totalMs: msPerToken.reduce((s, x) => s + x, 0), build: lib.build };
}

export async function runJob(job, ctx) {
  const t0 = now();
  let out;
  switch (job.kind) {
    case 'train': out = await runTrain(job, ctx); break;
    case 'timing': out = runTiming(job); break;
    case 'cost-train': out = runCostTrain(job); break;
    case 'cost-generate': out = runCostGenerate(job); break;
    default: throw new Error(`unknown job kind ${job.kind}`);
  }
  out.wallMs = now() - t0;
  return out;
}
