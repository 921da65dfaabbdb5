// prepare-corpus.mjs — writes attnlab's text corpus, the King James Bible, from Debian's packages
// bible-kjv-text (the text, compressed in its own format) and bible-kjv (`bible`, the program that
// reads it):
//
//   apt-get install -y bible-kjv-text bible-kjv
//   node scripts/prepare-corpus.mjs [--out data]
//
// Output (data/README.md describes it):
//   data/kjv.txt         the plain text, one verse per line ("\n" after every verse, the last
//                        included), in canonical order, Genesis 1:1 to Revelation 22:21;
//   data/kjv-index.json  the structure: every book's name, its testament and the number of verses of
//                        each of its chapters (so verse i of the text is line i, and a chapter is a
//                        run of lines), the packages' versions, counts and the text's sha256.
//
// What it does to the text `bible -f` prints (one verse a line, "Ge1:1 In the beginning ..."): it
// removes the verse reference before the first space, turns every run of whitespace into one space
// and trims each verse (the source has two double spaces and one trailing space). Nothing else:
// spelling, capitals and punctuation are the source's. It checks what it reads (66 books in order,
// chapters and verses numbered from 1 without gaps, no digit left in any verse) and stops on
// anything else. Deterministic: the same packages give byte-identical files.
//
// No dependencies: Node's own modules and the `bible` program.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const DATA_FILE = '/usr/lib/bible.data';
const INSTALL = 'apt-get install -y bible-kjv-text bible-kjv   (as root; or with sudo)';

// The 66 books in canonical order: the reference `bible -f` prints, the name, the testament.
const BOOKS = [
  ['Ge', 'Genesis'], ['Exo', 'Exodus'], ['Lev', 'Leviticus'], ['Num', 'Numbers'], ['Deu', 'Deuteronomy'],
  ['Josh', 'Joshua'], ['Jdgs', 'Judges'], ['Ruth', 'Ruth'], ['1Sm', '1 Samuel'], ['2Sm', '2 Samuel'],
  ['1Ki', '1 Kings'], ['2Ki', '2 Kings'], ['1Chr', '1 Chronicles'], ['2Chr', '2 Chronicles'], ['Ezra', 'Ezra'],
  ['Neh', 'Nehemiah'], ['Est', 'Esther'], ['Job', 'Job'], ['Psa', 'Psalms'], ['Prv', 'Proverbs'],
  ['Eccl', 'Ecclesiastes'], ['SSol', 'Song of Solomon'], ['Isa', 'Isaiah'], ['Jer', 'Jeremiah'],
  ['Lam', 'Lamentations'], ['Eze', 'Ezekiel'], ['Dan', 'Daniel'], ['Hos', 'Hosea'], ['Joel', 'Joel'],
  ['Amos', 'Amos'], ['Obad', 'Obadiah'], ['Jonah', 'Jonah'], ['Mic', 'Micah'], ['Nahum', 'Nahum'],
  ['Hab', 'Habakkuk'], ['Zep', 'Zephaniah'], ['Hag', 'Haggai'], ['Zec', 'Zechariah'], ['Mal', 'Malachi'],
  ['Mat', 'Matthew'], ['Mark', 'Mark'], ['Luke', 'Luke'], ['John', 'John'], ['Acts', 'Acts'],
  ['Rom', 'Romans'], ['1Cor', '1 Corinthians'], ['2Cor', '2 Corinthians'], ['Gal', 'Galatians'],
  ['Eph', 'Ephesians'], ['Phi', 'Philippians'], ['Col', 'Colossians'], ['1Th', '1 Thessalonians'],
  ['2Th', '2 Thessalonians'], ['1Tim', '1 Timothy'], ['2Tim', '2 Timothy'], ['Titus', 'Titus'],
  ['Phmn', 'Philemon'], ['Heb', 'Hebrews'], ['Jas', 'James'], ['1Pet', '1 Peter'], ['2Pet', '2 Peter'],
  ['1Jn', '1 John'], ['2Jn', '2 John'], ['3Jn', '3 John'], ['Jude', 'Jude'], ['Rev', 'Revelation'],
].map(([ref, name], i) => ({ ref, name, testament: i < 39 ? 'OT' : 'NT' }));

function die(msg) {
  console.error(`prepare-corpus: ${msg}`);
  process.exit(1);
}

function args(argv) {
  try {
    const { values } = parseArgs({ args: argv, options: { out: { type: 'string' } } });
    return { out: values.out != null ? resolve(values.out) : join(root, 'data') };
  } catch (err) {
    die(`${err.message}; usage: node scripts/prepare-corpus.mjs [--out DIR]`);
  }
}

/** The installed version of a Debian package, or null. */
function debVersion(pkg) {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Version}', pkg], { encoding: 'utf8' });
  return r.status === 0 && r.stdout ? r.stdout : null;
}

function readBible() {
  if (!existsSync(DATA_FILE)) die(`${DATA_FILE} is missing: the text comes from Debian's bible-kjv-text. Install it with:\n  ${INSTALL}`);
  // -f: one verse a line, each after its reference; stdin closed so that it never waits for input
  const r = spawnSync('bible', ['-f', 'Gen1:1-Rev22:21'], { encoding: 'latin1', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  if (r.error?.code === 'ENOENT') die(`the program \`bible\` is missing: it comes from Debian's bible-kjv. Install it with:\n  ${INSTALL}`);
  if (r.error) die(`bible failed: ${r.error.message}`);
  if (r.status !== 0) die(`bible exited with ${r.status}: ${r.stderr.trim()}`);
  return r.stdout;
}

function parse(raw) {
  const lines = raw.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const books = [];
  const verses = [];
  let book = -1;
  for (const [n, line] of lines.entries()) {
    const m = /^([1-3]?[A-Za-z]+)(\d+):(\d+) (.*)$/.exec(line);
    if (!m) die(`line ${n + 1} is not "<book><chapter>:<verse> <text>": ${JSON.stringify(line.slice(0, 80))}`);
    const [, ref, ch, vs, body] = m;
    const chapter = Number(ch);
    const verse = Number(vs);
    if (book < 0 || ref !== BOOKS[book].ref) {
      book++;
      if (book >= BOOKS.length || ref !== BOOKS[book].ref) die(`line ${n + 1}: book ${ref}, expected ${BOOKS[book]?.ref ?? 'the end'}`);
      books.push({ ...BOOKS[book], verses: [] });
    }
    const counts = books[book].verses;
    if (verse === 1) {
      if (chapter !== counts.length + 1) die(`line ${n + 1}: ${ref} chapter ${chapter} after chapter ${counts.length}`);
      counts.push(0);
    } else if (chapter !== counts.length || verse !== counts[counts.length - 1] + 1) {
      die(`line ${n + 1}: ${ref}${chapter}:${verse} does not follow ${ref}${counts.length}:${counts[counts.length - 1]}`);
    }
    counts[counts.length - 1]++;
    const text = body.replace(/\s+/g, ' ').trim();
    if (!text) die(`line ${n + 1}: ${ref}${chapter}:${verse} is empty`);
    if (/\d/.test(text)) die(`line ${n + 1}: ${ref}${chapter}:${verse} still holds a digit: ${JSON.stringify(text)}`);
    verses.push(text);
  }
  if (books.length !== BOOKS.length) die(`read ${books.length} books, expected ${BOOKS.length}`);
  return { books, verses };
}

const { out } = args(process.argv.slice(2));
const versions = { text: debVersion('bible-kjv-text'), reader: debVersion('bible-kjv') };
if (!versions.text || !versions.reader) {
  die(`Debian's ${!versions.text ? 'bible-kjv-text' : 'bible-kjv'} is not installed. Install both with:\n  ${INSTALL}`);
}
const { books, verses } = parse(readBible());
const text = verses.map((v) => `${v}\n`).join('');
const sha256 = createHash('sha256').update(text, 'utf8').digest('hex');
const chars = [...new Set(text)].sort();
if (chars.some((c) => c.charCodeAt(0) > 0x7e)) die(`a character outside ASCII: ${JSON.stringify(chars.filter((c) => c.charCodeAt(0) > 0x7e))}`);

const index = {
  name: 'The King James Bible, one verse a line',
  source: {
    packages: `Debian bible-kjv-text ${versions.text} (the text, ${DATA_FILE}), read with bible-kjv ${versions.reader}`,
    command: 'bible -f Gen1:1-Rev22:21',
    removed: 'each verse\'s reference (book, chapter:verse); runs of whitespace made one space; each verse trimmed',
    licence: 'public domain (the 1611 translation; its copyright has expired), except in the United Kingdom, where the Crown\'s letters patent still govern printing it',
  },
  text: {
    file: 'kjv.txt',
    characters: text.length,
    verses: verses.length,
    chapters: books.reduce((s, b) => s + b.verses.length, 0),
    distinct: chars.length,
    alphabet: chars.join(''),
    sha256,
  },
  books: books.map(({ name, ref, testament, verses: v }) => ({ name, ref, testament, verses: v })),
};
// One book a line: the file stays readable and diffs stay small.
const json = '{\n' +
  Object.entries(index).filter(([k]) => k !== 'books').map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v, null, 2).replace(/\n/g, '\n  ')},\n`).join('') +
  '  "books": [\n' + index.books.map((b) => `    ${JSON.stringify(b)}`).join(',\n') + '\n  ]\n}\n';
JSON.parse(json); // it is JSON

mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'kjv.txt'), text);
writeFileSync(join(out, 'kjv-index.json'), json);
console.log(`prepare-corpus: wrote ${join(out, 'kjv.txt')} (${text.length} characters, ${verses.length} verses, ` +
  `${index.text.chapters} chapters, ${chars.length} distinct characters, sha256 ${sha256}) and ${join(out, 'kjv-index.json')}`);
