// The thread pool itself (docs/contract.md, "Threads"; src/c/threads.c, src/js/pool.js), on every
// threaded build, through the pool's test-only exports (attnlab.h: attn_threads_probe,
// attn_threads_canary, attn_threads_spin), which lab[Symbol.for('attnlab.internal')] reaches:
//
//   (a) the probe: on 2 and 3 threads every worker runs pieces; the threaded module alone runs
//       them on the calling thread only;
//   (b) a trap on a worker, and one on the calling thread, make the call throw BROKEN instead of
//       hanging; later calls throw BROKEN, dispose() works, a fresh instance gives one thread's
//       bits. In a child process, so that a hang is a failed test and not a stuck run;
//   (c) a stack canary overwritten from JavaScript is BROKEN at the next split call, naming the
//       thread;
//   (d) a fresh threaded lab that is dropped without dispose() has its pool stopped by garbage
//       collection (a child process with --expose-gc);
//   (e) two pools alive at once that outnumber the cores both compute one thread's bits and both
//       spin short; the first spins long again once the second is gone (a child process: this
//       one holds helpers.mjs's own pool).
//
//   node --experimental-wasm-relaxed-simd --test tests/threads-pool.test.mjs

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { binding, builds, makeInputs, sameBits, BINDING_URL } from './helpers.mjs';

const { init, AttnError } = await binding();
const POOL_URL = new URL('pool.js', BINDING_URL).href; // the same module instance the binding uses
const buildList = await builds();
const INTERNAL = Symbol.for('attnlab.internal');
const simdOf = (build) => (build === 'relaxed' ? 'relaxed' : build === 'simd');
const threadedBytes = (build) => readFileSync(new URL(`attnlab-${build}-threads.wasm`, BINDING_URL));
const CHILD_MS = 60_000; // a child that hangs is killed and fails its test

/** Runs an ES module in a child Node (with `flags`) and returns the JSON of its last line. */
function child(script, what, flags = []) {
  const r = spawnSync(process.execPath, [...process.execArgv.filter((f) => /relaxed-simd/.test(f)), ...flags,
    '--input-type=module', '-e', script], { encoding: 'utf8', timeout: CHILD_MS });
  assert.equal(r.status, 0, `${what}: the child exited with ${r.status} (signal ${r.signal}` +
    `${r.error?.code === 'ETIMEDOUT' ? `, killed after ${CHILD_MS / 1000} s: it hung` : ''})\n${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const isBroken = (e) => e instanceof AttnError && e.code === 'BROKEN' && /init\(\{ fresh: true \}\)/.test(e.message);

for (const build of buildList) {
  describe(`the pool [${build}]`, () => {
    for (const threads of [2, 3]) {
      test(`the probe: every thread of ${threads} runs a piece [${build}, ${threads} threads]`, async () => {
        const lab = await init({ simd: simdOf(build), threads, fresh: true });
        try {
          assert.equal(lab.threads, threads, `[${build}] lab.threads`);
          const exports = lab[INTERNAL].exports();
          for (const pieces of [threads, 4 * threads]) {
            const mask = exports.attn_threads_probe(pieces, 0);
            assert.equal(mask, (1 << threads) - 1,
              `[${build}, ${threads} threads, ${pieces} pieces]: threads that ran a piece, as a bitmask: ${mask.toString(2)}`);
          }
          // the pool still splits real calls afterwards
          const inputs = makeInputs('softmax', { n: 200, d: 8, dv: 8 }, 4);
          const one = await init({ simd: simdOf(build), threads: 1, fresh: true });
          assert.ok(sameBits(lab.attention('softmax', inputs).output, one.attention('softmax', inputs).output),
            `[${build}, ${threads} threads]: softmax after the probe differs from one thread`);
          one.dispose();
        } finally {
          lab.dispose();
        }
      });
    }

    test(`the probe on the threaded module alone runs every piece on the calling thread [${build}, 1 thread]`, async () => {
      const lab = await init({ simd: simdOf(build), threads: 1, wasmBinary: threadedBytes(build) });
      try {
        assert.equal(lab.threads, 1);
        assert.equal(lab[INTERNAL].exports().attn_threads_probe(6, 0), 1, `[${build}, 1 thread]: only bit 0`);
        // no workers to trap on: trap = 1 runs like 0
        assert.equal(lab[INTERNAL].exports().attn_threads_probe(6, 1), 1, `[${build}, 1 thread]: trap on a worker without workers`);
      } finally {
        lab.dispose();
      }
    });

    for (const threads of [2, 3]) {
      for (const [trap, where] of [[1, 'a worker'], [2, 'the calling thread']]) {
        test(`a trap on ${where} makes the lab BROKEN, not hung; a fresh lab works [${build}, ${threads} threads]`, () => {
          const script = `
            import { init } from ${JSON.stringify(BINDING_URL)};
            import { poolThreads } from ${JSON.stringify(POOL_URL)};
            const I = Symbol.for('attnlab.internal');
            const simd = ${JSON.stringify(simdOf(build))}, threads = ${threads};
            const n = 300, d = 16, dv = 8;
            const fill = (len, s) => Float32Array.from({ length: len }, (_, i) => Math.sin(i * 0.37 + s));
            const inputs = { n, d, dv, q: fill(n * d, 1), k: fill(n * d, 2), v: fill(n * dv, 3) };
            const same = (a, b) => a.length === b.length && new Uint32Array(a.buffer).every((x, i) => x === new Uint32Array(b.buffer)[i]);
            const caught = (f) => { try { f(); return null; } catch (e) { return { name: e.name, code: e.code, message: e.message }; } };
            const one = await init({ simd, threads: 1, fresh: true });
            const expected = one.attention('softmax', inputs).output;
            const lab = await init({ simd, threads }); // the cached one, which the break must uncache
            const exports = lab[I].exports();
            const before = poolThreads();
            const probe = caught(() => exports.attn_threads_probe(4 * threads, ${trap}));
            const after = poolThreads();
            const later = {
              attention: caught(() => lab.attention('softmax', inputs)),
              attentionGrad: caught(() => lab.attentionGrad('softmax', inputs, inputs.v)),
              model: caught(() => lab.model({ vocab: 8, seqLen: 8, dModel: 8, heads: 1, layers: 1, dFF: 8 })),
              memoryBytes: caught(() => lab.memoryBytes()),
              probe: caught(() => exports.attn_threads_probe(4, 0)),
            };
            const dispose = caught(() => lab.dispose());
            const disposed = caught(() => lab.attention('softmax', inputs));
            const cached = await init({ simd, threads });
            const cachedIsNew = cached !== lab;
            const fresh = await init({ simd, threads, fresh: true });
            const freshSame = same(fresh.attention('softmax', inputs).output, expected);
            const cachedSame = same(cached.attention('softmax', inputs).output, expected);
            console.log(JSON.stringify({ probe, before, after, later, dispose, disposed, freshThreads: fresh.threads, freshSame, cachedIsNew, cachedSame }));
            fresh.dispose();
            cached.dispose();
            one.dispose();`;
          const what = `[${build}, ${threads} threads, a trap on ${where}]`;
          const r = child(script, what);
          assert.ok(r.probe && r.probe.name === 'AttnError' && r.probe.code === 'BROKEN',
            `${what}: the call should throw AttnError BROKEN, threw ${JSON.stringify(r.probe)}`);
          assert.match(r.probe.message, trap === 1 ? /a worker thread failed/ : /on the calling thread \(RuntimeError/, `${what}: says what failed`);
          assert.match(r.probe.message, /init\(\{ fresh: true \}\)/, `${what}: says how to get a new instance`);
          assert.equal(r.before - r.after, threads, `${what}: the broken lab's pool stops at once (pool threads ${r.before} -> ${r.after})`);
          for (const [call, err] of Object.entries(r.later)) {
            assert.equal(err?.code, 'BROKEN', `${what}: ${call}() after the trap threw ${JSON.stringify(err)}`);
            assert.equal(err.message, r.probe.message, `${what}: ${call}() after the trap gives the same message`);
          }
          assert.equal(r.dispose, null, `${what}: dispose() of a broken lab threw ${JSON.stringify(r.dispose)}`);
          assert.equal(r.disposed?.code, 'DISPOSED', `${what}: a call after dispose()`);
          assert.equal(r.freshThreads, threads, `${what}: the fresh lab's threads`);
          assert.ok(r.freshSame, `${what}: a fresh lab's softmax differs from one thread's bits`);
          assert.ok(r.cachedIsNew, `${what}: init() with the broken lab's options returned the broken lab`);
          assert.ok(r.cachedSame, `${what}: init() without fresh (a new cached lab) differs from one thread's bits`);
        });
      }

      test(`an overwritten stack canary is BROKEN at the next split call, naming the thread [${build}, ${threads} threads]`, async () => {
        const inputs = makeInputs('softmax', { n: 300, d: 16, dv: 8 }, 21); // five query blocks: a split call
        const one = await init({ simd: simdOf(build), threads: 1, fresh: true });
        const expected = one.attention('softmax', inputs).output;
        one.dispose();
        for (let thread = 0; thread < threads; thread++) {
          const what = `[${build}, ${threads} threads, thread ${thread}'s canary]`;
          const lab = await init({ simd: simdOf(build), threads, fresh: true });
          try {
            assert.ok(sameBits(lab.attention('softmax', inputs).output, expected), `${what}: before the canary is touched`);
            const at = lab[INTERNAL].exports().attn_threads_canary(thread);
            assert.ok(at > 0 && at % 4 === 0, `${what}: canary address ${at}`);
            const words = new Uint32Array(lab[INTERNAL].memory().buffer);
            words[(at >>> 2) + (thread % 2)] ^= 1; // one bit of either word
            assert.throws(() => lab.attention('softmax', inputs), (e) => isBroken(e) &&
              e.message.includes(thread === 0 ? 'the stack of the calling thread overflowed' : `the stack of worker thread ${thread} overflowed`),
            `${what}: the next call`);
            assert.throws(() => lab.attention('softmax', inputs), isBroken, `${what}: a later call`);
          } finally {
            lab.dispose();
          }
        }
      });
    }

    test(`a fresh lab dropped without dispose() has its pool stopped by garbage collection [${build}, 3 threads]`, () => {
        const script = `
          import { init } from ${JSON.stringify(BINDING_URL)};
          import { poolThreads } from ${JSON.stringify(POOL_URL)};
          import { readdirSync } from 'node:fs';
          const tasks = () => (process.platform === 'linux' ? readdirSync('/proc/self/task').length : 0);
          const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
          const before = poolThreads(), tasksBefore = tasks();
          let alive = 0, tasksAlive = 0;
          await (async () => {
            const lab = await init({ simd: ${JSON.stringify(simdOf(build))}, threads: 3, fresh: true });
            const q = new Float32Array(300 * 8).fill(0.1);
            lab.attention('softmax', { n: 300, d: 8, dv: 8, q, k: q, v: q });
            alive = poolThreads(); tasksAlive = tasks();
          })();
          let after = poolThreads(), rounds = 0;
          for (; rounds < 100 && after > before; rounds++) { globalThis.gc(); await sleep(50); after = poolThreads(); }
          let tasksAfter = tasks();
          for (let i = 0; i < 100 && tasksAfter > tasksBefore; i++) { await sleep(20); tasksAfter = tasks(); }
          console.log(JSON.stringify({ before, alive, after, rounds, tasksBefore, tasksAlive, tasksAfter }));`;
        const what = `[${build}, 3 threads, dropped]`;
        const r = child(script, what, ['--expose-gc']);
        assert.equal(r.alive - r.before, 3, `${what}: the pool's threads while the lab is alive`);
        assert.equal(r.after, r.before, `${what}: pool threads after ${r.rounds} rounds of gc(): ${r.after}, ${r.before} before init`);
        if (process.platform === 'linux') {
          assert.ok(r.tasksAlive >= r.tasksBefore + 2, `${what}: the pool added ${r.tasksAlive - r.tasksBefore} OS threads`);
          assert.equal(r.tasksAfter, r.tasksBefore, `${what}: OS threads after collection ${r.tasksAfter}, ${r.tasksBefore} before init`);
        }
      });

    test(`two pools that outnumber the cores both spin short and both compute one thread's bits [${build}]`, () => {
      const script = `
        import { init } from ${JSON.stringify(BINDING_URL)};
        import { cores, poolThreads, LONG_SPIN, SHORT_SPIN } from ${JSON.stringify(POOL_URL)};
        const I = Symbol.for('attnlab.internal');
        const simd = ${JSON.stringify(simdOf(build))};
        const spin = (lab) => lab[I].exports().attn_threads_spin(-1);
        const n = 300, d = 16, dv = 8;
        const fill = (len, s) => Float32Array.from({ length: len }, (_, i) => Math.sin(i * 0.37 + s));
        const inputs = { n, d, dv, q: fill(n * d, 1), k: fill(n * d, 2), v: fill(n * dv, 3) };
        const same = (a, b) => a.length === b.length && new Uint32Array(a.buffer).every((x, i) => x === new Uint32Array(b.buffer)[i]);
        const one = await init({ simd, threads: 1, fresh: true });
        const expected = one.attention('softmax', inputs).output;
        // the first as threads 'auto' picks on this machine (at least 2), so that it fits alone
        const first = await init({ simd, threads: cores() >= 2 ? 'auto' : 2, fresh: true });
        const firstAlone = spin(first), threadsAlone = poolThreads();
        const second = await init({ simd, threads: 2, fresh: true });
        const both = { first: spin(first), second: spin(second), threads: poolThreads() };
        const same1 = same(first.attention('softmax', inputs).output, expected);
        const same2 = same(second.attention('softmax', inputs).output, expected);
        second.dispose();
        const firstAgain = spin(first), threadsAgain = poolThreads();
        first.dispose();
        one.dispose();
        console.log(JSON.stringify({ cores: cores(), LONG_SPIN, SHORT_SPIN, firstThreads: first.threads, firstAlone, threadsAlone, both, same1, same2, firstAgain, threadsAgain }));`;
      const what = `[${build}, two pools]`;
      const r = child(script, what);
      const expect = (total) => (total <= r.cores ? r.LONG_SPIN : r.SHORT_SPIN);
      assert.ok(r.LONG_SPIN > r.SHORT_SPIN, `${what}: the long spin ${r.LONG_SPIN}, the short ${r.SHORT_SPIN}`);
      assert.equal(r.threadsAlone, r.firstThreads, `${what}: pool threads with the first alone`);
      assert.equal(r.firstAlone, expect(r.firstThreads), `${what}: the first pool alone (${r.firstThreads} threads, ${r.cores} cores)`);
      assert.equal(r.both.threads, r.firstThreads + 2, `${what}: pool threads with both alive`);
      assert.equal(r.both.second, expect(r.both.threads), `${what}: the second pool's spin (${r.both.threads} threads, ${r.cores} cores)`);
      assert.equal(r.both.first, expect(r.both.threads), `${what}: the first pool's spin once the second started (${r.both.threads} threads, ${r.cores} cores)`);
      assert.ok(r.same1, `${what}: the first pool (${r.firstThreads} threads) differs from one thread's bits`);
      assert.ok(r.same2, `${what}: the second pool (2 threads) differs from one thread's bits`);
      assert.equal(r.threadsAgain, r.firstThreads, `${what}: pool threads after the second's dispose()`);
      assert.equal(r.firstAgain, r.firstAlone, `${what}: the first pool's spin once the second is gone`);
    });
  });
}
