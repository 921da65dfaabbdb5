// Module worker of the Experiment view: trains ONE model (one variant of an experiment) with
// lab.train, then answers questions about the trained model. The page runs one of these per
// variant, as many at once as the machine has cores (web/experiment/runner.js).
//
// Requests (postMessage; the protocol: worker-client.js), answered in order: { id, type, ... } -> { id, ok: true, ... } | { id, ok: false, error }
//   train    { build, config, task: { name, options }, train: { steps, batch, lr, warmup, evalEvery, evalBatch, seed } }
//            -> { id, type: 'started', parameterCount, build } once the model exists,
//               a { id, type: 'progress', point } per evaluation (lab.train's history entries), then
//               { result: { steps, final, aborted, ms, trainMs, parameterCount, build } }
//   inspect  { index } -> { tokens, targets, predictions, maps: [layer][head] Float32Array [seqLen²] } on
//            held-out sequence `index` (the index-th sequence of the evaluation set lab.train used)
//   generate { prompt: Int32Array, count, temperature, seed } -> { tokens, msPerToken }
//   timeGeneration { build, config, count } -> { id, type: 'generating' } once the model exists,
//            then { msPerToken, build }: builds an UNTRAINED model of `config` (the trained model's
//            widths, a long seqLen, causal), times model.generate([1], count, { temperature: 0 })
//            once and disposes of the model (and of the instance, if this request loaded it).
//            Speed only. The page's "Time generation to 2048 positions" (long-generate.js) sends it
//            to a worker of its own, so Cancel can end that worker mid-call and keep the trained ones.
//   probe    { build, task: { name, options } | { vocab, seqLen }, batch, runs: [{ name, config }],
//            steps, evalSeqs } -> { results: [{ name, error } | { name, msPerStep, evalMs,
//            startMs, parameterCount }] }: builds each model as lab.model would for training (so
//            a config the binding refuses is caught before any training worker starts), times
//            `steps` training steps of it at lr 0 (each sampling its batch from the task, as
//            train() does; the time of a step does not depend on the data) and an evaluation of
//            the held-out set (the second of two: the first grows the memory), then disposes of
//            it; startMs is building the task, its held-out set and the model, and that growth. The page's estimate of how long a run takes here (it probes in
//            as many workers at once as will train at once, so the times include their
//            contention). Keeps its instance for the next probe.
//   dispose  {} -> frees the model
// Control messages, handled at once (training yields to the event loop every ~25 ms, so they
// arrive mid-run), no reply: pause, resume, step (run to the next evaluation, then pause), abort.
// The pause is lab.train's `pause` hook: it changes when steps run, never what they compute, so
// the page's numbers equal lab.train's in Node for the same config and build.

import { loadBinding, initBuild, errorOf, serve } from './worker-host.js';

let lab = null;
let model = null;
let task = null;
let trainSeed = 0;
let evalBatch = 256;

// pause / step / abort state of the run in progress
let paused = false;
let stepping = false;
let release = null;
let controller = null;
let abortRequested = false; // an abort can arrive while the binding is still loading

// this worker's own instance: disposing it on reset frees everything the model held
// threads: 1 — the view already runs one worker per core; a pool in each would oversubscribe
// the cores (spinning pools steal each other's time), and training is bit-identical either way
const getLab = (build) => initBuild(build, { threads: 1, fresh: true });

function releasePause() {
  const r = release;
  release = null;
  r?.();
}

const pauseHook = () => (paused ? new Promise((resolve) => { release = resolve; }) : undefined);

async function train(msg, post) {
  if (model) throw Object.assign(new Error('this worker has trained a model already; reset first'), { code: 'UNSUPPORTED' });
  lab = await getLab(msg.build);
  task = (await loadBinding()).tasks[msg.task.name](msg.task.options);
  trainSeed = msg.train.seed;
  evalBatch = msg.train.evalBatch;
  model = lab.model(msg.config);
  post({ type: 'started', parameterCount: model.parameterCount, build: lab.build });
  controller = new AbortController();
  if (abortRequested) controller.abort();
  const signal = controller.signal;
  let res;
  try {
    res = await lab.train(model, task, {
      ...msg.train,
      signal,
      pause: pauseHook,
      onProgress: (point) => {
        // "step" runs to the next evaluation, then holds again
        if (stepping) {
          stepping = false;
          paused = true;
        }
        post({ type: 'progress', point });
      },
    });
  } catch (err) {
    // lab.train rejects with the signal's reason when it was aborted before its first step
    if (!(signal.aborted && err === signal.reason)) throw err;
    res = { steps: 0, final: null, aborted: true, ms: 0, trainMs: 0 };
  }
  controller = null;
  return {
    reply: { result: { steps: res.steps, final: res.final, aborted: res.aborted, ms: res.ms, trainMs: res.trainMs, parameterCount: model.parameterCount, build: lab.build } },
    transfer: [],
  };
}

/** Held-out sequence `index` of the evaluation set lab.train used (its prefix property: sample(k) starts like sample(256)). */
function heldOutSequence(index) {
  const L = task.seqLen;
  if (typeof task.heldOutWindows === 'function') {
    const w = task.heldOutWindows();
    const count = w.tokens.length / L;
    const i = ((index % count) + count) % count;
    return { tokens: w.tokens.slice(i * L, (i + 1) * L), targets: w.targets.slice(i * L, (i + 1) * L), index: i, count };
  }
  const count = evalBatch;
  const i = ((index % count) + count) % count;
  const b = task.sample(i + 1, trainSeed, 'heldout');
  return { tokens: b.tokens.slice(i * L), targets: b.targets.slice(i * L), index: i, count };
}

function inspect(msg) {
  if (!model) throw Object.assign(new Error('no trained model in this worker'), { code: 'UNSUPPORTED' });
  const { seqLen: L, vocab, layers, heads } = model.config;
  const seq = heldOutSequence(msg.index ?? 0);
  const logits = model.forward(seq.tokens);
  const predictions = new Int32Array(L).fill(-1);
  for (let t = 0; t < L; t++) {
    if (seq.targets[t] < 0) continue;
    let best = 0;
    for (let c = 1; c < vocab; c++) if (logits[t * vocab + c] > logits[t * vocab + best]) best = c;
    predictions[t] = best; // the first index of the maximum, as evaluate() counts it
  }
  const maps = [];
  const transfer = [];
  for (let layer = 0; layer < layers; layer++) {
    const row = [];
    for (let head = 0; head < heads; head++) {
      const m = model.attentionMap(seq.tokens, { layer, head });
      row.push(m);
      transfer.push(m.buffer);
    }
    maps.push(row);
  }
  return { reply: { ...seq, predictions, maps }, transfer };
}

const GENERATE_BUDGET_MS = 300;

/**
 * Generates, then repeats the same generation (same seed: the same tokens) within a small time
 * budget and keeps the mean time per position over the repeats (the first pass, a warm-up, left
 * out): a step of a small model takes about the timer's resolution in a worker (~0.1 ms, with
 * jitter), so a single pass would show mostly rounding, and a mean of many sees through it.
 */
function generate(msg) {
  if (!model) throw Object.assign(new Error('no trained model in this worker'), { code: 'UNSUPPORTED' });
  const args = [Int32Array.from(msg.prompt), msg.count, { temperature: msg.temperature ?? 0, seed: msg.seed ?? 0 }];
  const first = model.generate(...args);
  const times = [];
  const t0 = performance.now();
  while (times.length < 3 || (times.length < 200 && performance.now() - t0 < GENERATE_BUDGET_MS)) times.push(model.generate(...args).msPerToken);
  const msPerToken = Float64Array.from(first.msPerToken, (_, g) => times.reduce((sum, t) => sum + t[g], 0) / times.length);
  return { reply: { tokens: first.tokens, msPerToken, repeats: times.length }, transfer: [first.tokens.buffer, msPerToken.buffer] };
}

function timeGeneration(msg, post) {
  return (async () => {
    const own = !lab; // a worker holding a trained model lends its instance; otherwise load one
    const l = own ? await getLab(msg.build) : lab;
    let m = null;
    try {
      m = l.model(msg.config);
      post({ type: 'generating' });
      const { msPerToken } = m.generate([1], msg.count, { temperature: 0 });
      return { reply: { msPerToken, build: l.build }, transfer: [msPerToken.buffer] };
    } finally {
      m?.dispose();
      if (own) l.dispose();
    }
  })();
}

const probeLabs = {}; // build -> its instance, kept for the next probe
const PROBE_BUDGET_MS = 1500;

async function probe(msg) {
  const probeLab = (probeLabs[msg.build] ??= await getLab(msg.build));
  // the run's own task when it is given (sampling a batch is part of a step; building the task,
  // the corpus's included, is part of a run's start); otherwise a fixed pseudo-random batch
  let real = null;
  let taskMs = 0;
  if (msg.task.name) {
    const t = performance.now();
    real = (await loadBinding()).tasks[msg.task.name](msg.task.options);
    taskMs = performance.now() - t;
  }
  const { vocab, seqLen } = real ?? msg.task;
  const n = msg.batch * seqLen;
  let x = 12345;
  const tokens = Int32Array.from({ length: n }, () => (x = (x * 1103515245 + 12345) >>> 0) % vocab);
  const targets = Int32Array.from(tokens, (t, i) => tokens[(i + 1) % n]);
  const batchOf = (i) => (real ? real.sample(msg.batch, 1000 + i, 'train') : { tokens, targets });
  // the held-out set as train.js builds it (its building is part of the start too)
  let heldOut = null;
  if (msg.evalSeqs > 0) {
    const t = performance.now();
    heldOut = real ? (typeof real.evalWindows === 'function' ? real.evalWindows() : typeof real.heldOutWindows === 'function' ? real.heldOutWindows() : real.sample(msg.evalSeqs, 1, 'heldout'))
      : { tokens: Int32Array.from({ length: msg.evalSeqs * seqLen }, (_, i) => tokens[i % n]), targets: Int32Array.from({ length: msg.evalSeqs * seqLen }, (_, i) => targets[i % n]) };
    taskMs += performance.now() - t;
  }
  const results = [];
  for (const { name, config } of msg.runs) {
    let m = null;
    try {
      const tb = performance.now();
      m = probeLab.model(config);
      const buildMs = performance.now() - tb;
      const times = [];
      const t0 = performance.now();
      // the first step warms up (allocations); the rest are timed, within a small budget
      for (let i = 0; i <= msg.steps && (i < 2 || performance.now() - t0 < PROBE_BUDGET_MS); i++) {
        const t = performance.now();
        const b = batchOf(i);
        m.trainStep(b.tokens, b.targets, { lr: 0 });
        if (i > 0) times.push(performance.now() - t);
      }
      const msPerStep = times.length ? times.reduce((a, b) => a + b, 0) / times.length : performance.now() - t0;
      // an evaluation of the run's held-out set (a forward pass of each sequence), timed twice:
      // the first also grows the model's memory for the larger batch (once a run: its start)
      let evalMs = null;
      let growMs = 0;
      if (heldOut) {
        const t = performance.now();
        m.evaluate(heldOut.tokens, heldOut.targets);
        const first = performance.now() - t;
        const t2 = performance.now();
        m.evaluate(heldOut.tokens, heldOut.targets);
        evalMs = performance.now() - t2;
        growMs = Math.max(0, first - evalMs);
      }
      results.push({ name, msPerStep, evalMs, startMs: taskMs + buildMs + growMs, parameterCount: m.parameterCount });
    } catch (err) {
      results.push({ name, error: errorOf(err) });
    } finally {
      m?.dispose();
    }
  }
  return { reply: { results, build: probeLab.build }, transfer: [] };
}

function dispose() {
  model?.dispose();
  model = null;
  lab?.dispose();
  lab = null;
  return { reply: {}, transfer: [] };
}

serve({ train, inspect, generate, timeGeneration, probe, dispose }, {
  pause: () => { paused = true; },
  resume: () => { paused = false; stepping = false; releasePause(); },
  step: () => { stepping = true; paused = false; releasePause(); },
  abort: () => { abortRequested = true; controller?.abort(); paused = false; releasePause(); },
});
