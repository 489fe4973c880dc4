"""The rectangular 6 algorithms x 10 runs x 26 games Atari 100k data set of the benchmarks and the rliable tests.

Five algorithms (DER, DrQ, DrQ(eps), OTR, SPR) come from ``examples/atari100k_scores.csv``: the
first 10 runs per game of the rliable paper's published Atari 100k scores. SimPLe has only 5 runs
per game there, so it is left out of the rectangular comparison. The sixth "algorithm", ``SPR-b``,
is SPR's runs 10-19 (raw returns) from the same published release
(``rliable_atari_100k/final_scores_long.csv`` in the shared data folder, the long form of
``final_scores_hns.json``), renumbered seeds 0-9: a real, independent second batch of SPR runs.

Everything is raw returns; human normalisation is done by rl_reliable_logger's ``atari100k``
normaliser (random -> 0, human -> 1), and the *same* normalised array is handed to rliable.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_CSV = ROOT / "examples" / "atari100k_scores.csv"
#: The shared data folder: ``shared/data`` beside the checkout, or RL_RELIABLE_SHARED_DATA.
SHARED_DATA = Path(os.environ.get("RL_RELIABLE_SHARED_DATA", ROOT.parent / "shared" / "data"))
LONG_CSV = SHARED_DATA / "rliable_atari_100k" / "final_scores_long.csv"
TEN_RUN_ALGORITHMS = ["DER", "DrQ", "DrQ(eps)", "OTR", "SPR"]


def rectangular_frame(with_spr_b: bool = True) -> pd.DataFrame:
    """Long frame ``algorithm, task, seed, score`` (raw returns), 10 runs on every game."""
    df = pd.read_csv(EXAMPLE_CSV)
    df = df[df["algorithm"].isin(TEN_RUN_ALGORITHMS)]
    if with_spr_b:
        if not LONG_CSV.exists():
            raise FileNotFoundError(
                f"{LONG_CSV} is needed for SPR-b (SPR runs 10-19): put the shared data beside the checkout "
                "or set RL_RELIABLE_SHARED_DATA to its data folder"
            )
        long = pd.read_csv(LONG_CSV)
        b = long[(long["algorithm"] == "SPR") & long["run_index"].between(10, 19)]
        b = pd.DataFrame(
            {"algorithm": "SPR-b", "task": b["game"], "seed": b["run_index"] - 10, "score": b["raw_return"]}
        )
        df = pd.concat([df, b], ignore_index=True)
    counts = df.groupby(["algorithm", "task"]).size()
    assert (counts == 10).all() and df["task"].nunique() == 26, "expected 10 runs on each of 26 games"
    return df.reset_index(drop=True)


def score_dict(table) -> dict[str, np.ndarray]:
    """rliable's ``{algorithm: (runs, tasks)}`` from a (normalised) ScoreTable, tasks in ``table.tasks`` order."""
    cells = table.cells()
    return {a: np.stack([np.asarray(cells[(a, t)], float) for t in table.tasks], axis=1) for a in table.algorithms}
