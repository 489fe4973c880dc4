"""The results bundle: atomic save with a manifest, replace-not-merge, refusals, verified reading."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pandas as pd
import pytest

from rl_reliable_logger.analysis.hashing import report_hash
from rl_reliable_logger.cli.main import main
from rl_reliable_logger.render import writer
from rl_reliable_logger.render.writer import load_report, save_report
from rl_reliable_logger.store.bundle import read_bundle
from rl_reliable_logger.store.kinds import BundleError
from rl_reliable_logger.store.manifest import safe_relpath
from tests.support.reports import small_report

FAST = ["--seed", "0", "--reps", "50", "--profile-reps", "50", "--improvement-reps", "50", "--quiet"]


def _scores(path: Path) -> Path:
    rows = [
        {"algorithm": a, "task": t, "seed": s, "score": float(i + s) / 10}
        for i, (a, t) in enumerate([("A", "x"), ("A", "y"), ("B", "x"), ("B", "y")])
        for s in range(3)
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_save_writes_a_manifest_of_every_file(tmp_path):
    report = small_report()
    out = save_report(report, tmp_path / "out", figures=False)
    manifest = json.loads((out / "manifest.json").read_text())
    on_disk = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != "manifest.json")
    assert sorted(f["path"] for f in manifest["files"]) == on_disk
    for entry in manifest["files"]:
        data = (out / entry["path"]).read_bytes()
        assert entry["size"] == len(data) and entry["sha256"] == hashlib.sha256(data).hexdigest()
    assert manifest["report_hash"] == report_hash(report)
    assert manifest["tool_version"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_a_second_save_replaces_the_bundle_never_merges(tmp_path):
    out = tmp_path / "out"
    first = small_report()
    first.extra["jordan"] = pd.DataFrame({"algorithm": ["ucb"], "point": [1.0]})
    save_report(first, out, figures=False)
    assert (out / "jordan.csv").exists()
    save_report(small_report(shift=0.01), out, figures=False)
    assert not (out / "jordan.csv").exists()  # a stale table of the earlier result does not survive
    assert read_bundle(out).report_hash == report_hash(small_report(shift=0.01))


def test_a_failed_save_leaves_the_previous_bundle_untouched(tmp_path, monkeypatch):
    out = tmp_path / "out"
    save_report(small_report(), out, figures=False)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    encode = writer.encode

    def boom(name, content):  # the disk fills up after the tables and methods.md are in the new folder
        if name == "report.html":
            raise OSError("disk full")
        return encode(name, content)

    monkeypatch.setattr(writer, "encode", boom)
    with pytest.raises(OSError, match="disk full"):
        save_report(small_report(shift=0.5), out, figures=True)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # the temporary folder is gone


def test_a_folder_with_foreign_files_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / ".env").write_text("SECRET=1")
    with pytest.raises(BundleError, match=r"\.env: the output folder holds files rl_reliable_logger did not write"):
        save_report(small_report(), out, figures=False)
    assert sorted(p.name for p in out.iterdir()) == [".env"]
    # a file added to an earlier bundle is not the tool's either: never deleted, even with force
    out2 = save_report(small_report(), tmp_path / "out2", figures=False)
    (out2 / "notes.txt").write_text("mine")
    with pytest.raises(BundleError, match="notes.txt: not written by rl_reliable_logger"):
        save_report(small_report(shift=1), out2, figures=False, force=True)
    assert (out2 / "notes.txt").read_text() == "mine"


def test_a_modified_bundle_is_replaced_only_with_force(tmp_path):
    out = save_report(small_report(), tmp_path / "out", figures=False)
    (out / "aggregates.csv").write_text("algorithm,metric,point,low,high\n")
    with pytest.raises(BundleError, match="force=True"):
        save_report(small_report(), out, figures=False)
    save_report(small_report(), out, figures=False, force=True)
    assert read_bundle(out).report_hash == report_hash(small_report())


def test_symlinks_are_never_followed(tmp_path):
    victim = tmp_path / "victim.csv"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "aggregates.csv").symlink_to(victim)
    with pytest.raises(BundleError, match="symlink"):
        save_report(small_report(), out, figures=False)
    assert victim.read_text() == "precious"
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(BundleError, match="is a symlink"):
        save_report(small_report(), link, figures=False)
    assert not (tmp_path / "elsewhere").exists()
    # reading: a listed file replaced by a symlink is refused
    good = save_report(small_report(), tmp_path / "good", figures=False)
    data = (good / "per_task.csv").read_bytes()
    victim.write_bytes(data)
    (good / "per_task.csv").unlink()
    (good / "per_task.csv").symlink_to(victim)
    with pytest.raises(BundleError, match="per_task.csv: not a regular file"):
        load_report(good)


@pytest.mark.parametrize(
    "damage, message",
    [
        (
            lambda out: (out / "aggregates.csv").write_text("algorithm,metric,point,low,high\nX,iqm,9,9,9\n"),
            "aggregates.csv: does not match",
        ),
        (lambda out: (out / "profiles.csv").unlink(), "profiles.csv: listed in the manifest but missing"),
        (lambda out: (out / "curves.csv").write_text("algorithm\n"), "curves.csv: not listed in the manifest"),
        (lambda out: (out / "manifest.json").unlink(), "manifest.json: no manifest"),
        (lambda out: (out / "manifest.json").write_text("{"), "manifest.json: unreadable manifest"),
    ],
)
def test_partial_or_tampered_bundles_are_refused_with_one_line_naming_the_file(tmp_path, capsys, damage, message):
    out = save_report(small_report(), tmp_path / "out", figures=False)
    damage(out)
    with pytest.raises(BundleError, match=message) as err:
        load_report(out)
    assert "\n" not in str(err.value)
    assert main(["report", str(out)]) == 2
    printed = capsys.readouterr().err
    assert message in printed and printed.count("\n") == 1


def test_unsafe_names_in_a_manifest_are_refused(tmp_path):
    out = save_report(small_report(), tmp_path / "out", figures=False)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["files"].append({"path": "../outside.csv", "size": 0, "sha256": hashlib.sha256(b"").hexdigest()})
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="unsafe file name '../outside.csv'"):
        read_bundle(out)


def test_figure_file_names_never_come_from_table_contents(tmp_path):
    report = small_report()
    report.curves = pd.DataFrame(
        {
            "algorithm": ["ucb", "ucb"],
            "metric": ["../../evil", "../../evil"],
            "step": [1, 2],
            "point": [0.1, 0.2],
            "low": [0.0, 0.1],
            "high": [0.2, 0.3],
        }
    )
    out = save_report(report, tmp_path / "out", figures=True)
    names = [f.path for f in read_bundle(out).files]
    assert all(safe_relpath(n) for n in names)
    assert not list(tmp_path.glob("*evil*")) and not list(tmp_path.rglob("*evil*"))


def test_cli_refuses_an_input_inside_out_and_foreign_files_before_computing(tmp_path, capsys, monkeypatch):
    import rl_reliable_logger.cli.common as common

    def no_evaluation(*args, **kwargs):
        raise AssertionError("evaluated before refusing the output folder")

    monkeypatch.setattr(common, "evaluate", no_evaluation)
    out = tmp_path / "out"
    out.mkdir()
    scores = _scores(out / "scores.csv")
    assert main(["evaluate", str(scores), *FAST, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "an input file inside the output folder" in err and "scores.csv" in err
    assert scores.read_text().startswith("algorithm,task,seed,score")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("mine")
    assert main(["evaluate", str(scores), *FAST, "--out", str(tmp_path / "other")]) == 2
    assert "keep.txt: the output folder holds files" in capsys.readouterr().err


def test_cli_out_round_trips_through_report(tmp_path, capsys):
    scores = _scores(tmp_path / "scores.csv")
    out = tmp_path / "out"
    assert main(["evaluate", str(scores), *FAST, "--no-figures", "--out", str(out)]) == 0
    assert main(["evaluate", str(scores), *FAST, "--no-figures", "--out", str(out)]) == 0  # replaced, not refused
    digest = read_bundle(out).report_hash
    assert main(["report", str(out)]) == 0
    assert read_bundle(out).report_hash == digest and (out / "report.html").exists()
    assert os.path.exists(out / "manifest.json")


def test_cli_force_replaces_only_an_edited_bundle(tmp_path, capsys):
    scores = _scores(tmp_path / "scores.csv")
    out = tmp_path / "out"
    assert main(["evaluate", str(scores), *FAST, "--no-figures", "--out", str(out)]) == 0
    (out / "aggregates.csv").write_text("edited\n")
    assert main(["evaluate", str(scores), *FAST, "--no-figures", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "aggregates.csv: does not match" in err and "Pass --force to replace it anyway" in err
    assert main(["evaluate", str(scores), *FAST, "--no-figures", "--out", str(out), "--force"]) == 0
    read_bundle(out)


def test_a_changed_bundle_says_what_to_do(tmp_path, capsys):
    """Edited, missing or added files: the refusal says what to do (the files back, or the bundle written again),
    and the writer, asked to write over it, says how (--force) without repeating that advice."""
    out = save_report(small_report(), tmp_path / "out", figures=False)
    (out / "aggregates.csv").write_text("algorithm,metric,point,low,high\nX,iqm,9,9,9\n")
    assert main(["report", str(out)]) == 2
    printed = capsys.readouterr().err
    assert printed.endswith(
        "the bundle was modified: put its files back as written, or write the bundle again with the command that "
        "wrote it\n"
    ), printed
    with pytest.raises(BundleError) as err:
        save_report(small_report(), out, figures=False)
    assert "the bundle was modified; the output folder is not an unmodified results bundle." in str(err.value)
    assert "write the bundle again" not in str(err.value)


def test_the_input_file_as_output_folder_is_named_as_such(tmp_path, capsys):
    """``--out`` naming the input file itself: one sentence saying so (not "a file inside the folder"), exit 2, and
    the file untouched."""
    scores = _scores(tmp_path / "scores.csv")
    before = scores.read_bytes()
    assert main(["evaluate", str(scores), *FAST, "--out", str(scores)]) == 2
    err = capsys.readouterr().err
    assert "the output folder is the input file itself; the bundle would replace it" in err, err
    assert scores.read_bytes() == before
