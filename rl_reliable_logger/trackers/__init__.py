"""Tracker adapters: each tracker's source and sink behind one contract (see ``base``), one subpackage per
tracker, listed in ``registry``.

Each tracker's client is imported only inside the adapter that needs it.
"""

from .base.reading import ReadOptions as ReadOptions

__all__ = ["ReadOptions"]
