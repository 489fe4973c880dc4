"""MLflow's launch format for a watch or race: ``mlflow-params.txt``, the ``-P key=value`` arguments of ``mlflow run``.

One line per new run, each argument shell-quoted by the one writer's :func:`~rl_reliable_logger.store.encode.shell_line`
(a launcher loop ``eval``s it), so a name stays one word whatever it holds.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ...looks.launch_formats import LaunchFormat

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

PARAMS = "mlflow-params.txt"


def mlflow_lines(runs: pd.DataFrame, names: Mapping[str, str]) -> str:
    """One line per new run: ``-P name=value`` for each field (the columns of ``runs`` that ``names`` names, in
    their order), each argument shell-quoted. A configuration without a value for a field (an empty cell) is
    launched without that ``-P``, so the entry point's default runs, never the text ``None`` or ``nan``.

    Example:
        >>> import pandas as pd
        >>> runs = pd.DataFrame({"algorithm": ["A", "A"], "lr": [0.1, None], "seed": [0, 0]}, dtype=object)
        >>> print(mlflow_lines(runs, {"algorithm": "algorithm", "lr": "lr", "seed": "seed"}), end="")
        -P algorithm=A -P lr=0.1 -P seed=0
        -P algorithm=A -P seed=0
    """
    from ...data.names import value_key
    from ...store.encode import shell_line

    lines = []
    for row in runs.itertuples(index=False, name=None):
        set_fields = [(f, v) for f, v in zip(runs.columns, row) if f in names and value_key(v)[0] != "missing"]
        words = [w for f, v in set_fields for w in ("-P", f"{names[f]}={v}")]
        lines.append(shell_line(words))
    return "".join(f"{line}\n" for line in lines)


def read_mlflow_lines(lines: Iterable[str]) -> list[dict[str, str]]:
    """The parameter sets of ``mlflow-params.txt`` (what a launcher loop passes to ``mlflow run -P``)."""
    out = []
    for line in lines:
        words = shlex.split(line)
        out.append(dict(word.split("=", 1) for word in words if word != "-P"))
    return out


class MlflowParams(LaunchFormat):
    """``mlflow-params.txt``: what a loop of ``mlflow run . -P ...`` starts next."""

    name, what = PARAMS, "the `mlflow run -P` arguments of each new run, one line each"
    parameter_use = "an `mlflow run -P` key"
    examples = (
        "until rl-reliable watch mlflow --experiment bandits --state watch/ --looks 4 --max-runs 20; do",
        "    [ $? -eq 3 ] || exit 2",
        '    while IFS= read -r params; do eval "mlflow run . -e train --env-manager local $params"; done \\',
        f"        < watch/{PARAMS}",
        "done",
    )

    def files(self, runs: pd.DataFrame, names: Mapping[str, str], settings: Mapping[str, Any]) -> dict[str, Any]:
        return {PARAMS: mlflow_lines(runs, names)}
