"""check.py — the recurrent family's C scan against ONNX's own reference of LinearAttention
(onnx/reference/ops/op_linear_attention.py, read from an onnx checkout and run with a stub OpRun,
so the onnx package need not be installed). Every update rule, both decay shapes, with and without
past_state, unit-norm keys, g = -softplus(noise), beta = sigmoid(noise): the ranges the contract's
bar covers. Prints the worst error as a fraction of that bar (1e-5 + 1e-4 |ref|); exits 1 past it.

    bash scripts/onnx-check/run.sh /path/to/onnx   (needs python3-numpy and gcc)
"""
import os, struct, subprocess, sys, tempfile
import numpy as np

onnx_repo, harness = sys.argv[1], sys.argv[2]
stub = tempfile.mkdtemp()
os.makedirs(os.path.join(stub, 'onnx', 'reference'))
for part in ('onnx/__init__.py', 'onnx/reference/__init__.py'):
    open(os.path.join(stub, part), 'w').close()
with open(os.path.join(stub, 'onnx', 'reference', 'op_run.py'), 'w') as f:
    f.write('class OpRun:\n    pass\n')  # the op's _run is called directly
sys.path.insert(0, stub)
sys.path.insert(0, os.path.join(onnx_repo, 'onnx', 'reference', 'ops'))
from op_linear_attention import LinearAttention  # noqa: E402

RULES = ['linear', 'gated', 'delta', 'gated_delta']  # recurrent_rule's order (internal.h)
rng = np.random.default_rng(7)
worst, cases = 0.0, 0
for rule_id, rule in enumerate(RULES):
    gated, delta = 'gated' in rule, 'delta' in rule
    for n, d, dv in [(1, 8, 8), (4, 8, 8), (37, 5, 3), (130, 16, 7)]:
        for g_cols in ([d, 1] if gated else [d]):
            for has_s0 in (0, 1):
                q = rng.standard_normal((n, d)).astype(np.float32)
                k = rng.standard_normal((n, d))
                k = (k / np.linalg.norm(k, axis=1, keepdims=True)).astype(np.float32)
                v = rng.standard_normal((n, dv)).astype(np.float32)
                g = (-np.log1p(np.exp(rng.standard_normal((n, g_cols))))).astype(np.float32)
                beta = (1 / (1 + np.exp(-rng.standard_normal(n)))).astype(np.float32)
                s0 = rng.standard_normal((d, dv)).astype(np.float32) if has_s0 else None
                out, state = LinearAttention()._run(
                    q[None], k[None], v[None], past_state=None if s0 is None else s0[None, None],
                    decay=g[None] if gated else None, beta=beta[None, :, None] if delta else None,
                    kv_num_heads=1, q_num_heads=1, scale=0.0, update_rule=rule)
                blob = struct.pack('<6if', rule_id, n, d, dv, g_cols, has_s0, 1 / np.sqrt(np.float32(d)))
                blob += q.tobytes() + k.tobytes() + v.tobytes() + g.tobytes() + beta.tobytes() + (b'' if s0 is None else s0.tobytes())
                got = np.frombuffer(subprocess.run([harness], input=blob, capture_output=True, check=True).stdout, dtype=np.float32)
                for mine, ref in ((got[:n * dv], out[0].ravel()), (got[n * dv:], state[0, 0].ravel())):
                    ref = ref.astype(np.float64)
                    worst = max(worst, float(np.max(np.abs(mine - ref) / (1e-5 + 1e-4 * np.abs(ref)))))
                cases += 1
print(f'{cases} cases against ONNX reference op LinearAttention: worst error {worst:.3f} of the bar 1e-5 + 1e-4|ref|')
sys.exit(0 if worst <= 1 else 1)
