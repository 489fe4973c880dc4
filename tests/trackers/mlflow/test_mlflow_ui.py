"""The MLflow UI, as a user sees it: a real ``mlflow server``, a real analysis published with our sink,
and the analysis run's page opened in headless Chromium (driven over the DevTools protocol).

Every check reads the *visible text* of the rendered React page (``innerText`` of the section the UI
shows), not the REST API: options logged as tags instead of params, a lost ``mlflow.parentRunId``, a
missing dataset input or metric keys the UI does not group by statistic all fail here.

``RL_RELIABLE_UI_SCREENSHOT=path.png`` also saves the picture used in docs/mlflow.md.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from tests.support.browser import Browser, find_chromium
from tests.support.mlflow_store import convention, log_run, mlflow

CHROMIUM = find_chromium()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="chromium is not installed (.ci/run installs Debian's `chromium` package); the MLflow UI test needs it",
    ),
]

SKILL = {"ucb1": 0.8, "epsilon_greedy": 0.55, "thompson": 0.9}
TASKS = ("bernoulli-10", "gaussian-5")
SEEDS = 3
STEPS = (0, 250, 500, 750, 1000)
REPS = 300
SEED = 7
FILTER = "tags.sweep = 'ui'"
EXPERIMENT = "bandits-ui"

# What a user would have chosen once in the UI: the "Model training" workspace (not GenAI) and the
# assistant side panel closed. Set in the browser's local storage, as the UI's own toggles do.
UI_PREFS = {
    "mlflow.workflowType_v1": json.dumps("machine_learning"),
    "mlflow.assistant.panelOpen_v1": "false",
    "mlflow.assistant.fab.autoOpenedOnFirstLoad_v1": "true",
}

# The text of the section under a heading (``Parameters (13)``, ``Datasets``, ...): the nearest
# ancestor of the <h4> that shows more than the heading itself; and its table rows, as cell texts.
_SECTION_JS = """
((title) => {
  const h = Array.from(document.querySelectorAll('h1,h2,h3,h4,h5')).find(e => e.innerText.trim().startsWith(title));
  if (!h) return null;
  let box = h.parentElement;
  while (box && box.innerText.trim() === h.innerText.trim()) box = box.parentElement;
  const rows = Array.from(box.querySelectorAll('[role=row]')).map(
    r => Array.from(r.querySelectorAll('[role=cell]')).map(c => c.innerText.trim()));
  return {heading: h.innerText.trim(), text: box.innerText, rows: rows.filter(r => r.length)};
})(%s)
"""

# The metric chart sections of the "Model metrics" tab: name, header (name and chart count) and the
# text of each chart card (title, axis ticks, value labels, legend).
_CHART_SECTIONS_JS = r"""
Array.from(document.querySelectorAll('[data-testid="experiment-view-compare-runs-section-header"]')).map(h => {
  const item = h.closest('[class*="collapse-item"]') || h.parentElement.parentElement;
  const cards = Array.from(item.querySelectorAll('[data-testid="experiment-view-compare-runs-card"]'));
  return {name: h.innerText.trim().split('\n')[0].trim(), header: h.innerText, cards: cards.map(c => c.innerText)};
})
"""

# Fold the named chart sections: a click on the header of each that is open.
_FOLD_JS = r"""
(names) => document.querySelectorAll('[data-testid="experiment-view-compare-runs-section-header"]').forEach(h => {
  const name = h.innerText.trim().split('\n')[0].trim();
  const head = h.closest('[aria-expanded="true"]');
  if (names.includes(name) && head) head.click();
})
"""


def _history(skill: float, rng: np.random.Generator) -> list[tuple[int, float]]:
    return [(s, float(skill * (1 - np.exp(-s / 300)) + rng.normal(0, 0.04))) for s in STEPS]


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """A grid of training runs under one parent, analysed and published as a new analysis run."""
    from rl_reliable_logger import MlflowSink, MlflowSource, evaluate
    from tests.support.mlflow_server import mlflow_server

    root = tmp_path_factory.mktemp("mlflow-ui")
    cwd = os.getcwd()
    os.chdir(root)  # nothing MLflow writes lands in the checkout
    try:
        with mlflow_server(root) as url:
            client = mlflow.MlflowClient(url)
            exp = client.create_experiment(EXPERIMENT)
            parent = log_run(client, exp, "rl-reliable-grid", tags={"sweep": "grid"})
            rng = np.random.default_rng(0)
            for alg, skill in SKILL.items():
                for task in TASKS:
                    for seed in range(SEEDS):
                        curve = _history(skill, rng)
                        log_run(
                            client,
                            exp,
                            f"{alg}-{task}-{seed}",
                            tags={**convention(alg, task, seed), "mlflow.parentRunId": parent, "sweep": "ui"},
                            metrics={"rl_reliable_final_score": curve[-1][1]},
                            history={"normalized_reward": curve},
                        )
            source = MlflowSource(EXPERIMENT, tracking_uri=url, filter_string=FILTER)
            table = source.table(curve_key="normalized_reward")
            report = evaluate(
                table,
                reps=REPS,
                profile_reps=100,
                improvement_reps=100,
                curve_reps=100,
                curves=True,
                seed=SEED,
                source=table.source,
            )
            result = MlflowSink(tracking_uri=url, experiment=EXPERIMENT).publish(report)
            assert result.created
            run = client.get_run(result.target)
            with Browser(CHROMIUM, width=1400, height=1000) as page:
                page.open(f"{url}/#/experiments/{exp}")
                page.wait_for("document.readyState === 'complete' && location.host !== ''", what="the MLflow UI")
                for key, value in UI_PREFS.items():
                    page.evaluate(f"localStorage.setItem({json.dumps(key)}, {json.dumps(value)})")
                yield {
                    "url": url,
                    "exp": exp,
                    "parent": parent,
                    "run": run,
                    "report": report,
                    "table": table,
                    "page": page,
                    "root": root,
                    "run_url": f"{url}/#/experiments/{exp}/runs/{run.info.run_id}",
                }
    finally:
        os.chdir(cwd)


def _open(page: Browser, url: str, *needles: str) -> str:
    page.open("about:blank")  # a real navigation each time, so the single-page app starts afresh
    page.open(url)
    return page.wait_for_text(*needles, timeout=90)


def _section(page: Browser, title: str) -> dict:
    found = page.evaluate(_SECTION_JS % json.dumps(title))
    assert found, f"no section {title!r} on the page:\n{page.text()[:3000]}"
    return dict(found)


def test_overview_shows_params_parent_run_dataset_and_source(published):
    page, run, report = published["page"], published["run"], published["report"]
    _open(page, published["run_url"], "Parameters (", "Parent run", "rl-reliable-scores")

    # the analysis options are in the Parameters table (the one the run comparison view uses)
    params_box = _section(page, "Parameters (")
    shown = {row[0]: row[1] for row in params_box["rows"] if len(row) >= 2}
    assert shown.get("rl_reliable.reps") == str(REPS), params_box["text"]
    assert shown.get("rl_reliable.seed") == str(SEED)
    assert shown.get("rl_reliable.method") == "bootstrap-t"  # the default
    assert shown.get("rl_reliable.source.filter") == FILTER
    assert shown.get("rl_reliable.n_runs") == str(len(SKILL) * len(TASKS) * SEEDS)
    assert set(shown.get("rl_reliable.algorithms", "").split(", ")) == set(SKILL)
    assert set(shown) == set(run.data.params)  # every param logged is shown, none is missing
    assert params_box["heading"] == f"Parameters ({len(run.data.params)})"

    # nested: the "Parent run" field names the grid run and links to it
    parent = page.wait_for(  # the UI fetches the parent's name after the page shows
        """(() => { const e = document.querySelector('[data-testid="key-value-Parent run"]');
                    const a = e && e.querySelector('a');
                    return a && !/loading/i.test(e.innerText) ? {text: e.innerText, href: a.getAttribute('href')} : null;
                 })()""",
        timeout=60,
        what="the 'Parent run' field with a link",
    )
    assert parent, "no 'Parent run' field on the run page"
    assert "rl-reliable-grid" in parent["text"]
    assert parent["href"].endswith(f"/runs/{published['parent']}")

    # "Source" and "Created by"
    about = _section(page, "About this run")["text"]
    assert re.search(r"Source\s+rl_reliable_logger \S+", about), about
    assert re.search(r"Created by\s+\S+", about), about

    # the score table as the run's dataset input, with its context
    datasets = _section(page, "Datasets")["text"]
    assert "rl-reliable-scores" in datasets and "scores" in datasets.lower(), datasets

    # the headline metrics, with the exact values of the report
    metrics = {row[0]: row[1] for row in _section(page, "Metrics (")["rows"] if len(row) >= 2}
    for row in report.headline("iqm").itertuples():
        assert float(metrics[f"iqm/{row.algorithm}"]) == pytest.approx(row.point, rel=1e-12)
        assert float(metrics[f"iqm_low/{row.algorithm}"]) == pytest.approx(row.low, rel=1e-12)
        assert float(metrics[f"iqm_high/{row.algorithm}"]) == pytest.approx(row.high, rel=1e-12)


def test_dataset_details_show_the_score_table(published):
    page, report = published["page"], published["report"]
    _open(page, published["run_url"], "rl-reliable-scores")
    page.evaluate(
        """Array.from(document.querySelectorAll('h4')).find(h => h.innerText.trim() === 'Datasets')
             .parentElement.querySelector('[role=button]').click()"""
    )
    page.wait_for("document.querySelector('[role=dialog]')?.innerText.includes('num rows')", what="the dataset drawer")
    drawer = page.evaluate("document.querySelector('[role=dialog]').innerText")
    assert "rl-reliable-scores" in drawer and "Scores" in drawer, drawer  # name and context
    assert re.search(rf"num rows:\s*{len(report.scores)}\b", drawer), drawer
    schema = drawer[drawer.find("Type") :].split()
    for column, kind in (("algorithm", "string"), ("task", "string"), ("seed", "string"), ("score", "double")):
        assert schema[schema.index(column) + 1] == kind, drawer  # the score table's columns, typed


def _drawn(card: str) -> bool:
    return len(_ticks(card)) >= 3  # a drawn chart shows its axis ticks


def _chart_sections(page: Browser, wanted: set[str], *, timeout: float = 90.0) -> dict[str, dict]:
    """Each wanted section as drawn: scrolled into view (charts draw lazily) until each of its charts is drawn."""
    found: dict[str, dict] = {}
    deadline = time.monotonic() + timeout
    for name in sorted(wanted):
        while True:
            sections = {s["name"]: s for s in page.evaluate(_CHART_SECTIONS_JS) or []}
            section = sections.get(name)
            if section and len(section["cards"]) >= len(SKILL) and all(map(_drawn, section["cards"])):
                found[name] = section
                break
            if time.monotonic() > deadline:
                pytest.fail(f"chart section {name!r} did not draw; the page shows:\n{page.text()[:4000]}")
            page.evaluate(
                "Array.from(document.querySelectorAll('[data-testid=\"experiment-view-compare-runs-section-header\"]'))"
                f".find(h => h.innerText.trim().split('\\n')[0].trim() === {json.dumps(name)})?.scrollIntoView()"
            )
            time.sleep(0.5)
    return found


def _search_charts(page: Browser, text: str) -> None:
    """Type ``text`` into the chart search box, as a user does (replacing what the UI remembered)."""
    page.evaluate(
        "(() => { const e = document.querySelector('input[placeholder=\"Search metric charts\"]'); e.focus(); e.select(); })()"
    )
    page.send("Input.insertText", {"text": text})


def _ticks(card_text: str) -> list[str]:
    return [line for line in card_text.splitlines() if re.fullmatch(r"[-−]?[\d.,]+[kMGT]?", line.strip())]


def test_model_metrics_show_one_section_per_statistic_and_stepped_curves(published):
    page = published["page"]
    _open(page, published["run_url"] + "/model-metrics", "Auto-refresh", "iqm_low")
    _search_charts(page, "iqm")  # the search box, as a user types
    wanted = {"iqm", "iqm_low", "iqm_high", "curve_iqm", "curve_iqm_low", "curve_iqm_high"}
    sections = _chart_sections(page, wanted)

    report = published["report"]
    for name in wanted:  # one section per statistic, one chart per algorithm in it
        section = sections[name]
        assert section["header"].split() == [name, f"({len(SKILL)})"], section["header"]
        titles = sorted(card.strip().splitlines()[0] for card in section["cards"])
        # newer MLflow UIs title a chart by the key after its section's prefix; 3.13 (our floor) by the whole key
        assert titles in (sorted(SKILL), sorted(f"{name}/{alg}" for alg in SKILL)), titles

    # headline values: one bar per chart, labelled with the value; no wall-clock number on any axis
    headline = report.headline("iqm").set_index("algorithm")
    for name, column in (("iqm", "point"), ("iqm_low", "low"), ("iqm_high", "high")):
        for card in sections[name]["cards"]:
            title, *lines = card.strip().splitlines()
            alg = title.removeprefix(f"{name}/")  # MLflow 3.13 titles by the whole key
            ticks = _ticks(card)
            assert not any(re.search(r"\d{6,}|\d[.,]\d+[GT]$", t) for t in ticks), ticks
            label = float(next(t for t in lines if re.fullmatch(r"-?\d+\.\d+", t.strip())))
            assert label == pytest.approx(headline.loc[alg, column], abs=0.006), (name, alg, card)

    # sample-efficiency curves are stepped metrics: a line over the training steps, per algorithm
    for name in ("curve_iqm", "curve_iqm_low", "curve_iqm_high"):
        for card in sections[name]["cards"]:
            alg = card.strip().splitlines()[0].removeprefix(f"{name}/")
            assert "Step" in card and f"({name}/{alg})" in card, card  # x axis "Step", legend names the key
            ticks = _ticks(card)
            assert str(STEPS[-1]) in ticks and str(STEPS[len(STEPS) // 2]) in ticks, ticks


def _collapse_sections(page: Browser, names: set[str]) -> None:
    """Fold chart sections (a click on their header, as a user does), so the picture shows the others."""
    page.evaluate(f"({_FOLD_JS})({json.dumps(sorted(names))})")


def _close_assistant(page: Browser) -> None:
    """Close MLflow's assistant side panel if it opened anyway (its close button, as a user clicks it)."""
    page.evaluate("document.querySelector('[data-component-id=\"mlflow.assistant.chat_panel.close\"]')?.click()")


def run_page_picture(page: Browser, run_url: str, folder: Path) -> Path:
    """Overview tab (params, parent run, source, dataset, metrics) above the Model metrics tab filtered to
    ``iqm``: the stepped curve ``curve_iqm`` and the headline ``iqm`` sections. One small palette PNG."""
    from PIL import Image

    page.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1900, "height": 1400, "deviceScaleFactor": 1, "mobile": False},  # the description's chart is ~1100 px
    )
    try:
        _open(page, run_url, "Parameters (", "Parent run", "rl-reliable-scores")
        _close_assistant(page)
        time.sleep(1.0)
        overview = Image.open(page.screenshot(folder / "overview.png")).convert("RGB")
        _open(page, run_url + "/model-metrics", "Auto-refresh", "iqm_low")
        _search_charts(page, "iqm")
        _chart_sections(page, {"curve_iqm", "iqm"})
        _collapse_sections(page, {"curve_iqm_low", "curve_iqm_high"})
        page.evaluate(
            "Array.from(document.querySelectorAll('[data-testid=\"experiment-view-compare-runs-section-header\"]'))"
            ".find(h => h.innerText.trim().split('\\n')[0].trim() === 'curve_iqm')?.scrollIntoView()"
        )
        time.sleep(1.5)
        charts = Image.open(page.screenshot(folder / "charts.png")).convert("RGB")
    finally:
        page.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
        )
    for image in (overview, charts):
        assert len(image.getcolors(1 << 20) or []) > 50, "a blank screenshot"
    top = overview.crop((0, 0, overview.width, 1390))
    side = 190  # the left navigation, shown once
    bottom = charts.crop((side, 95, charts.width, 1210))  # from the tab bar: the search box and the sections
    both = Image.new("RGB", (top.width, top.height + 12 + bottom.height), "white")
    both.paste(top, (0, 0))
    both.paste(Image.new("RGB", (top.width - side, 2), (180, 180, 180)), (side, top.height + 5))
    both.paste(bottom, (side, top.height + 12))
    both = both.resize((both.width * 3 // 4, both.height * 3 // 4), Image.Resampling.LANCZOS)
    out = folder / "mlflow-run-page.png"
    both.quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(out, optimize=True)
    return out


def test_screenshot_of_the_run_page(published, tmp_path):
    """The picture in docs/mlflow.md (``RL_RELIABLE_UI_SCREENSHOT=path.png`` saves it): small and not blank."""
    out = run_page_picture(published["page"], published["run_url"], tmp_path)
    assert 10_000 < out.stat().st_size < 300_000
    target = os.environ.get("RL_RELIABLE_UI_SCREENSHOT")
    if target:
        shutil.copyfile(out, Path(target))


# The run-name cells of the runs list: each run's whole name and the fraction of it the column shows.
_NAME_CELLS_JS = r"""
Array.from(document.querySelectorAll('a[href*="/runs/"]')).filter(a => a.closest('[role=gridcell]'))
  .map(a => {
    const cell = a.closest('[role=gridcell]').getBoundingClientRect();
    const text = a.querySelector('span') || a, box = text.getBoundingClientRect();
    const seen = Math.max(0, Math.min(box.right, cell.right) - box.left);
    return {name: a.innerText.trim(), href: a.getAttribute('href'),
            shown: Math.min(1, seen / Math.max(1, text.scrollWidth))};
  })
"""

# Unfold the children of the named run in the runs list (its expander button, as a user clicks it).
_EXPAND_JS = r"""
((name) => Array.from(document.querySelectorAll('[role=gridcell]'))
  .filter(c => Array.from(c.querySelectorAll('a')).some(a => a.innerText.trim() === name))
  .forEach(c => c.querySelector('button')?.click()))(%s)
"""


def test_runs_list_shows_which_analysis_is_current(published):
    """Last in this module (it publishes a second report): in the runs list, the analysis names differ where
    the name column shows them, and the replaced analysis says so there; the new run's description shows the
    comparison chart (an image the server really serves)."""
    from rl_reliable_logger import MlflowSink, evaluate
    from rl_reliable_logger.trackers.base.publishing import SUPERSEDED_PREFIX

    page, table, first = published["page"], published["table"], published["run"]
    report = evaluate(table, reps=100, profile_reps=50, improvement_reps=50, seed=SEED + 1, source=table.source)
    second = MlflowSink(tracking_uri=published["url"], experiment=EXPERIMENT).publish(report)
    assert second.created and second.target != first.info.run_id
    hash_first, hash_second = first.data.tags["rl_reliable.report_hash"][:8], second.report_hash[:8]

    _open(page, f"{published['url']}/#/experiments/{published['exp']}/runs", "rl-reliable-grid")
    page.evaluate(_EXPAND_JS % json.dumps("rl-reliable-grid"))  # the analysis runs are nested under the grid
    cells = page.wait_for(
        f"(() => {{ const c = {_NAME_CELLS_JS.strip()}; "
        f"return c.some(x => x.name.includes({json.dumps(hash_first)})) && "
        f"c.some(x => x.name.includes({json.dumps(hash_second)})) ? c : null; }})()",
        timeout=90,
        what="both analysis runs in the runs list",
    )
    by_run = {c["href"].rsplit("/runs/", 1)[-1]: c for c in cells}
    old, new = by_run[first.info.run_id], by_run[second.target]
    assert old["name"].startswith(SUPERSEDED_PREFIX + hash_first), old
    assert new["name"].startswith(hash_second + " · IQM "), new  # the headline, for who widens the column
    # the column cuts long names (more so for nested runs): it still shows the mark and the whole hash
    for cell, must_show in ((old, SUPERSEDED_PREFIX + hash_first), (new, hash_second)):
        assert cell["shown"] * len(cell["name"]) >= len(must_show), cell

    _open(page, f"{published['url']}/#/experiments/{published['exp']}/runs/{second.target}", "rl-reliable-scores")
    chart = page.wait_for(
        "(() => { const i = Array.from(document.images).find(i => i.src.includes('get-artifact'));"
        " return i && i.complete && i.naturalWidth > 0 ? {src: i.src, width: i.naturalWidth} : null; })()",
        timeout=60,
        what="the comparison chart in the description",
    )
    assert "interval_estimates" in chart["src"] and chart["width"] > 300, chart

    # the replaced analysis says so at the top of its description, with a link to the run that replaced it
    text = _open(page, f"{published['url']}/#/experiments/{published['exp']}/runs/{first.info.run_id}", "Superseded")
    assert "Superseded: not the current analysis; it was replaced by " + hash_second in text, text[:3000]
    link = page.evaluate(
        "Array.from(document.querySelectorAll('a')).find(a => a.innerText.startsWith("
        f"{json.dumps(hash_second)}) && a.closest('p'))?.getAttribute('href')"
    )
    assert link and link.endswith(f"/runs/{second.target}"), link


# Per row of the description's headline table: the gap in pixels between the end of each cell's text and the start
# of the next cell's text (what a reader sees as the space between two columns).
_TABLE_GAPS_JS = r"""
(() => {
  const table = Array.from(document.querySelectorAll('table')).find(
    t => (t.querySelector('th')?.innerText || '').trim() === 'algorithm');
  if (!table) return null;
  const textBox = (cell) => {  // the glyphs only: spaces at the ends of a cell show nothing
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT), nodes = [];
    while (walk.nextNode()) if (walk.currentNode.textContent.trim()) nodes.push(walk.currentNode);
    const first = nodes[0], last = nodes[nodes.length - 1], r = document.createRange();
    r.setStart(first, first.textContent.length - first.textContent.trimStart().length);
    r.setEnd(last, last.textContent.trimEnd().length);
    return r.getBoundingClientRect(); };
  return Array.from(table.querySelectorAll('tr')).map(row => {
    const cells = Array.from(row.querySelectorAll('th,td')).map(c => [c.innerText.trim(), textBox(c)]);
    return cells.slice(1).map(([text, box], i) => [cells[i][0], text, box.left - cells[i][1].right]);
  });
})()
"""


def test_description_table_shows_space_between_its_columns(published):
    """MLflow 3.x draws Markdown tables with no cell padding (and strips styles): the columns must not touch
    (``247.760]221.346``); what it shows is a table with the report's numbers (issue 45)."""
    page, report = published["page"], published["report"]
    text = _open(page, published["run_url"], "rl-reliable analysis", "optimality_gap")
    rows = page.wait_for(_TABLE_GAPS_JS, timeout=30, what="the description's headline table")
    assert len(rows) == 1 + len(SKILL)
    for row in rows:
        for left, right, gap in row:
            assert gap >= 12, (left, right, gap, row)  # about an em at the UI's font size
    iqm = report.headline("iqm").set_index("algorithm")
    for alg in SKILL:
        cell = f"{iqm.loc[alg, 'point']:.3f}\u00a0[{iqm.loc[alg, 'low']:.3f},\u00a0{iqm.loc[alg, 'high']:.3f}]"
        assert any(cell == right for row in rows for _, right, _ in row), (cell, rows)
    assert "Point estimate [interval]: " in text
