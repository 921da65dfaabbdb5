// Types of the subpath 'attnlab/reference' (src/js/reference.js): every variant defined in float64
// from its math, the project's independent oracle. Inputs and options are those of
// lab.attention(); results are Float64Arrays.
import type { AttentionInputs, AttentionOptions, VariantId } from './attnlab.js';

/** One step of an explanation: read it as `label = formula = value`; terms are the [a, b] pairs of the sum it stands for. */
export interface Step {
  label: string;
  formula: string;
  value: number;
  terms?: Array<[number, number]>;
}

/** The contract's accuracy bar against this reference: |y − ref| <= abs + rel·|ref|, elementwise. */
export const ACCURACY_BAR: Readonly<{ abs: number; rel: number }>;

/** Output y = A·v [n*dv] and the effective matrix A [n*n]. Throws for an id without a definition. */
export function reference(id: VariantId, inputs: AttentionInputs, options?: AttentionOptions): { output: Float64Array; weights: Float64Array };
/** The chosen output rows (rows.length × dv) without the n×n matrix. */
export function referenceRows(id: VariantId, inputs: AttentionInputs, options: AttentionOptions, rows: readonly number[]): Float64Array;
/** The n×n logits B of a softmax-type variant; null for variants without logits. */
export function logits(id: VariantId, inputs: AttentionInputs, options?: AttentionOptions): Float64Array | null;
/** How A[i,j] comes about, numbers plugged in; [] for an id without a definition. */
export function explain(id: VariantId, inputs: AttentionInputs, options: AttentionOptions | null | undefined, i: number, j: number): Step[];
/** y[i,c] = Σ_j A[i,j]·v[j,c], the non-zero terms ordered by size. */
export function explainOutput(inputs: { n: number; dv: number; v: ArrayLike<number> }, weights: ArrayLike<number>, i: number, c: number): Step[];
/** What a variant with a state keeps instead of A, from a result of lab.attention(..., { state: true }); [] otherwise. */
export function intermediates(id: VariantId, result: { state?: ArrayLike<number>; normalizer?: ArrayLike<number> }, dims: { n: number; d: number; dv: number }):
  Array<{ name: string; label: string; rows: number; cols: number; data: ArrayLike<number>; signed?: boolean }>;
/** The gradient of Σ dOutput ⊙ y with respect to every array the variant reads, and y. */
export function referenceGrad(id: VariantId, inputs: AttentionInputs, dOutput: ArrayLike<number>, options?: AttentionOptions):
  { output: Float64Array; grads: Record<string, Float64Array> };
/** Floating-point operations of one call (a multiply-add counts 2), with the formula; NaN without a definition. */
export function flopCount(id: VariantId, dims: Record<string, number>, options?: AttentionOptions): { flops: number; formula: string };
/** flops / (ms · 1e6); NaN for ms <= 0. */
export function gflops(flops: number, ms: number): number;
/** Whether src/js/reference.js defines the variant. */
export function hasDefinition(id: string): boolean;

/** The recurrent family's update rules (ONNX LinearAttention's update_rule) and what each reads. */
export const RECURRENT_RULES: Readonly<Record<'linear' | 'gated' | 'delta' | 'gated_delta', { readonly gated: boolean; readonly delta: boolean }>>;
/** One head of a recurrent rule, token by token: { output [n*dv], state [d*dv] }. */
export function recurrence(rule: keyof typeof RECURRENT_RULES, inputs: AttentionInputs, options?: AttentionOptions): { output: Float64Array; state: Float64Array };
/** Moves g, beta and (for the delta rules) the keys, in place, into the range the accuracy bar covers; returns the inputs. */
export function recurrentRange<T extends AttentionInputs>(inputs: T): T;
/** A mixture's weights from its alpha or alphaLogits option. */
export function mixtureAlpha(options: AttentionOptions): number[];
/** Each variant's definition, by id (its weights, explain and flops functions; see the module's header). */
export const definitions: Readonly<Record<string, unknown>>;
