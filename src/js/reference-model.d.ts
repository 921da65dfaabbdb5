// Types of the subpath 'attnlab/reference-model' (src/js/reference-model.js): the small
// transformer in float64, written from the model contract (docs/model.md), an independent
// reference of lab.model(). A config is lab.model()'s plus `registry`: what each variant reads and
// takes, as the instance publishes it.
import type { ModelConfig, VariantInfo, OptionInfo } from './attnlab.js';

export type ReferenceModelConfig = ModelConfig & { registry: { variants: readonly VariantInfo[]; options: Readonly<Record<string, OptionInfo>> } };
/** The config with its defaults and derived sizes (dh, L, a, b, components, ...); resolving it again returns it. */
export type ResolvedConfig = ReferenceModelConfig & Readonly<Record<string, unknown>>;
/** Parameters by name (float32 values held as float64). */
export type Parameters = Record<string, Float64Array>;

/** Per-head parameters, in the contract's order, with the attention array each makes (a projection) or is. */
export const HEAD_PARAMETERS: ReadonlyArray<{ name: string; array: string | null; shape: readonly string[]; projection?: boolean }>;
/** The initialisation rule of each kind of parameter: { std } (a number, 'residual' or 'rStd') or { value }. */
export const INIT: Readonly<Record<string, { std?: number | 'residual' | 'rStd'; value?: number }>>;
/** The rule of parameter `name` under a config: { std } (a number) or { value }. */
export function initRule(name: string, config: ReferenceModelConfig): { std?: number; value?: number };
/** The largest divisor of n that is <= √n: factorized-dense's a. */
export function factorA(n: number): number;
export function resolveConfig(config: ReferenceModelConfig): ResolvedConfig;
/** The fixed pattern head h of a fixed model takes. */
export function headPattern(config: ReferenceModelConfig, h: number): string;
/** Every parameter, in order ("matrix": weight decay applies). */
export function parameterTable(config: ReferenceModelConfig): Array<{ name: string; shape: number[]; size: number; matrix: boolean; frozen: boolean }>;
/** The parameters the contract's initialisation gives. */
export function initParameters(config: ReferenceModelConfig): Parameters;
/** Logits [batch*seqLen*vocab], mean loss and accuracy over the targets that are not -1; opts.attention: each head's matrices too. */
export function forwardLoss(config: ReferenceModelConfig, params: Parameters, tokens: ArrayLike<number>, targets: ArrayLike<number>, batch: number,
  opts?: { attention?: boolean }): { logits: Float64Array; loss: number; accuracy: number; count: number; attention?: Float64Array[][][] };
/** The gradient of the mean loss by central differences (step opts.step, default 1e-5), for every trainable parameter or opts.names. */
export function gradients(config: ReferenceModelConfig, params: Parameters, tokens: ArrayLike<number>, targets: ArrayLike<number>, batch: number,
  opts?: { step?: number; names?: readonly string[] }): Parameters;
/** One AdamW step in place (float64); pass {} as state the first time, then the state it returns. */
export function adamwStep(config: ReferenceModelConfig, params: Parameters, grads: Parameters, state: object | undefined, options: { lr: number }):
  { state: object; norm: number };
