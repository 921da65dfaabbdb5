// start.mjs — `npm start`: builds if anything changed since the last build, then serves the page
// on localhost and prints its URL. PORT overrides the port.
import { ensureBuild } from './ensure.mjs';

try {
  ensureBuild();
} catch (err) {
  console.error(`npm start: ${err.message}`);
  process.exit(1);
}
const { startServer } = await import('./serve.mjs');
const server = await startServer({ port: process.env.PORT ? Number(process.env.PORT) : undefined, quiet: true });
console.log(`attnlab page: ${server.url}`);
