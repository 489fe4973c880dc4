"""End a run without MLflow's "View run ... at: URL" lines, which carry a tracking URI's password.

``MlflowClient.set_terminated`` writes ``🏃 View run <name> at: <host>/#/...`` and ``🧪 View experiment at: ...``
to ``sys.stdout`` for a tracking server, with the host as given: ``http://alice:PASSWORD@host`` prints the
password. Our own line after a publish already names the run's link, redacted, so MLflow's is switched off
with its documented switch, ``MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT``, for the one ``set_terminated`` call.

Why this and not the alternatives: the switch is read by MLflow when it is about to print, so it must be in
``os.environ`` while the call runs: process-wide for those milliseconds, but all it can do to the rest of a
user's program is skip another thread's own link line in that window; it is restored exactly afterwards (removed
if it was not set, left alone if the user set it). Redirecting ``sys.stdout`` around the call would swallow
every thread's output meanwhile; passing the URI without its userinfo and the credentials through
``MLFLOW_TRACKING_USERNAME``/``PASSWORD`` would offer them to any other MLflow server the program talks to
in that window.
"""

from __future__ import annotations

import os
import threading
from typing import Any

__all__ = ["end_run_quietly"]

_LOCK = threading.Lock()  # two of our own calls at once restore the switch in the right order


def end_run_quietly(client: Any, run_id: str, status: str) -> None:
    """``client.set_terminated(run_id, status)`` without MLflow printing the run's URL (see the module)."""
    from mlflow.environment_variables import MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT

    name = MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT.name
    with _LOCK:
        before = os.environ.get(name)
        os.environ[name] = "true"
        try:
            client.set_terminated(run_id, status)
        finally:
            if before is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = before
