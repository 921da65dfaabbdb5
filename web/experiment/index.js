// The Experiment view: presets (the recorded study's experiments), set up an experiment, train
// every run live in workers of its own, verdicts beside the recorded study's, see what each
// model learned, generate text, share and export. This module wires the panels together; each
// panel is its own module:
//
//   config.js     the config, its URL-hash form, the presets, lab.model / lab.train arguments
//   setup.js      the form and the presets      runner.js   workers, queue, play / pause / step / cancel / reset
//   curves.js     learning curves (svg-chart.js draws; colors.js picks colours per theme)
//   verdicts.js   learned / not learned / stopped, beside the recorded study (study.js reads experiments/summary.json)
//   inspect.js    predictions and attention maps (token-map.js)   alpha.js   mixture α over training
//   generate.js   text generation and ms per token (long-generate.js: to 2048 positions)
//   answers.js    the two short answers, the recorded numbers, all the numbers (markdown.js)
//   corpus.js     the text task's corpus, fetched when it is chosen
//   share.js      export JSON / SVG / PNG, copy as code

import { $, el, copyText, toast } from '../dom.js';
import { on } from '../store.js';
import {
  useLabVariants, encodeConfig, decodeConfig, defaultConfig, labelOf, BUILD_LABELS, presetConfig, makeTask, configProblem, runList, textLeftOut, textOf, modelConfig, PRESET_BY_ID,
  PRESET_QUESTIONS, presetDifferences, VARIANT_SPECS,
} from './config.js';
import { SetupForm } from './setup.js';
import { ExperimentRunner, TrainClient, maxParallel } from './runner.js';
import { CurvesPanel } from './curves.js';
import { InspectPanel } from './inspect.js';
import { renderAlpha } from './alpha.js';
import { GeneratePanel } from './generate.js';
import { renderAnswers, renderStudyAnswers } from './answers.js';
import { renderVerdicts } from './verdicts.js';
import { loadSummary, summaryNow, headlineOf, chanceOf, recordedMsPerStep } from './study.js';
import { ensureCorpus, loadedCorpus, onCorpus, corpusStatus } from './corpus.js';
import { exportJson, exportCurves, codeSnippet, runJson } from './share.js';

let cfg = defaultConfig();
let problem = null; // what is wrong with cfg ({ field, message }), or null
let probeProblem = null; // what the binding said of cfg's models (the probe), or null
let form, runner, curves, inspect, generate;
let renderQueued = false;
let wasActive = false;
let inspected = Promise.resolve();
let onHashChange = () => {};
let shown = false;
let starting = false; // Train pressed: the corpus is on its way

const fmtTime = (ms) => (!Number.isFinite(ms) ? '–' : ms < 60000 ? `${Math.max(1, Math.ceil(ms / 1000))} s` : `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`);

/** The x.* part of the hash: the running config while runs train (the form is locked then). */
export const experimentHash = () => `view=experiment&${encodeConfig(runner?.active ? runner.cfg : cfg)}`;

/** The view's keys for Explore's link: '' while the config is the default one (a short link). */
export function experimentKeys() {
  const keys = encodeConfig(runner?.active ? runner.cfg : cfg);
  return keys === encodeConfig(defaultConfig()) ? '' : keys;
}

/** The task of the form's config, when it can be made now (not a corpus still on its way). */
function formTask() {
  try {
    return makeTask(cfg, loadedCorpus());
  } catch {
    return null;
  }
}

function updateButtons() {
  const active = runner.active;
  const paused = runner.paused && active;
  const focused = document.activeElement;
  $('#x-play').textContent = paused ? '▶ Resume' : starting ? 'Fetching the corpus…' : '▶ Train';
  $('#x-play').disabled = starting || (active && !paused) || (!active && !!(problem || probeProblem));
  $('#x-pause').disabled = !active || paused;
  $('#x-step').disabled = !active;
  $('#x-cancel').disabled = !active;
  $('#x-reset').disabled = !runner.runs.length;
  for (const id of ['#x-export-json', '#x-export-svg', '#x-export-png']) $(id).disabled = !runner.runs.some((r) => r.history.length);
  // a button pressed from the keyboard must not drop the focus to the page when it disables itself
  if (focused?.disabled && focused.closest('.x-actions')) {
    const next = ['#x-pause', '#x-play', '#x-cancel', '#x-reset'].map((s) => $(s)).find((b) => !b.disabled);
    (next ?? $('#x-run')).focus();
  }
  form.setLocked(active || starting);
  $('#x-lock-note').hidden = !(active || starting);
  onHashChange();
}

/**
 * The header's build badge in this view (view.js shows it instead of Explore's): the build the
 * form has chosen, and the build of the runs shown when they were trained on another.
 */
function renderBadge() {
  const badge = $('#x-build-badge');
  const chosen = cfg.build;
  const ran = runner.runs.length ? runner.cfg.build : chosen;
  badge.textContent = ran === chosen ? `${BUILD_LABELS[chosen]} build` : `${BUILD_LABELS[chosen]} build (runs shown: ${BUILD_LABELS[ran]})`;
  badge.dataset.build = chosen;
}

const plural = (n, w) => `${n} ${w}${n === 1 ? '' : 's'}`;

function renderProgress() {
  const p = runner.progress();
  const bar = $('#x-progress');
  bar.max = Math.max(1, p.total);
  bar.value = p.done;
  if (!runner.runs.length) {
    $('#x-status').textContent = `Up to ${maxParallel()} runs train at once (one worker each, as many as this machine has cores); the rest wait their turn.`;
    return;
  }
  const counts = {};
  const word = (r) => (r.status === 'error' ? 'failed' : r.status);
  for (const r of runner.runs) counts[word(r)] = (counts[word(r)] ?? 0) + 1;
  // where the runs that train now are ("2 training (step 320)"); queued runs have no step yet
  const stepsOf = (status) => {
    const at = runner.runs.map((r, i) => (r.status === status ? p.taken[i] : null)).filter((x) => x != null);
    const lo = Math.min(...at), hi = Math.max(...at);
    return at.length ? ` (step ${lo === hi ? lo : `${lo}–${hi}`})` : '';
  };
  const parts = Object.entries(counts).map(([s, n]) => `${n} ${s}${s === 'training' || s === 'paused' ? stepsOf(s) : ''}`);
  // each run trains its own steps: say so, never their sum as if it were one run's
  const head = `${plural(p.runs, 'run')} × ${p.steps} steps each`;
  const stopped = runner.runs.map((r, i) => (r.status === 'cancelled' ? p.taken[i] : null)).filter((x) => x != null);
  const state = !runner.active
    ? `ended after ${fmtTime((runner.finishedAt || performance.now()) - runner.startedAt)}${stopped.length ? ` · cancelled at step ${stopped.join(', ')}` : ''}`
    : runner.paused ? 'paused'
      : `${p.stepsPerSec ? `${p.stepsPerSec.toFixed(0)} steps/s in all` : 'starting'} · about ${fmtTime(p.etaMs)} left`;
  $('#x-status').textContent = `${head} · ${parts.join(', ')} · ${state}`;
}

/** Runs that could not start or failed: their AttnError, once per distinct error. */
function renderErrors() {
  const failed = runner.runs.filter((r) => r.error);
  const groups = new Map();
  for (const r of failed) {
    const k = `${r.error.code} ${r.error.message}`;
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(runner.cfg.seeds > 1 ? `${labelOf(r.name)} (seed ${r.seed})` : labelOf(r.name));
  }
  const box = $('#x-run-error');
  box.hidden = !failed.length;
  box.textContent = [...groups].map(([k, who]) => `${who.join(', ')}: ${k}`).join('\n');
}

/** The chance level of the runs' task (or the form's, before any run). */
function chanceNow() {
  // the runs' task while there are runs; after a reset, the form's (the runs' may be another text)
  const task = (runner.runs.length ? runner.task : null) ?? formTask();
  return task ? chanceOf(task) : null;
}

function render() {
  renderQueued = false;
  updateButtons();
  renderBadge();
  renderProgress();
  renderErrors();
  const chance = chanceNow();
  curves.render(runner.runs, runner.runs.length ? runner.cfg : cfg, chance);
  renderVerdicts($('#x-verdicts'), runner.cfg, runner.task, runner.runs, chance);
  renderAlpha($('#x-alpha'), runner.runs);
  const active = runner.active;
  if (wasActive && !active) afterTraining();
  wasActive = active;
}

function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(render);
}

/** Once every run has ended: read the trained models (each variant's first seed), offer generation, compare with the record. */
function afterTraining() {
  const trained = runner.trained.filter((r) => r.first);
  generate.setRuns(trained, runner.task, runner.cfg);
  inspected = trained.length ? inspect.load(trained, runner.task) : Promise.resolve(inspect.clear('No model finished training.'));
  renderAnswers($('#x-answers'), runner.cfg, runner.runs);
}

// ---- the estimate: how long the config takes here, measured before it starts

let probeClients = []; // as many as will train at once: the probe times steps under their contention
let probeTimer = null;
let probeSeq = 0;
let probesInFlight = 0;
const probeCache = new Map(); // a model's shape -> { msPerStep, evalMs } | { error }

function probeKey(name, task, lanes, evalSeqs) {
  // the task's knobs, not its options (the corpus's would put 4 MB into the key)
  return JSON.stringify([name, cfg.model, cfg.train.batch, cfg.build, cfg.task, cfg.knobs, cfg.source, typeof task.sample === 'function', task.vocab, task.seqLen, lanes, evalSeqs]);
}

function stopProbes() {
  for (const c of probeClients) c.terminate();
  probeClients = [];
}

/** How many held-out sequences a run evaluates each time (train.js: evalWindows, heldOutWindows or evalBatch). */
function evalSeqsOf(task) {
  if (!task) return cfg.task === 'text' ? 128 : cfg.train.evalBatch; // the corpus on its way: its 128 windows
  const set = typeof task.evalWindows === 'function' ? task.evalWindows() : typeof task.heldOutWindows === 'function' ? task.heldOutWindows() : null;
  return set ? set.tokens.length / task.seqLen : cfg.train.evalBatch;
}

/** Measures (in workers) a few training steps of each variant of the form's config, then says how long the whole run takes here. */
function scheduleEstimate() {
  clearTimeout(probeTimer);
  probeTimer = setTimeout(estimate, 350);
}

async function estimate() {
  probeTimer = null;
  if (!shown || runner.active) return;
  const box = $('#x-estimate');
  delete box.dataset.ms; // set again once this config is measured
  if (problem) {
    box.textContent = '';
    return;
  }
  const seq = ++probeSeq;
  const task = formTask();
  // the corpus on its way: its shape is known (seqLen; 63 characters give the vocabulary's size)
  const shape = task ?? { vocab: 64, seqLen: cfg.knobs.seqLen, options: {} };
  const runs = runList(cfg);
  const names = [...new Set(runs.map((r) => r.name))];
  const lanes = Math.min(maxParallel(), runs.length);
  const evalSeqs = evalSeqsOf(task);
  const key = (n) => probeKey(n, shape, lanes, evalSeqs);
  const todo = names.filter((n) => !probeCache.has(key(n)));
  if (todo.length) {
    const recorded = names.map((n) => recordedMsPerStep(cfg.task, n));
    box.textContent = recorded.every((x) => x != null) ? `${describeEstimate(runs, Object.fromEntries(names.map((n, i) => [n, { msPerStep: recorded[i] }])), 'from the recorded study\'s ms per step, on its machine')}; measuring here…` : 'Estimating how long this takes here: timing a few training steps of each variant…';
    while (probeClients.length < lanes) probeClients.push(new TrainClient(() => {}));
    try {
      const probeRuns = todo.map((name) => ({ name, config: modelConfig(cfg, { vocab: shape.vocab, seqLen: shape.seqLen, causal: true }, name) }));
      // the run's own task when it can be made now (not the corpus on its way): its sampling and building are timed too
      const msg = { build: cfg.build, task: task ? { name: cfg.task, options: task.options } : { vocab: shape.vocab, seqLen: shape.seqLen }, batch: cfg.train.batch, runs: probeRuns, steps: 3, evalSeqs };
      probesInFlight++;
      // every lane times every variant at once, as the runs will share the cores
      const answers = await Promise.all(probeClients.slice(0, lanes).map((c) => c.call('probe', msg))).finally(() => probesInFlight--);
      const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
      todo.forEach((name, i) => {
        const each = answers.map((a) => a.results[i]);
        const failed = each.find((r) => r.error);
        probeCache.set(key(name), failed ? { error: failed.error } : { msPerStep: mean(each.map((r) => r.msPerStep)), evalMs: mean(each.map((r) => r.evalMs)), startMs: mean(each.map((r) => r.startMs)) });
      });
    } catch (err) {
      if (seq === probeSeq) box.textContent = `Could not time a training step here (${err.message}).`;
      stopProbes();
      return;
    }
  }
  if (seq !== probeSeq || runner.active) return;
  const measured = Object.fromEntries(names.map((n) => [n, probeCache.get(key(n))]));
  const bad = names.filter((n) => measured[n]?.error);
  probeProblem = bad.length ? { field: null, message: bad.map((n) => `${labelOf(n)}: the binding refuses this model: ${measured[n].error.code} ${measured[n].error.message}`).join('; ') } : null;
  if (probeProblem) {
    $('#x-config-error').hidden = false;
    $('#x-config-error').textContent = probeProblem.message;
    box.textContent = '';
  } else {
    box.textContent = `${describeEstimate(runs, measured, `measured: a few training steps and an evaluation of each variant, ${lanes} at once, on this machine`)}.`;
    box.dataset.ms = String(estimateMs(runs, measured));
  }
  updateButtons();
}

/** Milliseconds a run's worker takes to start and load its binding (its task and model are measured). */
const START_MS = 300;

/**
 * How long the runs take, scheduled as the runner does (the queue in order, maxParallel at
 * once): each run's start, its steps at its variant's ms per step, and its evaluations (measured;
 * from the recorded study, which has no evaluation time, about a third of a training step per
 * sequence). measured: { name: { msPerStep, evalMs? } }.
 */
function estimateMs(runs, measured) {
  const t = cfg.train;
  const evals = Math.ceil(t.steps / t.evalEvery);
  const evalMs = (name) => measured[name].evalMs ?? measured[name].msPerStep * (Math.min(t.evalBatch, 128 * 4) / t.batch) * 0.35;
  const lanes = new Array(Math.min(maxParallel(), runs.length)).fill(0);
  for (const r of runs) {
    const i = lanes.indexOf(Math.min(...lanes));
    lanes[i] += START_MS + (measured[r.name].startMs ?? 100) + measured[r.name].msPerStep * t.steps + evals * evalMs(r.name);
  }
  return Math.max(...lanes);
}

/** "Before you start: 5 runs × 400 steps, 2 at a time: about 45 s here (how)". */
function describeEstimate(runs, measured, how) {
  const P = maxParallel();
  return `Before you start: ${plural(runs.length, 'run')} × ${cfg.train.steps} steps, ${Math.min(P, runs.length)} at a time: about ${fmtTime(estimateMs(runs, measured))} here (${how})`;
}

// ---- the form, the runs

let lastPreset = null; // the preset the form was last set from (null: none, or a link)

/**
 * Marks the preset the form's config is (aria-pressed), and says when the config was made from a
 * preset and edited since: it is then no longer the study's settings.
 */
function markPresets() {
  // without the summary a preset's settings are not known (experimentShown fetches it; a page
  // without experiments/summary.json never knows them): nothing is marked
  if (!summaryNow() || summaryNow().missing) return;
  const keep = { seed: cfg.seed, seeds: cfg.seeds, build: cfg.build, text: cfg.text };
  const diffs = {};
  for (const b of document.querySelectorAll('#x-presets-box button[data-preset]')) {
    const id = b.dataset.preset;
    const pc = presetConfig(id, headlineOf(PRESET_BY_ID[id].task), keep);
    pc.variants = pc.variants.filter((v) => VARIANT_SPECS.some((x) => x.name === v)); // as the form keeps them
    diffs[id] = presetDifferences(cfg, pc);
    const on = diffs[id].length === 0;
    b.setAttribute('aria-pressed', String(on));
    b.classList.toggle('active', on);
  }
  const note = $('#x-preset-state');
  const active = Object.keys(diffs).find((id) => !diffs[id].length);
  note.textContent = active ? `Preset: ${PRESET_QUESTIONS[PRESET_BY_ID[active].question].title} (${PRESET_BY_ID[active].task}), at the study's settings.`
    : lastPreset && diffs[lastPreset] ? `Edited since the preset ${PRESET_QUESTIONS[PRESET_BY_ID[lastPreset].question].title} (${PRESET_BY_ID[lastPreset].task}): ${diffs[lastPreset].join(', ')} ${diffs[lastPreset].length > 1 ? 'differ' : 'differs'} from the study's settings.`
      : '';
  note.dataset.preset = active ?? '';
  note.dataset.edited = !active && lastPreset ? lastPreset : '';
}

function configChanged(next, p) {
  cfg = next;
  problem = p;
  probeProblem = null;
  $('#x-copy-link').disabled = !!p;
  updateButtons(); // (writes the link too)
  renderBadge();
  markPresets();
  if (!runner.runs.length) {
    curves.render([], cfg, chanceNow());
    if (shown) renderAnswers($('#x-answers'), cfg, []);
  }
  if (shown) scheduleEstimate();
}

async function play() {
  if (runner.active && runner.paused) return runner.play();
  if (problem || probeProblem) return;
  const run = structuredClone(cfg);
  let corpus = null;
  if (run.task === 'text' && run.source === 'corpus') {
    starting = true;
    updateButtons();
    try {
      corpus = await ensureCorpus();
    } catch {
      starting = false;
      updateButtons();
      $('#x-config-error').hidden = false;
      $('#x-config-error').textContent = `${corpusStatus().message}. Train again to retry, or choose the paragraph or your own text.`;
      return;
    } finally {
      starting = false;
    }
    const p = configProblem(run, corpus);
    if (p) return form.showProblem(p);
  }
  let task;
  try {
    task = makeTask(run, corpus);
  } catch (err) {
    return form.showProblem({ field: null, message: err.message });
  }
  // the estimate was for before the start: stop a measurement still going (it would share the
  // cores with the training) and say nothing more until the config changes
  clearTimeout(probeTimer);
  probeTimer = null;
  probeSeq++;
  if (probeClients.some((c) => c.pending?.size)) stopProbes();
  $('#x-estimate').textContent = '';
  delete $('#x-estimate').dataset.ms;
  runner.start(run, task);
  wasActive = true;
  inspect.clear('Training… the maps appear when every variant has finished.');
  generate.setRuns([], runner.task);
  $('#x-results').hidden = false;
  updateButtons();
}

/** Applies a hash's config (a link); returns what it could not use ({ key, text, why }). */
export function loadExperimentHash(hash) {
  const ignored = [];
  // the config it holds already (Back and Forward between the views): nothing to load
  const next = decodeConfig(hash, ignored);
  if (encodeConfig(next) === encodeConfig(runner.active ? runner.cfg : cfg)) return ignored;
  if (runner.active) {
    // a link typed over a running experiment would drop its models: it waits, and says so
    return [{ key: 'x.*', text: 'all of it', why: 'a run is training: Cancel or Reset it, then open the link again' }];
  }
  cfg = next;
  form.render(cfg);
  form.read();
  return ignored;
}

/** The view was shown: fetch what it needs the first time (the recorded study; the corpus if chosen). */
export function experimentShown() {
  if (!shown) {
    shown = true;
    loadSummary().then(() => {
      markPresets(); // the presets' settings come with the summary
      renderAnswers($('#x-answers'), runner.runs.length ? runner.cfg : cfg, runner.runs);
      scheduleRender();
      scheduleEstimate();
    });
  }
  if (cfg.task === 'text' && cfg.source === 'corpus') ensureCorpus().catch(() => {});
  scheduleRender();
  scheduleEstimate();
}

/** Builds the view. lab: what the explore worker's hello said (variants); writeHash: the store's. */
export function initExperiment(lab, { writeHash }) {
  useLabVariants(lab.variants); // the variants to race: the binding's, with the curated extras
  // the link follows this view's config only while it is the view shown
  onHashChange = () => document.body.dataset.currentView === 'experiment' && writeHash();
  runner = new ExperimentRunner(scheduleRender);
  form = new SetupForm($('#x-setup'), {
    presetsRoot: $('#x-presets-box'), errorBox: $('#x-config-error'), onChange: configChanged,
    presetConfig: async (id, keep) => {
      await loadSummary(); // its settings and learning rates
      lastPreset = id;
      return presetConfig(id, headlineOf(PRESET_BY_ID[id].task), keep);
    },
  });
  $('#x-presets-box').append(el('p', { id: 'x-preset-state', class: 'note x-preset-state', role: 'status' }));
  curves = new CurvesPanel($('#x-curves'));
  inspect = new InspectPanel($('#x-inspect'), { dialog: $('#x-map-dialog') });
  generate = new GeneratePanel($('#x-generate'));
  generate.setRuns([], null);
  renderStudyAnswers($('#x-study-answers'), $('#x-results-dialog'));
  form.render(cfg);
  onCorpus((s) => {
    if (s.state === 'ready' && cfg.task === 'text') form.read();
    scheduleRender();
  });
  $('#x-play').addEventListener('click', play);
  $('#x-pause').addEventListener('click', () => runner.pause());
  $('#x-step').addEventListener('click', () => runner.step());
  $('#x-cancel').addEventListener('click', () => runner.cancel());
  $('#x-reset').addEventListener('click', () => {
    runner.reset();
    wasActive = false;
    inspect.clear('Reset: train again to see the maps.');
    generate.setRuns([], null);
    $('#x-results').hidden = true;
    renderAnswers($('#x-answers'), cfg, []);
    scheduleEstimate();
  });
  $('#x-copy-link').addEventListener('click', () => {
    const running = runner.active ? runner.cfg : cfg;
    copyText(location.href, textLeftOut(running) ? `Link copied — without your text (${running.text.length.toLocaleString('en')} characters, too long for a link): share it too` : 'Link copied');
  });
  $('#x-export-json').addEventListener('click', () => exportJson(runner.cfg, runner.runs));
  $('#x-export-svg').addEventListener('click', () => exportCurves(runner.cfg, runner.runs, curves.xAxis, 'svg', chanceNow()));
  $('#x-export-png').addEventListener('click', () => exportCurves(runner.cfg, runner.runs, curves.xAxis, 'png', chanceNow()));
  $('#x-copy-code').addEventListener('click', () => {
    const which = runner.runs.length ? runner.cfg : cfg;
    if (!runner.runs.length && problem) return toast(problem.message);
    try {
      $('#code-text').value = codeSnippet(which, runner.runs.length ? runner.task : formTask());
    } catch (err) {
      return form.showProblem({ field: null, message: err.code === 'CORPUS' ? 'the corpus is still on its way: copy the code once it is here' : err.message });
    }
    $('#code-dialog').showModal();
    $('#code-copy').focus();
  });
  $('#x-map-dialog-close').addEventListener('click', () => $('#x-map-dialog').close());
  $('#x-results-dialog-close').addEventListener('click', () => $('#x-results-dialog').close());
  // trained models live only in this tab: leaving it (a reload, another page) asks first
  window.addEventListener('beforeunload', (e) => {
    if (!runner.runs.some((r) => r.history.length)) return;
    e.preventDefault();
    e.returnValue = '';
  });
  on('theme', () => {
    scheduleRender();
    generate.redraw();
    if (runner.trained.length && !runner.active) inspected = inspect.load(runner.trained.filter((r) => r.first), runner.task);
  });
  render();
  if (window.__attnlab) installHook(); // only where a test asked for the hook (web/app.js)
}

/** window.__attnlab.experiment: what tests/browser/experiment.test.mjs reads. */
function installHook() {
  window.__attnlab.experiment = {
    config: () => structuredClone(cfg),
    configError: () => problem?.message ?? probeProblem?.message ?? null,
    /** The runs as plain data (exact numbers). */
    runs: () => runJson(runner.cfg ?? cfg, runner.runs).runs,
    active: () => runner.active,
    peakRunning: () => runner.peakRunning,
    maxParallel,
    paused: () => runner.paused,
    /** Resolves once no run is training or queued and the maps of the trained models are drawn. */
    async idle(timeoutMs = 120000) {
      const t0 = performance.now();
      while (starting || runner.active || renderQueued) {
        if (performance.now() - t0 > timeoutMs) throw new Error('the experiment did not finish');
        await new Promise((r) => setTimeout(r, 50));
      }
      await inspected;
    },
    inspected: () => Object.fromEntries([...inspect.results].map(([k, m]) => [k, m.error ? { error: m.error.message } : {
      index: m.index, tokens: Array.from(m.tokens), targets: Array.from(m.targets), predictions: Array.from(m.predictions),
      maps: m.maps.map((layer) => layer.map((A) => Array.from(A))),
    }])),
    codeSnippet: () => codeSnippet(cfg, formTask()),
    label: (name) => labelOf(name),
    /** The estimate shown before a run starts (the text), once measured. */
    estimate: () => $('#x-estimate').textContent,
    /** The estimate's schedule of the form's runs for given timings ({ name: { msPerStep, evalMs, startMs } }): tests read it without a clock. */
    estimateMsFor: (measured) => estimateMs(runList(cfg), measured),
    /** Whether an estimate is waiting to start or timing steps (its end redraws the buttons). */
    estimating: () => probeTimer != null || probesInFlight > 0,
    corpus: () => corpusStatus(),
    text: () => textOf(cfg),
    /** The "Time generation to 2048 positions" length; tests lower it to stay fast (applies at once, clearing a timing shown). */
    setLongGenerationLength(n) {
      generate.long.positions = n;
      generate.long.setRuns(generate.long.runs, generate.long.task, generate.long.cfg);
    },
    /** Its last timing as plain data, or null while none has ended. */
    longGeneration: () => generate.long.data(),
  };
}
