// The text task's corpus (the King James Bible, 4.1 MB: dist/kjv.txt and dist/kjv-index.json),
// fetched only when the text task on the corpus is chosen, once per page, with its progress; the
// package's own loadCorpus() (dist/corpus.js) parses it. Listeners hear { state: 'loading',
// loaded, total } | { state: 'ready' } | { state: 'error', message }.

import { loadCorpus } from '../../dist/corpus.js';
import { tasks } from '../../dist/tasks.js';
import { setCorpusKnobs, knobsOf } from './config.js';

const TEXT_URL = new URL('../../dist/kjv.txt', import.meta.url);

let promise = null;
let corpus = null;
let status = { state: 'idle' };
const listeners = new Set();

const tell = (s) => {
  status = s;
  for (const fn of listeners) fn(s);
};

export const corpusStatus = () => status;
export const loadedCorpus = () => corpus;
/** fn(status) on every change; returns the function that stops it. */
export function onCorpus(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** The text, read as it arrives so the page can show how much has come (fetch().text() says nothing until the end). */
async function fetchText() {
  const response = await fetch(TEXT_URL);
  if (!response.ok) throw new Error(`${TEXT_URL.pathname}: HTTP ${response.status} ${response.statusText}`);
  const total = Number(response.headers.get('content-length')) || 0;
  if (!response.body?.getReader) return response.blob();
  const reader = response.body.getReader();
  const chunks = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    tell({ state: 'loading', loaded, total });
  }
  return new Blob(chunks, { type: 'text/plain' });
}

/** The corpus, fetched the first time (a failed fetch can be tried again). */
export function ensureCorpus() {
  if (promise) return promise;
  tell({ state: 'loading', loaded: 0, total: 0 });
  promise = (async () => {
    const blob = await fetchText();
    const url = URL.createObjectURL(blob);
    try {
      // loadCorpus reads our copy of the text and fetches the small index next to it
      corpus = await loadCorpus({ text: url });
    } finally {
      URL.revokeObjectURL(url);
    }
    setCorpusKnobs(knobsOf(tasks.text({ corpus })));
    tell({ state: 'ready' });
    return corpus;
  })().catch((err) => {
    promise = null;
    tell({ state: 'error', message: `the corpus could not be fetched: ${err.message}` });
    throw err;
  });
  return promise;
}
