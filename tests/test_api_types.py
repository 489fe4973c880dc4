"""What type checkers and IDEs see of the public API: every name of ``__all__`` and every option keyword."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import rl_reliable_logger
from rl_reliable_logger.analysis.options import AnalysisOptions, OptionKeywords

INIT = Path(rl_reliable_logger.__file__)


def _type_checking_names() -> set[str]:
    """Names imported inside ``if TYPE_CHECKING:`` of the package's ``__init__``."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for item in ast.walk(node):
                if isinstance(item, ast.ImportFrom):
                    names.update(alias.asname or alias.name for alias in item.names)
    return names


def test_every_lazy_public_name_is_visible_to_type_checkers() -> None:
    """A lazily loaded name that is not also imported for type checkers is ``Any`` to mypy and IDEs."""
    lazy = set(rl_reliable_logger._LAZY)
    assert lazy <= set(rl_reliable_logger.__all__)
    assert lazy - _type_checking_names() == set()
    for name in lazy:  # and each resolves to the object the type checker was shown
        assert getattr(rl_reliable_logger, name) is not None


def test_option_keywords_are_exactly_the_options() -> None:
    """evaluate(**keywords) is typed by OptionKeywords: one key per AnalysisOptions field, nothing else."""
    fields = {f.name for f in dataclasses.fields(AnalysisOptions)}
    assert set(OptionKeywords.__annotations__) == fields
    assert OptionKeywords.__total__ is False  # every keyword is optional
