#!/bin/sh
# The recall defaults (tasks.recall() and its task.defaults) confirmed on ten fresh seeds used for
# nothing else (2001-2010), softmax trained in full (no early stop), one run at a time on one
# thread. Raw records: experiments/pilots/recall-confirm.json. Run from the repository root
# after `npm run build`.
set -e
uptime
node experiments/pilots/recall-pilot.mjs --name defaults-confirm-fresh-seeds --defaults 1 --stop 0 --evalEvery 50 \
  --seeds 2001,2002,2003,2004,2005,2006,2007,2008,2009,2010 --out experiments/pilots/recall-confirm.json
uptime
