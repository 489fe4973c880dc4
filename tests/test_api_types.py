"""What type checkers and IDEs see of the public API: every name of ``__all__`` and every option keyword."""

from __future__ import annotations

import dataclasses
import importlib

import pytest

import rl_reliable_logger
from rl_reliable_logger.analysis.options import AnalysisOptions, OptionKeywords
from rl_reliable_logger.lazy import eager_names, lazy_names

TRACKERS = ("mlflow", "wandb", "tensorboard", "sb3", "marl_eval", "raytune")


def test_every_public_name_is_the_object_type_checkers_are_shown() -> None:
    """The package's public names are its type-checking imports (what mypy and IDEs read) plus its re-exported
    eager imports, declared once (``rl_reliable_logger.lazy``): each resolves, on first use, to exactly the object
    its type-checking import names, in the package and in every tracker subpackage."""
    for package in ("rl_reliable_logger", *(f"rl_reliable_logger.trackers.{t}" for t in TRACKERS)):
        module = importlib.import_module(package)
        declared = lazy_names(package)
        assert declared and set(declared) <= set(module.__all__)
        assert set(module.__all__) - set(declared) == set(eager_names(package))
        for name, (where, attribute) in declared.items():
            assert getattr(module, name) is getattr(importlib.import_module(where), attribute), (package, name)
            assert name in dir(module)


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="'rl_reliable_logger' has no attribute 'evaluat'"):
        rl_reliable_logger.evaluat  # noqa: B018  (the lookup is the test)


def test_option_keywords_are_exactly_the_options() -> None:
    """evaluate(**keywords) is typed by OptionKeywords: one key per AnalysisOptions field, nothing else."""
    fields = {f.name for f in dataclasses.fields(AnalysisOptions)}
    assert set(OptionKeywords.__annotations__) == fields
    assert OptionKeywords.__total__ is False  # every keyword is optional
