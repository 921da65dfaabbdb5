// attnlab/webgpu in Chromium on its software adapter (SwiftShader: --enable-unsafe-webgpu on
// http://localhost), so no GPU is needed. Every softmax fixture within the accuracy bar, the same
// bits twice, the WebAssembly instance's errors word for word, what is not on WebGPU yet, the
// limits, a lost device, dispose, and a browser without WebGPU's flag. None of it skips: a
// machine where Chromium finds no adapter fails here.
//
//   node --test tests/browser/webgpu.test.mjs

import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startServer } from '../../scripts/serve.mjs';
import { closeTo, caseName, inputChecksum, makeInputs } from '../helpers.mjs';
import { reference } from '../../src/js/reference.js';
import { mulberry32 } from '../../src/js/prng.js';
import { ARTIFACTS, REPO, assertClose, idle, snapshot, withTestHook, toF32Inputs } from './harness.mjs';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const BASE_ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--no-first-run'];
// every variant runs on WebGPU (the first test holds gpu.ready to the registry's list)
const fixtures = fs.readdirSync(path.join(REPO, 'tests', 'fixtures')).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(fs.readFileSync(path.join(REPO, 'tests', 'fixtures', f), 'utf8')));
const READY = fixtures.map((f) => f.variant);

let chromium, server, browser, page, nodeLab;

// A page that has imported attnlab/webgpu, with window.gpu = await initWebGPU() (or the error).
async function openPage(b) {
  const p = await b.newPage();
  p.problems = [];
  p.on('pageerror', (e) => p.problems.push(`page error: ${e.message}`));
  await p.goto(new URL('/tests/browser/fixtures/webgpu.html', server.url).href);
  await p.evaluate(async () => {
    const m = await import('/dist/webgpu.js');
    window.webgpu = m;
    const f32 = (x) => (Array.isArray(x) ? Float32Array.from(x) : x);
    window.toInputs = (inputs) => Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, f32(v)]));
    window.caught = async (f) => {
      try {
        await f();
        return null;
      } catch (e) {
        return { name: e.name, code: e.code, message: e.message, isAttnError: e instanceof m.AttnError };
      }
    };
    window.initError = await window.caught(async () => { window.gpu = await m.initWebGPU(); });
  });
  return p;
}

before(async () => {
  assert.ok(fs.existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: npm test installs it (apt-get install chromium)`);
  ({ chromium } = await import('playwright-core'));
  const binding = await import(pathToFileURL(path.join(REPO, 'dist', 'attnlab.js')).href);
  nodeLab = await binding.init({ threads: 1 });
  server = await startServer({ port: 0, root: REPO, quiet: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: [...BASE_ARGS, '--enable-unsafe-webgpu'] });
  page = await openPage(browser);
  const initError = await page.evaluate(() => window.initError);
  assert.equal(initError, null, `initWebGPU() on Chromium's software adapter failed: ${JSON.stringify(initError)}`);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** gpu.attention in the page: { output, weights } as plain arrays, or { error }. */
function onGpu(id, inputs, options) {
  const plain = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, ArrayBuffer.isView(v) ? Array.from(v) : v]));
  return page.evaluate(async ([id, inputs, options]) => {
    let result;
    const error = await window.caught(async () => { result = await window.gpu.attention(id, window.toInputs(inputs), options); });
    if (error) return { error };
    const plain = Object.fromEntries(Object.entries(result).map(([name, a]) => [name, Array.from(a)]));
    return { ...plain, keys: Object.keys(result).sort() };
  }, [id, plain, options]);
}

function nodeError(f) {
  try {
    f();
  } catch (e) {
    return { name: e.name, code: e.code, message: e.message, isAttnError: true };
  }
  return null;
}

test('the instance names its adapter and has what webgpu.d.ts declares', async () => {
  const info = await page.evaluate(() => {
    const gpu = window.gpu;
    const proto = Object.getOwnPropertyNames(Object.getPrototypeOf(gpu)).filter((k) => k !== 'constructor');
    return { keys: [...Object.keys(gpu), ...proto].sort(), adapter: gpu.adapter, ready: gpu.ready, ids: gpu.variants.map((v) => v.id) };
  });
  assert.deepEqual(info.keys, ['adapter', 'attention', 'dims', 'dispose', 'gpuTime', 'options', 'pipelinesCompiled', 'ready', 'variants', 'warmup']);
  assert.equal(info.adapter.architecture, 'swiftshader', `the software adapter: ${JSON.stringify(info.adapter)}`);
  const gpuTime = await page.evaluate(async () => {
    await window.gpu.attention('softmax', { n: 70, d: 8, dv: 8, q: new Float32Array(560), k: new Float32Array(560), v: new Float32Array(560) });
    return window.gpu.gpuTime;
  });
  assert.ok(typeof gpuTime === 'number' && gpuTime >= 0, `gpuTime after a call on an adapter with timestamp-query: ${gpuTime}`);
  assert.deepEqual(info.ids, nodeLab.variants.map((v) => v.id), 'the same registry as the WebAssembly instance');
  assert.deepEqual([...info.ready].sort(), [...info.ids].sort(), 'every variant of the registry runs on WebGPU');
  assert.deepEqual([...READY].sort(), [...info.ids].sort(), 'a fixture file for every variant');
});

for (const fixture of fixtures) {
describe(`every ${fixture.variant} fixture on WebGPU, within the accuracy bar of the float64 reference`, () => {
  for (const c of fixture.cases) {
    const name = caseName(c.id, c.dims, c.seed, c.options, c.magnitude !== 1 ? `magnitude=${c.magnitude}` : '') +
      `${c.zeroRows ? ' zero-rows' : ''}${c.optional ? ' with-optional' : ''} [webgpu]`;
    test(name, async () => {
      const inputs = makeInputs(c.id, c.dims, c.seed, { magnitude: c.magnitude, components: c.options.components, zeroRows: c.zeroRows, optional: c.optional });
      const sum = inputChecksum(inputs);
      assert.ok(Math.abs(sum - c.checksum) <= 1e-9 * Math.max(1, Math.abs(c.checksum)), `${name}: regenerated inputs differ from the fixture's`);
      const ctx = { variant: c.id, build: 'webgpu', dims: c.dims, seed: c.seed, options: c.options, cols: c.dims.dv };
      const plain = await onGpu(c.id, inputs, { ...c.options, weights: false });
      assert.equal(plain.error, undefined, `${name}: ${JSON.stringify(plain.error)}`);
      assert.deepEqual(plain.keys, ['output'], `${name}: only the output without weights`);
      closeTo(plain.output, c.output, { ...ctx, what: 'output (weights: false)' });
      if (!c.weights) return; // the fixture keeps the n×n matrix of its small cases only
      const withWeights = await onGpu(c.id, inputs, { ...c.options, weights: true });
      assert.equal(withWeights.error, undefined, `${name}: ${JSON.stringify(withWeights.error)}`);
      closeTo(withWeights.output, c.output, { ...ctx, what: 'output (weights: true)' });
      closeTo(withWeights.weights, c.weights, { ...ctx, what: 'weights', cols: c.dims.n });
    });
  }
});
}

test('past every tile and workgroup: n = 1,000, d = 64, dv = 100, causal and not, within the bar; the same bits twice', async () => {
  const dims = { n: 1000, d: 64, dv: 100 };
  const inputs = makeInputs('softmax', dims, 7);
  for (const causal of [false, true]) {
    const ref = reference('softmax', inputs, { causal });
    const first = await onGpu('softmax', inputs, { causal });
    assert.equal(first.error, undefined, JSON.stringify(first.error));
    closeTo(first.output, ref.output, { variant: 'softmax', build: 'webgpu', dims, seed: 7, options: { causal }, cols: dims.dv });
    const second = await onGpu('softmax', inputs, { causal });
    const differ = first.output.findIndex((x, i) => !Object.is(x, second.output[i]));
    assert.equal(differ, -1, `softmax ${JSON.stringify(dims)} causal=${causal}: a second call differs at ${differ}: ${first.output[differ]} then ${second.output[differ]}`);
  }
});

test('state: true gives what the WebAssembly builds give: the state (and normalizer) of every variant that keeps one, causal and not', async () => {
  for (const id of READY.filter((x) => nodeLab.variants.find((v) => v.id === x).keepsState)) {
    const info = nodeLab.variants.find((v) => v.id === id);
    const names = info.keepsNormalizer ? ['normalizer', 'output', 'state'] : ['output', 'state'];
    for (const [dims, causal] of [[{ n: 70, d: 5, dv: 3 }, false], [{ n: 130, d: 8, dv: 66 }, true]]) {
      if (info.causalOnly && !causal) continue;
      const inputs = makeInputs(id, dims, 11, { optional: true }); // the recurrent family's s0 too
      const wasm = nodeLab.attention(id, inputs, { causal, state: true });
      const gpu = await onGpu(id, inputs, { causal, state: true });
      assert.equal(gpu.error, undefined, `${id} ${JSON.stringify(dims)}: ${JSON.stringify(gpu.error)}`);
      assert.deepEqual(gpu.keys, names, `${id}: the result's arrays`);
      for (const name of names) assertClose(gpu[name], Array.from(wasm[name]), `${id} ${JSON.stringify(dims)} causal=${causal} ${name}`);
    }
  }
});

test('every variant gives the same bits twice on the same adapter, shape and inputs (its largest fixture, output and weights)', async () => {
  for (const fixture of fixtures) {
    const c = fixture.cases.reduce((big, x) => (x.dims.n > big.dims.n ? x : big));
    const inputs = makeInputs(c.id, c.dims, c.seed, { magnitude: c.magnitude, components: c.options.components, zeroRows: c.zeroRows, optional: c.optional });
    const options = { ...c.options, weights: c.dims.n <= 600 };
    const [first, second] = [await onGpu(c.id, inputs, options), await onGpu(c.id, inputs, options)];
    assert.equal(first.error, undefined, `${c.id}: ${JSON.stringify(first.error)}`);
    for (const name of first.keys) {
      const at = first[name].findIndex((x, i) => !Object.is(x, second[name][i]));
      assert.equal(at, -1, `${caseName(c.id, c.dims, c.seed, c.options)} [webgpu]: ${name}[${at}] is ${first[name][at]}, then ${second[name][at]}`);
    }
  }
});

test('a bad input rejects with the error lab.attention() throws for it, word for word', async () => {
  const base = makeInputs('softmax', { n: 5, d: 3, dv: 2 }, 3);
  const q = Array.from(base.q);
  const cases = [
    ['a short q', 'softmax', { ...base, q: q.slice(1) }, {}],
    ['NaN in k', 'softmax', { ...base, k: Object.assign(Array.from(base.k), { 4: NaN }) }, {}],
    ['an unknown variant', 'nope', base, {}],
    ['an unknown input', 'softmax', { ...base, kk: [1] }, {}],
    ['an unknown option', 'softmax', base, { temperature: 2 }],
    ['an option of another variant', 'softmax', base, { eps: 0.1 }],
    ['causal as a string', 'softmax', base, { causal: 'yes' }],
    ['n = 0', 'softmax', { ...base, n: 0 }, {}],
    ['v missing', 'softmax', { ...base, v: undefined }, {}],
    ['keep with weights', 'softmax', base, { keep: true, weights: true }],
    ['state on softmax', 'softmax', base, { state: true }],
  ];
  for (const [what, id, inputs, options] of cases) {
    const expected = nodeError(() => nodeLab.attention(id, inputs, options));
    assert.ok(expected, `${what}: lab.attention() accepted it`);
    const got = await onGpu(id, Object.fromEntries(Object.entries(inputs).filter(([, v]) => v !== undefined)), options);
    assert.deepEqual(got.error, expected, `${what}: WebGPU's error against WebAssembly's`);
  }
});

test('a recurrent state that leaves float32\'s range rejects with VALUE, as in WebAssembly, never returns NaN or infinity', async () => {
  const inputs = makeInputs('gla', { n: 12, d: 4, dv: 3 }, 5);
  inputs.g = new Float32Array(inputs.g.length).fill(40); // e^40 a token: past float32 within three tokens
  const expected = nodeError(() => nodeLab.attention('gla', inputs));
  assert.equal(expected?.code, 'VALUE');
  const got = await onGpu('gla', inputs, {});
  assert.equal(got.error?.code, 'VALUE', JSON.stringify(got));
  assert.match(got.error.message, /^output\[\d+\]\[\d+\] came out (NaN|-?Infinity): the recurrent state left float32's range; keep g <= 0/);
});

test('hostile inputs (getters, proxies, faked lengths, detached buffers, other array types) meet the same fate on WebGPU as in WebAssembly', async () => {
  const results = await page.evaluate(async () => {
    const { init } = await import('/dist/attnlab.js');
    const lab = await init({ threads: 1 });
    const base = () => ({ n: 2, d: 1, dv: 1, q: [1, 2], k: [1, 2], v: [3, 4] });
    const detached = () => {
      const q = new Float32Array(2);
      structuredClone(q.buffer, { transfer: [q.buffer] });
      return q;
    };
    const fakedLength = () => {
      const q = new Float32Array(1);
      Object.defineProperty(q, 'length', { value: 2 });
      return q;
    };
    const cases = {
      'a getter that throws': [() => ({ ...base(), get v() { throw new Error('no v for you'); } })],
      'a typed array with a faked length': [() => ({ ...base(), q: fakedLength() })],
      'a detached buffer': [() => ({ ...base(), q: detached() })],
      'a Float64Array past float32': [() => ({ ...base(), q: new Float64Array([1e39, 0]) })],
      'a BigInt64Array': [() => ({ ...base(), q: new BigInt64Array(2) })],
      'a DataView': [() => ({ ...base(), q: new DataView(new ArrayBuffer(8)) })],
      'a string among the numbers': [() => ({ ...base(), k: [1, '2'] })],
      'inputs as an array': [() => []],
      'options as a string': [base, 'causal'],
      'a causal option that is a getter throwing': [base, () => ({ get causal() { throw new Error('no causal'); } })],
      'a proxy of the inputs (accepted)': [() => new Proxy(base(), {})],
      'null options (the defaults)': [base, () => null],
      'a Float64Array within float32 (accepted)': [() => ({ ...base(), q: new Float64Array([0.5, 0.25]) })],
    };
    const out = {};
    for (const [what, [inputs, options = () => ({})]] of Object.entries(cases)) {
      const opts = typeof options === 'function' ? options : () => options;
      let wasm, gpu;
      try {
        wasm = { output: Array.from(lab.attention('softmax', inputs(), opts()).output) };
      } catch (e) {
        wasm = { name: e.name, code: e.code, message: e.message };
      }
      try {
        gpu = { output: Array.from((await window.gpu.attention('softmax', inputs(), opts())).output) };
      } catch (e) {
        gpu = { name: e.name, code: e.code, message: e.message };
      }
      out[what] = { wasm, gpu };
    }
    lab.dispose();
    return out;
  });
  for (const [what, { wasm, gpu }] of Object.entries(results)) {
    if (wasm.output) {
      assert.ok(gpu.output, `${what}: WebAssembly accepted it, WebGPU threw ${JSON.stringify(gpu)}`);
      assertClose(gpu.output, wasm.output, what);
    } else {
      assert.deepEqual(gpu, wasm, `${what}: WebGPU's error against WebAssembly's`);
    }
  }
  assert.ok(results['a proxy of the inputs (accepted)'].gpu.output, 'a proxy is accepted');
});

test('entries up to 3e38: every result on WebGPU is finite or a VALUE error, as in WebAssembly (100 random calls a variant, weights and state asked for)', async () => {
  // the hostile-input test's calls (tests/hostile-input.test.mjs), fewer of them: logits, exps,
  // features, states and normalisers overflow in every combination the variants have
  const SMALL = { n: 5, d: 3, dv: 2, h: 2, L: 6, a: 2, b: 3, rank: 2 };
  const MIX = { components: ['softmax', 'random'], alpha: [0.5, 0.5] };
  for (const v of nodeLab.variants) {
    const rnd = mulberry32(7 + nodeLab.variants.indexOf(v));
    const calls = [];
    for (let trial = 0; trial < 100; trial++) {
      const n = 1 + Math.floor(rnd() * 6), d = 1 + Math.floor(rnd() * 4), dv = 1 + Math.floor(rnd() * 3);
      const inputs = makeInputs(v.id, { ...SMALL, n, d, dv, L: n + 1, a: 1, b: n + 1 }, trial, v.composite ? { components: MIX.components } : {});
      for (const spec of v.inputs) {
        if (!inputs[spec.name]) continue;
        const exponent = [0, 10, 19, 20, 30, 38][Math.floor(rnd() * 6)];
        inputs[spec.name] = inputs[spec.name].map((x) => Math.fround(Math.min(3e38, Math.max(-3e38, x * 10 ** exponent))));
      }
      const options = { ...(v.composite ? MIX : {}), weights: true, causal: rnd() < 0.5 || v.causalOnly, ...(v.options.includes('state') ? { state: true } : {}) };
      let wasm;
      try {
        nodeLab.attention(v.id, inputs, options);
        wasm = 'finite';
      } catch (e) {
        wasm = e.code;
      }
      calls.push({ inputs: Object.fromEntries(Object.entries(inputs).map(([k, x]) => [k, ArrayBuffer.isView(x) ? Array.from(x) : x])), options, wasm });
    }
    const outcomes = await page.evaluate(async ([id, calls]) => {
      const out = [];
      for (const c of calls) {
        try {
          const r = await window.gpu.attention(id, window.toInputs(c.inputs), c.options);
          out.push(Object.values(r).every((a) => a.every(Number.isFinite)) ? 'finite' : 'non-finite returned');
        } catch (e) {
          out.push(e.code ?? e.message);
        }
      }
      return out;
    }, [v.id, calls]);
    const bad = outcomes.map((o, i) => [i, o]).filter(([, o]) => o !== 'finite' && o !== 'VALUE');
    assert.deepEqual(bad, [], `${v.id} on WebGPU: calls that neither gave finite results nor a VALUE error`);
    assert.ok(outcomes.includes('finite'), `${v.id}: no call succeeded, so the test says nothing about finite results`);
    if (calls.some((c) => c.wasm === 'VALUE') && ['softmax', 'linear', 'taylor', 'dense'].includes(v.id)) {
      assert.ok(outcomes.includes('VALUE'), `${v.id}: WebAssembly overflowed on some calls, WebGPU on none`);
    }
  }
});

test('linear weights that overflow (q = 1, k = 3e38) are a VALUE error naming weights on WebGPU too, though y is finite', async () => {
  const inputs = { n: 1, d: 1, dv: 1, q: [1], k: [3e38], v: [1e-30] }; // the WebAssembly test's
  const expected = nodeError(() => nodeLab.attention('linear', inputs, { weights: true }));
  assert.equal(expected?.code, 'VALUE');
  const got = await onGpu('linear', inputs, { weights: true });
  assert.equal(got.error?.code, 'VALUE', JSON.stringify(got));
  assert.match(got.error.message, /^weights\[0\]\[0\] came out/);
  const plain = await onGpu('linear', inputs, {});
  assert.equal(plain.error, undefined, 'y alone is finite');
});

test('keep rejects with UNSUPPORTED (the GPU\'s backward pass comes later); warmup() compiles every variant and rejects an unknown id', async () => {
  const base = makeInputs('softmax', { n: 4, d: 2, dv: 2 }, 1);
  const kept = await onGpu('softmax', base, { keep: true });
  assert.equal(kept.error?.code, 'UNSUPPORTED');
  assert.match(kept.error.message, /keep.*WebGPU/);
  const unknown = await page.evaluate(() => window.caught(() => window.gpu.warmup(['nope'])));
  assert.equal(unknown?.code, 'UNKNOWN');
  assert.equal(await page.evaluate(() => window.caught(() => window.gpu.warmup())), null, 'warmup() of every variant in ready');
  assert.equal(await page.evaluate(() => window.caught(() => window.gpu.warmup('gla', { d: 16, dv: 8 }))), null, 'warmup of one id at other widths');
});

test('resident tensors (internal): a call on tensors gives the bits of a call on arrays, outputs feed the next call without a read-back', async () => {
  const r = await page.evaluate(async () => {
    const { RESIDENT } = await import('/dist/internal.js');
    const gpu = window.gpu, res = gpu[RESIDENT];
    const rnd = (m, seed) => Float32Array.from({ length: m }, (_, i) => Math.sin(seed * 1000 + i * 12.9898) * 0.9);
    const n = 40, d = 8, dv = 6;
    const q = rnd(n * d, 1), k = rnd(n * d, 2), v = rnd(n * dv, 3);
    const same = (a, b) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
    const out = {};
    // softmax on tensors, causal, with weights
    const [tq, tk, tv] = [q, k, v].map(res.upload);
    const onTensors = await res.attention('softmax', { n, d, dv, q: tq, k: tk, v: tv }, { causal: true, weights: true });
    const plain = await gpu.attention('softmax', { n, d, dv, q, k, v }, { causal: true, weights: true });
    out.softmax = same(await res.read(onTensors.output), plain.output) && same(await res.read(onTensors.weights), plain.weights);
    // the output as the next call's v, on the GPU; against the same chain through arrays
    const chained = await res.attention('gla', { n, d, dv, q: tq, k: tk, v: onTensors.output, g: res.upload(rnd(n * d, 4).map((x) => -Math.abs(x))) }, {});
    const g = rnd(n * d, 4).map((x) => -Math.abs(x));
    const viaArrays = await gpu.attention('gla', { n, d, dv, q, k, v: plain.output, g });
    out.chain = same(await res.read(chained.output), viaArrays.output);
    // a tensor packed into the logit source (factorized-random's first n rows of r1, r2) and arrays beside tensors
    const L = 50, rank = 3, r1 = rnd(L * rank, 5), r2 = rnd(L * rank, 6);
    const fr = await res.attention('factorized-random', { n, dv, L, rank, r1: res.upload(r1), r2, v: tv }, {});
    out.packed = same(await res.read(fr.output), (await gpu.attention('factorized-random', { n, dv, L, rank, r1, r2, v })).output);
    // keep: a softmax-type variant's lse handed over as a tensor (what a backward on the GPU reads)
    const kept = await res.attention('softmax', { n, d, dv, q: tq, k: tk, v: tv }, { causal: true, keep: true });
    out.lse = Array.from(await res.read(kept.lse));
    out.keptKeys = Object.keys(kept).sort();
    // what is refused
    const caught = async (f) => { try { await f(); return null; } catch (e) { return { code: e.code, message: e.message }; } };
    out.shape = await caught(() => res.attention('softmax', { n, d, dv, q: res.upload(q.subarray(1)), k: tk, v: tv }));
    out.transposed = await caught(() => res.attention('dense1', { n, d, dv, L: n, x: q, w: res.upload(new Float32Array(d * n)), v }));
    res.release(tq);
    out.released = await caught(() => res.attention('softmax', { n, d, dv, q: tq, k: tk, v: tv }));
    out.keepLinear = await caught(() => res.attention('linear', { n, d, dv, q, k, v }, { keep: true }));
    out.inputs = { n, d, dv, q: Array.from(q), k: Array.from(k), v: Array.from(v) };
    return out;
  });
  assert.equal(r.softmax, true, 'softmax on tensors: the bits of the call on arrays, output and weights');
  assert.equal(r.chain, true, 'an output tensor as the next call\'s v: the bits of the chain through arrays');
  assert.equal(r.packed, true, 'a tensor packed into the logit source, beside an array');
  assert.equal(r.shape?.code, 'SHAPE', JSON.stringify(r.shape));
  assert.match(r.shape.message, /^q has 319 values, expected n\*d = 320/);
  assert.equal(r.transposed?.code, 'UNSUPPORTED');
  assert.match(r.transposed.message, /dense1 reads w transposed, which is done on the CPU/);
  assert.deepEqual(r.keptKeys, ['lse', 'output']);
  const wasmKept = nodeLab.attention('softmax', toF32Inputs(r.inputs), { causal: true, keep: true });
  assertClose(r.lse, Array.from(wasmKept.lse), 'the lse a resident call keeps, against WebAssembly\'s');
  assert.equal(r.keepLinear?.code, 'UNSUPPORTED', 'keep on the GPU is for softmax-type variants (lse)');
  assert.equal(r.released?.code, 'VALUE');
  assert.match(r.released.message, /not a live tensor of this instance/);
});

test('weights larger than the adapter allows in one buffer reject with UNSUPPORTED, saying the sizes', async () => {
  const limit = await page.evaluate(async () => {
    const a = await navigator.gpu.requestAdapter();
    return Math.min(a.limits.maxStorageBufferBindingSize, a.limits.maxBufferSize);
  });
  const n = Math.ceil(Math.sqrt(limit / 4)) + 1; // n*n floats just past the limit
  const error = await page.evaluate((n) => window.caught(() => window.gpu.attention('softmax',
    { n, d: 1, dv: 1, q: new Float32Array(n), k: new Float32Array(n), v: new Float32Array(n) }, { weights: true })), n);
  assert.equal(error?.code, 'UNSUPPORTED', JSON.stringify(error));
  assert.match(error.message, new RegExp(`softmax with n = ${n} needs a GPU buffer of [\\d.]+ MiB for weights, more than this adapter allows`));
});

test('a lost device rejects with BROKEN; a new initWebGPU() recovers; dispose gives DISPOSED', async (t) => {
  const p = await browser.newPage();
  t.after(() => p.close());
  await p.goto(new URL('/tests/browser/fixtures/webgpu.html', server.url).href);
  const r = await p.evaluate(async () => {
    // keep a hand on the device the instance asks for, to destroy it as a driver reset would
    const devices = [];
    const request = GPUAdapter.prototype.requestDevice;
    GPUAdapter.prototype.requestDevice = async function (...args) {
      const d = await request.apply(this, args);
      devices.push(d);
      return d;
    };
    const { initWebGPU } = await import('/dist/webgpu.js');
    const inputs = { n: 2, d: 1, dv: 1, q: [1, 2], k: [1, 2], v: [3, 4] };
    const caught = async (f) => { try { await f(); return null; } catch (e) { return { code: e.code, message: e.message }; } };
    const gpu = await initWebGPU();
    const before = Array.from((await gpu.attention('softmax', inputs)).output);
    devices[0].destroy();
    await devices[0].lost;
    const lost = await caught(() => gpu.attention('softmax', inputs));
    const again = await initWebGPU();
    const after = Array.from((await again.attention('softmax', inputs)).output);
    again.dispose();
    const disposed = await caught(() => again.attention('softmax', inputs));
    return { before, lost, after, disposed };
  });
  assert.equal(r.lost?.code, 'BROKEN', JSON.stringify(r.lost));
  assert.match(r.lost.message, /GPU device was lost.*initWebGPU\(\) again/);
  assert.deepEqual(r.after, r.before, 'a new instance after the loss gives the same output');
  assert.equal(r.disposed?.code, 'DISPOSED');
});

test('a browser without WebGPU\'s flag gets UNSUPPORTED from initWebGPU(), saying there is no adapter', async () => {
  const plain = await chromium.launch({ executablePath: CHROMIUM, args: BASE_ARGS });
  try {
    const p = await openPage(plain);
    const error = await p.evaluate(() => window.initError);
    assert.equal(error?.code, 'UNSUPPORTED', JSON.stringify(error));
    assert.ok(error.isAttnError);
    assert.match(error.message, /^no WebGPU adapter: .*use init\(\) for the WebAssembly builds$/);
  } finally {
    await plain.close();
  }
});

// The page on WebGPU: its Build menu, the same outputs, the timing's adapter and compilation.
async function openApp(b) {
  const context = await b.newContext({ viewport: { width: 1280, height: 900 } });
  await withTestHook(context);
  const p = await context.newPage();
  p.problems = [];
  p.on('pageerror', (e) => p.problems.push(`page error: ${e.message}`));
  p.on('console', (m) => { if (m.type() === 'error') p.problems.push(`console.error: ${m.text()}`); });
  await p.goto(server.url);
  await p.waitForFunction(() => window.__attnlab?.ready, null, { timeout: 30000 });
  await idle(p);
  // the check of WebGPU answers after the first run
  await p.waitForFunction(() => document.querySelector('#build-note')?.dataset.webgpu, null, { timeout: 30000 });
  return { p, close: () => context.close() };
}

test('the page offers WebGPU in its Build menu, names the adapter, and shows the outputs WebAssembly gives', async (t) => {
  const { p, close } = await openApp(browser);
  t.after(close);
  const option = await p.$eval('#build-select option[value="webgpu"]', (o) => ({ disabled: o.disabled, text: o.textContent }));
  assert.deepEqual(option, { disabled: false, text: 'WebGPU (google swiftshader)' });
  assert.equal(await p.$eval('#build-note', (e) => e.hidden), true, 'no note when WebGPU runs');
  assert.equal(await p.$eval('#sb-webgpu', (e) => e.checked), false, 'the scaling panel offers WebGPU, unchecked');
  for (const id of ['softmax', 'gla']) {
    await p.selectOption('#variant', id);
    await idle(p);
    await p.selectOption('#build-select', 'webgpu');
    await idle(p);
    const snap = await snapshot(p);
    assert.equal(snap.variant, id);
    const ref = nodeLab.attention(id, toF32Inputs(snap.inputs), { ...snap.options, weights: !!snap.weights });
    assertClose(snap.output, Array.from(ref.output), `${id} on the page's WebGPU build: y`);
    if (snap.weights) assertClose(snap.weights, Array.from(ref.weights), `${id} on the page's WebGPU build: A`);
    const timing = await p.$eval('#timing', (e) => ({ build: e.dataset.build, text: e.textContent, compile: e.querySelector('[data-compile]')?.dataset.compile }));
    assert.equal(timing.build, 'webgpu');
    assert.match(timing.text, /WebGPU on google swiftshader/);
    // the run with weights compiles its own pipelines first; the timed calls (no weights) then
    // compile theirs in their first call, which is shown as compiling shaders, not as a sample
    assert.match(timing.text, /the first call compiled its shaders \(compiling shaders: .*, not a sample\); this is a software adapter/);
    assert.ok(Number(timing.compile) > 0, `the compilation's time: ${timing.compile}`);
    assert.equal(await p.$eval('#build-badge', (e) => e.textContent), 'WebGPU on google swiftshader');
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await p.screenshot({ path: path.join(ARTIFACTS, `webgpu-${id}.png`), fullPage: true }); // the page on WebGPU, to look at
    const builds = await p.$eval('#compare-builds', (e) => ({ hidden: e.hidden, text: e.textContent, maxAbs: Number(e.dataset.maxAbs) }));
    assert.equal(builds.hidden, false, 'compare puts WebGPU beside WebAssembly');
    assert.match(builds.text, /on WebGPU \(google swiftshader\) against the .* build: max \|Δy\| /);
    assert.ok(builds.maxAbs < 1e-4, `${id}: max |Δy| between WebGPU and WebAssembly ${builds.maxAbs}`);
    const code = await p.evaluate(async () => (await import('/web/export.js')).codeSnippet((await import('/web/store.js')).store.last));
    assert.match(code ?? '', /^import \{ initWebGPU \} from 'attnlab\/webgpu';[\s\S]*= await lab\.attention\(/, `${id}: Copy as code on WebGPU`);
    await p.selectOption('#build-select', 'auto');
    await idle(p);
  }
  // the scaling chart on WebGPU alone: softmax and linear, n = 64 and 128; WebAssembly past 16,384 is skipped
  await p.evaluate(() => {
    for (const cb of document.querySelectorAll('#scale-builds input, #scale-variants input')) cb.checked = ['webgpu', 'softmax', 'linear'].includes(cb.dataset.build ?? cb.dataset.variant);
  });
  assert.ok(await p.$('#scale-max option[value="65536"]'), 'the largest n offers 65,536 with WebGPU');
  await p.evaluate(() => { const s = document.querySelector('#scale-max'); s.append(new Option('128', '128')); s.value = '128'; });
  await p.click('#scale-run');
  await p.waitForFunction(() => window.__attnlab.scaling().done, null, { timeout: 120000 });
  const report = await p.evaluate(() => window.__attnlab.scaling());
  const timed = report.points.filter((x) => x.timing).map((x) => `${x.variant}@${x.n}/${x.build}`).sort();
  assert.deepEqual(timed, ['linear@128/webgpu', 'linear@64/webgpu', 'softmax@128/webgpu', 'softmax@64/webgpu'], JSON.stringify(report.points.map((x) => x.error ?? x.skipped ?? null)));
  assert.deepEqual(p.problems, []);
});

test('a page without WebGPU\'s flag keeps the WebGPU choice disabled and says why under the Build menu', async () => {
  const plain = await chromium.launch({ executablePath: CHROMIUM, args: BASE_ARGS });
  try {
    const { p } = await openApp(plain);
    const option = await p.$eval('#build-select option[value="webgpu"]', (o) => ({ disabled: o.disabled, text: o.textContent }));
    assert.deepEqual(option, { disabled: true, text: 'WebGPU (not available here; see below)' });
    const note = await p.$eval('#build-note', (e) => ({ hidden: e.hidden, text: e.textContent }));
    assert.equal(note.hidden, false);
    assert.match(note.text, /^Build: WebGPU is not offered here\. No WebGPU adapter: /);
    assert.equal(await p.$('#sb-webgpu'), null, 'no WebGPU in the scaling panel');
    assert.deepEqual(p.problems, []);
  } finally {
    await plain.close();
  }
});
