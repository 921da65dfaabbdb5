// The set-up panel: variant picker and its description, preset, sizes, seed, build and causal.
// The option fields of the variant are built by options-form.js.

import { $, el, BUILD_LABEL, adapterName } from './dom.js';
import { WorkerClient } from './worker-client.js';
import { offerScalingWebGPU } from './scaling.js';
import { PRESETS, requirements, resolveDims } from './gen.js';
import { EXTRA_DIMS } from './state.js';
import { store, info, effectiveOpts, dimsState, commit, subscribe } from './store.js';

const FAMILY_LABEL = { softmax: 'softmax (token-to-token)', synthesizer: 'Synthesizer (no token-to-token)', linear: 'linear (no softmax, O(n))', fixed: 'fixed pattern', recurrent: 'recurrent (gated, delta rule; O(n))' };

function buildVariantSelect() {
  const { lab } = store;
  const sel = $('#variant');
  sel.replaceChildren();
  const fams = [];
  for (const v of lab.variants) if (!fams.includes(v.family)) fams.push(v.family);
  for (const f of fams) {
    const g = el('optgroup', { label: FAMILY_LABEL[f] ?? f });
    for (const v of lab.variants.filter((x) => x.family === f)) g.append(el('option', { value: v.id, text: v.label }));
    sel.append(g);
  }
  sel.disabled = false;
  sel.addEventListener('change', () => {
    store.state.variant = sel.value;
    store.ui.activeArray = null;
    store.ui.editorRow = 0;
    commit({ options: true, arrays: true, dims: true, variant: true });
  });
  const list = $('#variant-list');
  list.replaceChildren();
  for (const v of lab.variants) {
    list.append(el('dt', {}, el('strong', { text: v.label }), ' ', el('code', { text: v.id })));
    list.append(el('dd', {}, el('span', { text: v.summary }), el('br'), el('code', { class: 'formula-inline', text: v.formula })));
  }
}

function renderVariantInfo() {
  const v = info();
  $('#variant').value = v.id;
  $('#variant-summary').textContent = v.summary;
  $('#variant-formula').textContent = v.formula;
  $('#variant-cost').textContent = v.cost;
  $('#variant-family').textContent = FAMILY_LABEL[v.family] ?? v.family;
}

function buildPresetSelect() {
  const sel = $('#preset');
  for (const [k, p] of Object.entries(PRESETS)) sel.append(el('option', { value: k, text: p.label }));
  sel.addEventListener('change', () => {
    const p = PRESETS[sel.value];
    const s = store.state;
    s.preset = sel.value;
    s.n = p.n;
    s.d = p.d;
    s.dv = p.dv;
    s.causal = p.causal;
    for (const k of EXTRA_DIMS) s[k] = null;
    s.edits = {};
    store.ui.editorRow = 0;
    commit({ dims: true, options: true, arrays: true });
  });
}

const intOrNull = (str) => (str === '' || str == null ? null : Number(str));

function bindDims() {
  for (const k of ['n', 'd', 'dv']) {
    const inp = $(`#dim-${k}`);
    inp.addEventListener('input', () => {
      store.state[k] = intOrNull(inp.value);
      commit({ arrays: true, light: true });
    });
  }
  const seed = $('#seed');
  seed.addEventListener('input', () => {
    const x = Number(seed.value);
    if (seed.value !== '' && Number.isFinite(x)) {
      store.state.seed = Math.trunc(x);
      commit({ arrays: true, light: true });
    }
  });
  $('#new-seed').addEventListener('click', () => {
    store.state.seed = 1 + Math.floor(Math.random() * 999999);
    seed.value = store.state.seed;
    commit({ arrays: true });
  });
}

function dimHelp(k) {
  return store.lab.dims?.[k]?.description ?? k;
}

function renderDims() {
  const s = store.state;
  $('#preset').value = s.preset;
  for (const k of ['n', 'd', 'dv']) {
    const inp = $(`#dim-${k}`);
    if (document.activeElement !== inp) inp.value = s[k] ?? '';
  }
  const used = new Set(requirements(s.variant, store.byId, effectiveOpts(s.variant)).dims);
  $('#dim-d').closest('.field').classList.toggle('unused', !used.has('d'));
  $('#dim-d').title = used.has('d') ? '' : `${info().label} does not read d (q, k and x are not used)`;
  if (document.activeElement !== $('#seed')) $('#seed').value = s.seed;
  const box = $('#extra-dims');
  const extras = EXTRA_DIMS.filter((k) => used.has(k));
  const auto = resolveDims(dimsState());
  const have = [...box.querySelectorAll('input')].map((x) => x.dataset.dim).join(',');
  if (have !== extras.join(',')) {
    box.replaceChildren();
    for (const k of extras) {
      const id = `dim-${k}`;
      const inp = el('input', { id, type: 'number', min: '1', step: '1', inputmode: 'numeric', dataset: { dim: k } });
      inp.addEventListener('input', () => {
        store.state[k] = intOrNull(inp.value);
        commit({ arrays: true, light: true });
      });
      inp.title = dimHelp(k);
      box.append(el('div', { class: 'field' }, el('label', { for: id, title: dimHelp(k) }, k), inp));
    }
    // what the extra dims mean, from lab.dims, under the grid (too long for its labels)
    let note = $('#extra-dims-note');
    if (!note) box.after((note = el('p', { id: 'extra-dims-note', class: 'note' })));
    note.replaceChildren(...extras.map((k, i) => [i ? '; ' : '', el('strong', { text: k }), `: ${dimHelp(k)}`]).flat());
    note.hidden = !extras.length;
  }
  for (const inp of box.querySelectorAll('input')) {
    const k = inp.dataset.dim;
    inp.placeholder = `auto: ${auto[k]}`;
    if (document.activeElement !== inp) inp.value = s[k] ?? '';
  }
}

function buildBuildSelect() {
  const { lab } = store;
  const sel = $('#build-select');
  const feats = lab.features ?? { simd: true, relaxedSimd: false };
  sel.replaceChildren(el('option', { value: 'auto', text: `auto (${BUILD_LABEL[lab.build] ?? lab.build})` }));
  if (feats.relaxedSimd) sel.append(el('option', { value: 'relaxed', text: BUILD_LABEL.relaxed }));
  if (feats.simd !== false) sel.append(el('option', { value: 'simd', text: BUILD_LABEL.simd }));
  sel.append(el('option', { value: 'scalar', text: BUILD_LABEL.scalar }));
  sel.append(el('option', { value: 'webgpu', text: 'WebGPU (checking…)', disabled: true }));
  sel.addEventListener('change', () => {
    store.state.build = sel.value;
    commit({});
  });
}

function renderBuildSelect() {
  const bs = $('#build-select');
  // a link may name WebGPU before its check has answered: keep it until the check says no
  if (![...bs.options].some((o) => o.value === store.state.build && (!o.disabled || o.value === 'webgpu'))) store.state.build = 'auto';
  bs.value = store.state.build;
}

/**
 * Asks a worker of its own whether WebGPU runs here (initWebGPU() there; the worker then ends),
 * and offers it in the Build menu with its adapter, or says why not under the menu.
 */
export async function checkWebGPU() {
  const probe = new WorkerClient();
  let res;
  try {
    res = await probe.call('webgpu');
  } catch (err) {
    res = { available: false, why: err.message };
  } finally {
    probe.terminate();
  }
  store.webgpu = res;
  const option = $('#build-select option[value="webgpu"]');
  const note = $('#build-note');
  option.disabled = !res.available;
  option.textContent = res.available ? `WebGPU (${adapterName(res.adapter) || 'adapter'})` : 'WebGPU (not available here; see below)';
  $('#build-select').title = res.available ? '' : `WebGPU: ${res.why}`;
  // the library's reason, without its advice to programmers (init()): the page falls back by itself
  const why = String(res.why ?? '').replace(/; use init\(\) for the WebAssembly builds$/, '');
  note.textContent = res.available ? '' : `Build: WebGPU is not offered here. ${why.charAt(0).toUpperCase()}${why.slice(1)}. The WebAssembly builds run as usual.`;
  note.hidden = res.available;
  note.dataset.webgpu = res.available ? 'available' : 'unavailable';
  if (res.available) offerScalingWebGPU(option.textContent);
  if (!res.available && store.state.build === 'webgpu') {
    store.state.build = 'auto';
    commit({});
  } else renderBuildSelect();
}

/** Builds the controls from `lab` and keeps them in step with the store. */
export function initControls() {
  const { lab } = store;
  const badge = $('#build-badge');
  badge.textContent = `${BUILD_LABEL[lab.build] ?? lab.build} build`;
  badge.dataset.build = lab.build;
  const threads = $('#threads-badge');
  threads.textContent = lab.threads > 1 ? `${lab.threads} threads`
    : /not cross-origin isolated/.test(lab.threadsWhy ?? '') ? '1 thread (page not cross-origin isolated)' : '1 thread';
  threads.title = lab.threadsWhy ?? '';
  threads.dataset.threads = String(lab.threads ?? 1);
  $('#version').textContent = `v${lab.version}`;
  buildVariantSelect();
  buildPresetSelect();
  bindDims();
  buildBuildSelect();
  $('#causal').addEventListener('change', () => {
    store.state.causal = $('#causal').checked;
    commit({ causal: true });
  });
  subscribe((what) => {
    if (what.all) renderBuildSelect();
    if (what.variant) renderVariantInfo();
    renderDims();
  });
}
