#!/usr/bin/env bash
# Sweep post-hook of a watch: look at the project's runs; while more runs are needed, start a new grid sweep of
# exactly the listed runs (the look's sweep.yaml), run it, and look again. Exit 0 when the comparison is decided
# or the last look was taken; 2 on an error.
#
#   ./watch_posthook.sh ENTITY/PROJECT [LOOKS] [MAX_RUNS]
#
# The project holds this study's runs only (the first grid: `wandb sweep sweep.yaml` + `wandb agent`): a watch
# reads every run so far, across all its sweeps, so it selects the project, not one sweep. One agent per grid:
# `wandb agent` returns when the grid is done. See docs/watch.md.
set -uo pipefail
PATH_ARG="${1:?usage: watch_posthook.sh ENTITY/PROJECT [LOOKS] [MAX_RUNS]}"
LOOKS="${2:-3}"
MAX_RUNS="${3:-9}"
cd "$(dirname "$0")"
until rl-reliable watch wandb "$PATH_ARG" --state watch-state --looks "$LOOKS" --max-runs "$MAX_RUNS" \
        --seed 0 --normalize already-normalized --publish group; do
    [ $? -eq 3 ] || exit 2                                  # an error: stop the loop
    for grid in watch-state/sweep*.yaml; do                 # one rectangular grid per file
        sweep=$(wandb sweep --project "${PATH_ARG#*/}" --entity "${PATH_ARG%%/*}" "$grid" 2>&1 \
            | sed -n 's/.*sweep with ID: //p' | tail -1)
        [ -n "$sweep" ] || { echo "wandb sweep $grid failed" >&2; exit 2; }
        wandb agent "$PATH_ARG/$sweep" || exit 2
    done
done
