"""Reproduce the paper's ALE-style figures from the Dopamine baselines (final scores and learning curves).

Data: ``dopamine_atari_curves.csv`` next to this script — google/dopamine @ 5873f54
(``baselines/atari/data/*.json``, Apache-2.0): 6 agents, 60 games, 5 runs each, average training
return per iteration (1 iteration = 1M frames), kept every 10th iteration plus the last (198).
The five games without human/random reference scores (Air Raid, Carnival, Elevator Action,
Journey Escape, Pooyan) are dropped so the scores can be human-normalised (55 games remain).

Run:
    python examples/dopamine_figures.py                 # brings examples/figures/dopamine_*.png up to date
    python examples/dopamine_figures.py --out results/  # also the full report folder (HTML, LaTeX, CSV)

Each PNG records, in its ``Description`` text chunk, a digest of what it was drawn from: the numbers it shows
(the report's tables, rounded to what a figure can show) and the source of the figure code. A figure whose
digest is unchanged is left as it is, so running this script on an up-to-date checkout writes nothing (whatever
matplotlib version draws it), and ``tests/render/test_example_figures.py`` fails when a committed figure is stale.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
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


#: The report tables each figure draws.
FIGURE_TABLES = {
    "dopamine_interval_estimates": ("aggregates",),
    "dopamine_performance_profile": ("profiles",),
    "dopamine_probability_of_improvement": ("improvement",),
    "dopamine_sample_efficiency_iqm": ("curves",),
}
DIGEST_PREFIX = "rl-reliable figure inputs sha256:"


def compute_report(data: Path = HERE / "dopamine_atari_curves.csv", reps: int = 20_000):
    """The report the figures are drawn from (the script's one analysis)."""
    report = evaluate(
        load(data), normalize="atari", curves=True, reps=reps, profile_reps=1000, improvement_reps=1000, seed=0
    )
    report.provenance["step_label"] = "training iteration (1 iteration = 1M frames)"
    return report


def inputs_digest(report, name: str) -> str:
    """What figure ``name`` shows, as a digest: its tables rounded to 4 decimals (a figure cannot show more, and
    the last bits may differ between numpy versions) and the source of the figure code that draws it."""
    h = hashlib.sha256(inspect.getsource(plots).encode() + inspect.getsource(draw).encode())
    for table in FIGURE_TABLES[name]:
        frame = getattr(report, table)
        h.update(table.encode() + b"\0" + frame.round(4).to_csv(index=False).encode())
    return h.hexdigest()


def recorded_digest(path: Path) -> str | None:
    """The digest a PNG written by this script carries, or None (no file, or not written by it)."""
    from PIL import Image  # matplotlib's own PNG dependency

    if not path.exists():
        return None
    text = Image.open(path).text.get("Description", "")
    return text.removeprefix(DIGEST_PREFIX) if text.startswith(DIGEST_PREFIX) else None


def draw(report, name: str):
    """The matplotlib Figure of ``name``."""
    if name == "dopamine_interval_estimates":
        return plots.plot_interval_estimates(report)
    if name == "dopamine_performance_profile":
        return plots.plot_performance_profiles(report, nonlinear=True, max_tau=8)
    if name == "dopamine_probability_of_improvement":
        return plots.plot_probability_of_improvement(report)
    return plots.plot_sample_efficiency_curves(report, metric="iqm")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=HERE / "dopamine_atari_curves.csv")
    ap.add_argument("--figures", type=Path, default=HERE / "figures")
    ap.add_argument("--out", type=Path, default=None, help="also write the whole report folder here")
    ap.add_argument("--reps", type=int, default=20_000)
    args = ap.parse_args(argv)

    report = compute_report(args.data, args.reps)
    print(report.aggregates.round(3).to_string(index=False))

    args.figures.mkdir(parents=True, exist_ok=True)
    for name in FIGURE_TABLES:
        path = args.figures / f"{name}.png"
        digest = inputs_digest(report, name)
        if recorded_digest(path) == digest:
            print("up to date", path)
            continue
        metadata = {"Software": None, "Description": DIGEST_PREFIX + digest}
        draw(report, name).savefig(path, dpi=72, bbox_inches="tight", metadata=metadata)
        print("wrote", path)
    if args.out:
        save_report(report, args.out)
        print("wrote", args.out / "report.html")


if __name__ == "__main__":
    main()
