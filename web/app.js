// attnlab page: boot. Every attention call goes to web/worker.js. The variants, their inputs,
// dims and options come from `lab.variants` / `lab.options` (via the worker), so a variant or an
// option added to the registry appears here without changes.
//
//   store.js         the one store (state, lab, last result) + commit/subscribe, URL hash
//   controls.js      variant picker, preset, sizes, seed, build, causal
//   options-form.js  the variant's option fields, built from lab.options
//   matrix.js        input matrices: tabs, cell editor, paste / copy
//   run.js           the run loop and where errors are shown
//   outputs.js       timing, heatmaps of A and y, intermediates, row statistics, numbers
//   compare.js       variants side by side against softmax
//   scaling.js       time against n, in a worker of its own
//   export.js        copy link, export JSON, copy as code
//   theme.js         colour theme
//   test-hook.js     window.__attnlab for the browser tests

import { $, el } from './dom.js';
import { store, setLab, loadHash, writeHash, renderAll } from './store.js';
import { WorkerClient } from './worker-client.js';
import { initTheme } from './theme.js';
import { initControls } from './controls.js';
import { initOptionsForm } from './options-form.js';
import { initMatrixEditor } from './matrix.js';
import { initRunLoop, scheduleRun } from './run.js';
import { initOutputs } from './outputs.js';
import { initCompare } from './compare.js';
import { initScaling } from './scaling.js';
import { initExport } from './export.js';
import { installTestHook } from './test-hook.js';

async function boot() {
  const hook = installTestHook();
  initTheme();
  initExport();
  initOutputs();
  const worker = new WorkerClient();
  try {
    setLab(await worker.call('hello', { build: 'auto' }));
  } catch (err) {
    const box = $('#load-error');
    box.replaceChildren(el('strong', { text: 'The attention library did not load. ' }), el('span', { text: `${err.code ?? ''} ${err.message}` }));
    box.hidden = false;
    $('#build-badge').textContent = 'not loaded';
    hook.loadError = { code: err.code, message: err.message };
    return;
  }
  // Subscription order is render order: controls, options, inputs, then the run.
  initControls();
  initOptionsForm();
  initMatrixEditor(worker);
  initCompare();
  initScaling();
  initRunLoop(worker);
  window.addEventListener('hashchange', () => {
    if (location.hash.replace(/^#/, '') === store.ui.lastHash) return;
    loadHash();
    renderAll();
    scheduleRun(0);
  });
  loadHash();
  renderAll();
  writeHash();
  hook.ready = true;
  scheduleRun(0);
}

boot();
