#!/bin/sh
# The chosen recall defaults (tasks.recall() and its task.defaults), trained in full (no early
# stop) with softmax on the pilot seeds 101-105 and then on seeds 1-5, which the experiments
# report; one run at a time, one thread. Appends to experiments/pilots/recall-defaults.json.
# Run from the repository root after `npm run build`.
#
# The first two runs shared the machine with other builds and browser tests (load average
# 4.7-8.7), so both sets of seeds were trained again once the load had fallen (the third run
# waited for a 1-minute load average below 2.5): the same histories bit for bit, honest times.
set -e
run() { uptime; node experiments/pilots/recall-pilot.mjs --defaults 1 --stop 0 --evalEvery 50 --out experiments/pilots/recall-defaults.json "$@"; }
run --name defaults-pilot-seeds --seeds 101,102,103,104,105
run --name defaults-study-seeds --seeds 1,2,3,4,5
i=0
while [ $i -lt 120 ] && [ "$(echo "$(cut -d' ' -f1 /proc/loadavg) >= 2.5" | bc)" = 1 ]; do sleep 30; i=$((i + 1)); done
run --name defaults-study-seeds-rerun --seeds 1,2,3,4,5
run --name defaults-pilot-seeds-rerun --seeds 101,102,103,104,105
uptime
