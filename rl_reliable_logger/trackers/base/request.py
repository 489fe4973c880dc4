"""What a Source is asked for, as one value: the fields of a run, which runs, how the final score is read.

Every Source's ``table()``, the shared selection and the grouping of records take this one object, so a
new request field is declared here once instead of in each signature; the CLI builds it from its flags
and mypy checks that call against the Source protocol.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from ...errors import InputError
from ...wording import kw, said
from .reruns import DEFAULT_RERUNS, check_reruns
from .scoring import SEED_PLACEHOLDER, ScoreRule, history_name

#: The end-of-training convention: names written by :func:`rl_reliable_logger.log_final_score`.
DEFAULT_KEYS = {
    "algorithm": "rl_reliable_algorithm",
    "task": "rl_reliable_task",
    "seed": "rl_reliable_seed",
    "score": "rl_reliable_final_score",
}
#: The fields a request names by reference; None means the Source's default (the log_final_score convention).
REF_FIELDS = ("algorithm", "task", "seed", "score")
#: Columns every run's row of a tracker table has of its own: a configuration key (``extra_fields``, a layout
#: field) of that name would replace them (``{step}`` would become the learning curve's steps), so it is refused.
ROW_COLUMNS = (
    "step",
    "score",
    "run_id",
    "run_name",
    "tracker_run_id",
    "state",
    "score_key",
    "url",
    "final_score",
    "last_step",
)
#: The kinds of a field reference (``config.lr``, ``metrics.return``, ...): where in a run record a value lives.
KINDS = ("config", "summary", "params", "metrics", "tags", "run")


@dataclass(frozen=True)
class SourceRequest:
    """Field references and selection for ``Source.table()`` (see ``trackers.base.records``).

    ``score`` is one reference or a fallback list (the first one a run has is used); ``score_rule`` reads it
    from the key's history; ``curve_key`` adds the learning curve; ``algorithms`` / ``tasks`` keep only those
    values; ``extra_fields`` adds configuration columns (two runs that differ in one are two configurations);
    ``value_fields`` adds columns of values each run has of its own (success counts: never part of a run's
    configuration, None where a run lacks them); ``variant`` references are appended to the algorithm label;
    ``run_key`` replaces the tracker run id as a run's identity; ``names`` is ScoreTable's; ``reruns`` says what to do
    with one seed trained more than once (:mod:`.reruns`: refuse, keep the latest or the first). A ``{seed}``
    placeholder in ``score`` (``metrics.eval/return_seed{seed}``, a run that logs several seeds) makes each
    match one seed of the run, so ``seed`` is then not given (see :attr:`seeded`).

    Example:
        >>> SourceRequest(score="summary.ret").with_defaults({"algorithm": "config.a", "task": "config.t",
        ...     "seed": "config.s", "score": "summary.x"}).refs()
        {'algorithm': 'config.a', 'task': 'config.t', 'seed': 'config.s'}
    """

    algorithm: str | None = None
    task: str | None = None
    seed: str | None = None
    score: str | Sequence[str] | None = None
    include_unfinished: bool = False
    on_invalid: str = "raise"
    curve_key: str | None = None
    algorithms: Sequence[str] | None = None
    tasks: Sequence[str] | None = None
    extra_fields: Mapping[str, str] | None = None
    value_fields: Mapping[str, str] | None = None
    run_key: str | None = None
    variant: Sequence[str] = ()
    score_rule: str | ScoreRule | None = None
    names: str = "strict"
    reruns: str = DEFAULT_RERUNS

    def __post_init__(self) -> None:
        check_reruns(self.reruns)
        if self.seeded and self.seed is not None:
            raise InputError(
                said(
                    kw("seed="),
                    f" {self.seed!r} and the {SEED_PLACEHOLDER} placeholder in ",
                    kw("score="),
                    " both name the seed: drop ",
                    kw("seed="),
                    " (the placeholder gives each matching key's seed label)",
                )
            )

    @property
    def seeded(self) -> bool:
        """True when a score key has the ``{seed}`` placeholder: each run holds several seeds."""
        if self.score is None:
            return False
        parts = [self.score] if isinstance(self.score, str) else list(self.score)
        return any(SEED_PLACEHOLDER in str(part) for part in parts)

    @classmethod
    def of(cls, request: SourceRequest | None = None, **keywords: Any) -> SourceRequest:
        """``request`` itself, or one built from the keywords of ``table()`` (an unknown one is an InputError)."""
        if request is not None:
            if keywords:
                raise InputError(f"pass either a SourceRequest or keywords, not both (got {', '.join(keywords)})")
            return request
        known = {f.name for f in fields(cls)}
        unknown = [k for k in keywords if k not in known]
        if unknown:
            raise InputError(
                f"unknown keyword(s) {', '.join(unknown)} of Source.table(); known: {', '.join(sorted(known))}"
            )
        return cls(**keywords)

    def with_defaults(self, defaults: Mapping[str, str]) -> SourceRequest:
        """This request with the unset field references taken from ``defaults`` (a tracker's convention)."""
        unset: dict[str, Any] = {name: defaults[name] for name in REF_FIELDS if getattr(self, name) is None}
        if self.seeded:
            unset.pop("seed", None)  # the placeholder gives the seed
        return replace(self, **unset)

    def refs(self) -> dict[str, str]:
        """The algorithm, task and seed references (after :meth:`with_defaults`; no seed with a ``{seed}`` score)."""
        return {name: str(getattr(self, name)) for name in REF_FIELDS[:3] if not (name == "seed" and self.seeded)}

    @property
    def history_key(self) -> str | None:
        """The history name of ``curve_key`` (``metrics.eval`` -> ``eval``), or None without curves."""
        return history_name(self.curve_key) if self.curve_key else None
