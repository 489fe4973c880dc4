"""A package's public names, written once: its ``if TYPE_CHECKING:`` imports, loaded on first use.

Type checkers and IDEs read a package's type-checking imports; :func:`attach` reads the same block from the
package's source (with :mod:`ast`: nothing is imported) and loads each name the first time it is asked for, so
``import rl_reliable_logger`` (and ``rl-reliable --help``) loads no numpy, pandas, matplotlib or tracker client,
and the list of public names is one list, not a type-checking block, a table of lazy names and ``__all__`` kept
equal by hand. Its top-level imports in the re-export form (``import X as X``) are its eager public names.
This is the idea of scientific-python's ``lazy_loader`` stubs, without a separate stub file.

Example:
    >>> import rl_reliable_logger as rl
    >>> {"evaluate", "ScoreTable", "InputError", "__version__"} <= set(rl.__all__)
    True
    >>> lazy_names("rl_reliable_logger")["evaluate"]
    ('rl_reliable_logger.analysis.evaluation', 'evaluate')
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(node: ast.ImportFrom, package: str) -> dict[str, tuple[str, str]]:
    module = importlib.util.resolve_name("." * node.level + (node.module or ""), package) if node.level else node.module
    return {(alias.asname or alias.name): (str(module), alias.name) for alias in node.names}


def _source_tree(package: str) -> ast.Module:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise ImportError(f"cannot find the source of {package}")
    return ast.parse(Path(spec.origin).read_text(encoding="utf-8"))


def lazy_names(package: str, tree: ast.Module | None = None) -> dict[str, tuple[str, str]]:
    """``{name: (module, attribute)}`` of the package's ``if TYPE_CHECKING:`` imports (``tree``: its parsed source)."""
    names: dict[str, tuple[str, str]] = {}
    for node in (tree or _source_tree(package)).body:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    names.update(_imported(statement, package))
    return names


def eager_names(package: str, tree: ast.Module | None = None) -> list[str]:
    """The names the package's top-level imports re-export: ``from .errors import InputError as InputError``
    (the re-export form type checkers know)."""
    names: list[str] = []
    for node in (tree or _source_tree(package)).body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            names += [alias.name for alias in node.names if alias.asname == alias.name]  # `import X as X`: re-exported
    return names


def attach(package: str) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package``: its type-checking imports, loaded on first use.

    Use at the end of a package's ``__init__.py``: ``__getattr__, __dir__, __all__ = attach(__name__)``.
    """
    tree = _source_tree(package)  # parsed once: this runs at every import of the package
    lazy = lazy_names(package, tree)
    public = sorted(set(eager_names(package, tree)) | set(lazy), key=str.lower)

    def __getattr__(name: str) -> Any:
        if name not in lazy:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = lazy[name]
        value = getattr(importlib.import_module(module), attribute)
        setattr(importlib.import_module(package), name, value)  # looked up once
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(importlib.import_module(package))) | set(public))

    return __getattr__, __dir__, public
