// window.__attnlab: what tests/browser/page.test.mjs reads (and a console user may find handy).
// Read-only views of the store, plus idle() to wait for the run loop.

import { store } from './store.js';
import { busy } from './run.js';
import { compareBusy } from './compare.js';
import { describeWeight, describeOutput } from './explain.js';
import { scalingReport, replayScaling } from './scaling.js';
import { codeSnippet } from './export.js';
import { fmtFull } from './heatmap.js';
import { tooltipState, unlockTooltip } from './tooltip.js';

const plain = (x) => (x instanceof Float32Array ? Array.from(x) : x);

export function installTestHook() {
  window.__attnlab = {
    ready: false,
    loadError: undefined,
    get variants() {
      return store.lab?.variants ?? [];
    },
    get options() {
      return store.lab?.options ?? {};
    },
    get build() {
      return store.lab?.build;
    },
    get stale() {
      return store.stale;
    },
    get lastError() {
      return store.lastError;
    },
    busy,
    /** Resolves once no run is pending (debounce, in flight or queued). */
    async idle(timeoutMs = 30000) {
      const t0 = performance.now();
      let quiet = 0;
      while (quiet < 2) {
        if (performance.now() - t0 > timeoutMs) throw new Error('page did not become idle');
        await new Promise((r) => setTimeout(r, 25));
        quiet = busy() ? 0 : quiet + 1;
      }
    },
    state: () => JSON.parse(JSON.stringify(store.state)),
    /** The last good result, as plain JSON (exact float32 values). */
    snapshot() {
      const last = store.last;
      if (!last) return null;
      const inputs = {};
      for (const [k, v] of Object.entries(last.inputs)) inputs[k] = plain(v);
      const intermediates = Object.fromEntries((last.intermediates ?? []).map((m) => [m.name, plain(m.data)]));
      return { variant: last.id, inputs, options: last.options, output: plain(last.output), weights: last.weights ? plain(last.weights) : null, intermediates, build: last.build, stale: store.stale, error: store.lastError, timing: last.timing };
    },
    explain(kind, i, j) {
      if (!store.last) return null;
      return kind === 'weights' ? describeWeight(store.last, i, j) : describeOutput(store.last, i, j);
    },
    compare() {
      const c = store.compare;
      const out = {};
      for (const [id, r] of Object.entries(c.results ?? {})) out[id] = r.error ? { error: r.error } : { output: plain(r.output), maxAbs: r.maxAbs, nmse: r.nmse };
      return { baseId: c.baseId, ids: c.ids, results: out };
    },
    scaling: scalingReport,
    /** Draws the scaling chart from given points ({ n, variant, build, timing }), as if measured. */
    scalingReplay: replayScaling,
    /** Small facts about the last result (no arrays: cheap at any n). */
    status: () => ({ variant: store.last?.id ?? null, dims: store.last?.dims ?? null, samples: store.last?.timing?.samples ?? null, compareBusy: compareBusy(), error: store.lastError }),
    /** Page-side state the browser tests check: ignored parts of the link, cancelled comparisons, toggles. */
    ui: () => ({ hashIgnored: store.ui.hashIgnored, compareCancels: store.ui.compareCancels, rowNorm: store.ui.rowNorm, sharedScale: store.ui.sharedScale }),
    tooltip: tooltipState,
    unlockTooltip,
    codeSnippet: () => (store.last ? codeSnippet(store.last) : null),
    fullPrecision: fmtFull,
  };
  return window.__attnlab;
}
