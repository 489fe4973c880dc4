"""The names of this tracker the rest of its subpackage uses (a module of its own so that the plugin, the
source and the sink share them without importing each other)."""

from __future__ import annotations

from ..base.request import DEFAULT_KEYS

NAME = "wandb"
LABEL = "W&B"
#: Field references of the end-of-training convention (what ``log_final_score`` writes).
DEFAULT_REFS = {
    "algorithm": f"config.{DEFAULT_KEYS['algorithm']}",
    "task": f"config.{DEFAULT_KEYS['task']}",
    "seed": f"config.{DEFAULT_KEYS['seed']}",
    "score": f"summary.{DEFAULT_KEYS['score']}",
}
#: Runs per listing request: 1000 runs cost 5 requests. W&B's own default is 50.
DEFAULT_PER_PAGE = 200
#: W&B API keys (40 hex digits, ``local-`` on self-hosted servers); git hashes named as such are kept
#: (a match with the ``pre`` group is left as it is).
API_KEY_PATTERN = (
    r"(?P<pre>\b(?:commit|sha|revision|rev|git)\w{0,12}[\s=:'\"]{0,3})?\b(?P<key>(?:local-)?[0-9a-f]{40})\b"
)
