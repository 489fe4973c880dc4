"""What the benchmarks print about the machine they ran on (shared by every benchmark script)."""

from __future__ import annotations

import os


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` ("?" where that file does not exist)."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def load_average() -> str:
    """The 1/5/15-minute load average, e.g. ``"2.4 3.5 6.7"``: timings mean little on a busy machine."""
    return " ".join(f"{x:.1f}" for x in os.getloadavg())
