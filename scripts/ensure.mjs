// ensure.mjs — brings a fresh clone to the point where the page can be served and the tests run:
// npm packages, the WebAssembly build, Debian's Chromium and the corpus's tools (Debian packages
// through scripts/apt-install.sh). Each step does nothing when its result is already there. Used by
// `npm start`, `npm test` and `npm run bench`; runnable on its own:
//   node scripts/ensure.mjs [--deps] [--build] [--force-build] [--browser] [--corpus]
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BUILD_FILES } from '../src/js/builds.js';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CHROMIUM = '/usr/bin/chromium';
// What a complete dist/ holds: src/js as build.sh copies it (every .js and .d.ts, folders
// included), every build's modules (src/js/builds.js) and the corpus.
const treeFiles = (dir, prefix = '') => readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
  e.isDirectory() ? treeFiles(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]);
const distFiles = () => [
  ...treeFiles('src/js').filter((f) => f.endsWith('.js') || f.endsWith('.d.ts')),
  ...BUILD_FILES, 'kjv.txt', 'kjv-index.json',
];
const BUILD_INPUTS = ['src', 'build.sh', 'tests/c', 'package.json', 'data/kjv.txt', 'data/kjv-index.json'];

function run(command, args, what) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    throw new Error(`${what} failed (${command} ${args.join(' ')} exited with ${result.status ?? result.signal})`);
  }
}

function newestMtime(path) {
  const full = join(root, path);
  if (!existsSync(full)) return 0;
  const st = statSync(full);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(0, ...readdirSync(full).map((name) => newestMtime(join(path, name))));
}

/** npm packages (devDependencies: playwright-core for the browser tests, the bench's rivals). */
export function ensureDeps() {
  // Every devDependency at the version package.json asks for, not just the first one ever added:
  // a checkout that gained a devDependency must install it even where node_modules exists.
  const wanted = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies ?? {};
  const installed = (name) => {
    const file = join(root, 'node_modules', ...name.split('/'), 'package.json');
    return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).version : null;
  };
  const missing = Object.entries(wanted).filter(([name, range]) => {
    const version = installed(name);
    return version === null || (/^\d/.test(range) && version !== range); // exact pins must match
  });
  if (!missing.length) return;
  console.log(`ensure: installing npm packages (${missing.map(([name]) => name).join(', ')})`);
  const lock = existsSync(join(root, 'package-lock.json'));
  run('npm', [lock ? 'ci' : 'install', '--no-audit', '--no-fund'], 'npm install');
}

/** dist/ is complete and newer than every build input; else runs build.sh. */
export function isBuildFresh() {
  const stamp = join(root, 'dist', '.stamp');
  if (!existsSync(stamp) || distFiles().some((f) => !existsSync(join(root, 'dist', f)))) return false;
  const built = statSync(stamp).mtimeMs;
  return BUILD_INPUTS.every((p) => newestMtime(p) <= built);
}

/** Whether the build behind dist/ ran its native C tests (build.sh writes it into the stamp). */
export function nativeTestsRan() {
  const stamp = join(root, 'dist', '.stamp');
  return existsSync(stamp) && readFileSync(stamp, 'utf8').includes('native-tests-ran');
}

export function ensureBuild({ force = false } = {}) {
  if (!force && isBuildFresh()) return;
  run('bash', [join(root, 'build.sh')], 'build.sh');
}

/** Installs Debian packages through the one install routine, scripts/apt-install.sh (build.sh's too). */
function aptInstall(packages) {
  const result = spawnSync('bash', [join(root, 'scripts/apt-install.sh'), 'ensure', ...packages], { cwd: root, encoding: 'utf8' });
  if (result.stdout) process.stdout.write(result.stdout);
  if (result.status !== 0) throw new Error(result.stderr?.trim() || `scripts/apt-install.sh ${packages.join(' ')} exited with ${result.status}`);
}

/** Debian's Chromium, which the browser tests drive through playwright-core. */
export function ensureChromium() {
  if (existsSync(CHROMIUM)) return;
  aptInstall(['chromium']);
}

/** Debian's King James Bible and its reader, from which scripts/prepare-corpus.mjs makes
 * data/kjv.txt: the corpus test re-runs it and compares the committed files byte for byte. */
export const CORPUS_PACKAGES = ['bible-kjv-text', 'bible-kjv'];
export const corpusToolsInstalled = () =>
  spawnSync('sh', ['-c', 'command -v bible && test -f /usr/lib/bible.data'], { stdio: 'ignore' }).status === 0;
export function ensureCorpusTools() {
  if (corpusToolsInstalled()) return;
  aptInstall(CORPUS_PACKAGES);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const flags = ['deps', 'build', 'force-build', 'browser', 'corpus'];
    const { values } = parseArgs({ options: Object.fromEntries(flags.map((f) => [f, { type: 'boolean', default: false }])) });
    const all = flags.every((f) => !values[f]);
    if (all || values.deps) ensureDeps();
    if (all || values.build || values['force-build']) ensureBuild({ force: values['force-build'] });
    if (all || values.browser) ensureChromium();
    if (all || values.corpus) ensureCorpusTools();
  } catch (err) {
    console.error(`ensure: ${err.message}`);
    process.exit(1);
  }
}
