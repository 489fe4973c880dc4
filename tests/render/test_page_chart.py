"""The chart a tracker's page shows is in the bundle as SVG by default, and the MLflow run's description shows it.

Issue 56: with PNG-only figures (the default) the MLflow run's description showed the chart's PNG at its pixel width
(MLflow's description sanitiser drops every way to scale an image), which squeezed the run page; its SVG keeps its
size in points. The bundle is all a sink uploads, so the SVG is a file of the bundle.
"""

from __future__ import annotations

from rl_reliable_logger.render.export import DEFAULT_FIGURE_FORMATS, PAGE_CHART
from rl_reliable_logger.trackers.mlflow.sink import NOTE_TAG, publish_mlflow
from tests.support.mlflow_store import convention, log_run, make_store, mlflow
from tests.support.reports import hand_report


def test_the_mlflow_description_shows_the_chart_as_svg_with_the_default_formats(tmp_path):
    assert "svg" not in DEFAULT_FIGURE_FORMATS  # the case of the regression: the other figures stay PNG only
    uri = make_store(tmp_path)
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("exp")
    runs = {
        (alg, seed): log_run(
            client, exp, f"{alg}-{seed}", tags=convention(alg, "Pong", seed), metrics={"rl_reliable_final_score": s}
        )
        for alg, seed, s in (("PPO", 0, 0.6), ("PPO", 1, 0.8), ("DQN", 0, 0.2), ("DQN", 1, 0.4))
    }
    result = publish_mlflow(hand_report(runs, (exp, "exp")), tracking_uri=uri, experiment="exp")
    note = client.get_run(result.target).data.tags[NOTE_TAG]
    assert f"%2Ffigures%2F{PAGE_CHART}.svg&run_uuid={result.target})" in note
    assert f"{PAGE_CHART}.png" not in note
    folder = next(f.path for f in client.list_artifacts(result.target, "rl_reliable") if f.is_dir)
    figures = {f.path.rsplit("/", 1)[-1] for f in client.list_artifacts(result.target, f"{folder}/bundle/figures")}
    assert f"{PAGE_CHART}.svg" in figures and f"{PAGE_CHART}.png" in figures
    assert not {name for name in figures if name.endswith(".svg")} - {f"{PAGE_CHART}.svg"}  # the others: PNG only
