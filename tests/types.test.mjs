// The package's TypeScript declarations as a user meets them: `npm pack` the repo, install the
// tarball (offline) into an empty project, and type-check tests/consumers/types/usage.ts (the whole
// public API, plus // @ts-expect-error lines for wrong calls) with a strict `tsc --noEmit`, once
// with moduleResolution nodenext and once with bundler. Then compile usage.ts, run it against the
// installed package, and compare the names the .d.ts declares (typed Record<keyof X, true> objects
// in usage.ts, which tsc keeps exact) with what the runtime reports.
//
//   node --experimental-wasm-relaxed-simd --test tests/types.test.mjs
//
// typescript is a devDependency of the repo and runs from its node_modules; nothing here uses the
// network. ATTNLAB_KEEP_TMP=1 keeps the temp directory.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { REPO_ROOT, packTarball, installTarball, devDependencyDir, runCommand } from './helpers.mjs';

const FIXTURE = path.join(REPO_ROOT, 'tests', 'consumers', 'types');
let tmp, project, installed, tsc;

before(() => {
  const ts = devDependencyDir('typescript');
  tsc = path.join(ts, JSON.parse(fs.readFileSync(path.join(ts, 'package.json'), 'utf8')).bin.tsc);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-types-'));
  project = path.join(tmp, 'project');
  installed = installTarball(project, packTarball(tmp));
  for (const f of fs.readdirSync(FIXTURE)) fs.copyFileSync(path.join(FIXTURE, f), path.join(project, f));
});

after(() => {
  if (tmp && !process.env.ATTNLAB_KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
});

function runTsc(args) {
  return runCommand(process.execPath, [tsc, ...args], project, {}, 120_000);
}

describe('attnlab.d.ts from the packed package', () => {
  for (const config of ['tsconfig.json', 'tsconfig.bundler.json']) {
    test(`strict tsc --noEmit over usage.ts reports nothing (${config})`, () => {
      const r = runTsc(['-p', config, '--listFiles']);
      const errors = r.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
      assert.equal(r.status, 0, `tsc reported ${errors.length} error(s):\n${errors.join('\n')}\n${r.show}`);
      assert.deepEqual(errors, []);
      // the declarations came from the installed package, through its package.json
      const files = r.stdout.split('\n').map((l) => l.trim()).filter(Boolean);
      assert.ok(files.includes(path.join(installed, 'dist', 'attnlab.d.ts')),
        `tsc did not read node_modules/attnlab/dist/attnlab.d.ts; it read:\n${files.filter((f) => !/lib\.[\w.]+\.d\.ts$/.test(f)).join('\n')}`);
    });
  }

  test('tsc does fail on a wrong call (the check is not vacuous)', () => {
    const marker = '// @ts-expect-error n is required';
    const usage = fs.readFileSync(path.join(project, 'usage.ts'), 'utf8');
    assert.ok(usage.includes(marker), `usage.ts lost the line "${marker}"`);
    const broken = usage.split('\n');
    const line = broken.findIndex((l) => l.trim() === marker);
    broken.splice(line, 1); // the wrong call is now on line `line + 1` (1-based)
    fs.writeFileSync(path.join(project, 'broken.ts'), broken.join('\n'));
    fs.writeFileSync(path.join(project, 'tsconfig.broken.json'), JSON.stringify({ extends: './tsconfig.json', files: ['broken.ts'] }));
    const r = runTsc(['-p', 'tsconfig.broken.json']);
    assert.notEqual(r.status, 0, `tsc accepted a call without n\n${r.show}`);
    const errors = r.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
    assert.equal(errors.length, 1, `expected exactly one error, got:\n${r.show}`);
    assert.match(errors[0], new RegExp(`^broken\\.ts\\(${line + 1},\\d+\\): error TS\\d+: .*'n'`), r.show);
  });

  test('usage.ts compiled and run: the declared names are the runtime names', async () => {
    const c = runTsc(['-p', 'tsconfig.json', '--noEmit', 'false', '--outDir', 'out']);
    assert.equal(c.status, 0, `tsc (emit) failed\n${c.show}`);
    const flags = process.execArgv.filter((a) => a.startsWith('--experimental-wasm'));
    const r = runCommand(process.execPath, [...flags, 'run.mjs'], project, {}, 60_000);
    assert.equal(r.status, 0, `running the compiled usage.ts failed\n${r.show}`);
    const report = JSON.parse(r.stdout.trim().split('\n').pop());
    const D = report.declared;

    // the runtime, from the same installed package
    const pkg = await import(pathToFileURL(path.join(installed, 'dist', 'attnlab.js')).href);
    const lab = await pkg.init({ simd: false });
    const sorted = (xs) => [...new Set(xs)].sort();
    const union = (objs) => sorted(objs.flatMap((o) => Object.keys(o)));
    const proto = Object.getOwnPropertyNames(Object.getPrototypeOf(lab)).filter((k) => k !== 'constructor');

    assert.deepEqual(D.options, sorted(Object.keys(lab.options)), 'AttentionOptions keys vs lab.options');
    assert.deepEqual(D.dims, sorted(Object.keys(lab.dims)), "AttnLab['dims'] keys vs lab.dims");
    assert.deepEqual(D.inputs, sorted(lab.variants.flatMap((v) => [...v.dims, ...v.inputs.map((s) => s.name)])),
      'AttentionInputs keys vs the dims and arrays of lab.variants');
    assert.deepEqual(D.variantInfo, union(lab.variants), 'VariantInfo keys vs lab.variants entries');
    assert.deepEqual(D.optionInfo, union(Object.values(lab.options)), 'OptionInfo keys vs lab.options entries');
    assert.deepEqual(D.dimInfo, union(Object.values(lab.dims)), 'DimInfo keys vs lab.dims entries');
    assert.deepEqual(D.inputSpec, union(lab.variants.flatMap((v) => v.inputs)), 'InputSpec keys vs lab.variants[].inputs');
    assert.deepEqual(D.gradOptions, sorted(Object.keys(lab.options).filter((k) => lab.options[k].grad)),
      'GradOptions keys vs the lab.options entries with grad: true');
    assert.deepEqual(D.grads, sorted([...lab.variants.flatMap((v) => v.inputs.map((s) => s.name)), 'alpha', 'alphaLogits']),
      "GradResult['grads'] keys vs the arrays of lab.variants, alpha and alphaLogits");
    assert.deepEqual(D.gradResult, ['grads', 'output'], 'GradResult keys');
    assert.deepEqual(D.keptResult, ['backward', 'lse', 'normalizer', 'output', 'state', 'weights'], 'KeptResult keys');
    assert.deepEqual(report.kept, { keys: ['backward', 'lse', 'output'], lse: 6, grads: ['k', 'q', 'v'], same: true },
      "attention('softmax', ..., { keep: true }): output, lse and backward, attentionGrad's gradients");
    assert.deepEqual(D.features, sorted(Object.keys(pkg.features())), 'Features keys vs features()');
    assert.deepEqual(D.instance, sorted([...Object.keys(lab), ...proto]), 'AttnLab members vs the instance');
    // KnownVariantId is the ids when the .d.ts was written (VariantId takes any other): each must
    // still exist; a newer variant may be added to it (and to usage.ts's KNOWN_VARIANTS) for completion.
    const ids = lab.variants.map((v) => v.id);
    assert.deepEqual(D.variants.filter((id) => !ids.includes(id)), [], 'KnownVariantId (src/js/attnlab.d.ts) names ids lab.variants lacks');
    assert.deepEqual(D.patterns, sorted(lab.options.pattern.values), 'FixedPattern vs lab.options.pattern.values');
    assert.deepEqual(D.tilings, sorted(lab.options.tiling.values), "AttentionOptions['tiling'] vs lab.options.tiling.values");
    for (const t of Object.values(lab.options).map((o) => o.type)) assert.ok(D.optionTypes.includes(t), `OptionInfo['type'] lacks '${t}'`);
    for (const f of lab.variants.map((v) => v.family)) assert.ok(D.families.includes(f), `VariantInfo['family'] lacks '${f}'`);
    assert.deepEqual(Object.keys(pkg).sort(), ['AttnError', 'evaluateHeldOut', 'features', 'init', 'tasks', 'version'], 'the package exports');
    assert.deepEqual(report.corpus, { vocab: 63, characters: 4137847, evalWindows: 128, classes: 2, chance: 0.5, bitsAreLoss: true, finalBits: true },
      `the corpus and its tasks through the installed package: ${JSON.stringify(report.corpus)}`);
    assert.deepEqual(report.experiment, { first: 'softmax', extras: 2, runVocab: 64, threshold: 0.9, evalPoints: 40, chance: true },
      `the experiments' facts through attnlab/experiment: ${JSON.stringify(report.experiment)}`);
    assert.deepEqual(report.tasks, { same: true, names: 6, copyKnobs: 2, split: 'validation', validation: 16, text: true, heldOutEvery: 10, file: 'kjv.txt', tokenName: '|', options: true },
      `the tasks through attnlab/tasks: ${JSON.stringify(report.tasks)}`);
    assert.deepEqual(report.oracles, { weights: 4, upperZero: true, steps: true, bar: 1e-5, known: true, flops: true, dh: 4, tableMatches: true, lossFinite: true, random: true },
      `the float64 oracles and the PRNG through their subpaths: ${JSON.stringify(report.oracles)}`);
    assert.deepEqual(D.model, sorted(report.model.members.filter((k) => k !== 'constructor')), 'Model members vs a model');
    const task = pkg.tasks.copy({ seqLen: 8, vocab: 6 });
    for (const k of D.task) assert.ok(k in task, `Task declares ${k}, which a task lacks`);
    assert.ok(report.model.after <= report.model.before && report.model.step === 1 + report.model.trainedSteps && report.model.trainedSteps === 4 && report.model.parameters === report.model.grads,
      `the model calls: ${JSON.stringify(report.model)}`);

    // what the calls did
    assert.equal(report.version, pkg.version);
    assert.equal(report.labVersion, pkg.version);
    assert.ok(D.builds.includes(report.build), `lab.build ${report.build}`);
    assert.equal(report.sameCached, true, 'init() and init({ simd: "auto" }) share the cached instance');
    assert.equal(report.freshIsNew, true, 'init({ fresh: true }) is a new instance');
    const simdBuild = report.features.relaxedSimd ? 'relaxed' : report.features.simd ? 'simd' : 'scalar';
    assert.deepEqual(report.builds, ['scalar', simdBuild, 'scalar', 'scalar', 'scalar', 'simd'],
      'builds of init({ simd: false }), init({ simd }), wasmBinary (Uint8Array, ArrayBuffer), locateFile, { simd: true, fresh, locateFile }');
    assert.equal(report.metadata.epsDefault, 1e-6);
    assert.deepEqual(report.metadata.causalPatterns, lab.options.pattern.causalValues);
    assert.equal(report.metadata.lDefaultsTo, 'n');
    assert.ok(report.calls.length >= 15, `${report.calls.length} calls`);
    for (const call of report.calls) {
      assert.equal(call.output, 6 * 3, `${call.id}: output length`);
      assert.ok(call.finite, `${call.id}: non-finite values`);
      if (call.weights !== null) assert.equal(call.weights, 36, `${call.id}: weights length`);
    }
    assert.deepEqual(report.calls.filter((c) => c.state !== null).map((c) => [c.id, c.state, c.normalizer]),
      [['linear', 12, 4], ['efficient', 12, 4], ['taylor', 15, 5]], 'state and normalizer lengths');
    assert.equal(report.stateLength, 12);
    assert.deepEqual(report.grad, { output: 18, grads: ['v', 'first:v'], v: 18, keys: ['grads', 'output'] },
      "attentionGrad('fixed', ...): output, grads.v");
    assert.equal(report.metadata.gradTakesWindow, true, 'lab.options.window.grad');
    assert.ok(report.memory > 0, 'memoryBytes()');
    assert.deepEqual(report.errors, {
      shape: 'SHAPE', value: 'VALUE', unknown: 'UNKNOWN', unsupported: 'UNSUPPORTED', gradWeights: 'UNSUPPORTED',
      gradShape: 'SHAPE', disposed: 'DISPOSED', load: 'LOAD',
    }, 'AttnError codes');
    for (const code of Object.values(report.errors)) assert.ok(D.errorCodes.includes(code), `AttnErrorCode lacks ${code}`);
    assert.deepEqual(report.webgpu, { code: 'UNSUPPORTED', sameClass: true }, 'initWebGPU() in Node: UNSUPPORTED, with attnlab\'s AttnError');
  });
});
