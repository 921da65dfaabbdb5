// attnlab/webgpu where there is no WebGPU (Node), and the kernels' plans, which are plain data.
// The kernels themselves run in tests/browser/webgpu.test.mjs, on Chromium's software adapter.
//
//   node --test tests/webgpu.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { binding } from './helpers.mjs';
import { initWebGPU, AttnError } from '../dist/webgpu.js';
import { FAMILY_PLANS, MAX_TERMS, PATTERNS, planCall } from '../dist/webgpu-kernels.js';
import { CHECK_CALL } from '../dist/internal.js';
import { CASES } from './bad-input-cases.mjs';

const { init, AttnError: WasmError } = await binding();
const lab = await init({ threads: 1 });

async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  return null;
}

test('in Node initWebGPU() rejects with UNSUPPORTED, saying there is no navigator.gpu, with attnlab\'s AttnError', async () => {
  const e = await rejection(initWebGPU());
  assert.ok(e instanceof AttnError && AttnError === WasmError, `got ${e}`);
  assert.equal(e.code, 'UNSUPPORTED');
  assert.match(e.message, /no navigator\.gpu \(Node has no WebGPU\); use init\(\) for the WebAssembly builds/);
});

test('initWebGPU() checks its options before looking for a GPU', async () => {
  assert.equal((await rejection(initWebGPU({ adapter: 1 })))?.code, 'UNKNOWN');
  const e = await rejection(initWebGPU({ powerPreference: 'fast' }));
  assert.equal(e?.code, 'VALUE');
  assert.match(e.message, /powerPreference must be "low-power" or "high-performance", got "fast"/);
  assert.equal((await rejection(initWebGPU(null)))?.code, 'UNKNOWN');
});

test('every family of the registry has a WebGPU entry, and no entry names a family the registry lacks', () => {
  const families = [...new Set(lab.variants.map((v) => v.family))].sort();
  assert.deepEqual(Object.keys(FAMILY_PLANS).sort(), families);
});

test('the fixed kernel numbers the patterns as the registry lists them', () => {
  assert.deepEqual(PATTERNS, lab.options.pattern.values);
});

test('the logit kernels\' uniform holds as many terms as a mixture may have components', () => {
  assert.equal(MAX_TERMS, lab.options.components.max);
});

test('softmax\'s plan: one workgroup per 64 rows and per 64 output columns, a second pass only for weights, lse kept inside', () => {
  const variant = lab.variants.find((v) => v.id === 'softmax');
  const dims = { n: 1000, d: 64, dv: 100 };
  const arrays = [['q', 64], ['k', 64], ['v', 100]].map(([name, cols]) => ({ name, count: 1000 * cols, cols, data: new Float32Array(1000 * cols) }));
  const plan = planCall({ variant, opt: { causal: true, weights: false }, dims, arrays });
  assert.equal(plan.passes.length, 1);
  assert.deepEqual(plan.passes[0].workgroups, [16, 2, 1]);
  const byName = new Map(plan.buffers.map((b) => [b.name, b]));
  assert.equal(byName.get('src').count, 2 * 64000, 'q and k packed into one source buffer');
  assert.deepEqual(plan.buffers.filter((b) => b.output).map((b) => [b.name, b.count]), [['output', 100000]], 'lse stays on the GPU');
  const params = byName.get('params').uniform;
  assert.deepEqual([...new Uint32Array(params, 0, 4)], [1000, 100, 1, 1]);
  assert.deepEqual([...new Uint32Array(params, 16, 4)], [0, 64000, 0, 64], 'term 0: q at 0, k after it, width d');
  assert.equal(new Float32Array(params, 16 + 16 * 8, 4)[1], Math.fround(1 / 8), 'scale defaults to 1/sqrt(d)');
  const withWeights = planCall({ variant, opt: { causal: false, weights: true, scale: 0.5 }, dims, arrays });
  assert.deepEqual(withWeights.passes.map((p) => p.workgroups), [[16, 2, 1], [125, 125, 1]]);
  // pipelines are per shape class: d = 33 … 64 share one, d = 65 another
  const key = (d) => planCall({ variant, opt: {}, dims: { n: 5, d, dv: 8 }, arrays: [['q', d], ['k', d], ['v', 8]].map(([name, cols]) => ({ name, count: 5 * cols, cols, data: new Float32Array(5 * cols) })) }).passes[0].pipeline.key;
  assert.equal(key(33), key(64));
  assert.notEqual(key(64), key(65));
});

test('dense\'s plan: the hidden layer computed on the GPU first, w2 sent as rows of keys (its first n columns, transposed)', () => {
  const variant = lab.variants.find((v) => v.id === 'dense');
  const dims = { n: 2, d: 1, dv: 1, h: 2, L: 3 };
  const w2 = Float32Array.from([1, 2, 3, 4, 5, 6]); // [h = 2, L = 3]
  const arrays = [['x', 2], ['w1', 2], ['b1', 2], ['w2', 6], ['b2', 3], ['v', 2]].map(([name, count]) => ({ name, count, cols: 1, data: name === 'w2' ? w2 : new Float32Array(count) }));
  const plan = planCall({ variant, opt: {}, dims, arrays });
  assert.deepEqual(plan.passes.map((p) => p.pipeline.entry), ['affine', 'forward']);
  const src = plan.buffers.find((b) => b.name === 'src');
  assert.deepEqual(src.writes.map((w) => [w.offset, [...w.data]]), [[4, [1, 4, 2, 5]], [8, [0, 0]]], 'w2ᵀ after the hidden layer (n·h = 4), then b2\'s first n');
});

// What a call on WebGPU does before any GPU work: the WebAssembly instance's reading and checks
// (CHECK_CALL), then the plan. Node has no GPU, so this is the WebGPU path up to its first GPU call.
function gpuPathError(id, inputs, options) {
  try {
    planCall(lab[CHECK_CALL](id, inputs, options));
    return null;
  } catch (e) {
    return { name: e.name, code: e.code, message: e.message };
  }
}

test('every bad input of the WebAssembly tests meets the same error on the WebGPU path, before any GPU work', () => {
  let compared = 0;
  for (const c of CASES) {
    let wasm = null;
    try {
      lab.attention(c.id, c.inputs(), c.options);
    } catch (e) {
      wasm = { name: e.name, code: e.code, message: e.message };
    }
    assert.ok(wasm, `${c.name}: WebAssembly accepted it`);
    const gpu = gpuPathError(c.id, c.inputs(), c.options);
    if (wasm.code === 'MEMORY') {
      // WebAssembly's 4 GiB is not the GPU's: there the adapter's buffer limit applies, at run
      // time (UNSUPPORTED, naming the array: tests/browser/webgpu.test.mjs)
      assert.equal(gpu, null, `${c.name}: the WebGPU path's checks refused what only WebAssembly's memory cannot hold`);
      continue;
    }
    assert.deepEqual(gpu, wasm, `${c.name}: the WebGPU path's error against WebAssembly's`);
    compared++;
  }
  assert.ok(compared >= CASES.length - 1, `${compared} of ${CASES.length} cases compared`);
});
