// The Experiment view: set up an experiment, train every variant live in workers of their own,
// see what each model learned, generate text, compare with the recorded full run, share and
// export. This module wires the panels together; each panel is its own module:
//
//   config.js     the config, its URL-hash form, lab.model / lab.train arguments
//   setup.js      the form        runner.js   workers, queue, play / pause / step / cancel / reset
//   curves.js     learning curves (svg-chart.js draws; colors.js picks colours per theme)
//   inspect.js    predictions and attention maps (token-map.js)   alpha.js   mixture α over training
//   generate.js   text generation and ms per token (long-generate.js: to 2048 positions)
//   answers.js    the recorded run
//   share.js      export JSON / SVG / PNG, copy as code

import { $, copyText, toast } from '../dom.js';
import { on } from '../store.js';
import { encodeConfig, decodeConfig, defaultConfig, SPEC_BY_NAME, BUILD_LABELS } from './config.js';
import { SetupForm } from './setup.js';
import { ExperimentRunner, maxParallel } from './runner.js';
import { CurvesPanel } from './curves.js';
import { InspectPanel } from './inspect.js';
import { renderAlpha } from './alpha.js';
import { GeneratePanel } from './generate.js';
import { renderAnswers } from './answers.js';
import { exportJson, exportCurves, codeSnippet, runJson } from './share.js';

let cfg = defaultConfig();
let cfgError = null;
let form, runner, curves, inspect, generate;
let renderQueued = false;
let wasActive = false;
let inspected = Promise.resolve();
let onHashChange = () => {};

const fmtTime = (ms) => (!Number.isFinite(ms) ? '–' : ms < 60000 ? `${Math.ceil(ms / 1000)} s` : `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`);

/** The x.* part of the hash for the current config. */
export const experimentHash = () => `view=experiment&${encodeConfig(cfg)}`;

function updateButtons() {
  const active = runner.active;
  const paused = runner.paused && active;
  $('#x-play').textContent = paused ? '▶ Resume' : '▶ Train';
  $('#x-play').disabled = (active && !paused) || (!active && !!cfgError);
  $('#x-pause').disabled = !active || paused;
  $('#x-step').disabled = !active;
  $('#x-cancel').disabled = !active;
  $('#x-reset').disabled = !runner.runs.length;
  for (const id of ['#x-export-json', '#x-export-svg', '#x-export-png']) $(id).disabled = !runner.runs.some((r) => r.history.length);
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

function renderProgress() {
  const p = runner.progress();
  const bar = $('#x-progress');
  bar.max = Math.max(1, p.total);
  bar.value = p.done;
  const counts = {};
  const word = (r) => (r.status === 'error' ? 'failed' : r.status);
  for (const r of runner.runs) counts[word(r)] = (counts[word(r)] ?? 0) + 1;
  const parts = Object.entries(counts).map(([s, n]) => `${n} ${s}`);
  // p.done: the steps the runs took (a cancelled or failed run counts the steps it trained, not
  // its total); the parts say how many runs were cancelled or failed
  const steps = `${p.done} / ${p.total} steps`;
  const state = !runner.active ? `ended after ${fmtTime((runner.finishedAt || performance.now()) - runner.startedAt)}`
    : runner.paused ? 'paused' : `${p.stepsPerSec ? `${p.stepsPerSec.toFixed(0)} steps/s` : 'starting'} · about ${fmtTime(p.etaMs)} left`;
  $('#x-status').textContent = runner.runs.length
    ? `${steps} · ${state} · ${parts.join(', ')}`
    : `Up to ${maxParallel()} variants train at once (one worker each, as many as this machine has cores); the rest wait their turn.`;
}

/** A run that could not start (a config the binding refuses): its AttnError, by variant. */
function renderErrors() {
  const failed = runner.runs.filter((r) => r.error);
  const box = $('#x-run-error');
  box.hidden = !failed.length;
  box.textContent = failed.map((r) => `${SPEC_BY_NAME[r.name]?.label ?? r.name}: ${r.error.code} ${r.error.message}`).join('\n');
}

function render() {
  renderQueued = false;
  updateButtons();
  renderBadge();
  renderProgress();
  renderErrors();
  curves.render(runner.runs, runner.cfg ?? cfg);
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

/** Once every run has ended: read the trained models, offer generation, compare with the record. */
function afterTraining() {
  const trained = runner.trained;
  generate.setRuns(trained, runner.task, runner.cfg);
  inspected = trained.length ? inspect.load(trained, runner.task) : Promise.resolve(inspect.clear('No model finished training.'));
  renderAnswers($('#x-answers'), runner.cfg, runner.runs);
}

function configChanged(next, error) {
  cfgError = error;
  if (next) cfg = next;
  $('#x-copy-link').disabled = !!error;
  if (!error) onHashChange();
  updateButtons();
  renderBadge();
  if (!runner.runs.length) renderAnswers($('#x-answers'), cfg, []);
}

function play() {
  if (runner.active && runner.paused) return runner.play();
  try {
    runner.start(cfg);
  } catch (err) {
    // a task's knobs that do not fit together (tasks.js says why); the form keeps every value
    form.showError(err.message);
    return;
  }
  wasActive = true;
  inspect.clear('Training… the maps appear when every variant has finished.');
  generate.setRuns([], runner.task);
  $('#x-results').hidden = false;
}

/** Applies a hash's config (a link); returns what it could not use. */
export function loadExperimentHash(hash) {
  const ignored = [];
  cfg = decodeConfig(hash, ignored);
  form.render(cfg);
  form.read();
  const warn = $('#x-hash-warning');
  warn.hidden = !ignored.length;
  warn.textContent = ignored.length ? `Parts of the link were ignored: ${ignored.map((x) => `${x.key}=${x.text} (${x.why})`).join('; ')}.` : '';
  return ignored;
}

/** Builds the view. lab: what the explore worker's hello said (variants); writeHash: the store's. */
export function initExperiment(lab, { writeHash }) {
  onHashChange = writeHash;
  form = new SetupForm($('#x-setup'), { available: lab.variants.map((v) => v.id), onChange: configChanged });
  runner = new ExperimentRunner(scheduleRender);
  curves = new CurvesPanel($('#x-curves'));
  inspect = new InspectPanel($('#x-inspect'), { dialog: $('#x-map-dialog') });
  generate = new GeneratePanel($('#x-generate'));
  generate.setRuns([], null);
  form.render(cfg);
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
  });
  $('#x-copy-link').addEventListener('click', () => copyText(location.href, 'Link copied'));
  $('#x-export-json').addEventListener('click', () => exportJson(runner.cfg, runner.runs));
  $('#x-export-svg').addEventListener('click', () => exportCurves(runner.cfg, runner.runs, curves.xAxis, 'svg'));
  $('#x-export-png').addEventListener('click', () => exportCurves(runner.cfg, runner.runs, curves.xAxis, 'png'));
  $('#x-copy-code').addEventListener('click', () => {
    if (cfgError) return toast(cfgError);
    try {
      $('#code-text').value = codeSnippet(runner.runs.length ? runner.cfg : cfg);
    } catch (err) {
      return form.showError(err.message);
    }
    $('#code-dialog').showModal();
    $('#code-copy').focus();
  });
  $('#x-map-dialog-close').addEventListener('click', () => $('#x-map-dialog').close());
  on('theme', () => {
    scheduleRender();
    generate.redraw();
    if (runner.trained.length && !runner.active) inspected = inspect.load(runner.trained, runner.task);
  });
  render();
  renderAnswers($('#x-answers'), cfg, []);
  installHook();
}

/** window.__attnlab.experiment: what tests/browser/experiment.test.mjs reads. */
function installHook() {
  window.__attnlab.experiment = {
    config: () => structuredClone(cfg),
    configError: () => cfgError,
    /** The runs as plain data (exact numbers). */
    runs: () => runJson(runner.cfg ?? cfg, runner.runs).runs,
    active: () => runner.active,
    peakRunning: () => runner.peakRunning,
    maxParallel,
    paused: () => runner.paused,
    /** Resolves once no run is training or queued and the maps of the trained models are drawn. */
    async idle(timeoutMs = 120000) {
      const t0 = performance.now();
      while (runner.active || renderQueued) {
        if (performance.now() - t0 > timeoutMs) throw new Error('the experiment did not finish');
        await new Promise((r) => setTimeout(r, 50));
      }
      await inspected;
    },
    inspected: () => Object.fromEntries([...inspect.results].map(([k, m]) => [k, m.error ? { error: m.error.message } : {
      index: m.index, tokens: Array.from(m.tokens), targets: Array.from(m.targets), predictions: Array.from(m.predictions),
      maps: m.maps.map((layer) => layer.map((A) => Array.from(A))),
    }])),
    codeSnippet: () => codeSnippet(cfg),
    label: (name) => SPEC_BY_NAME[name]?.label,
    /** The "Time generation to 2048 positions" length; tests lower it to stay fast (applies at once, clearing a timing shown). */
    setLongGenerationLength(n) {
      generate.long.positions = n;
      generate.long.setRuns(generate.long.runs, generate.long.task, generate.long.cfg);
    },
    /** Its last timing as plain data, or null while none has ended. */
    longGeneration: () => generate.long.data(),
  };
}
