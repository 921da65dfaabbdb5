// The study's machinery (scripts/experiments.mjs, scripts/study/): the protocol's choice of a
// learning rate, the transfer path (a text model fine-tuned on verses through loadModel's
// resetOptimizer), and the whole pipeline end to end on a scaled-down run: every phase writes
// its records, a second run resumes with nothing left to do, and the report holds the tables.
//
//   node --experimental-wasm-relaxed-simd --test tests/study.test.mjs
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chooseLr, sweepState, summarize } from '../scripts/study/report.mjs';
import { LRS, LR_LADDER, jobKey } from '../scripts/study/plan.mjs';
import { binding } from './helpers.mjs';
import { tasks } from '../src/js/tasks.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

// A recorded sweep of one (task, variant): validation accuracy and loss per learning rate.
function sweep(task, variant, rows) {
  return sweepOnSeeds(task, variant, { 1001: rows }, { lrs: LRS, sweepSeeds: [1001] });
}

// The same on several seeds: rowsBySeed { seed: [[lr, accuracy, loss, error?], ...] }.
function sweepOnSeeds(task, variant, rowsBySeed, protocol) {
  const jobs = {};
  for (const [seed, rows] of Object.entries(rowsBySeed)) {
    for (const [lr, accuracy, loss, error] of rows) {
      const j = { kind: 'train', experiment: task === 'verses' ? 'transfer-sweep' : 'sweep', task: { name: task }, variant, seed: Number(seed), lr };
      j.key = jobKey(j);
      jobs[j.key] = error ? { ...j, error } : { ...j, validation: { accuracy, loss, bits: loss / Math.LN2 } };
    }
  }
  return { jobs, protocol };
}

describe('the learning rate the protocol chooses', () => {
  test('the highest validation accuracy; ties within 0.2 points go to the lower loss', () => {
    assert.equal(chooseLr(sweep('copy', 'softmax', [[3e-4, 0.5, 1], [1e-3, 0.9, 0.4], [3e-3, 0.95, 0.3], [1e-2, 0.2, 2]]), 'copy', 'softmax'), 3e-3);
    assert.equal(chooseLr(sweep('copy', 'softmax', [[3e-4, 1, 0.01], [1e-3, 1, 0.002], [3e-3, 0.999, 0.001], [1e-2, 0.2, 2]]), 'copy', 'softmax'), 3e-3,
      'a tie at 100 % (0.1 point apart) is broken by the loss');
    const edge = sweep('copy', 'softmax', [[3e-4, 1, 0.01], [1e-3, 0.99, 0.002], [3e-3, 0.1, 0.001], [1e-2, 0.2, 2]]);
    assert.equal(sweepState(edge, 'copy', 'softmax').best, 3e-4, 'one point apart is no tie');
  });
  test('a best rate at an edge of the sweep extends it outward before anything is chosen', () => {
    const low = sweep('copy', 'softmax', [[3e-4, 1, 0.01], [1e-3, 0.99, 0.002], [3e-3, 0.1, 0.001], [1e-2, 0.2, 2]]);
    assert.equal(chooseLr(low, 'copy', 'softmax'), null, 'the best, 3e-4, is the smallest rate swept');
    assert.equal(sweepState(low, 'copy', 'softmax').next, 1e-4);
    const lower = sweep('copy', 'softmax', [[1e-4, 0.5, 0.9], [3e-4, 1, 0.01], [1e-3, 0.99, 0.002], [3e-3, 0.1, 0.001], [1e-2, 0.2, 2]]);
    assert.equal(chooseLr(lower, 'copy', 'softmax'), 3e-4, 'inside the rates swept: chosen');
    const high = sweep('text', 'softmax', [[3e-4, 0, 1.9], [1e-3, 0, 1.6], [3e-3, 0, 1.5], [1e-2, 0, 1.45]]);
    assert.equal(sweepState(high, 'text', 'softmax').next, 3e-2);
    const top = sweep('text', 'softmax', [[3e-4, 0, 1.9], [1e-3, 0, 1.6], [3e-3, 0, 1.5], [1e-2, 0, 1.45], [3e-2, 0, 1.44], [1e-1, 0, 1.43]]);
    assert.equal(sweepState(top, 'text', 'softmax').next, 3e-1, 'the ladder goes on past 1e-1 (the old top)');
    const ends = LR_LADDER.slice(LR_LADDER.indexOf(LRS[0])).map((lr, i) => [lr, 0, 1.9 - 0.01 * i]);
    const end = sweep('text', 'softmax', ends);
    assert.equal(chooseLr(end, 'text', 'softmax'), LR_LADDER.at(-1), 'the end of the ladder: chosen even at the edge');
    assert.equal(sweepState(end, 'text', 'softmax').edge, true, 'and flagged');
    assert.equal(sweepState(lower, 'copy', 'softmax').edge, false, 'a rate inside the ladder is not flagged');
    assert.deepEqual(LR_LADDER.slice(LR_LADDER.indexOf(LRS[0]), LR_LADDER.indexOf(LRS[0]) + LRS.length), LRS, 'the base rates are consecutive rungs');
  });
  test('on two sweep seeds: the mean decides, and a rate counts only once both seeds have run it', () => {
    const protocol = { lrs: LRS, sweepSeeds: [1001], sweepSeedsByTask: { recall: [1001, 1002] } };
    // seed 1001 alone would choose 1e-3 (100 % against 95 %); seed 1002 fails at 1e-3, so the mean
    // (50 % against 95 %) chooses 3e-3
    const rows = {
      1001: [[3e-4, 0.5, 1], [1e-3, 1, 0.1], [3e-3, 0.95, 0.2], [1e-2, 0.2, 2]],
      1002: [[3e-4, 0.5, 1], [1e-3, 0, 2.1], [3e-3, 0.95, 0.2], [1e-2, 0.2, 2]],
    };
    assert.equal(chooseLr(sweepOnSeeds('recall', 'softmax', { 1001: rows[1001] }, { ...protocol, sweepSeedsByTask: { recall: [1001] } }), 'recall', 'softmax'), 1e-3);
    assert.equal(chooseLr(sweepOnSeeds('recall', 'softmax', rows, protocol), 'recall', 'softmax'), 3e-3);
    const half = sweepOnSeeds('recall', 'softmax', { 1001: rows[1001], 1002: rows[1002].slice(0, 3) }, protocol);
    assert.equal(chooseLr(half, 'recall', 'softmax'), null, 'seed 1002 has not run 1e-2');
    assert.equal(sweepState(half, 'recall', 'softmax').next, 1e-2);
    const other = sweepOnSeeds('recall', 'softmax', { ...rows, 1003: [[3e-3, 0, 3]] }, protocol);
    assert.equal(chooseLr(other, 'recall', 'softmax'), 3e-3, 'a run on a seed that is not a sweep seed is not counted');
    assert.equal(chooseLr(sweepOnSeeds('copy', 'softmax', { 1001: rows[1001] }, protocol), 'copy', 'softmax'), 1e-3,
      'a task not listed keeps the one list of sweep seeds');
  });
  test('the summary reports the seeds at the chosen rate, and the sweep as the mean over seeds', () => {
    const protocol = { lrs: LRS, sweepSeeds: [1001], sweepSeedsByTask: { recall: [1001, 1002] } };
    const result = sweepOnSeeds('recall', 'softmax', {
      1001: [[3e-4, 0.5, 1], [1e-3, 1, 0.1], [3e-3, 0.95, 0.2], [1e-2, 0.2, 2]],
      1002: [[3e-4, 0.3, 1], [1e-3, 0, 2.1], [3e-3, 0.85, 0.2], [1e-2, 0.2, 2]],
    }, protocol);
    result.tasks = { recall: { settings: {}, chance: { value: 0.125 } } };
    result.variants = ['softmax'];
    // reported runs at the old choice (1e-3) and at the new one (3e-3)
    for (const [lr, acc] of [[1e-3, 0.2], [3e-3, 1]]) for (const seed of [1, 2]) {
      const j = { kind: 'train', experiment: 'report', task: { name: 'recall' }, variant: 'softmax', seed, lr };
      j.key = jobKey(j);
      result.jobs[j.key] = { ...j, final: { evalAccuracy: acc }, history: [] };
    }
    const e = summarize(result).headline.recall.variants.softmax;
    assert.equal(e.lr, 3e-3);
    assert.deepEqual(e.values, [1, 1], 'only the runs at the chosen rate');
    assert.ok(Math.abs(e.sweep[3e-4] - 0.4) < 1e-12 && Math.abs(e.sweep[3e-3] - 0.9) < 1e-12, `mean per rate: ${JSON.stringify(e.sweep)}`);
    assert.deepEqual(e.sweepSeeds, [1001, 1002]);
  });
  test('text: the lowest validation loss; a failed run ranks last; an unfinished sweep chooses nothing', () => {
    assert.equal(chooseLr(sweep('text', 'linear', [[3e-4, 0, 1.9], [1e-3, 0, 1.6], [3e-3, 0, 1.5], [1e-2, 0, 1.7]]), 'text', 'linear'), 3e-3);
    assert.equal(sweepState(sweep('recall', 'taylor', [[3e-4, 0.1, 2], [1e-3, 0.1, 2.1], [3e-3, 0, 0, 'AttnError VALUE: diverged'], [1e-2, 0.1, 2.2]]), 'recall', 'taylor').best, 3e-4);
    assert.equal(chooseLr(sweep('copy', 'dense', [[3e-4, 0.5, 1], [1e-3, 0.9, 0.4], [3e-3, 0.95, 0.3]]), 'copy', 'dense'), null);
    assert.equal(chooseLr(sweep('verses', 'dense', [[3e-4, 0.2, 1], [1e-3, 0.3, 0.4], [3e-3, 0.25, 0.3], [1e-2, 0.1, 2]]), 'verses', 'dense'), 1e-3,
      'verses reads the transfer sweep');
  });
});

describe('the transfer path', () => {
  test('a model trained on text fine-tunes on verses unchanged: same vocabulary and length, fresh optimizer', async () => {
    const { init, tasks } = await binding();
    const lab = await init({ threads: 1, simd: true });
    const text = tasks.text(), verses = tasks.verses();
    assert.equal(verses.vocab, text.vocab);
    assert.equal(verses.seqLen, text.seqLen);
    const config = { variant: 'random', vocab: text.vocab, seqLen: text.seqLen, dModel: 16, heads: 2, layers: 1, dFF: 16, causal: true, seed: 3 };
    const pre = lab.model(config);
    await lab.train(pre, text, { steps: 4, batch: 2, evalBatch: 2, seed: 1 });
    const tuned = lab.loadModel(pre.save(), { resetOptimizer: true });
    assert.equal(tuned.step, 0);
    const r = await lab.train(tuned, verses, { steps: 3, batch: 4, evalBatch: 8, seed: 1 });
    assert.equal(r.steps, 3);
    assert.ok(Number.isFinite(r.final.evalLoss));
    const all = verses.allVerses('heldout');
    assert.equal(tuned.forward(all.tokens.subarray(0, 4 * verses.seqLen)).length, 4 * verses.seqLen * verses.vocab);
    for (const m of [pre, tuned]) m.dispose();
  });
});

describe('resuming a recorded study', () => {
  test('a job recorded at other settings than planned now runs again; one recorded as planned does not', { timeout: 300_000 }, () => {
    const out = mkdtempSync(path.join(tmpdir(), 'attnlab-study-'));
    try {
      const run = () => spawnSync(process.execPath, [path.join(ROOT, 'scripts/experiments.mjs'), '--out', out, '--steps-scale', '0.02',
        '--variants', 'softmax', '--tasks', 'copy', '--phases', 'timing', '--workers', '1'], { encoding: 'utf8', cwd: ROOT });
      const first = run();
      assert.equal(first.status, 0, `${first.stdout}\n${first.stderr}`);
      const file = path.join(out, 'results.json');
      const recorded = JSON.parse(readFileSync(file, 'utf8'));
      const [key] = Object.keys(recorded.jobs);
      const planned = recorded.jobs[key].settings;
      // as if recorded before the task's defaults changed (the key holds no settings)
      recorded.jobs[key].settings = { ...planned, warmup: planned.warmup + 7 };
      writeFileSync(file, JSON.stringify(recorded));
      const second = run();
      assert.equal(second.status, 0, second.stderr);
      assert.match(second.stdout, /phase timing: 1 jobs/, 'the job recorded at other settings runs again');
      assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')).jobs[key].settings, planned, 'and its record is replaced');
      const third = run();
      assert.match(third.stdout, /phase timing: nothing left to run/, 'recorded as planned: nothing to run');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('a run limited to some tasks', () => {
  test('records those tasks again and keeps the others as they were recorded (settings, sweep seeds)', { timeout: 300_000 }, () => {
    const out = mkdtempSync(path.join(tmpdir(), 'attnlab-study-'));
    try {
      const recordedRecall = { options: { pairs: 8 }, settings: { warmup: 300, steps: 2000 }, chance: { value: 0.125 } };
      writeFileSync(path.join(out, 'results.json'), JSON.stringify({ version: 2, jobs: {}, phaseMs: {},
        tasks: { recall: recordedRecall, copy: { settings: { warmup: -1 } } }, protocol: { lrs: LRS, sweepSeeds: [1001] } }));
      const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/experiments.mjs'), '--out', out, '--steps-scale', '0.02',
        '--variants', 'softmax', '--tasks', 'copy', '--phases', 'timing', '--workers', '1'], { encoding: 'utf8', cwd: ROOT });
      assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
      const result = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8'));
      assert.deepEqual(result.tasks.recall, recordedRecall, 'recall, not run, keeps its recorded settings');
      assert.deepEqual(result.protocol.sweepSeedsByTask.recall, [1001], 'and the sweep seeds it was recorded with');
      assert.equal(result.tasks.copy.settings.warmup, Math.round(tasks.copy().defaults.warmup * 0.02), 'copy, run, is recorded anew');
      assert.deepEqual(result.protocol.sweepSeedsByTask.copy, [1001, 1002], 'with the protocol\'s two sweep seeds');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('the pipeline, end to end at a fiftieth of the steps', () => {
  test('every phase records its jobs, a second run resumes with nothing to do, the report has its tables', { timeout: 900_000 }, () => {
    const out = mkdtempSync(path.join(tmpdir(), 'attnlab-study-'));
    try {
      const run = (...extra) => spawnSync(process.execPath, [path.join(ROOT, 'scripts/experiments.mjs'), '--out', out, '--steps-scale', '0.02',
        '--variants', 'softmax,random-frozen', '--tasks', 'copy,text', '--workers', '2', ...extra], { encoding: 'utf8', cwd: ROOT });
      const first = run('--phases', 'sweep,report,transfer,timing');
      assert.equal(first.status, 0, `${first.stdout}\n${first.stderr}`);
      const result = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8'));
      const jobs = Object.values(result.jobs);
      const count = (f) => jobs.filter(f).length;
      assert.ok(count((j) => j.experiment === 'sweep') >= 2 * 2 * LRS.length, 'sweep: 2 tasks x 2 variants x 4 rates, and more where an edge was best');
      for (const t of ['copy', 'text']) for (const v of ['softmax', 'random-frozen']) assert.notEqual(chooseLr(result, t, v), null, `${t} ${v}: the sweep completed`);
      assert.equal(count((j) => j.experiment === 'report'), 2 * 2 * 5, 'report: 5 seeds each');
      assert.equal(count((j) => j.experiment === 'transfer' && j.pretrained), 2 * 3, 'fine-tuned: 2 variants x 3 seeds');
      assert.equal(count((j) => j.experiment === 'timing'), 3 * 2, 'timing: copy, text and verses');
      assert.deepEqual(jobs.filter((j) => j.error).map((j) => j.error), [], 'no job failed');
      for (const j of jobs.filter((x) => x.experiment === 'sweep')) assert.ok(Number.isFinite(j.validation.loss), `${j.key}: a validation loss`);
      for (const j of jobs.filter((x) => x.experiment === 'report' && x.task.name === 'text')) {
        assert.ok(j.full.counted > 200_000, `${j.key}: every test character`);
        assert.equal(j.full.strided.counted, j.full.counted, `${j.key}: the full-context scoring predicts the same test characters, each once`);
        assert.equal(j.full.strided.stride, 32);
        assert.ok(Number.isFinite(j.full.strided.bits), `${j.key}: full-context bits/char`);
      }
      // verses is scored by balanced accuracy (the mean of its classes' accuracies), in the
      // sweep's validation and in the reported full test
      const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const versesMetrics = [...jobs.filter((x) => x.experiment === 'transfer').map((x) => [x.key, x.full]),
        ...jobs.filter((x) => x.experiment === 'transfer-sweep').map((x) => [x.key, x.validation])];
      assert.ok(versesMetrics.length >= 2 * 3 * 2, 'transfer: verses metrics recorded');
      for (const [key, m] of versesMetrics) {
        assert.equal(m.perClass.length, 8, `${key}: eight classes`);
        assert.ok(Math.abs(m.accuracy - mean(m.perClass)) < 1e-12, `${key}: accuracy ${m.accuracy} is the mean of the classes' ${mean(m.perClass)}`);
        assert.ok(m.plainAccuracy >= 0 && m.plainAccuracy <= 1, `${key}: the unbalanced accuracy kept apart`);
      }
      assert.ok(result.lastJob?.at && result.lastJob.commit === result.commit, 'the last job\'s time and commit are recorded');
      const again = run('--phases', 'sweep,report,transfer,timing');
      assert.equal(again.status, 0, again.stderr);
      const resumed = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8'));
      assert.deepEqual(resumed.lastJob, result.lastJob, 'a run with nothing to do leaves the last job\'s provenance as it was');
      assert.match(again.stdout, /phase sweep: nothing left to run/);
      assert.match(again.stdout, /phase report: nothing left to run/);
      const md = readFileSync(path.join(out, 'results.md'), 'utf8');
      assert.match(md, /Steps scaled by 0\.02/);
      for (const heading of ['## Protocol', '## copy', '## text', '## Transfer', '## Against the papers']) assert.ok(md.includes(heading), `results.md has ${heading}`);
      assert.match(md, /with full context \(stride 32\), mean/, 'the text table gives both scorings');
      for (const f of ['summary.json', 'curves-copy.svg', 'curves-text.svg', 'lr-sensitivity.svg', 'transfer.svg']) assert.ok(existsSync(path.join(out, f)), f);
      // the sweep charts name the seeds the sweeps ran on, read from the runs: copy sweeps on two, text on one
      assert.match(readFileSync(path.join(out, 'lr-sensitivity.svg'), 'utf8'), /copy: seeds 1001 and 1002/);
      assert.match(readFileSync(path.join(out, 'lr-sensitivity-text.svg'), 'utf8'), /per rate, sweep seed 1001;/);
      const summary = summarize(result);
      const copy = summary.headline.copy.variants.softmax;
      assert.equal(copy.n, 5);
      assert.ok(copy.wilson.lo <= copy.learned / 5 && copy.learned / 5 <= copy.wilson.hi);
      assert.equal(copy.lr, chooseLr(result, 'copy', 'softmax'));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
