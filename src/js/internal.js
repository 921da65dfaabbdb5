// internal.js — what the package's own modules share and its users do not: the key of the
// instance method that reads and checks a call without running it (webgpu.js runs its calls on
// the GPU after the WebAssembly instance has checked them, so both reject a bad input alike), and
// of the one that counts the plans the instance has made (the tests of a model's lifetime).
// Not in package.json's exports.

/** instance[CHECK_CALL](id, inputs, options): attention()'s reading and checks, no run. */
export const CHECK_CALL = Symbol('attnlab.checkCall');

/**
 * webgpuInstance[RESIDENT]: tensors that stay on the GPU between calls (what gradients and
 * training on the GPU build on): upload, attention with tensors in place of arrays and tensors
 * out, read, release (src/js/webgpu.js, "Resident tensors").
 */
export const RESIDENT = Symbol('attnlab.resident');

/** instance[PLANS_MADE](): how many attention plans the instance has made so far (attn_plans_made). */
export const PLANS_MADE = Symbol('attnlab.plansMade');
