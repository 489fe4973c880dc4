"""An optional W&B Report for a published analysis (``wandb_report=True``; extra ``[wandb-report]``).

Built with the ``wandb-workspaces`` package (W&B's Reports API, Public Preview) after the analysis
run has finished, so its tables exist: the headline table, the methods text, the interval charts
(the same presets as the run's charts, reading the run's ``charts/*_table`` summary tables), the
HTML report and links to the source runs and sweep. Needs an online W&B server and a key; W&B
has no offline Reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...data.names import escape_markdown
from ...errors import TrackerError
from ...render.intervals import headline_intervals
from ...render.tables import to_markdown
from .source import ANALYSIS_JOB_TYPE

if TYPE_CHECKING:  # pragma: no cover
    from ...analysis.report import Report

#: The report lists at most this many source-run links (all are in the run's ``tables/scores``).
MAX_LINKS = 50


def import_reports() -> Any:
    try:
        import wandb_workspaces.reports.v2 as wr
    except ImportError as err:
        raise TrackerError(
            'a W&B Report needs the wandb-workspaces package: pip install "rl_reliable_logger[wandb-report]"'
        ) from err
    return wr


def methods_text(report: Report) -> str:
    """One paragraph saying how the intervals were computed (from the report's provenance)."""
    prov = report.provenance or {}
    parts = [f"{escape_markdown(headline_intervals(prov))} (seed {prov.get('seed', '?')})"]
    if prov.get("normalize") is not None:
        parts.append(f"scores normalised with {escape_markdown(prov['normalize'])}")
    parts.append(escape_markdown(report.counts().text()))
    return "; ".join(parts) + ". Computed with rl_reliable_logger (rliable's methods)."


def _links(report: Report, sweep_url: str | None) -> list[str]:
    scores = report.scores
    lines: list[str] = []
    if sweep_url:
        lines.append(f"- Sweep: [{sweep_url}]({sweep_url})")
    if scores.empty or "tracker_run_id" not in scores:
        return lines
    rows = scores.drop_duplicates("tracker_run_id")
    for row in rows.head(MAX_LINKS).itertuples(index=False):
        label = escape_markdown(f"{row.algorithm} · {row.task} · seed {row.seed}")
        link = getattr(row, "run_link", None)
        lines.append(
            f"- [{label}]({link})" if isinstance(link, str) and link else f"- {label} (`{row.tracker_run_id}`)"
        )
    if len(rows) > MAX_LINKS:
        lines.append(f"- ... and {len(rows) - MAX_LINKS} more (table `tables/scores`, column `run_link`)")
    return lines


def build_report(
    report: Report,
    *,
    entity: str,
    project: str,
    run_name: str,
    charts: Mapping[str, Any],
    title: str,
    scores: Any = None,
    sweep_url: str | None = None,
) -> Any:
    """The ``wandb_workspaces`` Report object (not saved): headline table, methods, charts, HTML, links.

    ``charts`` are the ``wandb.plot_table`` objects logged on the run (key -> CustomChart); each
    becomes a report panel with the same preset and fields, reading the run's summary table.
    """
    wr = import_reports()
    panels = [
        wr.CustomChart(
            query={"summaryTable": {"tableKey": f"{key}_table"}},
            chart_name=chart.spec.spec_name,
            chart_fields=dict(chart.spec.fields),
            chart_strings=dict(chart.spec.string_fields),
        )
        for key, chart in charts.items()
    ]
    panels.append(wr.MediaBrowser(media_keys=["report"]))
    runset = wr.Runset(
        entity=entity,
        project=project,
        name="rl-reliable analysis",
        query=run_name,
        filters=f"JobType = '{ANALYSIS_JOB_TYPE}'",
    )
    with_links = report if scores is None else _with_scores(report, scores)
    blocks = [
        wr.H1("Results"),
        wr.MarkdownBlock(to_markdown(report)),
        wr.H2("Methods"),
        wr.P(methods_text(report)),
        wr.H2("Interval estimates"),
        wr.PanelGrid(runsets=[runset], panels=panels),
        wr.H2("Source runs"),
        wr.MarkdownBlock("\n".join(_links(with_links, sweep_url)) or "(none recorded)"),
    ]
    return wr.Report(project=project, entity=entity, title=title[:128], description=methods_text(report), blocks=blocks)


def _with_scores(report: Report, scores: Any) -> Report:
    from dataclasses import replace

    return replace(report, scores=scores)


def save_report_page(report_obj: Any) -> str:
    """Save the Report on the server; return its URL."""
    report_obj.save()
    return str(report_obj.url)
