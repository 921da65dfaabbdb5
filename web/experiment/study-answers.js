// The two short answers at the top of the Experiment view. The study's author writes them from
// experiments/results.md once the recorded study is in (`npm run experiments`); until then they
// point there. Plain text; each answer is one or two sentences.

export const STUDY_ANSWERS = [
  {
    question: 'Is token-to-token attention necessary?',
    answer: 'Placeholder, to be written from the recorded study: see experiments/results.md for how many of five seeds each variant learned on each task, with intervals.',
  },
  {
    question: 'Is softmax necessary?',
    answer: 'Placeholder, to be written from the recorded study: see experiments/results.md for recall (content lookup) and text (bits per character), where the linear family and softmax part ways.',
  },
];
