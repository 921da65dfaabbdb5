// The tfjs-wasm contender of the training benchmark: the same decoder-only transformer as
// lab.model with softmax attention (docs/model.md: token + position embeddings, pre-LN blocks,
// causal multi-head softmax attention, W_o, GELU (tanh) MLP, final LN, output projection, mean
// cross-entropy over the positions), trained with AdamW (decay on matrices, global-norm clipping
// at 1) on @tensorflow/tfjs-backend-wasm, one thread, the non-threaded SIMD binary.
//
// The formulation is the fastest one measured for this backend: every linear layer is a plain
// 2-D matMul over [batch·seqLen, width] (tfjs's fused matMul + bias + activation and the
// layers API took ~3× longer), attention a batched matMul over [batch·heads, seqLen, dh] with an
// explicit transpose of k (matMul(q, k, false, true) takes a path ~8× slower in this backend) and
// an additive causal mask.
//
// tfjs-core's Node entry registers no gradients; its ES-module build does, through
// dist/register_all_gradients.js, which Node cannot import as shipped (extension-less imports).
// esbuild (a devDependency) bundles that file once into build/bench/ (named by tfjs-core's
// version); tfjs keeps its kernel and
// gradient registries on globalThis, so the bundle's registrations reach the tfjs-core that the
// wasm backend uses.
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './cli.mjs';
import { loadTfjs } from './tfjs-wasm.mjs';

const require = createRequire(import.meta.url);
async function registerAllGradients() {
  // named by tfjs-core's version, so an upgrade bundles its own gradients again
  const version = require('@tensorflow/tfjs-core/package.json').version;
  const GRADIENTS_BUNDLE = path.join(ROOT, 'build', 'bench', `tfjs-core-${version}-gradients.mjs`);
  if (!existsSync(GRADIENTS_BUNDLE)) {
    const esbuild = require('esbuild');
    mkdirSync(path.dirname(GRADIENTS_BUNDLE), { recursive: true });
    esbuild.buildSync({
      entryPoints: [require.resolve('@tensorflow/tfjs-core/dist/register_all_gradients.js')],
      bundle: true, format: 'esm', platform: 'node', outfile: GRADIENTS_BUNDLE, logLevel: 'error',
    });
  }
  await import(pathToFileURL(GRADIENTS_BUNDLE).href);
}

/**
 * tfjs-core's BatchMatMul gradient asks for transposed operands (matMul(a, dy, true, false) and
 * the like), a path of this backend ~8× slower than an explicit transpose then a plain matMul
 * (1024×96·96×96: 11 ms against 1.3 ms here). The same gradient with explicit transposes.
 */
function registerFastMatMulGradient(tf) {
  const T = (x) => tf.transpose(x, x.rank === 3 ? [0, 2, 1] : [1, 0]);
  tf.registerGradient({
    kernelName: tf.BatchMatMul, inputsToSave: ['a', 'b'],
    gradFunc: (dy, [a, b], { transposeA, transposeB }) => {
      if (transposeA || transposeB) throw new Error('tfjs-train: every matMul of the model is plain');
      return { a: () => tf.matMul(dy, T(b)), b: () => tf.matMul(T(a), dy) };
    },
  });
}

let trainers = 0;
const ADAM = { beta1: 0.9, beta2: 0.98, eps: 1e-8, clip: 1 }; // as model.trainStep (docs/model.md)

/**
 * The parameters of docs/model.md's softmax model, all heads of a layer in one [d, d] matrix
 * (head h in columns h·dh … h·dh + dh − 1). `from` (model.parameters() of a lab.model with the same
 * config) sets the initial values, so both train the same numbers from the same start; without
 * it, tfjs's own random normal with the documented scales.
 */
function makeParams(tf, c, from) {
  const { vocab: V, seqLen: T, dModel: D, heads: H, layers, dFF: F } = c;
  const dh = D / H;
  const P = [];
  const initial = (name, shape, init) => {
    if (!from) return init === 'one' ? tf.ones(shape) : init === 'zero' ? tf.zeros(shape) : tf.randomNormal(shape, 0, init, 'float32', 1 + P.length);
    const head = /^(l\d+)\.(wq|wk|wv)$/.exec(name);
    if (!head) return tf.tensor(from[name], shape);
    const full = new Float32Array(D * D);
    for (let h = 0; h < H; h++) {
      const w = from[`${head[1]}.h${h}.${head[2]}`];
      for (let r = 0; r < D; r++) full.set(w.subarray(r * dh, (r + 1) * dh), r * D + h * dh);
    }
    return tf.tensor(full, shape);
  };
  const prefix = `trainer${++trainers}/`; // tfjs variable names are global and must be unique
  const add = (name, shape, init) => P.push({ name, v: tf.variable(initial(name, shape, init), true, prefix + name), matrix: shape.length === 2 });
  const resid = 0.02 / Math.sqrt(2 * layers);
  add('tok_emb', [V, D], 0.02); add('pos_emb', [T, D], 0.02);
  for (let l = 0; l < layers; l++) {
    add(`l${l}.ln1.g`, [D], 'one'); add(`l${l}.ln1.b`, [D], 'zero');
    for (const w of ['wq', 'wk', 'wv']) add(`l${l}.${w}`, [D, D], 0.02);
    add(`l${l}.wo`, [D, D], resid);
    add(`l${l}.ln2.g`, [D], 'one'); add(`l${l}.ln2.b`, [D], 'zero');
    add(`l${l}.fc1`, [D, F], 0.02); add(`l${l}.fc1b`, [F], 'zero');
    add(`l${l}.fc2`, [F, D], resid); add(`l${l}.fc2b`, [D], 'zero');
  }
  add('lnf.g', [D], 'one'); add('lnf.b', [D], 'zero');
  add('out', [D, V], 0.02); add('outb', [V], 'zero');
  return P;
}

/**
 * A trainer for config { vocab, seqLen, dModel, heads, layers, dFF, batch } (causal), starting
 * from `from` (see makeParams) when given:
 * { step(tokens, targets, lr) -> the batch's loss before the update (dataSync), parameterCount, dispose }.
 */
export async function tfjsTrainer(config, from = null) {
  const tfj = await loadTfjs();
  const tf = tfj.tf;
  await registerAllGradients();
  registerFastMatMulGradient(tf);
  const { seqLen: T, dModel: D, heads: H, layers, batch: B, vocab: V } = config;
  const dh = D / H;
  const params = makeParams(tf, config, from);
  const byName = Object.fromEntries(params.map((p) => [p.name, p.v]));
  const moments = params.map((p) => ({ m: tf.variable(tf.zerosLike(p.v), false), v: tf.variable(tf.zerosLike(p.v), false) }));
  // -1e9 above the diagonal: exp() of it is 0 after the max-subtraction, as a mask would give
  const mask = tf.tensor2d(Array.from({ length: T * T }, (_, i) => ((i % T) > Math.floor(i / T) ? -1e9 : 0)), [T, T]);
  const scale = tf.scalar(1 / Math.sqrt(dh));
  const geluC = tf.scalar(0.7978845608), geluK = tf.scalar(0.044715), half = tf.scalar(0.5), one = tf.scalar(1);

  const layerNorm = (x, g, b) => {
    const { mean, variance } = tf.moments(x, -1, true);
    return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, 1e-5))), g), b);
  };
  const gelu = (x) => tf.mul(tf.mul(half, x), tf.add(one, tf.tanh(tf.mul(geluC, tf.add(x, tf.mul(geluK, tf.mul(tf.mul(x, x), x)))))));
  const splitHeads = (x) => tf.reshape(tf.transpose(tf.reshape(x, [B, T, H, dh]), [0, 2, 1, 3]), [B * H, T, dh]);
  const joinHeads = (x) => tf.reshape(tf.transpose(tf.reshape(x, [B, H, T, dh]), [0, 2, 1, 3]), [B * T, D]);

  const loss = (tokens, targets) => {
    // gather's gradient needs UnsortedSegmentSum, which the wasm backend lacks: a one-hot product
    // (an int32 one-hot cast: this backend's OneHot with dtype float32 writes integer bit patterns)
    // the position embedding broadcast over the batch (its gradient, a sum over the batch, is
    // cheaper than tile's)
    const emb = tf.reshape(tf.matMul(tf.cast(tf.oneHot(tokens, V), 'float32'), byName.tok_emb), [B, T, D]);
    let h = tf.reshape(tf.add(emb, byName.pos_emb), [B * T, D]); // [B*T, D]
    for (let l = 0; l < layers; l++) {
      const p = (n) => byName[`l${l}.${n}`];
      const a = layerNorm(h, p('ln1.g'), p('ln1.b'));
      const q = splitHeads(tf.matMul(a, p('wq'))), k = splitHeads(tf.matMul(a, p('wk'))), v = splitHeads(tf.matMul(a, p('wv')));
      const logits = tf.add(tf.mul(tf.matMul(q, tf.transpose(k, [0, 2, 1])), scale), mask);
      const y = joinHeads(tf.matMul(tf.softmax(logits), v));
      h = tf.add(h, tf.matMul(y, p('wo')));
      const m = layerNorm(h, p('ln2.g'), p('ln2.b'));
      h = tf.add(h, tf.add(tf.matMul(gelu(tf.add(tf.matMul(m, p('fc1')), p('fc1b'))), p('fc2')), p('fc2b')));
    }
    const out = tf.add(tf.matMul(layerNorm(h, byName['lnf.g'], byName['lnf.b']), byName.out), byName.outb); // [B*T, V]
    return tf.neg(tf.mean(tf.sum(tf.mul(tf.oneHot(targets, V), tf.logSoftmax(out)), -1)));
  };

  let t = 0;
  const trainer = {
    meta: { version: tfj.version, backend: 'wasm', simd: tfj.simd, threads: tfj.threads },
    parameterCount: params.reduce((s, p) => s + p.v.size, 0),
    step(tokens, targets, lr, weightDecay = 0.01) {
      t++;
      const value = tf.tidy(() => {
        const tk = tf.tensor1d(tokens, 'int32'), tg = tf.tensor1d(targets, 'int32');
        const { value: l, grads } = tf.variableGrads(() => loss(tk, tg), params.map((p) => p.v));
        const gs = params.map((p) => grads[p.v.name]);
        const norm = tf.sqrt(tf.addN(gs.map((g) => tf.sum(tf.square(g)))));
        const clipScale = tf.minimum(one, tf.div(ADAM.clip, tf.add(norm, 1e-6)));
        const c1 = 1 - ADAM.beta1 ** t, c2 = 1 - ADAM.beta2 ** t;
        params.forEach((p, i) => {
          const g = tf.mul(gs[i], clipScale);
          const { m, v } = moments[i];
          m.assign(tf.add(tf.mul(m, ADAM.beta1), tf.mul(g, 1 - ADAM.beta1)));
          v.assign(tf.add(tf.mul(v, ADAM.beta2), tf.mul(tf.square(g), 1 - ADAM.beta2)));
          let update = tf.div(tf.div(m, c1), tf.add(tf.sqrt(tf.div(v, c2)), ADAM.eps));
          if (p.matrix) update = tf.add(update, tf.mul(p.v, weightDecay));
          p.v.assign(tf.sub(p.v, tf.mul(update, lr)));
        });
        return l;
      });
      const x = value.dataSync()[0];
      value.dispose();
      return x;
    },
    /** { name: Float32Array } of the named parameters (names as in makeParams). */
    parameters(names) {
      return Object.fromEntries(names.map((name) => [name, params.find((p) => p.name === name).v.dataSync().slice()]));
    },
    /**
     * tf.profile of one step: { total_ms, kernels: [{ name, ms, calls }], matmuls: [{ shapes, ms,
     * calls, gflops }] }, each sorted by time (kernel times as the backend reports them).
     */
    async profile(tokens, targets, lr) {
      const info = await tf.profile(() => { trainer.step(tokens, targets, lr); });
      const kernels = new Map(), matmuls = new Map();
      for (const k of info.kernels) {
        const e = kernels.get(k.name) ?? { name: k.name, ms: 0, calls: 0 };
        e.ms += k.kernelTimeMs; e.calls++;
        kernels.set(k.name, e);
        if (k.name !== 'BatchMatMul') continue;
        const shapes = k.inputShapes.map((x) => x.join('×')).join(' · ');
        const [a, b] = k.inputShapes, batchDims = a.slice(0, -2).reduce((x, y) => x * y, 1);
        const m = matmuls.get(shapes) ?? { shapes, ms: 0, calls: 0, flops: 2 * batchDims * a.at(-2) * a.at(-1) * b.at(-1) };
        m.ms += k.kernelTimeMs; m.calls++;
        matmuls.set(shapes, m);
      }
      const sorted = (m) => [...m.values()].sort((x, y) => y.ms - x.ms);
      return {
        total_ms: info.kernels.reduce((x, k) => x + k.kernelTimeMs, 0),
        kernel_calls: info.kernels.length,
        kernels: sorted(kernels),
        matmuls: sorted(matmuls).map((m) => ({ shapes: m.shapes, ms: m.ms, calls: m.calls, gflops: (m.flops * m.calls) / (m.ms * 1e6) })),
      };
    },
    dispose() {
      for (const p of params) p.v.dispose();
      for (const m of moments) { m.m.dispose(); m.v.dispose(); }
      for (const x of [mask, scale, geluC, geluK, half, one]) x.dispose();
    },
  };
  return trainer;
}
