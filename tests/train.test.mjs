// train(): the learning-rate schedule, progress at every evalEvery steps and at the end, a fixed
// held-out set, determinism for a seed, AbortSignal cancel, and bad arguments. Tiny models only.
//
//   node --test tests/train.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { train, learningRate } from '../src/js/train.js';
import { tasks, DEFAULT_TEXT } from '../src/js/tasks.js';
import { binding } from './helpers.mjs';

const { init } = await binding(); // train.js throws src/js/errors.js's AttnError: tests check name and code
const lab = await init();

const task = tasks.copy({ seqLen: 8, vocab: 6 });
const tiny = (extra = {}) => lab.model({
  variant: 'softmax', vocab: task.vocab, seqLen: task.seqLen, dModel: 16, heads: 2, layers: 1, dFF: 32,
  causal: true, seed: 7, ...extra,
});

test('schedule: linear warmup to lr, then cosine decay towards 0', () => {
  const o = { steps: 100, lr: 0.01, warmup: 10 };
  const r = Array.from({ length: o.steps }, (_, s) => learningRate(s, o));
  for (let s = 0; s < 10; s++) assert.ok(Math.abs(r[s] - (0.01 * (s + 1)) / 10) < 1e-15, `warmup step ${s}: ${r[s]}`);
  for (let s = 1; s < 10; s++) {
    assert.ok(Math.abs((r[s] - r[s - 1]) - 0.001) < 1e-12, 'warmup rises by the same amount each step');
  }
  assert.equal(r[10], 0.01, 'the first step after warmup trains at lr');
  for (let s = 11; s < 100; s++) assert.ok(r[s] < r[s - 1], `decay is strictly decreasing at ${s}`);
  assert.ok(Math.abs(r[55] - 0.005) < 1e-12, 'half way through the decay: lr / 2');
  assert.ok(r[99] > 0 && r[99] < 0.01 * 0.002, `the last step's rate is ~0 and positive: ${r[99]}`);
  // No warmup: starts at lr.
  assert.equal(learningRate(0, { steps: 10, lr: 1, warmup: 0 }), 1);
});

test('the steps train at the schedule: progress records the last rate', async () => {
  const model = tiny();
  const seen = [];
  const res = await train(model, task, { steps: 12, batch: 4, lr: 0.004, warmup: 4, evalEvery: 2, evalBatch: 8,
    onProgress: (p) => seen.push(p) });
  for (const p of res.history) assert.equal(p.lr, learningRate(p.step - 1, { steps: 12, lr: 0.004, warmup: 4 }));
  assert.equal(model.step, 12);
  assert.deepEqual(seen, res.history, 'onProgress gets every history entry');
  model.dispose();
});

test('progress at every evalEvery steps and at the end', async () => {
  const model = tiny();
  const res = await train(model, task, { steps: 23, batch: 4, lr: 3e-3, warmup: 3, evalEvery: 5, evalBatch: 16, seed: 3 });
  assert.deepEqual(res.history.map((p) => p.step), [5, 10, 15, 20, 23]);
  assert.equal(res.steps, 23);
  assert.equal(res.aborted, false);
  for (const p of res.history) {
    for (const k of ['loss', 'accuracy', 'evalLoss', 'evalAccuracy', 'evalBits', 'lr', 'msPerStep', 'elapsedMs']) {
      assert.equal(typeof p[k], 'number', `${k} is a number`);
      assert.ok(Number.isFinite(p[k]), `${k} is finite: ${p[k]}`);
    }
    assert.equal(p.evalBits, p.evalLoss / Math.LN2, 'evalBits: the held-out loss in bits');
    assert.ok(p.evalAccuracy >= 0 && p.evalAccuracy <= 1);
    assert.equal(p.alpha, undefined, 'no alpha for a non-mixture');
  }
  const last = res.history.at(-1);
  assert.deepEqual(res.final, { loss: last.loss, accuracy: last.accuracy, evalLoss: last.evalLoss, evalAccuracy: last.evalAccuracy, evalBits: last.evalBits });
  // The held-out set is fixed: evaluating it again by hand gives the last entry's numbers.
  const held = task.sample(16, 3, 'heldout');
  const ev = model.evaluate(held.tokens, held.targets);
  assert.equal(ev.loss, last.evalLoss);
  assert.equal(ev.accuracy, last.evalAccuracy);
  model.dispose();
});

test('defaults come from task.defaults', async () => {
  const small = { ...task, defaults: { ...task.defaults, steps: 6, batch: 2, lr: 1e-3, warmup: 2, evalEvery: 3, evalBatch: 4 } };
  const model = tiny();
  const res = await train(model, small);
  assert.equal(res.steps, 6);
  assert.deepEqual(res.history.map((p) => p.step), [3, 6]);
  model.dispose();
});

test('a mixture reports alpha of every layer and head', async () => {
  const model = tiny({ variant: 'mixture', options: { components: ['softmax', 'random'] }, layers: 2 });
  const res = await train(model, task, { steps: 4, batch: 2, evalEvery: 2, evalBatch: 4 });
  for (const p of res.history) {
    assert.equal(p.alpha.length, 2, 'layers');
    for (const layer of p.alpha) {
      assert.equal(layer.length, 2, 'heads');
      for (const a of layer) {
        assert.equal(a.length, 2, 'components');
        assert.ok(Math.abs(a[0] + a[1] - 1) < 1e-6);
      }
    }
  }
  model.dispose();
});

test('text: the held-out set is heldOutWindows() on a string, evalWindows() on the corpus', async () => {
  for (const [text, set] of [[tasks.text({ text: DEFAULT_TEXT, seqLen: 16 }), 'heldOutWindows'], [tasks.text({ seqLen: 16 }), 'evalWindows']]) {
    const model = lab.model({ variant: 'softmax', vocab: text.vocab, seqLen: 16, dModel: 16, heads: 2, layers: 1, dFF: 32, causal: true, seed: 1 });
    const res = await train(model, text, { steps: 3, batch: 2, evalEvery: 3 });
    const w = text[set]();
    assert.equal(res.history[0].evalLoss, model.evaluate(w.tokens, w.targets).loss, set);
    model.dispose();
  }
});

test('same seed -> the same history, bit for bit', async () => {
  const run = async (seed) => {
    const model = tiny();
    const res = await train(model, task, { steps: 15, batch: 4, lr: 3e-3, warmup: 3, evalEvery: 5, evalBatch: 8, seed });
    model.dispose();
    return res.history.map(({ step, loss, accuracy, evalLoss, evalAccuracy, lr }) => [step, loss, accuracy, evalLoss, evalAccuracy, lr]);
  };
  const a = await run(11), b = await run(11), c = await run(12);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c, 'another data seed trains differently');
});

test('abort: stops after the current step and resolves with aborted: true', async () => {
  const model = tiny();
  const controller = new AbortController();
  let stepsAtAbort = -1;
  const res = await train(model, task, { steps: 100000, batch: 2, evalEvery: 10, evalBatch: 4,
    signal: controller.signal,
    onProgress: (p) => { if (p.step === 30) { stepsAtAbort = p.step; controller.abort(); } } });
  assert.equal(res.aborted, true);
  assert.equal(stepsAtAbort, 30);
  assert.ok(res.steps === 30, `stopped right after the step during which it was aborted: ${res.steps}`);
  assert.equal(model.step, res.steps);
  assert.equal(res.history.at(-1).step, res.steps);

  // An abort from outside (a timer) reaches the loop through its yields.
  const other = new AbortController();
  setTimeout(() => other.abort(), 50);
  const res2 = await train(model, task, { steps: 1e6, batch: 2, evalEvery: 1000, evalBatch: 4, signal: other.signal });
  assert.equal(res2.aborted, true);
  assert.ok(res2.steps > 0 && res2.steps < 1e6, `steps ${res2.steps}`);
  assert.equal(res2.history.at(-1).step, res2.steps, 'the run ends with an evaluation of what it has');

  // Already aborted: no step at all, so no result; it rejects with the signal's reason, as fetch does.
  const stepsBefore = model.step;
  const reason = new Error('cancelled before the start');
  await assert.rejects(train(model, task, { steps: 10, batch: 2, evalBatch: 4, signal: AbortSignal.abort(reason) }), (err) => err === reason,
    'an already-aborted signal rejects with its reason');
  assert.equal(model.step, stepsBefore, 'an already-aborted run takes no step');
  model.dispose();
});

test('pause: the hook holds training between steps and does not change the numbers', async () => {
  const opts = { steps: 15, batch: 4, lr: 3e-3, warmup: 3, evalEvery: 5, evalBatch: 8, seed: 5 };
  const numbers = (res) => res.history.map(({ step, loss, accuracy, evalLoss, evalAccuracy, lr }) => [step, loss, accuracy, evalLoss, evalAccuracy, lr]);
  const plain = tiny();
  const a = await train(plain, task, opts);
  plain.dispose();

  // Held before every step, some of them for a while; released like a page's "step" button.
  const model = tiny();
  const seen = [];
  let waited = 0;
  const b = await train(model, task, { ...opts, pause: ({ step }) => {
    seen.push(step);
    assert.equal(model.step, step, 'the hook runs before the step it holds');
    if (step % 4 !== 1) return undefined; // no promise: no wait
    waited++;
    return new Promise((resolve) => setTimeout(resolve, 20));
  } });
  assert.deepEqual(seen, Array.from({ length: 15 }, (_, s) => s), 'called once before every step');
  assert.ok(waited >= 3);
  assert.deepEqual(numbers(b), numbers(a), 'the same history, bit for bit, with and without pauses');

  // Time spent paused is not training time: ms and elapsedMs leave it out. Two holds of 200 ms
  // each; the wall time of the whole call includes them, the reported times must not (a
  // regression that counted the pauses in both would still have elapsedMs <= ms).
  const timed = tiny();
  const PAUSE_MS = 200;
  let holds = 0;
  const wall0 = performance.now();
  const p = await train(timed, task, { ...opts, pause: ({ step }) => {
    if (step !== 2 && step !== 9) return undefined;
    holds++;
    return new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  } });
  const wall = performance.now() - wall0;
  timed.dispose();
  assert.equal(holds, 2);
  const totalPause = holds * PAUSE_MS;
  assert.ok(wall >= totalPause, `the call took ${wall} ms, with ${totalPause} ms of pauses`);
  assert.ok(p.ms < wall - 0.8 * totalPause, `result.ms ${p.ms} leaves out the ${totalPause} ms paused (wall ${wall} ms)`);
  assert.ok(p.history.at(-1).elapsedMs < wall - 0.8 * totalPause, `elapsedMs ${p.history.at(-1).elapsedMs} leaves out the pauses (wall ${wall} ms)`);
  assert.ok(p.history.at(-1).elapsedMs <= p.ms + 1e-9);
  assert.deepEqual(numbers(p), numbers(a), 'the same numbers with the long holds');

  // An abort while paused ends the run when the pause is released, before another step.
  const controller = new AbortController();
  let release;
  const held = train(model, task, { ...opts, steps: 100, signal: controller.signal, pause: ({ step }) =>
    (step === 7 ? new Promise((resolve) => { release = resolve; }) : undefined) });
  while (!release) await new Promise((r) => setTimeout(r, 5));
  controller.abort();
  release();
  const c = await held;
  assert.equal(c.aborted, true);
  assert.equal(c.steps, 7);

  // A hook that rejects ends train() with its error.
  await assert.rejects(train(model, task, { ...opts, pause: () => Promise.reject(new Error('stop here')) }), /stop here/);
  model.dispose();
});

test('bad arguments are AttnError VALUE naming the argument', async () => {
  const model = tiny();
  const cases = [
    [{ steps: 0 }, /steps/], [{ steps: 1.5 }, /steps/], [{ batch: 0 }, /batch/], [{ lr: -1 }, /lr/],
    [{ lr: NaN }, /lr/], [{ lr: '0.1' }, /lr/], [{ warmup: -1 }, /warmup/], [{ evalEvery: 0 }, /evalEvery/],
    [{ evalBatch: 0 }, /evalBatch/], [{ seed: -1 }, /seed/], [{ seed: 2 ** 32 }, /seed/],
    [{ onProgress: 3 }, /onProgress/], [{ signal: {} }, /signal/], [{ pause: true }, /pause/], [{ lr: 1e300 }, /lr.*float32/],
  ];
  for (const [opts, re] of cases) {
    await assert.rejects(train(model, task, opts), (err) => err.name === 'AttnError' && err.code === 'VALUE' && re.test(err.message),
      `options ${JSON.stringify(opts)}`);
  }
  await assert.rejects(train(null, task), (err) => err.code === 'VALUE' && /model/.test(err.message));
  await assert.rejects(train(model, {}), (err) => err.code === 'VALUE' && /task/.test(err.message));
  await assert.rejects(train(model, tasks.copy({ seqLen: 10, vocab: 6 })), (err) => err.code === 'VALUE' && /seqLen/.test(err.message));
  await assert.rejects(train(model, task, 'fast'), (err) => err.code === 'VALUE' && /options/.test(err.message));
  await assert.rejects(train(model, task, { stpes: 3 }), (err) => err.code === 'UNKNOWN' && /"stpes"/.test(err.message),
    'a misspelt option is UNKNOWN, as attention() options are');
  assert.equal(model.step, 0, 'a rejected call trains nothing');
  model.dispose();
});
