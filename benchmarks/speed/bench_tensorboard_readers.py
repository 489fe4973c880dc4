"""Issue 34: which reader of TensorBoard event files the TensorBoard source uses, by measurement.

Writes a log folder of RUNS run folders (``{algorithm}/{task}/seed_{seed}``) x STEPS steps of three scalar
tags with tensorboardX (what Ray Tune, and in the same format PyTorch and Stable-Baselines3, write), then
reads the one score tag back with each candidate, each in a fresh process: wall time and the peak resident
memory the read added (``ru_maxrss`` after minus before, the imports done). Every candidate must return the
same points; the table is printed in one run.

    python benchmarks/speed/bench_tensorboard_readers.py                    # 200 runs x 2,000 steps (~10 min)
    python benchmarks/speed/bench_tensorboard_readers.py --runs 20 --steps 500   # smoke run
    python benchmarks/speed/bench_tensorboard_readers.py --runs 50 --only rl-reliable,accumulator,rl-reliable,accumulator

Candidates:
  rl-reliable   the package's reader: TensorBoard's RawEventFileLoader + Event protos, one file at a time,
                keeping only the score tag (rl_reliable_logger.trackers.tensorboard.events)
  loader        TensorBoard's EventFileLoader (its read-time compatibility layer on every event), one file at
                a time, keeping only the score tag
  accumulator   TensorBoard's EventAccumulator per run folder, every scalar kept (size_guidance 0), then the tag
  tbparse       tbparse.SummaryReader over the whole log folder (scalars only), then the tag
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TAG = "eval/return"
OTHER_TAGS = ("train/loss", "charts/sps")
CANDIDATES = ("rl-reliable", "loader", "accumulator", "tbparse")


def write_logs(root: Path, runs: int, steps: int) -> None:
    from tensorboardX import SummaryWriter

    for i in range(runs):
        folder = root / f"alg{i % 4}" / f"task{(i // 4) % 5}" / f"seed_{i // 20}"
        writer = SummaryWriter(str(folder), flush_secs=3600, max_queue=10_000)
        for step in range(steps):
            writer.add_scalar(TAG, 0.25 * (step % 8) + i, step)
            for tag in OTHER_TAGS:
                writer.add_scalar(tag, float(step), step)
        writer.close()


def _folders(root: Path) -> list[Path]:
    return sorted({p.parent for p in root.rglob("*tfevents*")})


def _read(name: str, root: Path) -> dict[str, list[tuple[float, float]]]:
    out: dict[str, list[tuple[float, float]]] = {}
    if name == "rl-reliable":
        from rl_reliable_logger.trackers.tensorboard.events import read_scalars

        for folder in _folders(root):
            for path in sorted(folder.glob("*tfevents*")):
                got = read_scalars(str(path), [TAG])
                out[folder.relative_to(root).as_posix()] = got.points.get(TAG, [])
    elif name == "loader":
        from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
        from tensorboard.util import tensor_util

        for folder in _folders(root):
            for path in sorted(folder.glob("*tfevents*")):
                points = []
                for event in EventFileLoader(str(path)).Load():
                    for value in event.summary.value:
                        if value.tag == TAG:
                            points.append((float(event.step), float(tensor_util.make_ndarray(value.tensor))))
                out[folder.relative_to(root).as_posix()] = points
    elif name == "accumulator":
        from tensorboard.backend.event_processing import event_accumulator as ea

        for folder in _folders(root):
            acc = ea.EventAccumulator(str(folder), size_guidance={ea.SCALARS: 0})
            acc.Reload()
            out[folder.relative_to(root).as_posix()] = [(float(e.step), float(e.value)) for e in acc.Scalars(TAG)]
    elif name == "tbparse":
        from tbparse import SummaryReader

        frame = SummaryReader(str(root), event_types={"scalars"}, extra_columns={"dir_name"}).scalars
        frame = frame[frame["tag"] == TAG]
        for folder, part in frame.groupby("dir_name"):
            out[str(folder)] = list(zip(part["step"].astype(float), part["value"].astype(float)))
    return out


def child(name: str, root: Path) -> None:
    import resource

    # every candidate's imports happen before the measure
    import tensorboard.backend.event_processing.event_accumulator
    import tensorboard.backend.event_processing.event_file_loader
    import tensorboard.compat.proto.event_pb2
    import tensorboard.util.tensor_util  # noqa: F401

    import rl_reliable_logger.trackers.tensorboard.events  # noqa: F401

    if name == "tbparse":
        import tbparse  # noqa: F401
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    points = _read(name, root)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    digest = sorted((k, len(v), sum(x for _, x in v)) for k, v in points.items())
    print(json.dumps({"seconds": seconds, "peak_mib": (after - before) / 1024, "digest": digest}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument(
        "--only", default=",".join(CANDIDATES), help="comma-separated readers, in this order (a name may repeat)"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, Path(args.root))
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        write_logs(root, args.runs, args.steps)
        size = sum(p.stat().st_size for p in root.rglob("*tfevents*")) / 2**20
        print(
            f"log: {args.runs} runs x {args.steps} steps x {1 + len(OTHER_TAGS)} tags, {size:.1f} MiB of event files "
            f"(written by tensorboardX in {time.perf_counter() - start:.1f} s); python {sys.version.split()[0]}"
        )
        print(f"{'reader':<12} {'seconds':>8} {'peak MiB':>9}  same points")
        first = None
        for name in args.only.split(","):
            env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
            done = subprocess.run(
                [sys.executable, __file__, "--child", name, "--root", str(root)],
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
            if done.returncode != 0:
                print(f"{name:<12} failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            got = json.loads(done.stdout.strip().splitlines()[-1])
            first = first or got["digest"]
            print(f"{name:<12} {got['seconds']:>8.1f} {got['peak_mib']:>9.1f}  {got['digest'] == first}")


if __name__ == "__main__":
    main()
