"""The TensorBoard source's layout: the shared layout pattern (:mod:`..base.layout`) and its default here."""

from ..base.layout import REQUIRED, Layout, parse_layout

#: The layout when none is given: ``PPO/Pong/seed_3``.
DEFAULT_LAYOUT = "{algorithm}/{task}/seed_{seed}"

__all__ = ["DEFAULT_LAYOUT", "REQUIRED", "Layout", "parse_layout"]
