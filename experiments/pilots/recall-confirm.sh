#!/bin/sh
# The recall defaults (tasks.recall() and its task.defaults) confirmed on ten fresh seeds used for
# nothing else, softmax trained in full (no early stop), one thread per run. Raw records:
# experiments/pilots/recall-confirm.json. Run from the repository root after `npm run build`.
#   1. the defaults of 2 December (warmup 300) on seeds 2001-2010, one run at a time: 6 of 10
#   2. the defaults of 5 December (warmup 1000, chosen on pilot seeds 2003, 2007, 2008, 2010, 101,
#      102) on seeds 3001-3010, two runs at a time (one per core): 10 of 10
set -e
uptime
# step 1 (recorded with --defaults 1 while those were the defaults; spelled out here)
node experiments/pilots/recall-pilot.mjs --name defaults-confirm-fresh-seeds --stop 0 --evalEvery 50 \
  --layout sparse --pairs 8 --queries 8 --seqLen 24 --vocab 64 --dModel 64 --heads 2 --layers 2 --dFF 256 \
  --steps 2000 --batch 32 --lr 3e-4 --warmup 300 \
  --seeds 2001,2002,2003,2004,2005,2006,2007,2008,2009,2010 --out experiments/pilots/recall-confirm.json
uptime
# step 2 (the defaults now in tasks.js; --defaults 1 reads them). Recorded as two processes of
# five seeds each, one per core, into two files merged afterwards; run here one after the other,
# since both append to the same file (the histories do not depend on it, only the times)
node experiments/pilots/recall-pilot.mjs --name wu1000-confirm-fresh-seeds --defaults 1 --stop 0 --evalEvery 50 \
  --seeds 3001,3002,3003,3004,3005,3006,3007,3008,3009,3010 --out experiments/pilots/recall-confirm.json
uptime
