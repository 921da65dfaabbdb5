// attnlab page: boot. Every attention call goes to web/worker.js. The variants, their inputs,
// dims and options come from `lab.variants` / `lab.options` (via the worker), so a variant or an
// option added to the registry appears here without changes.
//
//   store.js         the one store (state, lab, last result) + commit/subscribe, URL hash
//   controls.js      variant picker, preset, sizes, seed, build, causal
//   options-form.js  the variant's option fields, built from lab.options
//   matrix.js        input matrices: tabs, cell editor, paste / copy (paste.js reads pasted text)
//   run.js           the run loop and where errors are shown
//   outputs.js       timing, heatmaps of A and y, intermediates, row statistics, numbers
//   compare.js       variants side by side against softmax
//   scaling.js       time against n, in a worker of its own
//   worker-client.js the page's side of its workers (worker.js, experiment-worker.js); worker-host.js theirs
//   export.js        copy link, export JSON, copy as code
//   theme.js         colour theme
//   heatmap.js       canvas heatmaps with axes (colormap.js: colour maps, legend); tooltip.js
//   test-hook.js     window.__attnlab for the browser tests (loaded only when they ask, below)
//   view.js          the Explore / Experiment switch (#view=experiment&x.… opens Experiment)
//   experiment/      the Experiment view: train variants side by side (experiment/index.js)
//   load-check.js    (a classic script) what to do when the page cannot start, e.g. from file://

import { $, el, toast } from './dom.js';
import { store, setLab, loadHash, writeHash, renderAll, subscribe, onEditsDropped } from './store.js';
import { clearTooltip } from './tooltip.js';
import { WorkerClient } from './worker-client.js';
import { initTheme } from './theme.js';
import { initControls, checkWebGPU } from './controls.js';
import { initOptionsForm } from './options-form.js';
import { initMatrixEditor } from './matrix.js';
import { initRunLoop, scheduleRun } from './run.js';
import { initOutputs } from './outputs.js';
import { initCompare } from './compare.js';
import { initScaling } from './scaling.js';
import { initExport } from './export.js';
import { initViews, showView } from './view.js';
import { initExperiment, experimentHash, experimentKeys, loadExperimentHash, experimentShown } from './experiment/index.js';
import { viewOfHash, hasExperimentKeys } from './experiment/config.js';
import { decodeHash } from './state.js';

/**
 * Says what the link had that the page could not use (it took the defaults instead): one banner
 * for both views. more: what the Experiment view could not use of it.
 */
function showHashNotes(more = []) {
  const list = [...(store.ui.hashIgnored ?? []), ...more];
  store.ui.hashIgnored = list;
  $('#hash-warning').hidden = !list.length;
  $('#hash-warning-text').textContent = list.length
    ? `Parts of the link were ignored and use their defaults: ${list.map((x) => `${x.key}=${x.text || '(empty)'} (${x.why})`).join('; ')}.`
    : '';
}

/**
 * The browser tests' read-only view of the page (window.__attnlab). A test sets
 * window.__attnlabTestHook before the page loads; a visitor's page never fetches the module.
 */
async function testHook() {
  if (window.__attnlabTestHook !== true) return {};
  const { installTestHook } = await import('./test-hook.js');
  return installTestHook();
}

async function boot() {
  const hook = await testHook();
  const linked = location.hash; // the link the page was opened with (nothing below may rewrite it first)
  initTheme();
  initExport();
  initOutputs();
  const worker = new WorkerClient();
  try {
    setLab(await worker.call('hello', { build: 'auto' }));
  } catch (err) {
    const box = $('#load-error');
    box.replaceChildren(el('strong', { text: 'The attention library did not load. ' }), el('span', { text: `${err.code ?? ''} ${err.message} ` }),
      el('span', { text: 'Build it with `npm run build` and serve the repository root (`npm start`, or any static server), then open /web/.' }));
    box.hidden = false;
    $('#build-badge').textContent = 'not loaded';
    hook.loadError = { code: err.code, message: err.message };
    return;
  }
  // Subscription order is render order: controls, options, inputs, then the run.
  initControls();
  initOptionsForm();
  initMatrixEditor();
  initCompare();
  initScaling();
  initRunLoop(worker);
  // a read-out of a cell does not survive a change of what the cells are
  subscribe((what) => {
    if (what.all || what.variant || what.arrays || what.options || what.causal) clearTooltip();
  });
  $('#hash-warning-close').addEventListener('click', () => ($('#hash-warning').hidden = true));
  onEditsDropped((names) => toast(`Edited cells of ${names.join(', ')} were dropped: ${names.length > 1 ? 'those arrays' : 'that array'} changed size`));
  initViews(experimentHash, (view) => view === 'experiment' && experimentShown(), experimentKeys);
  initExperiment(store.lab, { writeHash });
  window.addEventListener('hashchange', () => {
    if (location.hash.replace(/^#/, '') === store.ui.lastHash) return;
    if (viewOfHash(location.hash) === 'experiment') {
      // its keys that are not the Experiment view's are named too (Explore keeps its own state)
      const ignored = [];
      decodeHash(location.hash, ignored);
      store.ui.hashIgnored = ignored;
      showHashNotes(loadExperimentHash(location.hash));
      showView('experiment');
      writeHash();
      return;
    }
    showView('explore');
    loadHash();
    // Explore's link keeps the Experiment view's keys when they are not its defaults
    showHashNotes(hasExperimentKeys(location.hash) ? loadExperimentHash(location.hash) : []);
    renderAll();
    writeHash();
    scheduleRun(0);
  });
  loadHash();
  if (viewOfHash(linked) === 'experiment') {
    showHashNotes(loadExperimentHash(linked));
    showView('experiment');
  } else {
    showHashNotes(hasExperimentKeys(linked) ? loadExperimentHash(linked) : []);
    showView('explore');
  }
  renderAll();
  writeHash();
  hook.ready = true;
  scheduleRun(0);
  checkWebGPU(); // after the first run is asked for: the Build menu offers WebGPU once it answers
}

boot();
