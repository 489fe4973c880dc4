"""The packaged W&B chart presets are valid Vega-Lite, before and after W&B fills in their fields.

The schema is the official Vega-Lite JSON schema as shipped by the ``altair`` package (dev extra; the
major version must equal the specs' ``$schema``). W&B binds a custom chart to a preset by replacing
the template strings ``${field:NAME}`` (a table column, chosen in "Chart fields") and
``${string:NAME}`` (a constant, e.g. the title) anywhere in the spec; ``NAME:default`` gives a
default. The charts checked here are built by ``interval_charts`` for a real ``evaluate()`` report,
with the fields and strings the sink actually passes, and substituted the same way.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("wandb")
altair = pytest.importorskip("altair", reason="the Vega-Lite schema comes from altair (dev extra)")
jsonschema = pytest.importorskip("jsonschema")

from rl_reliable_logger import ScoreTable, evaluate  # noqa: E402
from rl_reliable_logger.trackers.wandb.charts import PRESETS, interval_charts, load_spec  # noqa: E402

#: One W&B template string: ``${field:NAME}`` / ``${string:NAME}``, optionally ``:default``.
TEMPLATE = re.compile(r"\$\{(field|string):([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}")
PRESET_NAMES = {kind: f"ent/{name}" for kind, (name, _) in PRESETS.items()}


def _schema_file(major: str) -> Any:
    """altair's copy of the official schema for Vega-Lite ``major`` (``"v5"``)."""
    package = f"altair.vegalite.{major}.schema"
    try:
        return resources.files(package).joinpath("vega-lite-schema.json")
    except ModuleNotFoundError:
        pytest.fail(f"the installed altair {altair.__version__} ships no Vega-Lite {major} schema ({package})")


def _major(spec: dict) -> str:
    found = re.fullmatch(r"https://vega\.github\.io/schema/vega-lite/(v\d+)(?:\.\d+)*\.json", spec["$schema"])
    assert found, spec["$schema"]
    return found.group(1)


def _validator(major: str) -> Any:
    schema = json.loads(_schema_file(major).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _errors(spec: dict) -> list[str]:
    validator = _validator(_major(spec))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in validator.iter_errors(spec)]


def substitute(spec: Any, fields: dict[str, str], strings: dict[str, str]) -> Any:
    """Fill a preset the way W&B does: every template string, wherever it is, by its binding (or default)."""
    if isinstance(spec, dict):
        return {k: substitute(v, fields, strings) for k, v in spec.items()}
    if isinstance(spec, list):
        return [substitute(v, fields, strings) for v in spec]
    if isinstance(spec, str):

        def fill(match: re.Match) -> str:
            kind, name, default = match.groups()
            bound = (fields if kind == "field" else strings).get(name)
            return str(bound) if bound is not None else (default or "")

        return TEMPLATE.sub(fill, spec)
    return spec


def _malformed(spec: Any) -> list[str]:
    """Every ``${...}`` that is not a W&B template string (W&B would leave it in the chart as text)."""
    text = json.dumps(spec)
    return [m for m in re.findall(r"\$\{[^}]*\}?", text) if not TEMPLATE.fullmatch(m)]


def _templates(spec: dict) -> set[tuple[str, str]]:
    return {(kind, name) for kind, name, _ in TEMPLATE.findall(json.dumps(spec))}


@pytest.fixture(scope="module")
def report():
    """A real analysis with every interval result the charts draw (aggregates, improvement, profiles, curves)."""
    rng = np.random.default_rng(3)
    rows = []
    for alg, skill in (("PPO", 0.7), ("DQN", 0.5), ("SAC (v2)", 0.6)):
        for task in ("hopper", "walker", "ant"):
            for seed in range(4):
                for step in (0, 500, 1000):
                    score = skill * step / 1000 + rng.normal(0, 0.05)
                    rows.append({"algorithm": alg, "task": task, "seed": seed, "step": step, "score": score})
    table = ScoreTable(pd.DataFrame(rows))
    return evaluate(table, reps=200, profile_reps=50, improvement_reps=50, curve_reps=50, curves=True, seed=0)


@pytest.fixture(scope="module")
def charts(report):
    """``{key: (preset kind, panel config, table columns)}`` of the charts logged with the packaged presets."""
    import wandb

    kinds = {v: k for k, v in PRESET_NAMES.items()}
    out = {}
    for key, chart in interval_charts(wandb, report, PRESET_NAMES).items():
        chart.set_key(key)
        config = chart.spec.config_value["panel_config"]
        out[key] = (kinds.get(config["panelDefId"]), config, list(chart.table.columns))
    return out


@pytest.mark.parametrize("kind", sorted(PRESETS))
def test_schema_is_altairs_copy_for_the_specs_vega_lite_version(kind):
    spec = load_spec(kind)
    major = _major(spec)
    schema = json.loads(_schema_file(major).read_text(encoding="utf-8"))
    assert schema["$schema"].startswith("http://json-schema.org/")  # a JSON schema, the official one's form
    assert "TopLevelUnitSpec" in schema["definitions"] and "LayerSpec" in schema["definitions"]


@pytest.mark.parametrize("kind", sorted(PRESETS))
def test_packaged_spec_is_valid_vega_lite_as_shipped(kind):
    assert _errors(load_spec(kind)) == []


@pytest.mark.parametrize("kind", sorted(PRESETS))
def test_template_strings_are_well_formed(kind):
    assert _malformed(load_spec(kind)) == []
    assert _templates(load_spec(kind)), "a preset with no fields cannot be bound to a table"


def test_every_interval_result_uses_a_packaged_preset(charts, report):
    kinds = sorted({kind for kind, _, _ in charts.values()})
    assert kinds == ["bands", "intervals"], charts.keys()
    keys = set(charts)
    assert "charts/probability_of_improvement" in keys
    assert {"charts/profile_runs", "charts/curve_iqm"} <= keys
    assert {f"charts/{m}" for m in dict.fromkeys(report.aggregates["metric"])} <= keys


def test_specs_as_filled_in_for_a_real_report_are_valid_vega_lite(charts):
    for key, (kind, config, columns) in charts.items():
        spec = load_spec(kind)
        fields, strings = config["fieldSettings"], config["stringSettings"]
        wanted = _templates(spec)
        # every template is bound by the chart, and the chart binds nothing the preset lacks
        assert {("field", k) for k in fields} == {t for t in wanted if t[0] == "field"}, key
        assert {("string", k) for k in strings} == {t for t in wanted if t[0] == "string"}, key
        # each field names a column of the chart's table
        assert set(fields.values()) <= set(columns), (key, fields, columns)
        filled = substitute(spec, fields, strings)
        assert "${" not in json.dumps(filled), key
        assert _errors(filled) == [], key
        # the filled spec still draws the interval: both ends of the bar/band are table columns
        encodings = json.dumps([layer["encoding"] for layer in filled["layer"]])
        assert '"field": "low"' in encodings and '"field": "high"' in encodings, key


def test_the_check_catches_a_broken_spec():
    """Positive control: the same validation rejects a spec W&B would fail to draw."""
    spec = load_spec("intervals")
    broken = json.loads(json.dumps(spec))
    broken["layer"][0]["mark"]["type"] = "errorbarz"
    assert _errors(broken)
    unbound = substitute(spec, {}, {})  # no fields bound: empty field names
    assert unbound["layer"][0]["encoding"]["x"]["field"] == ""
    assert _malformed({"title": "${field low}", "x": "${string:t:default}"}) == ["${field low}"]
