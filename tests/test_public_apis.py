"""The package uses only public names of its dependencies (numpy, scipy, pandas, matplotlib, MLflow, W&B, TensorBoard, Ray).

Private names change without notice between releases; using them is how figures once vanished on every
matplotlib before 3.11. The check reads the package's source (nothing is imported) and flags

* ``from numpy... import _x`` and ``import matplotlib._x`` (a private module or name of a dependency);
* ``np._x`` / ``plt.gca()._x`` style access: an attribute with one leading underscore on a dependency's module,
  or on any object when the package itself never defines that name (so ``font._layout`` on a matplotlib
  object is caught, while our own ``self._cache`` or ``resample._cache`` is not);
* ``getattr(obj, "_x")`` with such a name;
* a subclass of a dependency's class that defines a private method (it overrides the dependency's internals).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "rl_reliable_logger"
DEPENDENCIES = {"numpy", "scipy", "pandas", "matplotlib", "mlflow", "wandb", "tensorboard", "ray"}
#: underscore names that are public by documentation (namedtuple's API, os._exit)
DOCUMENTED_PUBLIC = {"_asdict", "_replace", "_fields", "_make", "_field_defaults", "_exit"}
#: (file, name): private names of the *standard library* we accept, each with its reason. None of a dependency's.
STDLIB_EXCEPTIONS = {
    # argparse offers no public hook to let a subcommand slot take any word (``plan INPUT`` or ``plan mlflow``);
    # the subparsers action class and its map have been stable since Python 3.2
    ("cli/plan.py", "_SubParsersAction"),
    ("cli/plan.py", "_name_parser_map"),
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _own_names(trees: dict[Path, ast.Module]) -> set[str]:
    """Every underscore name the package itself defines (functions, classes, attributes, variables, arguments)."""
    names: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias) and node.asname:
                names.add(node.asname)
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets
            ):
                names.update(
                    c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)
                )
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
                if (
                    len(node.args) >= 2
                    and isinstance(node.args[1], ast.Constant)
                    and isinstance(node.args[1].value, str)
                ):
                    names.add(node.args[1].value)
    return {n for n in names if _private(n)}


def _dependency_aliases(tree: ast.Module) -> set[str]:
    """Local names bound to a dependency's module (``np``, ``plt``, ``mpl``, ``mlflow`` ...)."""
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in DEPENDENCIES:
                    aliases.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in DEPENDENCIES:
            aliases.update(alias.asname or alias.name for alias in node.names)
    return aliases


def _root(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def violations(trees: dict[Path, ast.Module]) -> Iterator[str]:
    """``path:line: what`` for every private dependency name the sources use."""
    own = _own_names(trees) - DOCUMENTED_PUBLIC
    for path, tree in sorted(trees.items()):
        where = path.relative_to(PACKAGE.parent)
        aliases = _dependency_aliases(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if parts[0] in DEPENDENCIES and any(_private(p) for p in parts):
                        yield f"{where}:{node.lineno}: import {alias.name}"
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in DEPENDENCIES:
                parts = node.module.split(".") + [a.name for a in node.names]
                if any(_private(p) for p in parts):
                    yield f"{where}:{node.lineno}: from {node.module} import {', '.join(a.name for a in node.names)}"
            elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in DOCUMENTED_PUBLIC:
                on_dependency = _root(node.value) in aliases
                excepted = (str(path.relative_to(PACKAGE)), node.attr) in STDLIB_EXCEPTIONS
                if on_dependency or (node.attr not in own and not excepted):
                    yield f"{where}:{node.lineno}: .{node.attr}"
            elif isinstance(node, ast.ClassDef) and any(_root(base) in aliases for base in node.bases):
                for item in node.body:  # overriding a dependency's private method depends on its internals
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(item.name):
                        yield f"{where}:{item.lineno}: {node.name}.{item.name} overrides a private method"
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"getattr", "hasattr", "setattr"}
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
                and _private(node.args[1].value)
                and node.args[1].value not in own | DOCUMENTED_PUBLIC
            ):
                yield f"{where}:{node.lineno}: {node.func.id}(..., {node.args[1].value!r})"


def _parse(sources: dict[str, str]) -> dict[Path, ast.Module]:
    return {PACKAGE / name: ast.parse(text) for name, text in sources.items()}


def test_the_package_names_no_private_attribute_of_a_dependency() -> None:
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in PACKAGE.rglob("*.py")}
    assert len(trees) > 50  # the whole package was read
    found = list(violations(trees))
    assert found == [], "private names of numpy/scipy/pandas/matplotlib/MLflow/W&B:\n" + "\n".join(found)


def test_the_check_finds_each_kind_of_private_use() -> None:
    """The check itself: each way of reaching a private name is reported, our own private names are not."""
    bad = {
        "a.py": "from matplotlib.backends.backend_agg import _get_renderer\n",
        "b.py": "import matplotlib._text_helpers\n",
        "c.py": "import numpy as np\nx = np.lib._function_base_impl\n",
        "d.py": "def f(text):\n    return text.figure.canvas._lastKey\n",
        "e.py": "def f(font):\n    return getattr(font, '_layout')\n",
        "f.py": "from numpy.random import _pcg64\n",
        "g.py": "from matplotlib.backends.backend_agg import RendererAgg\nclass R(RendererAgg):\n    def _prepare_font(self):\n        pass\n",
    }
    found = list(violations(_parse(bad)))
    assert [line.split(":")[0] for line in found] == [f"rl_reliable_logger/{n}" for n in sorted(bad)]
    ours = {
        "i.py": "class A:\n    def __init__(self):\n        self._cache = {}\n\ndef f(a):\n    return a._cache, a.__class__\n",
        "h.py": "import os\nfrom collections import namedtuple\nP = namedtuple('P', 'x')\nP(1)._replace(x=2)\nos._exit\n",
    }
    assert list(violations(_parse(ours))) == []


def _internal_wandb_settings(source: str) -> list[str]:
    """Names of wandb's internal settings in ``source``: ``x_...`` as a keyword, attribute, name or string, and
    ``WANDB_X_...`` environment variables."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.keyword) and node.arg:
            names.append(node.arg)
        elif isinstance(node, ast.Attribute):
            names.append(node.attr)
        elif isinstance(node, ast.Name):
            names.append(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.extend(node.value.split())
        found += [n for n in names if re.fullmatch(r"x_[a-z][a-z0-9_]*|WANDB_X_[A-Z0-9_]+", n)]
    return found


def test_the_package_sets_no_internal_wandb_setting() -> None:
    """wandb documents settings named ``x_...`` as internal (not public API): the package never names one.

    Time budgets use the public ``wandb.Api(timeout=)``, ``wandb.Settings(init_timeout=...)`` and our own deadlines.
    """
    found = [
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if "wandb" in path.read_text(encoding="utf-8")  # math names such as x_ij elsewhere are not settings
        for name in _internal_wandb_settings(path.read_text(encoding="utf-8"))
    ]
    assert found == [], found
    # the check sees each form such a name takes
    assert sorted(
        _internal_wandb_settings(
            'wandb.Settings(x_graphql_retry_max=2)\ns.x_graphql_timeout_seconds = 1\nenv["WANDB_X_DISABLE_STATS"] = "1"\n'
            'kwargs["x_graphql_retry_wait_max_seconds"] = 1.0\n'
        )
    ) == [
        "WANDB_X_DISABLE_STATS",
        "x_graphql_retry_max",
        "x_graphql_retry_wait_max_seconds",
        "x_graphql_timeout_seconds",
    ]
