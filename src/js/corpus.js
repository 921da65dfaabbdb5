// corpus.js — loadCorpus(): the text corpus (the King James Bible; data/README.md) as tasks.text({
// corpus }) and tasks.verses({ corpus }) take it. A module of its own, the package's subpath
// 'attnlab/corpus', because its literal new URL('./kjv.txt', import.meta.url) makes bundlers such
// as Vite emit the 4.1 MB of text next to the bundle: an app gets the files only when it imports
// this module. In Node, tasks.text() reads the shipped corpus by itself and this is not needed.
//
//   import { loadCorpus } from 'attnlab/corpus';
//   const task = tasks.text({ corpus: await loadCorpus() });
//
// A plain ES module: no DOM, no Node imports, no work at import time.
import { prepareCorpus, shippedCorpus } from './tasks/corpus-parse.js';

const isFileUrl = () => String(import.meta.url).startsWith('file:');

async function readText(url) {
  const href = String(url);
  const fs = globalThis.process?.getBuiltinModule?.('node:fs/promises');
  if (fs && (href.startsWith('file:') || !/^[a-z][a-z0-9+.-]*:/i.test(href))) {
    return fs.readFile(href.startsWith('file:') ? new URL(href) : href, 'utf8');
  }
  const response = await fetch(href);
  if (!response.ok) throw new Error(`loadCorpus: ${href}: HTTP ${response.status} ${response.statusText}`);
  return response.text();
}

/**
 * The corpus as tasks.text({ corpus }) and tasks.verses({ corpus }) take it: { text, index }.
 * Without arguments: the shipped one (Node reads it from disk; a browser fetches kjv.txt and
 * kjv-index.json next to tasks.js). { text, index }: the URLs (or, in Node, paths) of other files.
 */
export async function loadCorpus(where = {}) {
  if (where === null || typeof where !== 'object' || Array.isArray(where)) {
    throw new Error(`loadCorpus: the argument must be { text, index } (URLs), got ${where === null ? 'null' : typeof where}`);
  }
  for (const k of Object.keys(where)) if (k !== 'text' && k !== 'index') throw new Error(`loadCorpus: ${k} is not an option (known: text, index)`);
  if (where.text == null && where.index == null && globalThis.process?.getBuiltinModule?.('node:fs') && isFileUrl()) {
    return shippedCorpus();
  }
  // literal URLs, so that bundlers (Vite) emit the files next to the bundle
  const textUrl = where.text ?? new URL('./kjv.txt', import.meta.url);
  const indexUrl = where.index ?? new URL('./kjv-index.json', import.meta.url);
  const [text, indexText] = await Promise.all([readText(textUrl), readText(indexUrl)]);
  let index;
  try {
    index = JSON.parse(indexText);
  } catch (err) {
    throw new Error(`loadCorpus: ${String(indexUrl)} is not JSON (${err.message})`);
  }
  const corpus = Object.freeze({ text, index });
  prepareCorpus(corpus, 'loadCorpus'); // a bad pair of files fails here, not at the first task
  return corpus;
}

/**
 * The parse of a corpus, kept per corpus object: characters, token ids, verse offsets, chapters
 * (with their held-out flag) and the runs of consecutive training and held-out chapters.
 */
