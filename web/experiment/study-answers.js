// The two short answers at the top of the Experiment view, written from the recorded study
// (experiments/results.md and the reading in experiments/notes.md; `npm run experiments`). Plain
// text; each answer is one or two sentences. Rewrite them when the recorded study changes.

export const STUDY_ANSWERS = [
  {
    question: 'Is token-to-token attention necessary?',
    answer: 'For looking a value up by its key, yes: on recall softmax learned it on 5 of 5 seeds (and 10 of 10 fresh ones), every Synthesizer and the fixed patterns on none. For tasks decided by position (copy, reverse, sort), no: the trained Synthesizers learned copy and reverse on every seed. On the King James Bible no model came near a character 5-gram (1.72 bits per character; fixed patterns 2.00, softmax 2.15; the best level with a 4-gram): at this scale text cannot answer it yet.',
  },
  {
    question: 'Is softmax necessary?',
    answer: 'Not for the position tasks, and on text efficient attention matched softmax (2.16 bits per character, both above the 4-gram). For recall the kernel decides: taylor (1 + cos) learned it on 4 of 5 seeds (the fifth 89.9 %), elu+1 linear and efficient on none. What dropping softmax buys is speed at length: level at seqLen 64, linear attention trains faster than softmax from 128 on, 3.5× at 2,048.',
  },
];
