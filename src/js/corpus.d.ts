// The subpath 'attnlab/corpus' (src/js/corpus.js): the text corpus, loaded. A module of its own so
// that bundlers emit the 4.1 MB of text only for apps that import it.
import type { Corpus } from './attnlab.js';

/**
 * The corpus for tasks.text({ corpus }) and tasks.verses({ corpus }): without arguments the
 * shipped one (Node reads it from disk; a browser fetches kjv.txt and kjv-index.json next to
 * corpus.js, 4.1 MB); { text, index }: the URLs (in Node also paths) of other files.
 */
export function loadCorpus(where?: { text?: string | URL; index?: string | URL }): Promise<Corpus>;
