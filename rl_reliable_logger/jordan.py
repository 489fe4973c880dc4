"""Jordan et al. (ICML 2020) for ScoreTables: the public entry points (see docs/jordan.md).

Example:
    >>> from rl_reliable_logger import ScoreTable                             # doctest: +SKIP
    >>> from rl_reliable_logger.jordan import jordan_tables                   # doctest: +SKIP
    >>> tables, warnings = jordan_tables(ScoreTable.from_csv("scores.csv"))   # doctest: +SKIP
    >>> tables["jordan"]  # algorithm, aggregate, low, high, rank, method, delta  # doctest: +SKIP
"""
from ._jordan_report import jordan_tables, percentile_normalize, tuning_table

__all__ = ["jordan_tables", "percentile_normalize", "tuning_table"]
