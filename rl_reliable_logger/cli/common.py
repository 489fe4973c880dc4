"""Running one analysis from the command line: options → ``evaluate()`` → console summary → files.

Every analysing subcommand ends in :func:`run_and_report`; the analysis itself (Jordan tables, tuning
view, curves included) is built by ``evaluate()``, never completed here.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..notes import routed
from ..trackers import registry
from ..trackers.base.request import KINDS
from ..wording import Message
from .flags import CliError, as_flags, cli_message, our_words
from .options import analysis_options, name_mode

__all__ = ["EPILOG", "CliError", "format_comparisons", "format_summary", "run_and_report", "tracker_fields"]


EPILOG = """\
examples:
  rl-reliable evaluate examples/atari100k_scores.csv --normalize atari100k --seed 0 --out results/
  rl-reliable evaluate runs.parquet --algorithm-key agent --task-key env --seed-key run --score-key return
  rl-reliable evaluate runs.csv --only-algorithms PPO,SAC --only-tasks Hopper --reps 10000 --ci 99
  rl-reliable evaluate sweep.csv --hyperparameter-keys lr,ent_coef --jordan --out results/
{trackers}
  rl-reliable report results/          # rebuild figures and report.html from a results folder

input (long form, one row per run and task): columns algorithm,task,seed,score (others kept).
metrics: mean and median of per-task means, IQM (25% trimmed mean over runs), optimality gap,
with 95% stratified-bootstrap intervals (Agarwal et al., 2021), seed 0 unless --seed; see the README.
""".format(trackers="\n".join(f"  {p.cli.example}" for p in registry.plugins()))


def tracker_fields(keys: Sequence[str]) -> dict[str, str] | None:
    """``--hyperparameter-keys params.lr,config.clip`` names field references: fetch them as columns of those names."""
    refs = {k: k for k in keys if "." in k and k.split(".", 1)[0] in KINDS}
    return refs or None


#: The locks the running command holds until it ends (see :func:`command_scope`).
_SCOPES: list[contextlib.ExitStack] = []


@contextlib.contextmanager
def command_scope() -> Iterator[None]:
    """What one command holds while it runs: the write lock of the folders it writes, from the check before any work
    to the end (``main`` runs every command in one)."""
    with contextlib.ExitStack() as stack:
        _SCOPES.append(stack)
        try:
            yield
        finally:
            _SCOPES.remove(stack)


#: Categories of Python warnings that are for developers, not users: never printed.
_DEVELOPER_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)
#: Loggers of the libraries below the clients (their lines are worded by the console too).
_LIBRARY_LOGGERS = ("alembic", "urllib3", "sqlalchemy", "git", "ray")


class _Console(logging.Handler):
    """Every log line of a library at WARNING or above, as one ``warning: <library>: ...`` line (once each)."""

    def __init__(self, said: set[str]) -> None:
        super().__init__(logging.WARNING)
        self.said = said

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a library's malformed log call: say what it tried to say
            text = str(record.msg)
        say_warning(f"{record.name.split('.')[0]}: {text}", foreign=True)


_CONSOLES: list[tuple[_Console, dict[str, tuple[list[logging.Handler], bool]]]] = []


def say_warning(text: Message | str | Warning, *, table: Any = None, foreign: bool = False) -> None:
    """Print one ``warning:`` line (flag words: ``table`` first, as :func:`~.flags.as_flags`; redacted; one line),
    once per command: a warning the command prints itself and a library emits again is said once. A line given as
    text is ours (a source's or an analysis's warning line, :func:`~.flags.our_words`) unless ``foreign`` (another
    library's log line: printed as it is)."""
    from ..lines import one_line

    if isinstance(text, Warning):
        words = cli_message(text, table=table)
    else:
        words = as_flags(text, table=table) if foreign else our_words(text, table=table)
    _say(warning_line(one_line(words, limit=4000)))


def say_note(text: Message | str) -> None:
    """Print one ``note:`` line (flag words, redacted, one line), once per command. While a command runs, every
    note of the library (:func:`rl_reliable_logger.notes.note`: a tracker's) is said here (:func:`console`)."""
    from ..lines import one_line

    _say(f"note: {one_line(as_flags(text), limit=4000)}")


def _say(line: str) -> None:
    said = _CONSOLES[-1][0].said if _CONSOLES else None
    if said is not None:
        if line in said:
            return
        said.add(line)
    print(line, file=sys.stderr, flush=True)


@contextlib.contextmanager
def console() -> Iterator[None]:
    """The one way text reaches the terminal besides our own prints: every Python warning that is not for
    developers (our own, numpy's, a client's) and every library log line at WARNING or above becomes one
    ``warning:`` line, and every note of the library (:func:`rl_reliable_logger.notes.note`) one ``note:`` line,
    with no file path, in flag words, redacted, each once (``main`` runs every command in it).

    A client library that installs its own log handlers when imported (MLflow) is adopted by :func:`load_clients`
    once it is imported; the ReliabilityWarnings of an analysis are printed after its results
    (:func:`run_and_report`)."""
    said: set[str] = set()
    handler = _Console(said)
    adopted: dict[str, tuple[list[logging.Handler], bool]] = {}
    root = logging.getLogger()

    def show(message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if not issubclass(category, _DEVELOPER_WARNINGS):
            say_warning(message if isinstance(message, Warning) else str(message))

    with warnings.catch_warnings(), routed(say_note):
        warnings.showwarning = show
        root.addHandler(handler)
        _CONSOLES.append((handler, adopted))
        _adopt(_LIBRARY_LOGGERS)
        try:
            yield
        finally:
            _CONSOLES.pop()
            root.removeHandler(handler)
            for name, (handlers, propagate) in adopted.items():
                logger = logging.getLogger(name)
                logger.handlers[:] = handlers
                logger.propagate = propagate


def _adopt(names: Sequence[str]) -> None:
    """Route the loggers ``names`` (and their children) to the console: their own handlers set aside until the
    command ends."""
    if not _CONSOLES:
        return
    handler, adopted = _CONSOLES[-1]
    for name in names:
        logger = logging.getLogger(name)
        if name not in adopted:
            adopted[name] = (list(logger.handlers), logger.propagate)
        logger.handlers[:] = [handler]
        logger.propagate = False


def load_clients(plugin: Any) -> None:
    """Import a tracker's client libraries now and adopt their loggers (a client configures its log handlers when
    imported: adopting them first would be undone), so their lines reach the console as ours."""
    modules = tuple(plugin.redaction.client_modules)
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            continue  # the plugin says what is missing when it opens its source
    _adopt(modules)


def hold_lock(folder: Any, args: argparse.Namespace) -> None:
    """Take ``folder``'s write lock for the rest of the command: a second command writing it waits (``--retry-for``
    when the command has it, else a minute), then refuses in one sentence; so two commands never both write it."""
    from ..store.lock import folder_lock

    if _SCOPES:
        wait = getattr(args, "retry_for", None)
        _SCOPES[-1].enter_context(folder_lock(folder, wait=None if wait is None else float(wait)))


def check_output(args: argparse.Namespace, *, inputs: Sequence[Any] = (), kind: str = "report") -> None:
    """Before any computation: ``--out`` may be written (never over an input or files the tool did not write)
    and ``--figure-formats`` names known formats; a problem is a one-line CliError naming the flag. The folder's
    write lock is then held until the command ends (:func:`hold_lock`).

    Every writing command (``evaluate``, each tracker's command with ``--out``, ``plan``) calls this one guard; an
    output flag that cannot act (``--force`` without ``--out``, ``--figure-formats`` with ``--no-figures``) is
    refused here too (:func:`~.options.check_output_flags`)."""
    from .options import check_output_flags

    check_output_flags(args)
    if not getattr(args, "out", None):
        return
    from ..errors import InputError
    from ..render.export import check_formats
    from ..store.bundle import check_output_folder

    try:
        hold_lock(args.out, args)
        check_output_folder(args.out, inputs=inputs, force=getattr(args, "force", False), kind=kind)
        if getattr(args, "figure_formats", None) is not None:
            check_formats(args.figure_formats)
    except InputError as err:
        raise CliError(cli_message(err)) from None


def read_scores(path: Path, args: argparse.Namespace) -> Any:
    """The ScoreTable of a user's file, with the shared field flags; every problem one line naming the file."""
    from ..analysis.inputs import FieldOptions
    from ..errors import InputError

    if not path.exists():
        raise CliError(f"input file {path} does not exist")
    fields = FieldOptions(  # the reader of evaluate(DataFrame or path, field keywords) too
        algorithm_key=args.algorithm_key,
        task_key=args.task_key,
        seed_key=args.seed_key,
        score_key=args.score_key,
        run_key=args.run_key,
        step_key=args.step_key,
        drop_invalid=bool(args.drop_invalid),
        normalize_names=name_mode(args) == "normalize",
        hyperparameter_keys=tuple(getattr(args, "hyperparameter_keys", None) or ()),
        success_counts=(args.successes, args.episodes)
        if getattr(args, "successes", None) and getattr(args, "episodes", None)
        else None,
    )
    try:
        return fields.read(path, source={"kind": "file", "path": str(path), "score_column": args.score_key})
    except InputError as err:
        message = cli_message(err)
        raise CliError(message if message.startswith(str(path)) else f"{path}: {message}") from None
    except (OSError, ValueError) as err:
        raise CliError(f"cannot read {path}: {err}") from None


def evaluate(table: Any, options: Any, *, source: dict[str, Any] | None = None) -> Any:
    """``analysis.evaluate``, imported on first use so that ``rl-reliable --help`` loads no numpy."""
    from ..analysis.evaluation import evaluate as run_analysis

    return run_analysis(table, options, source=source)


def run_and_report(
    table: Any, args: argparse.Namespace, *, source: dict[str, Any] | None = None, options: Any = None
) -> Any:
    """Evaluate ``table`` with the options of ``args`` (or ``options``), print the summary, write ``args.out``.

    Wiring only: the Report that is printed, written and published is the library's (``evaluate()`` applies
    :func:`~rl_reliable_logger.analysis.redacted.redact_report` itself), so ``rl-reliable evaluate --out A`` and
    ``save_report(evaluate(...), B)`` write the same bundle; only what is printed is put in flag words. The summary,
    the files and the figures' note are all rendered from one view of the Report (:mod:`..render.view`)."""
    from ..errors import InputError
    from ..render.view import report_view

    quiet = bool(getattr(args, "quiet", False))
    progress = not quiet and sys.stderr.isatty()
    options = analysis_options(args, progress=progress) if options is None else options.replace(progress=progress)
    try:
        report, warned = _evaluate_capturing(table, options, source)
    except InputError as err:
        raise CliError(cli_message(err)) from None
    view = report_view(report)
    if not quiet:
        print(summary_text(view, warned))  # results first, then the warnings, each once
    else:
        for w in warned:  # what was dropped or left out is never only in provenance
            say_warning(w)
        dropped = dropped_line(view)
        if dropped:
            say_note(dropped)
    if getattr(args, "out", None):
        from ..render.writer import DEFAULT_FIGURE_FORMATS, save_report

        out = Path(args.out)
        try:
            save_report(
                report,
                out,
                figures=not getattr(args, "no_figures", False),
                force=getattr(args, "force", False),
                figure_formats=getattr(args, "figure_formats", None) or DEFAULT_FIGURE_FORMATS,
                view=view,
            )
        except InputError as err:
            raise CliError(cli_message(err)) from None
        if not getattr(args, "no_figures", False) and view.figure_note:
            say_note(view.figure_note)
        print(wrote_line(out, view, every_warning=len(warned) < len(set(view.warnings))))
    return report


def wrote_line(out: Path, report: Any, *, every_warning: bool = False) -> str:
    """What a bundle holds that a user opens next, by name: ``report.html`` first, ``methods.md``, the tables
    beside the core ones (``tuning.csv``, ...), then how many tables and whether figures came with them:
    ``wrote results/: results/report.html (open it first: ...), methods.md (...), 8 tables as CSV, ...``.
    """
    from ..render.intervals import TABLE_WORDS

    present = {p.name for p in out.iterdir()} if out.is_dir() else set()
    parts = []
    if "report.html" in present:
        parts.append(f"{out / 'report.html'} (open it first: every table and figure, with how to read it)")
    if "methods.md" in present:
        parts.append(
            "methods.md (the methods paragraph for a paper" + ("; every warning in full)" if every_warning else ")")
        )
    extra = [f"{name}.csv" for name in report.extra if f"{name}.csv" in present]
    tables = sorted(n for n in present if n.endswith(".csv"))
    parts += [f"{name} ({TABLE_WORDS.get(name[:-4], name[:-4].replace('_', ' '))})" for name in extra]
    parts.append(f"{len(tables)} tables as CSV, provenance.json" + (", figures" if "figures" in present else ""))
    return f"wrote {out}/: " + ", ".join(parts)


def _evaluate_capturing(table: Any, options: Any, source: dict[str, Any] | None) -> tuple[Any, list[str]]:
    """The Report and the lines of the :class:`~rl_reliable_logger.ReliabilityWarning` s ``evaluate()`` emitted,
    caught so that the console prints them once, after the results (any other warning is passed on)."""
    import warnings

    from ..errors import ReliabilityWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReliabilityWarning)
        report = evaluate(table, options, source=source)
    for w in caught:
        if not issubclass(w.category, ReliabilityWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return report, [_kept(w.message) for w in caught if issubclass(w.category, ReliabilityWarning)]


def _kept(warning: Warning | str) -> str:
    """A caught warning's line, keeping the message it was emitted with (so the console names flags for its
    keywords)."""
    parts = getattr(warning, "message_parts", None)
    return parts.text() if isinstance(parts, Message) and str(parts) == str(warning) else str(warning)


def warning_line(warning: str) -> str:
    """A warning as the console prints it: ``warning: ...``, a protocol finding as it reads already
    (``protocol warning: ...``, never ``warning: protocol warning: ...``)."""
    return warning if warning.startswith("protocol ") else f"warning: {warning}"


def format_comparisons(report: Any) -> str:
    """The letter display of the all-pairs comparisons (``--compare-all``), or "" without them: one line per
    algorithm with its point and its group letters (``report``: a Report or its view)."""
    from ..render.view import as_view

    return _letters_text(as_view(report).letters)


def _letters_text(letters: Any) -> str:
    """The letter display (:class:`~..render.view.Letters`) as the console prints it, in flag words; "" for None."""
    return "" if letters is None else as_flags(letters.text)


#: The console summary's first line is at most this long: one line a terminal shows whole; the intervals of each
#: statistic, the tables and the method's rule are in report.html and methods.md.
SUMMARY_WIDTH = 200


def summary_header(view: Any) -> str:
    """The console summary's first line, at most :data:`SUMMARY_WIDTH` characters: the runs, the scores, the
    headline intervals in short (level, method, replicates) and the seed; then, on lines of their own, the notes on
    the interval method (in flag words) and the filters (names as they are)."""
    prov = view.provenance
    first = f"{view.counts.text()}; {prov.get('normalization', '')}; {view.intervals.short}, seed {prov.get('seed')}"
    if len(first) > SUMMARY_WIDTH:
        first = first[: SUMMARY_WIDTH - 1] + "…"
    lines = [first] + [as_flags(note) for note in view.intervals.notes]
    lines += [f"{k.replace('_', ' ')}: {', '.join(v)}" for k, v in (prov.get("filters") or {}).items()]
    return "\n".join(lines)


def format_summary(report: Any, warned: Sequence[str] | None = None) -> str:
    """The console summary of a Report or its view (:func:`summary_text`)."""
    from ..render.view import as_view

    return summary_text(as_view(report), warned)


def dropped_line(view: Any) -> str | None:
    """How many rows the analysis left out (``--drop-invalid``), said with the summary or, under ``--quiet``, as a
    note: a drop is never only in provenance.json."""
    from ..data.counts import plural

    n_dropped = len(view.provenance.get("dropped") or [])
    return (
        f"left out {plural(n_dropped, 'row')}; each is listed with its reason in provenance.json" if n_dropped else None
    )


def summary_text(view: Any, warned: Sequence[str] | None = None) -> str:
    """Results first: the headline table (one row per algorithm, one column per metric, ``point [low, high]``),
    the letter display of ``--compare-all``, then the warnings, grouped one line per algorithm (``warned``: the
    lines ``evaluate()`` emitted; by default the view's, as :func:`~rl_reliable_logger.analysis.notices.grouped`
    groups them); a cell with a caveat carries the mark and each caveat reason is said once under the table, naming
    its cells. All of it read from the Report's view (:func:`~rl_reliable_logger.render.view.report_view`)."""
    from ..data.counts import fixed
    from ..render.tables import MARK

    agg = view.aggregates
    if agg.empty:
        return "(no results)"
    notes = view.headline_caveats  # the headline's: one line per reason, naming its cells
    marked = {c.cell for note in notes for c in note.cells}
    cells = agg.assign(
        text=[
            f"{fixed(p)} [{fixed(lo)}, {fixed(hi)}]" + (f" {MARK}" if (str(a), str(m)) in marked else "")
            for a, m, p, lo, hi in zip(agg["algorithm"], agg["metric"], agg["point"], agg["low"], agg["high"])
        ]
    )
    wide = cells.pivot(index="algorithm", columns="metric", values="text")
    wide = wide.reindex(index=list(view.algorithms), columns=list(view.headline.metrics))
    lines = [summary_header(view), wide.to_string()]
    lines += [f"{MARK} {note.line}" for note in notes]  # each reason once, under the table it marks
    letters = _letters_text(view.letters)
    if letters:
        lines.append(letters)
    dropped = dropped_line(view)
    if dropped:
        lines.append(dropped)
    lines += [warning_line(our_words(w)) for w in ([line for _, line in view.notices] if warned is None else warned)]
    return "\n".join(lines)
