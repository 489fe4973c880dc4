"""Names moved to another module (issue 51) stay importable from the old one for one release: each warns
(``DeprecationWarning``) naming its new place and is the very object found there; the top-level names do not warn."""

from __future__ import annotations

import importlib
import warnings

import pytest

#: Every module names moved out of (issue 51); what moved where is read from each one's ``__getattr__``.
OLD = (
    "rl_reliable_logger.render.bundle",
    "rl_reliable_logger.render.watch_state",
    "rl_reliable_logger.render.race_state",
    "rl_reliable_logger.render.watch_launch",
    "rl_reliable_logger.render.launch_formats",
    "rl_reliable_logger.render.shown",
    "rl_reliable_logger.analysis.watch",
    "rl_reliable_logger.stats.bootstrap",
)
MOVED = {old: importlib.import_module(old).__getattr__.names for old in OLD}
CASES = [(old, name, new) for old, names in MOVED.items() for name, new in names.items()]


@pytest.mark.parametrize(("old", "name", "new"), CASES)
def test_a_moved_name_warns_and_is_the_new_object(old: str, name: str, new: str) -> None:
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning) as caught:
        found = getattr(module, name)
    assert found is getattr(importlib.import_module(new), name)
    message = str(caught[0].message)
    assert message.startswith(f"{old}.{name} moved to {new}.{name};"), message
    assert caught[0].filename == __file__  # said at the line that read it


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_unknown_name_of_an_old_module_is_an_attribute_error(old: str) -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        getattr(importlib.import_module(old), "no_such_name")  # noqa: B009  (the name is the point)


def test_the_launch_format_registry_is_one_list_whichever_path_reads_it() -> None:
    """The tracker registry fills ``looks.launch_formats``; a plugin reading the old path sees the same formats."""
    from rl_reliable_logger.looks import launch_formats

    with pytest.warns(DeprecationWarning):
        from rl_reliable_logger.render.launch_formats import formats
    assert formats() == launch_formats.formats() and len(launch_formats.formats()) >= 2


def test_the_top_level_names_do_not_warn() -> None:
    import rl_reliable_logger

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("watch", "race", "check_output_folder", "save_report"):
            assert callable(getattr(rl_reliable_logger, name))
