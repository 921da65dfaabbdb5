// worker.mjs — one worker thread of `npm run experiments`: loads the binding once, runs the jobs it
// is sent one at a time (scripts/study/run-job.mjs) and posts each record back.
import { parentPort, workerData } from 'node:worker_threads';
import { runJob, setup } from './run-job.mjs';

const lib = await setup(workerData.binding);
parentPort.on('message', async (job) => {
  if (job === null) process.exit(0);
  try {
    parentPort.postMessage({ job, record: await runJob(job, workerData) });
  } catch (err) {
    parentPort.postMessage({ job, record: { key: job.key, error: `${err.name}: ${err.message}`, stack: err.stack } });
  }
});
parentPort.postMessage({ ready: true, build: lib.build });
