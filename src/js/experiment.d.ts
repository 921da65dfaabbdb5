// The subpath 'attnlab/experiment' (src/js/experiment.js): the facts of the experiments, which the
// page, `npm run experiments` and the benchmark read from this one module.
import type { ModelConfig, Task, VariantInfo } from './attnlab.js';

/** One entry of the experiments' list: a variant, or a variant trained otherwise (an extra). */
export interface ExperimentVariant {
  /** The table's name: the variant's id, or the extra's own ('random-frozen'). */
  name: string;
  /** The lab.variants id the model holds. */
  variant: string;
  /** The attention options it trains with (the mixture's components). */
  options?: ModelConfig['options'];
  /** A per-head parameter kept at its initial value in every head ('r'). */
  freezeParam?: string;
  /** The initial scale of r, r1, r2. */
  rStd?: number;
}

/** Runs of a variant trained otherwise than plainly, listed after it (the fixed Random). */
export const EXTRAS: readonly ExperimentVariant[];
/** Every variant of lab.variants a model can hold (inModels), in order, each followed by its extras. */
export function experimentVariants(labVariants: readonly Pick<VariantInfo, 'id' | 'inModels'>[]): ExperimentVariant[];
/** The lab.model config of entry v on a task with these sizes and seed. */
export function modelConfig(task: Pick<Task, 'vocab' | 'seqLen' | 'causal'>, v: ExperimentVariant,
  sizes: { dModel: number; heads: number; layers: number; dFF: number }, seed: number): ModelConfig;

/** A run has learned an accuracy task when its final held-out accuracy reaches this (0.9). */
export const THRESHOLD: number;
/** Evaluations per run of the study: evalEvery = steps / EVAL_POINTS. */
export const EVAL_POINTS: number;
/** A task's chance level (text: bits per character of a uniform guess) and how it is reached; null without one. */
export function chanceOf(task: Task & { options?: { pairs?: number }; chance?: number; classes?: readonly unknown[] }): { value: number; why: string } | null;

/** The study's cost measurements: variants, sequence lengths, tokens a step, model and vocabulary. */
export const COST_VARIANTS: readonly string[];
export const COST_SEQLENS: readonly number[];
export const COST_TOKENS: number;
export const COST_MODEL: { dModel: number; heads: number; layers: number; dFF: number };
export const COST_VOCAB: number;
/** The fixed batch of COST_TOKENS tokens every cost step trains on. */
export function costBatch(): { tokens: Int32Array; targets: Int32Array };
