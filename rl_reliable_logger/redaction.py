"""One redaction function for every message, provenance entry and published field that may hold a secret.

:func:`redact` hides, anywhere in a text:

* the password of ``scheme://user:password@host`` (the user stays: ``user:***@``);
* a user-info without a password, which is how tokens are usually passed (``https://<token>@host`` →
  ``https://***@host``);
* the values of query parameters whose name says secret (``token``, ``access_token``, ``api_key``, ``key``,
  ``password``, ``secret``, ``sig``/``signature``, ``auth``, ``credential``, AWS ``X-Amz-*`` signatures,
  Azure ``sv``/``se``... SAS parts ``sig``);
* ``Authorization: …`` / ``Bearer …`` header values, ``api_key=…``-style assignments, netrc ``password …``;
* W&B-style API keys (40 hex digits, ``local-…``), unless named as a git commit/sha;
* the current values of known secret environment variables (``WANDB_API_KEY``, ``MLFLOW_TRACKING_PASSWORD``,
  ``MLFLOW_TRACKING_TOKEN``, ``DATABRICKS_TOKEN``, ``AWS_SECRET_ACCESS_KEY``, ...) and of any variable whose name
  ends in ``_TOKEN``, ``_API_KEY``, ``_SECRET``, ``_PASSWORD`` or ``_ACCESS_KEY``, wherever they appear.

Example:
    >>> redact("http://me:hunter2@mlflow.example:5000/api?x=1&token=abc123")
    'http://me:***@mlflow.example:5000/api?x=1&token=***'
    >>> redact("https://ghp_secret@github.com/o/r.git")
    'https://***@github.com/o/r.git'
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

__all__ = ["redact", "MASK"]

MASK = "***"

#: Environment variables that hold secrets, beyond the name patterns below.
SECRET_VARIABLES = (
    "WANDB_API_KEY",
    "MLFLOW_TRACKING_PASSWORD",
    "MLFLOW_TRACKING_TOKEN",
    "MLFLOW_TRACKING_CLIENT_CERT_PATH",
    "DATABRICKS_TOKEN",
    "DATABRICKS_CLIENT_SECRET",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AZURE_STORAGE_ACCESS_KEY",
    "AZURE_STORAGE_CONNECTION_STRING",
    "AZURE_CLIENT_SECRET",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "HF_TOKEN",
    "GITHUB_TOKEN",
)
_SECRET_SUFFIXES = ("_TOKEN", "_API_KEY", "_APIKEY", "_SECRET", "_PASSWORD", "_ACCESS_KEY", "_SECRET_KEY")
#: Values shorter than this are not searched for (a variable set to "1" must not blank every digit).
_MIN_SECRET = 6

_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^/?#\s@]+)@")
_SECRET_NAME = r"[^=&#\s?;]*(?:token|key|secret|passw(?:or)?d|pwd|sig|signature|auth|credential|session)[^=&#\s?;]*"
_QUERY = re.compile(rf"(?P<head>[?&;]{_SECRET_NAME}=)(?P<value>[^&#\s'\"]+)", re.IGNORECASE)
_HEADER = re.compile(
    r"(?P<head>\b(?:Authorization\s*[:=]\s*(?:Bearer|Basic|Token)?|Bearer)\s+)(?P<value>[A-Za-z0-9._~+/=\-]{6,})",
    re.IGNORECASE,
)
_NETRC = re.compile(r"(?P<head>\bpassword\s+)(?P<value>\S{6,})")
#: W&B API keys (40 hex digits, ``local-`` on self-hosted servers); git hashes named as such are kept.
_HEXKEY = re.compile(
    r"(?P<pre>\b(?:commit|sha|revision|rev|git)\w{0,12}[\s=:'\"]{0,3})?\b(?P<key>(?:local-)?[0-9a-f]{40})\b"
)
_ASSIGN = re.compile(
    r"(?P<head>\b(?:api[_-]?key|access[_-]?token|auth[_-]?token|token|password|passwd|secret)\b\s*[=:]\s*['\"]?)"
    r"(?P<value>[^\s'\",;&]{4,})",
    re.IGNORECASE,
)


def _userinfo(match: re.Match[str]) -> str:
    user, sep, _password = match["userinfo"].partition(":")
    return f"{match['scheme']}{user}:{MASK}@" if sep else f"{match['scheme']}{MASK}@"


def _secret_values(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    names = set(SECRET_VARIABLES) | {k for k in environ if k.upper().endswith(_SECRET_SUFFIXES)}
    found = [(environ[k], k) for k in names if len(environ.get(k) or "") >= _MIN_SECRET]
    return sorted(found, key=lambda item: -len(item[0]))  # longest first: a key that contains another


def redact(text: object, *, environ: Mapping[str, str] | None = None) -> str:
    """``text`` (anything, as ``str``) with every credential it carries replaced by ``***`` or ``<$VARIABLE>``.

    ``environ`` defaults to ``os.environ``; the values of its secret variables are removed verbatim.
    """
    out = str(text)
    for value, name in _secret_values(os.environ if environ is None else environ):
        out = out.replace(value, f"<${name}>")
    out = _USERINFO.sub(_userinfo, out)
    out = _QUERY.sub(lambda m: m["head"] + MASK, out)
    out = _HEADER.sub(lambda m: m["head"] + MASK, out)
    out = _ASSIGN.sub(lambda m: m["head"] + MASK, out)
    out = _NETRC.sub(lambda m: m["head"] + MASK, out)
    out = _HEXKEY.sub(lambda m: m[0] if m["pre"] else MASK, out)
    return out
