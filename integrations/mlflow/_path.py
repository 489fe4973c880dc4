"""Make ``rl_reliable_logger`` importable when this project runs from a source checkout.

An installed package (``pip install rl_reliable_logger[mlflow]``) always wins; only when it is not
installed do we fall back to the checkout two folders up, so ``mlflow run integrations/mlflow``
works in a clone of the repository too.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def ensure_package() -> None:
    if importlib.util.find_spec("rl_reliable_logger") is not None:
        return
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "rl_reliable_logger" / "__init__.py").exists():
        sys.path.insert(0, str(checkout))
        return
    raise SystemExit(
        "rl_reliable_logger is not installed: run `pip install 'rl_reliable_logger[mlflow]'` in the environment "
        "whose `python` is first on PATH, then `mlflow run ... --env-manager local` again."
    )
