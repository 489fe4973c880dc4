"""Every kind of file or folder the package writes: an unknown kind is refused, and the contract battery attacks
each registered one (``tests/contract/test_writers.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError


class BundleError(InputError):
    """A results folder that is not a complete, unmodified bundle (or cannot be written safely)."""


@dataclass(frozen=True)
class Writer:
    """One kind of file or folder the package writes (every write names its kind; an unknown kind is refused).

    ``bundle``: a folder swapped in whole with a manifest (:func:`.bundle.write_bundle`); else one file replaced
    atomically (:func:`.files.write_file`). The contract battery (``tests/contract/test_writers.py``) attacks every
    kind listed in :data:`WRITERS` with the same hostile corpus, so a writer added here is attacked by construction.
    """

    kind: str
    what: str
    bundle: bool = True


#: Every writer of the package: bundles (``manifest.json`` ``kind``) and single files.
WRITERS: dict[str, Writer] = {
    w.kind: w
    for w in (
        Writer("report", "results bundle (rl-reliable evaluate)"),
        Writer("plan", "plan (rl-reliable plan)"),
        Writer("watch", "watch state (rl_reliable_logger.watch)"),
        Writer("race", "race state (rl_reliable_logger.race)"),
        Writer("gate", "gate state (rl_reliable_logger.gate)"),
        Writer("scores", "score table (save_scores)", bundle=False),
        Writer("pending", "pending score file (log_final_score)", bundle=False),
        Writer("publish-record", "offline publish record (a tracker's offline sink)", bundle=False),
        Writer("raytune-end", "trial end record (race_tune)", bundle=False),
    )
}

#: What a bundle holds (``manifest.json`` ``kind``): an analysis (``rl-reliable evaluate``), a plan, or the state
#: of a watch, a race or a gate (its design and looks, :mod:`rl_reliable_logger.looks.ledger`).
KINDS = tuple(kind for kind, writer in WRITERS.items() if writer.bundle)
#: Each kind in words, for the sentence refusing a folder that holds another kind.
KIND_NAMES = {w.kind: w.what for w in WRITERS.values()}
