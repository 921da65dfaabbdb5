// Runs usage.ts's exercise() (compiled to out/usage.js) against the installed package and prints
// its report as JSON. The .wasm files come through the package's subpath exports.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { exercise } from './out/usage.js';

const locate = (file) => import.meta.resolve(`attnlab/${file}`);
const report = await exercise({
  wasmBytes: async (file) => new Uint8Array(await readFile(fileURLToPath(locate(file)))),
  wasmLocation: (file) => new URL(locate(file)),
});
console.log(JSON.stringify(report));
