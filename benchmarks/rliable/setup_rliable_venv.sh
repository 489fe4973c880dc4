#!/usr/bin/env bash
# Create benchmarks/.rliable-venv with rliable 1.2.0 for the comparison benchmark and tests.
#
# rliable 1.2.0 pins arch>=5.3.1,<8; arch 7.x imports fail with pandas 3 and arch 8 removed the
# random_state kwarg rliable passes, so pandas is held below 3 (see the team notes (shared/notes/anchors.md) §(d)1).
# Usage: bash benchmarks/rliable/setup_rliable_venv.sh [python]   (default python: python3)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$(dirname "$here")/.rliable-venv"  # benchmarks/.rliable-venv
py="${1:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "rliable==1.2.0" "pandas<3" "arch<8"
"$venv/bin/python" - <<'PY'
import warnings
warnings.simplefilter("ignore")
import arch, numpy, pandas, rliable, scipy
from rliable import library, metrics  # noqa: F401
print(f"rliable venv OK: rliable {getattr(rliable, '__version__', '1.2.0')}, arch {arch.__version__}, "
      f"numpy {numpy.__version__}, scipy {scipy.__version__}, pandas {pandas.__version__}")
PY
