// The libFuzzer harness over the public C API (tests/c/fuzz_api.c, under ASan + UBSan with
// -fno-sanitize-recover=all) runs for 20 s on the committed seed corpus plus what it finds; any
// crash, overrun, leak or undefined behaviour fails the test. Longer: bash tests/c/fuzz.sh -max_total_time=3600
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('./c/fuzz.sh', import.meta.url));

test('the C API survives 20 s of libFuzzer from the seed corpus with no sanitizer finding', { timeout: 180_000 }, () => {
  const run = spawnSync('bash', [script, '-max_total_time=20'], { encoding: 'utf8' });
  const log = `${run.stdout}\n${run.stderr}`;
  assert.equal(run.status, 0, `fuzzing found a problem (exit ${run.status}); the reproducer is in build/:\n${log.slice(-4000)}`);
  const runs = Number(/stat::number_of_executed_units:\s*(\d+)/.exec(log)?.[1] ?? 0);
  assert.ok(runs >= 1000, `the fuzzer ran only ${runs} inputs:\n${log.slice(-2000)}`);
});
