"""Paths of the repository the tests run from (never of a particular machine)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
