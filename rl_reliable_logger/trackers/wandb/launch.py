"""W&B's launch format for a watch or race: ``sweep.yaml``, a finite ``method: grid`` sweep for ``wandb sweep``.

The new runs as rectangular grids over algorithm (x a race's hyperparameters) x task x seed (:func:`~rl_reliable_logger.looks.launch.grids`):
the first is ``sweep.yaml``, cells that need other seeds go to ``sweep-2.yaml``, ``sweep-3.yaml``, ... Each file is
YAML from the one writer's :func:`~rl_reliable_logger.store.encode.yaml_bytes` (PyYAML's safe dumper, every name
quoted: ``1e3`` and ``007`` stay text; a number stays a number of its kind, so the runs of the sweep log a float
hyperparameter as the float the look compared); without PyYAML (which the tracker clients install) no grid is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...looks.launch_formats import LaunchFormat

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: ``command`` of the sweep file: W&B passes the grid's values as ``--name=value`` arguments of ``program``.
SWEEP_COMMAND = ["${env}", "${interpreter}", "${program}", "${args}"]
#: The training script of a grid when none is given.
PROGRAM = "train.py"


def sweep_yaml(grid: Mapping[str, list[Any]], names: Mapping[str, str], *, program: str = PROGRAM) -> str:
    """A ``wandb sweep`` file: a finite grid over ``grid``'s values under the parameter ``names``."""
    from ...store.encode import yaml_bytes

    config = {
        "program": program,
        "method": "grid",
        "parameters": {names[field]: {"values": [typed(v) for v in values]} for field, values in grid.items()},
        "command": SWEEP_COMMAND,
    }
    size = 1
    for values in grid.values():
        size *= len(values)
    head = f"# rl-reliable: the next {size} runs of a watch or race (a finite grid: the sweep ends by itself).\n"
    return yaml_bytes(config, head=head).decode()


def typed(value: Any) -> Any:
    """A grid value as YAML should carry it: a bool, whole number or real number (numpy's too) as itself, no value
    (an empty cell) as YAML's null, anything else as quoted text (a name or a configuration value written as text,
    like ``'None'`` or ``'0.5'``), so the text ``'None'`` and no value stay two.

    Example:
        >>> import numpy as np
        >>> [typed(v) for v in (np.bool_(True), np.int64(2), np.float64(0.3), "0.3", "None", float("nan"))]
        [True, 2, 0.3, '0.3', 'None', None]
    """
    from ...data.names import value_key
    from ...store.encode import Text

    kind, key = value_key(value)
    if kind == "missing":
        return None
    return key if kind in ("bool", "number") else Text(value)


def sweep_name(index: int) -> str:
    """``sweep.yaml`` for the first grid, ``sweep-2.yaml``, ... for the others."""
    return "sweep.yaml" if index == 1 else f"sweep-{index}.yaml"


class SweepGrid(LaunchFormat):
    """``sweep.yaml`` (and ``sweep-2.yaml``, ...): what ``wandb sweep`` + ``wandb agent`` start next."""

    name, what = "sweep.yaml", "a `wandb sweep` grid"
    parameter_use = "a sweep parameter"
    settings = {
        "program": (
            "--sweep-program",
            {
                "default": PROGRAM,
                "metavar": "PATH",
                "help": "the training script of the sweep.yaml grid (W&B's `program`; default: %(default)s)",
            },
        )
    }

    def files(self, runs: pd.DataFrame, names: Mapping[str, str], settings: Mapping[str, Any]) -> dict[str, Any]:
        try:
            import yaml  # noqa: F401
        except ImportError:  # pragma: no cover - the tracker clients depend on PyYAML
            return {}
        from ...looks.launch import grids

        program = str(settings.get("program", PROGRAM))
        return {sweep_name(i): sweep_yaml(grid, names, program=program) for i, grid in enumerate(grids(runs), 1)}
