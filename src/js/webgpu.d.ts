// attnlab/webgpu — attention on the GPU through WebGPU (README, "WebGPU"; docs/contract.md,
// "WebGPU"). Hand-written; the names are those of attnlab's own declarations.

import type {
  AttentionInputs, AttentionOptions, AttentionResult, DimInfo, OptionInfo, VariantId, VariantInfo,
} from './attnlab.js';

export { AttnError } from './attnlab.js';
export type { AttnErrorCode } from './attnlab.js';

export interface WebGPUInitOptions {
  /** Passed to navigator.gpu.requestAdapter(). */
  powerPreference?: 'low-power' | 'high-performance';
}

/** What the browser says of its GPU; fields it keeps private are empty strings. */
export interface WebGPUAdapterInfo {
  readonly vendor: string;
  readonly architecture: string;
  readonly description: string;
}

export interface WebGPULab {
  readonly adapter: WebGPUAdapterInfo;
  /** The same registry as the WebAssembly instance's. */
  readonly variants: readonly VariantInfo[];
  readonly options: Readonly<Record<keyof AttentionOptions, OptionInfo>>;
  readonly dims: Readonly<Record<'n' | 'd' | 'dv' | 'h' | 'L' | 'a' | 'b' | 'rank', DimInfo>>;
  /** The ids that run on WebGPU in this version; a call to another rejects with UNSUPPORTED. */
  readonly ready: readonly string[];
  /** How many pipelines this instance has compiled: a call that raises it waited for the shader compiler. */
  readonly pipelinesCompiled: number;
  /** The GPU's own time of the last call's kernels in ms (timestamp-query), or null where the adapter cannot tell it. */
  readonly gpuTime: number | null;
  /**
   * lab.attention()'s result, computed on the GPU. A bad input rejects with the AttnError
   * lab.attention() throws for it, before any GPU work; keep is UNSUPPORTED for now (the GPU's
   * backward pass comes later); a lost device rejects with BROKEN.
   */
  attention(id: VariantId, inputs: AttentionInputs, options?: Omit<AttentionOptions, 'keep'> & { keep?: false | null }): Promise<AttentionResult>;
  /**
   * Compiles the pipelines of these variants (default: every one in `ready`) for the shape class
   * of dims (default d = dv = 64), so the first timed call does not wait for the shader compiler.
   */
  warmup(ids?: VariantId | readonly VariantId[], dims?: { d: number; dv: number }): Promise<void>;
  /** Frees the GPU device; later calls reject with DISPOSED. */
  dispose(): void;
}

/**
 * An instance on the GPU the browser offers. Rejects with AttnError UNSUPPORTED, saying why, where
 * there is no navigator.gpu (Node; a browser without WebGPU; a page that is not a secure context)
 * or no adapter.
 */
export function initWebGPU(options?: WebGPUInitOptions): Promise<WebGPULab>;
