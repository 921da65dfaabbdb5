// Types of the subpath 'attnlab/tasks' (src/js/tasks.js): the training tasks without the rest of
// the package. The task types themselves are the main entry's (attnlab.d.ts).
import type { Corpus, Split, tasks as TaskFactories } from './attnlab.js';

export type {
  Task, TaskBatch, TextTask, TextWindows, VersesTask, VerseInfo, Corpus, Split,
} from './attnlab.js';

/** The task factories, by name (the same object as the main entry's `tasks`). */
export const tasks: typeof TaskFactories;
export default tasks;

export type TaskName = 'recall' | 'copy' | 'reverse' | 'sort' | 'text' | 'verses';
/** Every task's name, in the order the page, the study and the tests loop over them. */
export const TASK_NAMES: readonly TaskName[];
/** Each task's knobs: the options a form always shows a field for, in the form's order. */
export const TASK_KNOBS: Readonly<Record<TaskName, readonly string[]>>;
/** The page's example text (a short paragraph on attention). */
export const DEFAULT_TEXT: string;
/** The corpus files, next to tasks.js in the package. */
export const CORPUS_FILES: { readonly text: string; readonly index: string };
/** Chapter c (0-based, canonical order) is held out of training when c % HELD_OUT_EVERY === HELD_OUT_EVERY - 1. */
export const HELD_OUT_EVERY: number;
/** The split of chapter c: every 20th from the 10th 'validation', every 20th from the 20th 'heldout', the rest 'train'. */
export function chapterSplit(chapter: number): Split;
/** The shipped corpus, read from disk (Node only; a browser gets it from loadCorpus() of 'attnlab/corpus'). */
export function shippedCorpus(): Corpus;
/** A corpus's parse (vocabulary, verses, chapters and their split), made once per corpus object; Error naming what is wrong. */
export function prepareCorpus(corpus: Corpus, task?: string): Readonly<Record<string, unknown>>;
