#!/usr/bin/env bash
# Sweep post-hook: run the grid, then evaluate and publish the analysis onto the sweep.
#
#   ./posthook.sh ENTITY/PROJECT SWEEP_ID [N_RUNS]
#
# One agent: `wandb agent --count N` returns when it has run N runs or the sweep has no more
# runs, then `rl-reliable wandb --wait` checks with the server that the sweep is FINISHED and no
# run is still running or pending (bounded by --wait-timeout), evaluates, and publishes a run of
# job type rl-reliable-analysis attached to the sweep with an rl-reliable-report artifact.
#
# Several agents (e.g. one per GPU or per cluster job): the first agent to exit does NOT mean the
# sweep is done - the others may still be running. Do not chain the analysis after every agent;
# run it once, anywhere, with --wait (it polls the server until everything is finished):
#   for i in 1 2 3 4; do wandb agent ENTITY/PROJECT/SWEEP_ID & done
#   rl-reliable wandb ENTITY/PROJECT --sweep SWEEP_ID --wait --wait-timeout 43200
# Publishing is idempotent: if two agents' hooks both run, the second finds the same report
# (same content hash) and logs nothing new.
set -euo pipefail
PATH_ARG="${1:?usage: posthook.sh ENTITY/PROJECT SWEEP_ID [N_RUNS]}"
SWEEP_ID="${2:?usage: posthook.sh ENTITY/PROJECT SWEEP_ID [N_RUNS]}"
N_RUNS="${3:-45}"
cd "$(dirname "$0")"
wandb agent --count "$N_RUNS" "$PATH_ARG/$SWEEP_ID" && \
  rl-reliable wandb "$PATH_ARG" --sweep "$SWEEP_ID" --wait --poll 30 --wait-timeout 21600 \
    --seed 0 --out "results-$SWEEP_ID" --publish sweep
