"""Paths of the repository the tests run from (never of a particular machine)."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
#: The team's shared data sets (``shared/data`` beside the checkout, as on CI); override with RL_RELIABLE_SHARED_DATA.
SHARED_DATA = Path(os.environ.get("RL_RELIABLE_SHARED_DATA", REPO.parent / "shared" / "data"))
