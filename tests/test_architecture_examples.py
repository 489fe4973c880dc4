"""The worked examples of docs/architecture.md for adding a metric and a figure run as they are written."""

from __future__ import annotations

import doctest
import re

from rl_reliable_logger.stats import registry
from tests.support.paths import REPO

DOC = REPO / "docs" / "architecture.md"


def _block(heading: str) -> str:
    """The python block of the bullet that starts with ``heading``, unindented."""
    text = DOC.read_text(encoding="utf-8")
    found = re.search(re.escape(heading) + r".*?```python\n(.*?)```", text, re.S)
    assert found is not None, f"docs/architecture.md lost the example of {heading}"
    return "\n".join(line[2:] if line.startswith("  ") else line for line in found.group(1).splitlines())


def _run(example: str, globs: dict) -> doctest.TestResults:
    """Run ``example`` in ``globs`` and keep what it defined there (the figure example uses the metric's report)."""
    test = doctest.DocTestParser().get_doctest(example, globs, "architecture.md", str(DOC), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test, clear_globs=False)
    globs.update(test.globs)
    return runner.summarize(verbose=False)


def test_adding_a_metric_then_a_figure_runs_as_documented():
    globs: dict = {}
    metric = _run(_block("- **A metric**"), globs)
    assert metric.failed == 0 and metric.attempted >= 6
    assert "best_task" not in registry.METRICS  # the example cleans up after itself
    figure = _run(_block("- **A figure**"), globs)
    assert figure.failed == 0 and figure.attempted >= 4
