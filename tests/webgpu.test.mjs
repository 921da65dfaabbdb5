// attnlab/webgpu where there is no WebGPU (Node), and the kernels' plans, which are plain data.
// The kernels themselves run in tests/browser/webgpu.test.mjs, on Chromium's software adapter.
//
//   node --test tests/webgpu.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { binding } from './helpers.mjs';
import { initWebGPU, AttnError } from '../dist/webgpu.js';
import { FAMILY_PLANS, planCall } from '../dist/webgpu-kernels.js';

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

test('softmax\'s plan: one workgroup per 64 rows and per 64 output columns, a second pass only for weights, lse kept inside', () => {
  const variant = lab.variants.find((v) => v.id === 'softmax');
  const plan = planCall({ variant, opt: { causal: true, weights: false }, dims: { n: 1000, d: 64, dv: 100 } });
  assert.equal(plan.passes.length, 1);
  assert.deepEqual(plan.passes[0].workgroups, [16, 2, 1]);
  assert.deepEqual(plan.outputs.map((o) => [o.name, o.count, !!o.internal]), [['output', 100000, false], ['lse', 1000, true]]);
  const params = new DataView(plan.params);
  assert.deepEqual([0, 4, 8, 12].map((at) => params.getUint32(at, true)), [1000, 64, 100, 1]);
  assert.equal(params.getFloat32(16, true), Math.fround(1 / 8), 'scale defaults to 1/sqrt(d)');
  const withWeights = planCall({ variant, opt: { causal: false, weights: true, scale: 0.5 }, dims: { n: 1000, d: 64, dv: 100 } });
  assert.deepEqual(withWeights.passes.map((p) => p.workgroups), [[16, 2, 1], [125, 125, 1]]);
  assert.equal(new DataView(withWeights.params).getFloat32(16, true), 0.5);
  // pipelines are per shape class: d = 33 … 64 share one, d = 65 another
  const key = (d) => planCall({ variant, opt: {}, dims: { n: 5, d, dv: 8 } }).passes[0].pipeline.key;
  assert.equal(key(33), key(64));
  assert.notEqual(key(64), key(65));
});
