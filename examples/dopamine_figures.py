"""Reproduce the paper's ALE-style figures from the Dopamine baselines (final scores and learning curves).

Data: ``dopamine_atari_curves.csv`` next to this script — google/dopamine @ 5873f54
(``baselines/atari/data/*.json``, Apache-2.0): 6 agents, 60 games, 5 runs each, average training
return per iteration (1 iteration = 1M frames), kept every 10th iteration plus the last (198).
The five games without human/random reference scores (Air Raid, Carnival, Elevator Action,
Journey Escape, Pooyan) are dropped so the scores can be human-normalised (55 games remain).

Run:
    python examples/dopamine_figures.py                 # writes examples/figures/dopamine_*.png
    python examples/dopamine_figures.py --out results/  # also the full report folder (HTML, LaTeX, CSV)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from rl_reliable_logger import ScoreTable, evaluate, save_report
from rl_reliable_logger.render import figures as plots

HERE = Path(__file__).resolve().parent
NO_REFERENCE = ["airraid", "carnival", "elevatoraction", "journeyescape", "pooyan"]


def load(path: Path) -> ScoreTable:
    """Wide ``game,agent,run,iter_0..`` rows -> a long ScoreTable with a step column."""
    wide = pd.read_csv(path)
    wide = wide[~wide["game"].isin(NO_REFERENCE)]
    long = wide.melt(id_vars=["game", "agent", "run"], var_name="iteration", value_name="return")
    long["iteration"] = long["iteration"].str.removeprefix("iter_").astype(int)
    return ScoreTable(
        long,
        algorithm="agent",
        task="game",
        seed="run",
        score="return",
        step="iteration",
        source={"kind": "csv", "path": path.name, "origin": "google/dopamine baselines"},
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=HERE / "dopamine_atari_curves.csv")
    ap.add_argument("--figures", type=Path, default=HERE / "figures")
    ap.add_argument("--out", type=Path, default=None, help="also write the whole report folder here")
    ap.add_argument("--reps", type=int, default=20_000)
    args = ap.parse_args()

    table = load(args.data)
    report = evaluate(
        table, normalize="atari", curves=True, reps=args.reps, profile_reps=1000, improvement_reps=1000, seed=0
    )
    report.provenance["step_label"] = "training iteration (1 iteration = 1M frames)"
    print(report.aggregates.round(3).to_string(index=False))

    args.figures.mkdir(parents=True, exist_ok=True)
    figs = {
        "dopamine_interval_estimates": plots.plot_interval_estimates(report),
        "dopamine_performance_profile": plots.plot_performance_profiles(report, nonlinear=True, max_tau=8),
        "dopamine_probability_of_improvement": plots.plot_probability_of_improvement(report),
        "dopamine_sample_efficiency_iqm": plots.plot_sample_efficiency_curves(report, metric="iqm"),
    }
    for name, fig in figs.items():
        path = args.figures / f"{name}.png"
        fig.savefig(path, dpi=72, bbox_inches="tight", metadata={"Software": None})
        print("wrote", path)
    if args.out:
        save_report(report, args.out)
        print("wrote", args.out / "report.html")


if __name__ == "__main__":
    main()
