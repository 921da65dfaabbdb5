// train.js — lab.train(model, task, options): trains a lab.model on a task (src/js/tasks.js) with
// a learning-rate schedule, evaluates it on a fixed held-out set as it goes, reports progress,
// pauses when a caller's hook says so, and stops early on an AbortSignal.
//
//   const { history, final, steps, ms, aborted } = await train(model, tasks.copy(), {
//     steps: 1000, onProgress: (p) => console.log(p.step, p.evalAccuracy), signal });
//
// Schedule: linear warmup, then cosine decay. Step s (0-based) trains with
//   lr_s = lr · (s + 1) / warmup                                   for s < warmup
//   lr_s = lr · ½ (1 + cos(π (s − warmup) / (steps − warmup)))      otherwise
// so the rate rises linearly to lr, then falls towards 0 (the last step's rate is small and
// positive). learningRate(s, { steps, lr, warmup }) is exported for inspection.
//
// Data: step s trains on task.sample(batch, seed + s, 'train'). The held-out set is fixed for the
// run: task.evalWindows() when the task has it (text on the corpus: 128 evenly spaced windows of
// the held-out chapters), else task.heldOutWindows() (text on a string: every held-out character
// once), otherwise task.sample(evalBatch, seed, 'heldout') (an independent stream from the
// training one). evaluateHeldOut(model, task) below evaluates all of task.heldOutWindows().
//
// Progress: after every evalEvery steps and after the last step, the model is evaluated on the
// held-out set and onProgress gets (and history records)
//   { step,             steps taken so far
//     loss, accuracy,   mean training loss / accuracy over the steps since the previous entry
//     evalLoss, evalAccuracy,   on the held-out set
//     evalBits,         evalLoss / ln 2: held-out bits per predicted token, for every task (text:
//                       bits per character; evalLoss is in nats per predicted token)
//     lr,               the rate of the last step taken
//     msPerStep,        mean wall time of a training step since the previous entry (no evaluation)
//     elapsedMs,        wall time since the start, evaluations and yields included, time spent
//                       waiting in the pause hook excluded (so a paused run's time axis has no gap)
//     alpha? }          mixtures only: alpha[layer][head] = the head's component weights
// The result is { history, final: { loss, accuracy, evalLoss, evalAccuracy, evalBits } (the last entry's),
// steps, ms, trainMs, aborted }.
//
// Pause: options.pause, if given, is called before every step as pause({ step }) (step = the
// steps taken so far); when it returns a promise (a thenable), training waits for it, so a page
// can hold a run ("pause") and release it one evaluation at a time ("step"). An abort that arrives
// while paused ends the wait at once, even if the promise never settles. A rejected promise ends
// train() with that error. The hook decides only *when* the next step runs, never what it computes.
//
// Abort: a signal aborted before train() is called, or before the first step (say while paused),
// rejects with the signal's reason (as fetch() does): no step ran, so there is no result. Later,
// an abort stops after the current step and resolves with what the run has, aborted: true.
//
// Training is deterministic for a model seed, a task, these options and a build: the yields to
// the event loop (every ~25 ms of work, so a page stays live and an abort can arrive) and the
// pauses do not change the numbers. A plain ES module: no DOM, no Node APIs.
import { AttnError, describe } from './errors.js';

const YIELD_MS = 25;

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());
// A yield lets control messages (pause, abort) and progress out between steps. setTimeout(0) is
// clamped to at least 4 ms once timers nest (browsers and workers: each yield is called from the
// previous one's task), which costs a loop that yields every 25 ms some 15 % of its time; a
// MessageChannel message is a task without the clamp (setImmediate, in Node, is one too).
let channel = null;
const waiting = [];
function yieldToEventLoop() {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  if (typeof MessageChannel !== 'function') return new Promise((resolve) => setTimeout(resolve, 0));
  if (!channel) {
    channel = new MessageChannel();
    channel.port1.onmessage = () => waiting.shift()?.();
  }
  return new Promise((resolve) => {
    waiting.push(resolve);
    channel.port2.postMessage(null);
  });
}

function bad(name, msg, value) {
  return new AttnError('VALUE', `train: ${name} ${msg}, got ${describe(value)}`);
}

function intArg(name, value, min, max = 0x7fffffff) {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw bad(name, `must be an integer in [${min}, ${max}]`, value);
  }
  return value;
}

/** The learning rate of step s (0-based) of the schedule above. */
export function learningRate(s, { steps, lr, warmup = 0 }) {
  if (s < warmup) return (lr * (s + 1)) / warmup;
  const t = (s - warmup) / Math.max(1, steps - warmup);
  return lr * 0.5 * (1 + Math.cos(Math.PI * Math.min(t, 1)));
}

function readOptions(model, task, options) {
  if (model === null || typeof model !== 'object' || typeof model.trainStep !== 'function' ||
      typeof model.evaluate !== 'function' || !model.config) {
    throw new AttnError('VALUE', `train: model must be a lab.model(), got ${describe(model)}`);
  }
  if (task === null || typeof task !== 'object' || typeof task.sample !== 'function' ||
      !Number.isInteger(task.seqLen) || !Number.isInteger(task.vocab)) {
    throw new AttnError('VALUE', `train: task must be a task of tasks (with sample, seqLen, vocab), got ${describe(task)}`);
  }
  if (task.seqLen !== model.config.seqLen) {
    throw new AttnError('VALUE', `train: task ${task.name} has seqLen ${task.seqLen}, the model has seqLen ${model.config.seqLen}`);
  }
  if (task.vocab > model.config.vocab) {
    throw new AttnError('VALUE', `train: task ${task.name} has vocab ${task.vocab}, more than the model's ${model.config.vocab}`);
  }
  if (options === undefined || options === null) options = {}; // null: every default, as for every options object
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new AttnError('VALUE', `train: options must be an object, got ${describe(options)}`);
  }
  const known = ['steps', 'batch', 'lr', 'warmup', 'evalEvery', 'evalBatch', 'seed', 'onProgress', 'signal', 'pause'];
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new AttnError('UNKNOWN', `train: unknown option "${key}"; expected ${known.join(', ')}`);
  }
  const d = task.defaults ?? {};
  const o = {};
  o.steps = intArg('steps', options.steps ?? d.steps ?? 1000, 1);
  o.batch = intArg('batch', options.batch ?? d.batch ?? 32, 1, 1 << 20);
  o.lr = options.lr ?? d.lr ?? 3e-3;
  if (typeof o.lr !== 'number' || !Number.isFinite(Math.fround(o.lr)) || o.lr <= 0) {
    throw bad('lr', 'must be a positive number that float32 can hold (up to 3.4e38)', o.lr);
  }
  o.warmup = intArg('warmup', options.warmup ?? d.warmup ?? 0, 0);
  o.evalEvery = intArg('evalEvery', options.evalEvery ?? d.evalEvery ?? Math.max(1, Math.round(o.steps / 20)), 1);
  o.evalBatch = intArg('evalBatch', options.evalBatch ?? d.evalBatch ?? 256, 1, 1 << 20);
  o.seed = intArg('seed', options.seed ?? 0, 0, 0xffffffff);
  o.onProgress = options.onProgress;
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw bad('onProgress', 'must be a function', o.onProgress);
  o.pause = options.pause;
  if (o.pause !== undefined && typeof o.pause !== 'function') throw bad('pause', 'must be a function', o.pause);
  o.signal = options.signal;
  if (o.signal !== undefined && (o.signal === null || typeof o.signal !== 'object' || typeof o.signal.aborted !== 'boolean')) {
    throw bad('signal', 'must be an AbortSignal', o.signal);
  }
  return o;
}

// One batch of the task, checked: a task of one's own whose sample() returns something else is
// named in the error instead of failing somewhere inside the model.
function sampleOf(task, batch, seed, split) {
  const b = task.sample(batch, seed, split);
  const ints = (x) => ArrayBuffer.isView(x) || Array.isArray(x);
  if (b === null || typeof b !== 'object' || !ints(b.tokens) || !ints(b.targets)) {
    throw new AttnError('VALUE', `train: task ${describe(task.name)}: sample(${batch}, ${seed}, '${split}') returned ` +
      `${describe(b)}, not { tokens, targets } (arrays of batch * seqLen integers)`);
  }
  return b;
}

/** The mixture weights of every layer and head, alpha[layer][head] = [w per component]. */
function alphas(model) {
  if (model.config.variant !== 'mixture' || typeof model.alpha !== 'function') return undefined;
  const { layers, heads } = model.config;
  return Array.from({ length: layers }, (_, layer) =>
    Array.from({ length: heads }, (_, head) => Array.from(model.alpha({ layer, head }))));
}

// A pause hook's promise, or the abort of the signal, whichever comes first: an abort ends a
// paused run even when the hook's promise never settles (a rejection still ends train()).
function untilSettledOrAborted(wait, signal) {
  if (!signal || typeof signal.addEventListener !== 'function') return wait;
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(wait).then(
      () => { signal.removeEventListener('abort', onAbort); resolve(); },
      (err) => { signal.removeEventListener('abort', onAbort); reject(err); });
  });
}

/** Trains model on task; see the top of this file. */
export async function train(model, task, options = {}) {
  const o = readOptions(model, task, options);
  // An abort before the run starts rejects with the signal's reason, as fetch() does: no step ran,
  // so there is no result to give.
  if (o.signal?.aborted) throw o.signal.reason ?? new AttnError('VALUE', 'train: the signal was aborted before training started');
  const heldOut = typeof task.evalWindows === 'function' ? task.evalWindows()
    : typeof task.heldOutWindows === 'function' ? task.heldOutWindows()
      : sampleOf(task, o.evalBatch, o.seed, 'heldout');
  const history = [];
  const start = now();
  let lastYield = start;
  let trainMs = 0;
  let pausedMs = 0; // time spent waiting in the pause hook, left out of elapsedMs
  let window = { loss: 0, accuracy: 0, steps: 0, ms: 0 };
  let step = 0;
  let lr = 0;
  let aborted = false;

  const report = () => {
    const ev = model.evaluate(heldOut.tokens, heldOut.targets);
    const n = window.steps;
    const entry = {
      step,
      loss: n ? window.loss / n : NaN,
      accuracy: n ? window.accuracy / n : NaN,
      evalLoss: ev.loss,
      evalAccuracy: ev.accuracy,
      evalBits: ev.loss / Math.LN2,
      lr,
      msPerStep: n ? window.ms / n : 0,
      elapsedMs: now() - start - pausedMs,
    };
    const alpha = alphas(model);
    if (alpha) entry.alpha = alpha;
    history.push(entry);
    window = { loss: 0, accuracy: 0, steps: 0, ms: 0 };
    if (o.onProgress) o.onProgress(entry);
  };

  while (step < o.steps) {
    if (o.signal?.aborted) { aborted = true; break; }
    if (o.pause) {
      const wait = o.pause({ step });
      if (wait && typeof wait.then === 'function') {
        const t = now();
        await untilSettledOrAborted(wait, o.signal);
        pausedMs += now() - t;
        lastYield = now();
        if (o.signal?.aborted) { aborted = true; break; }
      }
    }
    const { tokens, targets } = sampleOf(task, o.batch, (o.seed + step) >>> 0, 'train');
    lr = learningRate(step, o);
    const t0 = now();
    const r = model.trainStep(tokens, targets, { lr });
    const dt = now() - t0;
    trainMs += dt;
    window.loss += r.loss;
    window.accuracy += r.accuracy;
    window.steps++;
    window.ms += dt;
    step++;
    if (step % o.evalEvery === 0 || step === o.steps) report();
    if (now() - lastYield >= YIELD_MS) {
      await yieldToEventLoop();
      lastYield = now();
    }
  }
  if (aborted && step === 0) throw o.signal.reason ?? new AttnError('VALUE', 'train: aborted before the first step');
  if (aborted && (history.length === 0 || history[history.length - 1].step !== step)) report();
  const last = history[history.length - 1];
  return {
    history,
    final: { loss: last.loss, accuracy: last.accuracy, evalLoss: last.evalLoss, evalAccuracy: last.evalAccuracy, evalBits: last.evalBits },
    steps: step,
    ms: now() - start - pausedMs,
    trainMs,
    aborted,
  };
}

/**
 * Evaluates model on all of task.heldOutWindows() (text on the corpus: every held-out character
 * once, 6,292 windows at seqLen 64), batch windows at a time so that memory stays small; the
 * result is what one evaluate() of them all would give: { loss, accuracy, bits (= loss / ln 2),
 * counted, ms }. Tasks without heldOutWindows() are evaluated on task.sample(evalBatch, seed,
 * 'heldout'). stride (text on the corpus): task.strideWindows(stride) instead, every held-out
 * character once with full context (at least seqLen − stride characters before each).
 */
export function evaluateHeldOut(model, task, options) {
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
    throw new AttnError('VALUE', `evaluateHeldOut: options must be an object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options ?? {})) {
    if (!['batch', 'evalBatch', 'seed', 'stride'].includes(key)) throw new AttnError('UNKNOWN', `evaluateHeldOut: unknown option "${key}"; expected batch, evalBatch, seed, stride`);
  }
  const { batch = 256, evalBatch = 256, seed = 0, stride = null } = options ?? {};
  intArg('batch', batch, 1, 1 << 20);
  intArg('evalBatch', evalBatch, 1, 1 << 20);
  intArg('seed', seed, 0, 0xffffffff);
  if (task === null || typeof task !== 'object' || typeof task.sample !== 'function') {
    throw new AttnError('VALUE', `evaluateHeldOut: task must be a task of tasks, got ${describe(task)}`);
  }
  if (stride !== null && typeof task.strideWindows !== 'function') {
    throw new AttnError('VALUE', `evaluateHeldOut: stride needs a task with strideWindows() (text on the corpus), got task ${describe(task.name)}`);
  }
  const t0 = now();
  const set = stride !== null ? task.strideWindows(stride)
    : typeof task?.heldOutWindows === 'function' ? task.heldOutWindows() : task.sample(evalBatch, seed, 'heldout');
  return { ...evaluateSet(model, set, batch), ms: now() - t0 };
}

/**
 * Loss and accuracy over a set of sequences ({ tokens, targets } of whole sequences), `batch`
 * sequences to an evaluate() call, each call weighted by the targets it counted: what one
 * evaluate() of the whole set gives, in memory for `batch` sequences. { loss, accuracy, bits (=
 * loss / ln 2), counted }; 0 for each when no position has a target. The study's evaluations
 * (scripts/study/run-job.mjs) and evaluateHeldOut share it.
 */
export function evaluateSet(model, set, batch = 256) {
  const L = model.config.seqLen;
  const count = set.tokens.length / L;
  let loss = 0;
  let hits = 0;
  let counted = 0;
  for (let s = 0; s < count; s += batch) {
    const e = Math.min(count, s + batch) * L;
    const r = model.evaluate(set.tokens.subarray(s * L, e), set.targets.subarray(s * L, e));
    loss += r.loss * r.counted;
    hits += r.accuracy * r.counted;
    counted += r.counted;
  }
  const mean = counted ? loss / counted : 0;
  return { loss: mean, accuracy: counted ? hits / counted : 0, bits: mean / Math.LN2, counted };
}

export default train;
