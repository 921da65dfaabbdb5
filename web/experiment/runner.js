// Runs an experiment: one worker (web/experiment-worker.js) per run — a variant at one seed; an
// experiment of N seeds has N runs of each variant — at most navigator.hardwareConcurrency
// training at once, the rest queued (each seed's variants in the order they were picked).
// Play / pause / step / cancel / reset act on every run. A run's record:
//   { key, name (the variant), seed, lr, first (the first seed of its variant),
//     status: 'queued' | 'loading' | 'training' | 'paused' | 'done' | 'cancelled' | 'error',
//     history: [lab.train progress entries], result, error, parameterCount, build, client,
//     untrained: true when it was cancelled before its first training step (no results to show) }
// onChange(what) is called after every change ('progress', 'status', 'reset').

import { modelConfig, trainOptions, runList, lrOf } from './config.js';
import { WorkerClient } from '../worker-client.js';

const WORKER_URL = new URL('../experiment-worker.js', import.meta.url);

/** The page's side of one experiment worker (worker-client.js's protocol): onEvent(message) gets its events. */
export class TrainClient extends WorkerClient {
  constructor(onEvent) {
    super(WORKER_URL, { onEvent, what: 'the training worker' });
  }
}

export const maxParallel = () => Math.max(1, navigator.hardwareConcurrency || 2);

export class ExperimentRunner {
  constructor(onChange) {
    this.onChange = onChange;
    this.runs = [];
    this.cfg = null;
    this.task = null;
    this.paused = false;
    this.startedAt = 0;
    this.peakRunning = 0; // the most workers training at once (the tests check the parallelism)
  }

  get active() {
    return this.runs.some((r) => ['queued', 'loading', 'training', 'paused'].includes(r.status));
  }

  /** Runs with a model that trained at least one step (a run cancelled while loading has none). */
  get trained() {
    return this.runs.filter((r) => r.client && (r.status === 'done' || r.status === 'cancelled') && !r.untrained && r.history.length);
  }

  /** Starts cfg on `task` (the config's task, made by the caller: config.js's makeTask). */
  start(cfg, task) {
    this.reset();
    this.cfg = structuredClone(cfg);
    this.task = task;
    this.paused = false;
    this.startedAt = performance.now();
    this.finishedAt = 0;
    this.runs = runList(cfg).map(({ name, seed }) => ({
      key: `${name}@${seed}`, name, seed, lr: lrOf(cfg, name), first: seed === cfg.seed,
      status: 'queued', history: [], result: null, error: null, parameterCount: null, build: null, client: null, untrained: false,
    }));
    this.onChange('status');
    this.pump();
  }

  /** Starts queued runs while there are free slots (none while paused). */
  pump() {
    if (this.paused) return;
    let running = this.runs.filter((r) => r.status === 'loading' || r.status === 'training').length;
    for (const run of this.runs) {
      if (running >= maxParallel()) break;
      if (run.status !== 'queued') continue;
      running++;
      this.launch(run);
    }
    this.peakRunning = Math.max(this.peakRunning, running);
  }

  launch(run) {
    run.status = 'loading';
    const config = modelConfig(this.cfg, this.task, run.name, run.seed);
    run.client = new TrainClient((m) => {
      if (m.type === 'started') {
        run.parameterCount = m.parameterCount;
        run.build = m.build;
        if (run.status === 'loading') run.status = this.paused ? 'paused' : 'training';
        if (this.paused) run.client.control('pause');
        this.onChange('status');
      } else if (m.type === 'progress') {
        // step 0 would be an evaluation of an untrained model: no result of training, not shown
        if (m.point.step === 0) return;
        run.history.push(m.point);
        // a "step" ends with the worker holding again
        if (run.stepping) {
          run.stepping = false;
          run.status = 'paused';
        }
        this.onChange('progress');
      }
    });
    if (this.paused) run.client.control('pause');
    const taskSpec = { name: this.cfg.task, options: this.task.options };
    run.client.call('train', { build: this.cfg.build, config, task: taskSpec, train: trainOptions(this.cfg, run.name, run.seed) }).then(
      (m) => {
        run.result = m.result;
        run.status = m.result.aborted ? 'cancelled' : 'done';
        if (m.result.steps === 0) {
          // cancelled while loading: nothing was trained, so there is nothing to show
          run.untrained = true;
          run.history = [];
        }
        this.noteEnd();
        this.onChange('status');
        this.pump();
      },
      (err) => {
        if (err.code === 'CANCELLED') return;
        run.error = { code: err.code, message: err.message };
        run.status = 'error';
        run.client.terminate();
        run.client = null;
        this.noteEnd();
        this.onChange('status');
        this.pump();
      },
    );
    this.onChange('status');
  }

  noteEnd() {
    if (!this.active) this.finishedAt = performance.now();
  }

  pause() {
    this.paused = true;
    for (const r of this.runs) {
      if (r.status === 'training' || r.status === 'loading') {
        r.client.control('pause');
        if (r.status === 'training') r.status = 'paused';
      }
    }
    this.onChange('status');
  }

  play() {
    this.paused = false;
    for (const r of this.runs) {
      // a stepping run (Step pressed, its evaluation not yet in) holds again at that evaluation
      // unless it is told to resume too
      if (r.status === 'paused' || r.stepping) {
        r.stepping = false;
        r.client.control('resume');
        r.status = 'training';
      }
    }
    this.pump();
    this.onChange('status');
  }

  /** Every paused run trains to its next evaluation, then holds again. */
  step() {
    if (!this.paused) this.pause();
    for (const r of this.runs) {
      if (r.status !== 'paused') continue;
      r.stepping = true;
      r.status = 'training';
      r.client.control('step');
    }
    this.onChange('status');
  }

  /** Stops every run after its current step (they keep what they learned); drops the queue. */
  cancel() {
    for (const r of this.runs) {
      if (r.status === 'queued') Object.assign(r, { status: 'cancelled', untrained: true });
      else if (r.status === 'training' || r.status === 'paused' || r.status === 'loading') r.client.control('abort');
    }
    this.paused = false;
    this.noteEnd();
    this.onChange('status');
  }

  /**
   * Forgets the runs: a finished run's worker disposes of its model and WebAssembly instance,
   * then ends; a run still training is ended at once (its memory goes with the worker).
   */
  reset() {
    for (const r of this.runs) {
      const client = r.client;
      if (!client) continue;
      if (r.status === 'done' || r.status === 'cancelled') client.call('dispose').catch(() => {}).finally(() => client.terminate());
      else client.terminate();
    }
    this.runs = [];
    this.paused = false;
    this.peakRunning = 0;
    this.onChange('reset');
  }

  /**
   * Progress over all runs: { steps (each run's), runs, done (runs that ended), stepsPerSec,
   * etaMs, taken: [steps of each run] }.
   * A cancelled or failed run counts the steps it trained, not its total.
   */
  progress() {
    const steps = this.cfg?.train.steps ?? 0;
    let left = 0, rate = 0;
    const taken = [];
    for (const r of this.runs) {
      const last = r.history.at(-1);
      const t = r.status === 'done' ? steps : r.result?.steps ?? last?.step ?? 0;
      taken.push(t);
      if (!['done', 'cancelled', 'error'].includes(r.status)) {
        left += steps - t;
      }
      if ((r.status === 'training') && last?.msPerStep > 0) rate += 1000 / last.msPerStep;
    }
    // queued runs wait for a slot: time left ≈ steps left / the combined rate of the running ones
    return { steps, runs: this.runs.length, taken, stepsPerSec: rate, etaMs: rate > 0 ? (left / rate) * 1000 : NaN,
      done: taken.reduce((a, b) => a + b, 0), total: steps * this.runs.length };
  }
}
