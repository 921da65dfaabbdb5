// recall-pilot.mjs — pilot runs of SOFTMAX on tasks.recall, one training at a time on one thread,
// to choose recall's defaults and to find what decides whether softmax learns it (findings:
// experiments/pilots/recall.md). Never used to tune by how another variant does.
//
//   node experiments/pilots/recall-pilot.mjs --name <label> [--layout sparse|dense|dense-rep]
//        [--pairs 4] [--seqLen 24] [--vocab 64] [--queries Q] [--supervise S]
//        [--dModel 64] [--heads 2] [--layers 2] [--dFF 256] [--lr 1e-3] [--warmup 300]
//        [--steps 3000] [--batch 32] [--evalEvery 50] [--seeds 101,102,103] [--stop 0.9]
//        [--out experiments/pilots/recall-screen.json]
//   node experiments/pilots/recall-pilot.mjs --name defaults --defaults 1 --stop 0 --seeds 1,2,3,4,5
//        trains tasks.recall() with its own defaults (task.defaults): what the experiments run
//
// Seed s seeds both the model and the training data (as scripts/experiments.mjs does). The
// schedule is train()'s (linear warmup, then cosine over --steps). With --stop A a run ends at the
// first evaluation whose held-out accuracy is >= A (what happens before that does not depend on
// where the run stops, since the schedule is fixed by --steps); --stop 0 trains every step.
// Layouts: 'sparse' and 'dense' are tasks.recall's. Two more exist only here, to test hypotheses:
//   dense-rep    the dense layout with the query keys drawn WITH replacement (Q = ceil((seqLen -
//                2P) / 2) may exceed P; a repeated key can copy the earlier query's value);
//   --supervise S  keeps the targets of S query keys per sequence (chosen at random) and sets
//                the others to -1: the same inputs with less supervision.
// Each run appends one record per seed to --out (a JSON array): the settings, the step and the
// training time (trainMs: the sum of the step times, evaluations excluded) at which held-out
// accuracy first reached 90 % (null if never), the final accuracy, and the load average.
import os from 'node:os';
import { execSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { init } = await import(path.join(root, 'dist', 'attnlab.js'));
const { train } = await import(path.join(root, 'src', 'js', 'train.js'));
const { tasks } = await import(path.join(root, 'src', 'js', 'tasks.js'));
const { mulberry32, streamSeed } = await import(path.join(root, 'src', 'js', 'prng.js'));

const NUM = ['defaults', 'pairs', 'seqLen', 'vocab', 'queries', 'supervise', 'dModel', 'heads', 'layers', 'dFF', 'lr', 'warmup', 'steps', 'batch', 'evalEvery', 'stop'];
function parseArgs(argv) {
  const a = { name: 'pilot', layout: 'sparse', pairs: 4, vocab: 64, dModel: 64, heads: 2, layers: 2, dFF: 256, lr: 1e-3,
    warmup: 300, steps: 3000, batch: 32, evalEvery: 50, seeds: [101, 102, 103], stop: 0.9, out: 'experiments/pilots/recall-screen.json' };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, ''), value = argv[i + 1];
    if (value === undefined) throw new Error(`--${key} needs a value`);
    if (key === 'seeds') a.seeds = value.split(',').map(Number);
    else if (NUM.includes(key)) a[key] = Number(value);
    else if (['name', 'layout', 'out'].includes(key)) a[key] = value;
    else throw new Error(`unknown argument --${key}`);
  }
  if (a.defaults) {
    // tasks.recall()'s own options and defaults, nothing from the command line but the seeds,
    // evalEvery, stop and out
    const t = tasks.recall();
    Object.assign(a, { layout: t.options.layout, pairs: t.options.pairs, seqLen: t.seqLen, vocab: t.vocab, queries: t.options.queries }, t.defaults);
  }
  return a;
}

/** The task of the settings: tasks.recall, or a pilot-only variation of it (see the top). */
function makeTask(a) {
  const opts = { pairs: a.pairs, vocab: a.vocab, layout: a.layout === 'dense-rep' ? 'dense' : a.layout };
  if (a.seqLen) opts.seqLen = a.seqLen;
  if (a.queries) opts.queries = a.queries;
  if (a.layout === 'dense-rep') {
    // the dense layout allows seqLen <= 4P only; with replacement any seqLen >= 2P + 1 works
    const P = a.pairs, seqLen = a.seqLen, Q = Math.ceil((seqLen - 2 * P) / 2);
    const base = tasks.recall({ pairs: P, vocab: a.vocab, layout: 'dense', seqLen: Math.min(seqLen, 4 * P) });
    const K = base.layout.keys[1];
    return {
      ...base, seqLen, name: 'recall', options: { ...base.options, seqLen, queries: Q, layout: 'dense-rep' },
      sample(batch, seed, split = 'train') {
        const rnd = mulberry32(streamSeed(seed, `recall-rep:${split}`));
        const tokens = new Int32Array(batch * seqLen), targets = new Int32Array(batch * seqLen).fill(-1);
        const choose = (k, m) => { const x = Array.from({ length: k }, (_, i) => i); for (let i = 0; i < m; i++) { const j = i + Math.floor(rnd() * (k - i)); [x[i], x[j]] = [x[j], x[i]]; } return x.slice(0, m); };
        for (let s = 0; s < batch; s++) {
          const o = s * seqLen;
          const ks = choose(K, P).map((k) => k + 1), vs = choose(a.vocab - 1 - K, P).map((v) => v + K + 1);
          for (let p = 0; p < P; p++) { tokens[o + 2 * p] = ks[p]; tokens[o + 2 * p + 1] = vs[p]; }
          for (let j = 0; j < Q; j++) {
            const q = Math.floor(rnd() * P), t = 2 * P + 2 * j;
            tokens[o + t] = ks[q]; targets[o + t] = vs[q];
            if (t + 1 < seqLen) tokens[o + t + 1] = vs[q];
          }
        }
        return { tokens, targets };
      },
    };
  }
  return tasks.recall(opts);
}

/** Keeps the targets of S query positions per sequence, chosen at random; the others become -1. */
function supervised(task, S) {
  if (!S) return task;
  return {
    ...task,
    sample(batch, seed, split = 'train') {
      const r = task.sample(batch, seed, split);
      const rnd = mulberry32(streamSeed(seed, `supervise:${split}`));
      for (let s = 0; s < batch; s++) {
        const at = [];
        for (let i = 0; i < task.seqLen; i++) if (r.targets[s * task.seqLen + i] >= 0) at.push(i);
        for (let i = at.length - 1; i > 0; i--) { const j = Math.floor(rnd() * (i + 1)); [at[i], at[j]] = [at[j], at[i]]; }
        for (const i of at.slice(S)) r.targets[s * task.seqLen + i] = -1;
      }
      return r;
    },
  };
}

const a = parseArgs(process.argv.slice(2));
const task = supervised(makeTask(a), a.supervise);
const lab = await init({ threads: 1, simd: true });
let commit = null;
try { commit = execSync('git rev-parse --short HEAD', { cwd: root }).toString().trim(); } catch {}
const outPath = path.resolve(root, a.out);
const records = existsSync(outPath) ? JSON.parse(readFileSync(outPath, 'utf8')) : [];

for (const seed of a.seeds) {
  const model = lab.model({ variant: 'softmax', vocab: task.vocab, seqLen: task.seqLen, dModel: a.dModel, heads: a.heads,
    layers: a.layers, dFF: a.dFF, causal: true, seed });
  const ac = new AbortController();
  const history = [];
  let cum = 0, prev = 0, at90 = null;
  const loadBefore = os.loadavg()[0];
  const res = await train(model, task, {
    steps: a.steps, batch: a.batch, lr: a.lr, warmup: a.warmup, evalEvery: a.evalEvery, seed,
    signal: ac.signal,
    onProgress: (p) => {
      cum += p.msPerStep * (p.step - prev); prev = p.step;
      history.push({ step: p.step, loss: +p.loss.toFixed(4), evalLoss: +p.evalLoss.toFixed(4), evalAccuracy: +p.evalAccuracy.toFixed(4) });
      if (at90 === null && p.evalAccuracy >= 0.9) at90 = { step: p.step, trainMs: Math.round(cum), elapsedMs: Math.round(p.elapsedMs) };
      if (a.stop > 0 && p.evalAccuracy >= a.stop) ac.abort();
    },
  });
  model.dispose();
  const rec = {
    name: a.name, seed, task: task.options, supervise: a.supervise ?? null,
    model: { dModel: a.dModel, heads: a.heads, layers: a.layers, dFF: a.dFF },
    train: { steps: a.steps, batch: a.batch, lr: a.lr, warmup: a.warmup, evalEvery: a.evalEvery, stop: a.stop },
    at90, stepsRun: res.steps, final: { evalAccuracy: +res.final.evalAccuracy.toFixed(4), evalLoss: +res.final.evalLoss.toFixed(4) },
    trainMs: Math.round(res.trainMs), ms: Math.round(res.ms), msPerStep: +(res.trainMs / res.steps).toFixed(2),
    load: [+loadBefore.toFixed(2), +os.loadavg()[0].toFixed(2)], build: lab.build, commit, date: new Date().toISOString(),
    history,
  };
  records.push(rec);
  writeFileSync(outPath, JSON.stringify(records, null, 1) + '\n');
  console.log(`${a.name} seed ${seed}: 90 % ${at90 ? `at step ${at90.step} (${(at90.trainMs / 1000).toFixed(1)} s)` : 'never'}; ` +
    `final ${(rec.final.evalAccuracy * 100).toFixed(1)} % after ${res.steps} steps, ${(res.trainMs / 1000).toFixed(1)} s train, ` +
    `${rec.msPerStep} ms/step, load ${rec.load.join(' -> ')}`);
}
