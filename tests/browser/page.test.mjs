// Browser tests of the page (web/) with playwright-core and the system Chromium.
//
//   node --test tests/browser/page.test.mjs
//
// Starts scripts/serve.mjs on port 0, drives the page, and checks what it shows against the
// binding run in Node on the same inputs (read back from the page's window.__attnlab hook).
// Screenshots go to test-artifacts/ (git-ignored). No timing assertions. The shared set-up is
// harness.mjs; the page's edge cases are in files named by what they check (links, serving, maps,
// inputs, scaling, layout, experiment-form, keyboard).

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ROOT, ARTIFACTS, BINDING, startEnv, stopEnv, assertClose, toF32Inputs, newPage, rawGet, idle, snapshot, assertNoProblems, checkAgainstBinding, chooseVariant, cellColour,
} from './harness.mjs';

let server, nodeLab, AttnError, binding;

describe('attnlab page', () => {
  before(async () => {
    ({ server, nodeLab, AttnError, binding } = await startEnv());
  });

  after(stopEnv);

  test('serves the page, the binding and wasm with the right types, and nothing outside the root', async () => {
    const base = server.url.replace(/\/web\/$/, '');
    const r0 = await fetch(base + '/', { redirect: 'manual' });
    assert.equal(r0.status, 302);
    assert.equal(r0.headers.get('location'), '/web/');
    const html = await fetch(server.url);
    assert.match(html.headers.get('content-type'), /^text\/html/);
    const js = await fetch(base + '/dist/attnlab.js');
    assert.match(js.headers.get('content-type'), /^text\/javascript/);
    const worker = await fetch(base + '/web/worker.js');
    assert.match(worker.headers.get('content-type'), /^text\/javascript/);
    for (const f of fs.readdirSync(path.join(ROOT, 'dist')).filter((x) => x.endsWith('.wasm'))) {
      const w = await fetch(`${base}/dist/${f}`);
      assert.equal(w.headers.get('content-type'), 'application/wasm', f);
      await w.arrayBuffer();
    }
    // raw paths (fetch would normalise the dots away)
    for (const p of ['/../../../../etc/passwd', '/%2e%2e/%2e%2e/%2e%2e/etc/passwd', '/web/..%2f..%2f..%2f..%2fetc%2fpasswd', '/web/%2e%2e%5c%2e%2e%5cetc%5cpasswd']) {
      const res = await rawGet(server.port, p);
      assert.ok(res.status === 403 || res.status === 404, `${p} -> ${res.status}`);
      assert.doesNotMatch(res.body, /root:/);
    }
  });

  test('loads without console errors and shows every variant of the binding', async (t) => {
    const page = await newPage(t);
    const ids = await page.$$eval('#variant option', (os) => os.map((o) => o.value));
    assert.deepEqual(ids.slice().sort(), nodeLab.variants.map((v) => v.id).sort());
    const badge = await page.textContent('#build-badge');
    assert.match(badge, /SIMD|scalar/i);
    const snap = await snapshot(page);
    assert.equal(snap.variant, 'softmax');
    checkAgainstBinding(snap, 'first load');
    assert.equal(await page.locator('#weights-map canvas.hm-canvas').count(), 1);
    assert.match(await page.textContent('#timing'), /median/);
    assert.match(await page.textContent('#timing'), /GFLOP\/s/);
    assertNoProblems(page);
  });

  test('for every variant, the numbers shown match the binding on the same inputs', async (t) => {
    const page = await newPage(t);
    const ids = await page.$$eval('#variant option', (os) => os.map((o) => o.value));
    for (const id of ids) {
      const snap = await chooseVariant(page, id);
      assert.equal(snap.stale, false, `${id}: not stale`);
      assert.equal(snap.error, null, `${id}: no error (${JSON.stringify(snap.error)})`);
      const ref = checkAgainstBinding(snap, id);
      // the numbers table shows the same values, with full precision in data-value
      const cells = await page.$$eval('#output-numbers td', (tds) => tds.map((td) => ({ v: Number(td.dataset.value), text: td.textContent })));
      const dv = snap.inputs.dv;
      assert.ok(cells.length >= Math.min(64, snap.inputs.n) * dv, `${id}: table has the output`);
      assertClose(cells.map((c) => c.v), Array.from(ref.output).slice(0, cells.length), `${id}: table`);
      for (const c of cells.slice(0, 8)) assert.ok(Math.abs(Number(c.text.replace('−', '-')) - c.v) <= 1e-3 * Math.max(1, Math.abs(c.v)), `${id}: shown ${c.text} vs ${c.v}`);
      // the tooltip's own recomputation agrees with the binding's A (when it has one)
      const n = snap.inputs.n;
      for (const [i, j] of [[0, 0], [n - 1, 0], [Math.floor(n / 2), n - 1], [n - 1, n - 1]]) {
        const ex = await page.evaluate(([i, j]) => window.__attnlab.explain('weights', i, j), [i, j]);
        assert.ok(ex.lines.length > 0, `${id}: explanation for A[${i},${j}]`);
        if (ex.computed != null) assert.ok(Math.abs(ex.computed - snap.weights[i * n + j]) <= 2e-5 + 2e-4 * Math.abs(ex.computed), `${id}: tooltip formula A[${i},${j}] = ${ex.computed}, binding ${snap.weights[i * n + j]}`);
      }
      const ey = await page.evaluate(() => window.__attnlab.explain('output', 1, 0));
      if (ey.computed != null) assert.ok(Math.abs(ey.computed - snap.output[dv]) <= 2e-5 + 2e-4 * Math.abs(ey.computed), `${id}: tooltip formula y[1,0]`);
      const info = nodeLab.variants.find((v) => v.id === id);
      const family = info.family;
      if (info.causalOnly) { // causal by construction: the box shows it, and cannot be unchecked
        assert.equal(snap.options.causal, true, `${id}: called with causal`);
        assert.equal(await page.isChecked('#causal'), true, `${id}: the causal box is checked`);
        assert.equal(await page.isDisabled('#causal'), true, `${id}: the causal box is disabled`);
        assert.match(await page.textContent('#weights-title'), /implicit: computed for display/);
        assert.match(await page.textContent('#weights-note'), /either sign/);
      }
      if (family === 'linear') {
        assert.match(await page.textContent('#weights-title'), /implicit: computed for display/);
        assert.equal(await page.isVisible('#intermediates'), true, `${id}: intermediates shown`);
        assert.equal(await page.locator('#options-card input, #options-card select').evaluateAll((els) => els.filter((e) => /state/.test(e.id)).length), 0,
          `${id}: state is an output the page requests, not an option control`);
        // they are the library's own state and normaliser for these inputs
        const lab = snap.build === nodeLab.build ? nodeLab : await binding.init({ simd: snap.build === 'relaxed' ? 'relaxed' : snap.build === 'simd' });
        const { state, normalizer } = lab.attention(id, toF32Inputs(snap.inputs), { ...snap.options, state: true });
        const shown = Object.values(snap.intermediates).flat();
        const expected = id === 'taylor' ? [...state.slice(dv), ...normalizer.slice(1), ...state.slice(0, dv)] : [...state, ...normalizer];
        assert.equal(shown.length, expected.length, `${id}: intermediates size`);
        shown.forEach((x, i) => assert.ok(Math.abs(x - expected[i]) <= 1e-6 + 1e-5 * Math.abs(expected[i]), `${id}: intermediate ${i} = ${x}, library ${expected[i]}`));
      }
    }
    // causal: every variant again, with the mask (the box is set on a variant that may be either)
    await chooseVariant(page, ids.find((x) => !nodeLab.variants.find((v) => v.id === x).causalOnly));
    await page.check('#causal');
    for (const id of ids) {
      const snap = await chooseVariant(page, id);
      assert.equal(snap.options.causal, true);
      assert.equal(snap.error, null, `${id} causal: no error (${JSON.stringify(snap.error)})`);
      checkAgainstBinding(snap, `${id} causal`);
      const n = snap.inputs.n;
      for (const [i, j] of [[n - 1, 0], [Math.floor(n / 2), 1], [2, 5]]) {
        const ex = await page.evaluate(([i, j]) => window.__attnlab.explain('weights', i, j), [i, j]);
        if (ex.computed != null) assert.ok(Math.abs(ex.computed - snap.weights[i * n + j]) <= 2e-5 + 2e-4 * Math.abs(ex.computed), `${id} causal: tooltip formula A[${i},${j}] = ${ex.computed}, binding ${snap.weights[i * n + j]}`);
      }
    }
    assertNoProblems(page);
  });

  test('the option fields of every variant are built from lab.options', async (t) => {
    const page = await newPage(t);
    const meta = nodeLab.options;
    // the page formats defaults with 4 significant digits: read them back as numbers
    const shownDefault = (placeholder) => Number(placeholder.replace(/^default /, '').replace('−', '-'));
    for (const v of nodeLab.variants) {
      await chooseVariant(page, v.id);
      const fields = await page.$$eval('#variant-options [data-option]', (els) => els.map((e) => ({
        option: e.dataset.option, tag: e.tagName, type: e.type ?? null, default: e.dataset.default ?? null, placeholder: e.placeholder ?? null,
        min: e.getAttribute('min'), step: e.getAttribute('step'), values: e.tagName === 'SELECT' ? [...e.options].map((o) => o.value) : null,
        checks: e.tagName === 'FIELDSET' ? [...e.querySelectorAll('input[type="checkbox"]')].map((c) => c.dataset.value) : null,
      })));
      const byName = Object.fromEntries(fields.map((f) => [f.option, f]));
      for (const name of v.options) {
        const m = meta[name];
        assert.ok(m, `${v.id}: lab.options.${name} describes the option`);
        if (m.appliesTo) assert.ok(m.appliesTo.includes(v.id), `${v.id}: lab.options.${name}.appliesTo lists it`);
        if (name === 'state' || name === 'alphaLogits') {
          assert.equal(byName[name], undefined, `${v.id}: ${name} has no field of its own`);
          continue;
        }
        // a mixture's option that belongs to its components has a field only while a chosen
        // component takes it (inputs.test.mjs checks it appears when one is chosen)
        const owners = v.composite ? (m.appliesTo ?? []).filter((id) => id !== v.id && nodeLab.variants.find((x) => x.id === id)?.mixable) : [];
        if (owners.length) {
          const chosen = await page.$$eval('#variant-options [data-option="components"] input:checked', (cs) => cs.map((c) => c.dataset.value));
          if (!owners.some((c) => chosen.includes(c))) {
            assert.equal(byName[name], undefined, `${v.id}: no ${name} field while none of ${owners} is a component`);
            continue;
          }
        }
        const f = byName[name];
        assert.ok(f, `${v.id}: a field for option ${name}`);
        if (m.type === 'number' || m.type === 'integer') {
          assert.equal(f.type, 'number', `${v.id}.${name}: a number field`);
          assert.deepEqual(JSON.parse(f.default), m.default, `${v.id}.${name}: data-default is lab.options.${name}.default`);
          if (m.default != null) assert.equal(shownDefault(f.placeholder), m.default, `${v.id}.${name}: placeholder "${f.placeholder}" shows the default`);
          else assert.match(f.placeholder, /^default/);
          assert.equal(f.min, m.min != null ? String(m.min) : null, `${v.id}.${name}: min is lab.options.${name}.min`);
          if (m.type === 'integer') assert.equal(f.step, '1');
        } else if (m.type === 'enum') {
          assert.deepEqual(f.values, m.values, `${v.id}.${name}: the select lists lab.options.${name}.values`);
        } else if (m.type === 'list') {
          const mixable = nodeLab.variants.filter((x) => x.mixable).map((x) => x.id);
          assert.ok(mixable.length > 0, 'lab.variants[i].mixable marks the variants a mixture may combine');
          assert.deepEqual(f.checks, mixable, `${v.id}.${name}: one checkbox per mixable variant`);
          if (m.values) assert.deepEqual(m.values, mixable, 'lab.options.components.values are the mixable variants');
        }
      }
      assert.deepEqual(Object.keys(byName).filter((k) => !v.options.includes(k)), [], `${v.id}: no field for an option it does not take`);
    }
    // with causal on, only the patterns lab.options.pattern.causalValues names can be chosen
    if (meta.pattern && nodeLab.variants.some((v) => v.options.includes('pattern'))) {
      const id = nodeLab.variants.find((v) => v.options.includes('pattern')).id;
      await chooseVariant(page, id);
      const enabled = () => page.$$eval('#opt-pattern option', (os) => os.filter((o) => !o.disabled).map((o) => o.value));
      assert.deepEqual(await enabled(), meta.pattern.values, 'without causal every pattern can be chosen');
      await page.check('#causal');
      await idle(page);
      assert.ok(Array.isArray(meta.pattern.causalValues), 'lab.options.pattern.causalValues lists the patterns allowed with causal');
      assert.deepEqual(await enabled(), meta.pattern.causalValues, 'with causal only causalValues can be chosen');
      await page.uncheck('#causal');
      await idle(page);
      assert.deepEqual(await enabled(), meta.pattern.values);
    }
    assertNoProblems(page);
  });

  test('the build selector runs the scalar build, with the same numbers', async (t) => {
    const page = await newPage(t);
    const builds = await page.$$eval('#build-select option', (os) => os.map((o) => o.value));
    assert.ok(builds.includes('scalar') && builds.includes('auto'));
    await page.selectOption('#build-select', 'scalar');
    await idle(page);
    const snap = await snapshot(page);
    assert.equal(snap.build, 'scalar');
    assert.match(await page.textContent('#timing'), /scalar build/);
    assert.match(page.url(), /build=scalar/);
    const scalar = await binding.init({ simd: false });
    const ref = scalar.attention(snap.variant, toF32Inputs(snap.inputs), { ...snap.options, weights: true });
    assertClose(snap.output, Array.from(ref.output), 'scalar y', 1e-6, 1e-6);
    assertNoProblems(page);
  });

  test('editing a cell changes the output (and the URL)', async (t) => {
    const page = await newPage(t);
    const before = await snapshot(page);
    const cell = page.locator('input.cell[data-array="q"][data-index="0"]');
    await cell.fill('2.5');
    await cell.press('Enter');
    await idle(page);
    const afterEdit = await snapshot(page);
    assert.equal(afterEdit.inputs.q[0], 2.5);
    assert.notDeepEqual(afterEdit.output, before.output);
    checkAgainstBinding(afterEdit, 'after edit');
    assert.match(page.url(), /e\.q=/);
    // pasting a whole matrix as CSV
    await page.click('#array-tabs [data-array="v"]');
    await page.click('#array-panel details.paste summary');
    const { n, dv } = afterEdit.inputs;
    const csv = Array.from({ length: n }, (_, i) => Array.from({ length: dv }, (_, c) => ((i + c) % 3) - 1).join(',')).join('\n');
    await page.fill('#paste-v', csv);
    await page.click('#array-panel button:has-text("Apply to v")');
    await idle(page);
    const pasted = await snapshot(page);
    assert.deepEqual(pasted.inputs.v, csv.split('\n').flatMap((l) => l.split(',').map(Number)));
    checkAgainstBinding(pasted, 'after paste');
    assertNoProblems(page);
  });

  test('a bad value shows the AttnError inline, keeps the last output, and the page keeps working', async (t) => {
    const page = await newPage(t);
    const good = await snapshot(page);
    await page.click('#array-tabs [data-array="k"]');
    const cell = page.locator('input.cell[data-array="k"][data-index="3"]');
    await cell.fill('abc');
    await cell.press('Enter');
    await idle(page);
    const err = page.locator('#cell-error');
    await err.waitFor({ state: 'visible' });
    // the binding refuses the input with its own error (kept as the page's last error); the page
    // says it once, in the editor's notation, and the banner says the output is stale
    let expected;
    try {
      const ins = toF32Inputs(good.inputs);
      ins.k[3] = NaN;
      nodeLab.attention('softmax', ins, good.options);
    } catch (e) {
      expected = e;
    }
    assert.ok(expected instanceof AttnError, 'the binding rejects NaN');
    const text = await err.textContent();
    assert.ok(text.includes('k[0, 3] = “abc”'), `the cell named once, in the editor's notation: "${text}"`);
    const lastError = (await snapshot(page)).error;
    assert.equal(lastError.message, expected.message, 'the binding\'s refusal is the page\'s last error');
    assert.equal(lastError.code, expected.code);
    assert.equal(await page.isVisible('#inputs-error'), false, 'not said a second time in the binding\'s notation');
    const banner = await page.textContent('#run-error');
    assert.match(banner, /^Showing the last good output \(stale\)\. a cell of k is not a number \(named under the inputs\)\.$/);
    assert.doesNotMatch(banner, /\]\[|index/, 'no second notation');
    assert.equal(await page.getAttribute('#outputs', 'data-stale'), 'true');
    assert.equal(await page.isVisible('#stale-badge'), true);
    const stale = await snapshot(page);
    assert.deepEqual(stale.output, good.output, 'the last good output stays');
    assert.equal(await page.locator('#weights-map canvas.hm-canvas').isVisible(), true);
    // a shape error from a paste: inline next to the paste box, nothing committed
    await page.click('#array-tabs [data-array="q"]');
    await page.click('#array-panel details.paste summary');
    await page.fill('#paste-q', '1, 2, 3');
    await page.click('#array-panel button:has-text("Apply to q")');
    await page.locator('#paste-error-q').waitFor({ state: 'visible' });
    assert.match(await page.textContent('#paste-error-q'), /q/);
    // fix the cell: the error goes away and the page computes again
    await page.click('#array-tabs [data-array="k"]');
    const cell2 = page.locator('input.cell[data-array="k"][data-index="3"]');
    await cell2.fill('0.25');
    await cell2.press('Enter');
    await idle(page);
    assert.equal(await page.isVisible('#inputs-error'), false);
    assert.equal(await page.isVisible('#cell-error'), false);
    assert.equal(await page.isVisible('#run-error'), false);
    const fixed = await snapshot(page);
    assert.equal(fixed.stale, false);
    assert.equal(fixed.inputs.k[3], 0.25);
    checkAgainstBinding(fixed, 'after fixing');
    // a·b ≠ L for factorized-dense: the dims control shows the binding's VALUE error
    if (nodeLab.variants.some((v) => v.id === 'factorized-dense')) {
      await chooseVariant(page, 'factorized-dense');
      await page.fill('#dim-a', '3');
      await idle(page);
      await page.locator('#dims-error').waitFor({ state: 'visible' });
      assert.match(await page.textContent('#dims-error'), /VALUE/);
      await page.fill('#dim-a', '');
      await idle(page);
      assert.equal(await page.isVisible('#dims-error'), false);
      checkAgainstBinding(await snapshot(page), 'factorized-dense after fixing a');
    }
    // an option the variant cannot honour: fixed "next" with causal
    if (nodeLab.variants.some((v) => v.id === 'fixed')) {
      await chooseVariant(page, 'fixed');
      await page.selectOption('#opt-pattern', 'next');
      await page.check('#causal');
      await idle(page);
      await page.locator('#options-error').waitFor({ state: 'visible' });
      assert.match(await page.textContent('#options-error'), /UNSUPPORTED|VALUE/);
      await page.uncheck('#causal');
      await idle(page);
      assert.equal(await page.isVisible('#options-error'), false);
    }
    assertNoProblems(page);
  });

  test('causal greys the upper triangle of A', async (t) => {
    const page = await newPage(t);
    await page.check('#causal');
    await idle(page);
    const snap = await snapshot(page);
    assert.equal(snap.options.causal, true);
    checkAgainstBinding(snap, 'causal softmax');
    const n = snap.inputs.n;
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) assert.equal(snap.weights[i * n + j], 0);
    for (const [i, j] of [[0, 1], [0, n - 1], [Math.floor(n / 2), n - 1], [n - 2, n - 1]]) {
      const c = await cellColour(page, '#weights-map canvas.hm-canvas', i, j);
      assert.equal(c.rgb, c.mask, `A[${i},${j}] is drawn in the mask colour`);
    }
    for (const [i, j] of [[0, 0], [n - 1, 0], [n - 1, n - 1]]) {
      const c = await cellColour(page, '#weights-map canvas.hm-canvas', i, j);
      assert.notEqual(c.rgb, c.mask, `A[${i},${j}] is not masked`);
    }
    assert.match(await page.textContent('#weights-card .legend'), /masked/);
    // the tooltip: hover, click to lock, Esc to unlock
    const box = await page.locator('#weights-map canvas.hm-canvas').boundingBox();
    const at = (i, j) => ({ x: box.x + ((j + 0.5) / n) * box.width, y: box.y + ((i + 0.5) / n) * box.height });
    await page.mouse.move(at(2, 1).x, at(2, 1).y);
    let tip = await page.evaluate(() => window.__attnlab.tooltip());
    assert.equal(tip.visible, true);
    assert.match(tip.text, /A\[2, 1\]/);
    assert.match(tip.text, /exp\(/);
    await page.mouse.click(at(0, 3).x, at(0, 3).y);
    tip = await page.evaluate(() => window.__attnlab.tooltip());
    assert.equal(tip.locked, true);
    assert.match(tip.text, /masked/);
    await page.mouse.move(at(5, 0).x, at(5, 0).y);
    assert.match((await page.evaluate(() => window.__attnlab.tooltip())).text, /A\[0, 3\]/, 'locked tooltip stays');
    await page.keyboard.press('Escape');
    tip = await page.evaluate(() => window.__attnlab.tooltip());
    assert.equal(tip.locked, false);
    assert.equal(tip.visible, false);
    assertNoProblems(page);
  });

  test('the URL hash restores the same state in a fresh page', async (t) => {
    const page = await newPage(t);
    await chooseVariant(page, 'linear');
    await page.check('#causal');
    await page.fill('#seed', '4242');
    await page.fill('#dim-n', '10');
    await idle(page);
    const cell = page.locator('input.cell[data-array="v"][data-index="5"]');
    await page.click('#array-tabs [data-array="v"]');
    await cell.fill('-1.75');
    await cell.press('Enter');
    await page.fill('#opt-eps', '0.001');
    await idle(page);
    const a = await snapshot(page);
    assert.equal(a.inputs.v[5], -1.75);
    assert.equal(a.options.eps, 0.001);
    const hash = new URL(page.url()).hash;
    const fresh = await newPage(t, { hash });
    const b = await snapshot(fresh);
    assert.equal(b.variant, 'linear');
    assert.deepEqual(b.inputs, a.inputs);
    assert.deepEqual(b.options, a.options);
    assert.deepEqual(b.output, a.output);
    assert.equal(await fresh.inputValue('#seed'), '4242');
    assert.equal(await fresh.isChecked('#causal'), true);
    assertNoProblems(page);
    assertNoProblems(fresh);
  });

  test('compare shows max |Δy| and NMSE against softmax that match the binding', async (t) => {
    const page = await newPage(t);
    const cmp = await page.evaluate(() => window.__attnlab.compare());
    assert.equal(cmp.baseId, 'softmax');
    assert.ok(cmp.ids.length >= 2);
    const snap = await snapshot(page);
    const inputs = toF32Inputs(snap.inputs);
    const base = nodeLab.attention('softmax', inputs, { causal: false }).output;
    for (const id of cmp.ids) {
      const r = cmp.results[id];
      assert.ok(!r.error, `${id}: ${JSON.stringify(r.error)}`);
      if (id === 'softmax') continue;
      const rows = await page.$$eval(`#compare-table tr[data-variant="${id}"]`, (trs) => trs.map((tr) => ({ maxAbs: Number(tr.dataset.maxAbs), nmse: Number(tr.dataset.nmse) })));
      assert.equal(rows.length, 1);
      let mx = 0, se = 0, ss = 0;
      for (let i = 0; i < base.length; i++) {
        const d = r.output[i] - base[i];
        mx = Math.max(mx, Math.abs(d));
        se += d * d;
        ss += base[i] * base[i];
      }
      assert.ok(Math.abs(rows[0].maxAbs - mx) <= 1e-4 + 1e-3 * mx, `${id}: max |Δy|`);
      assert.ok(Math.abs(rows[0].nmse - se / ss) <= 1e-4 + 1e-3 * (se / ss), `${id}: NMSE`);
    }
    // add a variant to the comparison
    await page.check('#cmp-taylor');
    await idle(page);
    assert.ok((await page.evaluate(() => window.__attnlab.compare())).ids.includes('taylor'));
    assert.equal(await page.locator('.compare-card[data-variant="taylor"] canvas').count() >= 2, true);
    assertNoProblems(page);
  });

  test('the scaling chart completes for a small range, and Cancel stops a long run', async (t) => {
    const page = await newPage(t);
    await page.selectOption('#scale-max', '256');
    await page.fill('#scale-d', '16');
    await page.fill('#scale-dv', '16');
    const builds = await page.$$eval('#scale-builds input:checked', (xs) => xs.map((x) => x.dataset.build));
    assert.ok(builds.length >= 1);
    await page.click('#scale-run');
    await page.waitForFunction(() => window.__attnlab.scaling().done, null, { timeout: 60000 });
    const s = await page.evaluate(() => window.__attnlab.scaling());
    assert.equal(s.points.length, 3 * 2 * builds.length, 'n = 64, 128, 256 × softmax, linear × builds');
    for (const p of s.points) assert.ok(p.median > 0 || p.skipped || p.error, JSON.stringify(p));
    assert.ok(s.points.filter((p) => p.median > 0).length >= 6);
    if (builds.includes('scalar')) assert.ok(s.points.some((p) => p.build === 'scalar' && p.median > 0));
    assert.equal(await page.locator('#scale-results tbody tr').count(), s.points.length);
    assert.match(await page.textContent('#scale-results'), /GFLOP|\d/);
    assert.equal(await page.getAttribute('#scale-progress', 'max'), String(s.points.length));
    // a long run, cancelled after its first point
    await page.selectOption('#scale-max', '16384');
    await page.click('#scale-run');
    await page.waitForFunction(() => window.__attnlab.scaling().points.length >= 1, null, { timeout: 60000 });
    await page.click('#scale-cancel');
    const c = await page.evaluate(() => window.__attnlab.scaling());
    assert.equal(c.cancelled, true);
    assert.equal(c.running, false);
    assert.equal(await page.isDisabled('#scale-run'), false);
    assert.match(await page.textContent('#scale-status'), /Cancelled/);
    // the page still computes after the cancel
    await page.fill('#seed', '77');
    await idle(page);
    checkAgainstBinding(await snapshot(page), 'after cancel');
    assertNoProblems(page);
  });

  test('copy as code and export JSON reproduce the numbers', async (t) => {
    const page = await newPage(t);
    await chooseVariant(page, 'taylor');
    const snap = await snapshot(page);
    const code = await page.evaluate(() => window.__attnlab.codeSnippet());
    assert.match(code, /import \{ init \} from 'attnlab'/);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-code-'));
    const file = path.join(dir, 'snippet.mjs');
    fs.writeFileSync(file, code.replace("from 'attnlab'", `from ${JSON.stringify(pathToFileURL(BINDING).href)}`).replace(/console\.log\(output\);.*$/m, 'export { output };'));
    const { output } = await import(pathToFileURL(file).href);
    fs.rmSync(dir, { recursive: true, force: true });
    assertClose(Array.from(output), snap.output, 'copy-as-code output');
    await page.click('#copy-code');
    assert.equal(await page.isVisible('#code-dialog'), true);
    await page.keyboard.press('Escape');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
    const json = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
    assert.equal(json.variant, 'taylor');
    assert.deepEqual(json.output, snap.output);
    assert.deepEqual(json.inputs.q, snap.inputs.q);
    const [png] = await Promise.all([page.waitForEvent('download'), page.click('[data-export="weights"]')]);
    const head = fs.readFileSync(await png.path()).subarray(0, 8);
    assert.deepEqual([...head], [137, 80, 78, 71, 13, 10, 26, 10], 'a PNG file');
    assertNoProblems(page);
  });

  test('keyboard: labelled controls, focusable heatmaps, arrow keys read cells', async (t) => {
    const page = await newPage(t);
    const unlabelled = await page.evaluate(() => {
      const bad = [];
      for (const e of document.querySelectorAll('input, select, textarea, button')) {
        if (e.type === 'hidden' || e.closest('[hidden]') || e.classList.contains('copy-fallback')) continue;
        const name = e.getAttribute('aria-label') || (e.id && document.querySelector(`label[for="${e.id}"]`)?.textContent.trim()) || e.closest('label')?.textContent.trim() || (e.tagName === 'BUTTON' && e.textContent.trim());
        if (!name) bad.push(e.outerHTML.slice(0, 80));
      }
      return bad;
    });
    assert.deepEqual(unlabelled, []);
    await page.focus('#weights-map canvas.hm-canvas');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    let tip = await page.evaluate(() => window.__attnlab.tooltip());
    assert.match(tip.text, /A\[1, 1\]/);
    await page.keyboard.press('Enter');
    assert.equal((await page.evaluate(() => window.__attnlab.tooltip())).locked, true);
    await page.keyboard.press('Escape');
    tip = await page.evaluate(() => window.__attnlab.tooltip());
    assert.equal(tip.locked, false);
    assertNoProblems(page);
  });

  test('light and dark screenshots, and a phone layout without horizontal scrolling', async (t) => {
    const light = await newPage(t, { colorScheme: 'light', viewport: { width: 1280, height: 900 } });
    await light.screenshot({ path: path.join(ARTIFACTS, 'page-light.png'), fullPage: true });
    const bgLight = await light.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const dark = await newPage(t, { colorScheme: 'dark', viewport: { width: 1280, height: 900 } });
    await dark.screenshot({ path: path.join(ARTIFACTS, 'page-dark.png'), fullPage: true });
    const bgDark = await dark.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.notEqual(bgLight, bgDark, 'dark mode follows the system');
    // the toggle overrides the system
    await dark.click('#theme-toggle'); // auto -> light
    assert.equal(await dark.evaluate(() => document.documentElement.dataset.theme), 'light');
    assert.equal(await dark.evaluate(() => getComputedStyle(document.body).backgroundColor), bgLight);
    const phone = await newPage(t, { viewport: { width: 390, height: 844 } });
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `page is ${overflow}px wider than the phone screen`);
    await phone.screenshot({ path: path.join(ARTIFACTS, 'page-phone.png'), fullPage: true });
    for (const p of [light, dark, phone]) assertNoProblems(p);
  });
});
