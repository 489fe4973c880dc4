"""Issue 44: ``rl-reliable tensorboard`` against a minimal reader of the same event files, ratios in one run.

The log folder: RUNS run folders (``alg{a}/task{t}/seed_{s}``, 4 algorithms x 5 tasks x 10 seeds at 200) of
STEPS steps x 3 scalar tags (the score tag and two others), one event file each, in TensorBoard's record format
with the ``Event`` fields tensorboardX writes (wall time, step, one ``simple_value`` a record). The files are
written here with the compiled ``Event`` class and ``google-crc32c`` (tensorboardX takes minutes for 1.2 million
events on this machine; ``--writer tensorboardX`` uses it) and kept in ``--logdir`` for the next run.

Measured, each case a fresh process (CPU = user + system of the child, ``resource.getrusage``), interleaved
A B B A ..., medians over ``--repeats``:

* ``minimal``: Python, the compiled ``Event`` class, every record's length read and its data parsed (no checksum
  checked, nothing else), the score tag's points kept: the floor of reading these files in Python;
* ``minimal+crc``: the same, with both checksums of every record checked by ``google-crc32c``;
* ``command``: ``rl-reliable tensorboard LOGDIR --score-key eval/return`` with the smallest analysis
  (``--reps 2000 --profile-reps 200 --improvement-reps 200 --quiet``, no ``--out``): imports, discovery, reading,
  the score table and the statistics printed;
* ``reader``: the package's reader alone (``events.read_scalars`` on every file, in one process).

The bound of issue 44 is on ``command / minimal`` (at most 2.5x).

    nice python benchmarks/speed/bench_tensorboard_reader.py                      # 200 runs x 2,000 steps
    nice python benchmarks/speed/bench_tensorboard_reader.py --runs 20 --steps 500 --repeats 1   # smoke run
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TAG = "eval/return"
OTHER_TAGS = ("train/loss", "charts/sps")
ANALYSIS = ["--reps", "2000", "--profile-reps", "200", "--improvement-reps", "200", "--quiet"]


def folder(root: Path, i: int) -> Path:
    return root / f"alg{i % 4}" / f"task{(i // 4) % 5}" / f"seed_{i // 20}"


def write_logs(root: Path, runs: int, steps: int, writer: str) -> None:
    if writer == "tensorboardX":
        from tensorboardX import SummaryWriter

        for i in range(runs):
            w = SummaryWriter(str(folder(root, i)), flush_secs=3600, max_queue=10_000)
            for step in range(steps):
                w.add_scalar(TAG, 0.25 * (step % 8) + i, step)
                for tag in OTHER_TAGS:
                    w.add_scalar(tag, float(step), step)
            w.close()
        return
    import struct

    import google_crc32c
    from tensorboard.compat.proto import event_pb2, summary_pb2

    def masked(b: bytes) -> int:
        c = google_crc32c.value(b)
        return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF

    def frame(data: bytes) -> bytes:
        head = struct.pack("<Q", len(data))
        return head + struct.pack("<I", masked(head)) + data + struct.pack("<I", masked(data))

    for i in range(runs):
        path = folder(root, i)
        path.mkdir(parents=True, exist_ok=True)
        out = [frame(event_pb2.Event(wall_time=1.7e9, file_version="brain.Event:2").SerializeToString())]
        for step in range(steps):
            for tag, value in ((TAG, 0.25 * (step % 8) + i), *((t, float(step)) for t in OTHER_TAGS)):
                summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)])
                event = event_pb2.Event(wall_time=1.7e9 + step, step=step, summary=summary)
                out.append(frame(event.SerializeToString()))
        (path / f"events.out.tfevents.1700000000.bench.{i}").write_bytes(b"".join(out))


MINIMAL = textwrap.dedent(
    """
    import struct, sys
    from pathlib import Path
    from tensorboard.compat.proto import event_pb2
    crc = sys.argv[2] == "crc"
    if crc:
        import google_crc32c
        def masked(b):
            c = google_crc32c.value(b)
            return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    points = 0
    for path in sorted(Path(sys.argv[1]).rglob("*tfevents*")):
        data = path.read_bytes()
        pos, kept = 0, []
        while pos < len(data):
            (n,) = struct.unpack_from("<Q", data, pos)
            body = data[pos + 12 : pos + 12 + n]
            if crc and (masked(data[pos : pos + 8]) != struct.unpack_from("<I", data, pos + 8)[0]
                        or masked(body) != struct.unpack_from("<I", data, pos + 12 + n)[0]):
                raise SystemExit(f"bad record in {path}")
            event = event_pb2.Event.FromString(body)
            for v in event.summary.value:
                if v.tag == "eval/return":
                    kept.append((event.step, v.simple_value))
            pos += n + 16
        points += len(kept)
    print(points)
    """
)

READER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from rl_reliable_logger.trackers.tensorboard.events import read_scalars
    points = 0
    for path in sorted(Path(sys.argv[1]).rglob("*tfevents*")):
        got = read_scalars(str(path), ["eval/return"])
        assert got.damage is None, got.damage
        points += len(got.points.get("eval/return", []))
    print(points)
    """
)


def run(case: str, logdir: Path) -> tuple[float, float, str]:
    """(CPU seconds, wall seconds, stdout's last line) of one case in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if case == "command":
        cmd = [sys.executable, "-m", "rl_reliable_logger", "tensorboard", str(logdir), "--score-key", TAG, *ANALYSIS]
    elif case == "reader":
        cmd = [sys.executable, "-c", READER, str(logdir)]
    else:
        cmd = [sys.executable, "-c", MINIMAL, str(logdir), "crc" if case == "minimal+crc" else "plain"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{case} failed:\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = proc.stdout.strip().splitlines()
    return cpu, wall, lines[-1] if lines else ""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--logdir", type=Path, default=None, help="where the logs are kept (default: under /tmp)")
    p.add_argument("--writer", choices=("records", "tensorboardX"), default="records")
    args = p.parse_args()
    logdir = args.logdir or Path(f"/tmp/rl-reliable-tb-bench-{args.runs}x{args.steps}-{args.writer}")
    if not logdir.exists():
        start = time.perf_counter()
        write_logs(logdir, args.runs, args.steps, args.writer)
        print(f"wrote {logdir} in {time.perf_counter() - start:.1f} s")
    size = sum(f.stat().st_size for f in logdir.rglob("*tfevents*"))
    print(
        f"{args.runs} runs x {args.steps} steps x 3 tags, {size / 2**20:.1f} MiB of event files ({args.writer}); "
        f"python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.2f}"
    )
    cases = ("minimal", "command", "minimal+crc", "reader")
    times: dict[str, list[float]] = {c: [] for c in cases}
    for i in range(args.repeats):
        for case in cases if i % 2 == 0 else tuple(reversed(cases)):
            cpu, wall, last = run(case, logdir)
            times[case].append(cpu)
            shown = last if case != "command" else ""
            print(f"  run {i + 1} {case:12s} {cpu:6.2f} s CPU {wall:6.2f} s wall  {shown}", flush=True)
    med = {c: statistics.median(v) for c, v in times.items()}
    for case in cases:
        print(f"{case:12s} median {med[case]:6.2f} s CPU   {med[case] / med['minimal']:.2f}x minimal")
    print(f"RATIO command / minimal: {med['command'] / med['minimal']:.2f}x  (issue 44's bound: 2.5x)")
    print(f"RATIO reader / minimal+crc (both check every checksum): {med['reader'] / med['minimal+crc']:.2f}x")


if __name__ == "__main__":
    main()
