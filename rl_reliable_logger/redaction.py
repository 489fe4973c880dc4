"""One redaction function for every message, provenance entry and published field that may hold a secret.

:func:`redact` hides, anywhere in a text:

* the password of ``scheme://user:password@host`` (the user stays: ``user:***@``), ``@`` in the password included;
* a user-info without a password, which is how tokens are usually passed (``https://<token>@host`` →
  ``https://***@host``);
* the values of query parameters whose name says secret (``token``, ``access_token``, ``api_key``, ``key``,
  ``password``, ``secret``, ``sig``/``signature``, ``auth``, ``credential``, AWS ``X-Amz-*`` signatures,
  Azure ``sv``/``se``... SAS parts ``sig``);
* ``Authorization: …`` / ``Bearer …`` header values, ``api_key=…``-style assignments, netrc ``password …`` (the
  token of a netrc line, not the word in a library's sentence);
* each tracker's API keys, by the patterns its plugin declares (``trackers/<name>/plugin.py``);
* the current values of known secret environment variables (each tracker's, ``DATABRICKS_TOKEN``,
  ``AWS_SECRET_ACCESS_KEY``, ...) and of any variable whose name
  ends in ``_TOKEN``, ``_API_KEY``, ``_SECRET``, ``_PASSWORD`` or ``_ACCESS_KEY``, wherever they appear;
* while a run-name pattern is active (:func:`redacting_run_names`, the CLI's ``--redact-run-names REGEX``),
  every match of it: see :class:`RunNameRedactor`.

Example:
    >>> redact("http://me:hunter2@tracker.example:5000/api?x=1&token=abc123")
    'http://me:***@tracker.example:5000/api?x=1&token=***'
    >>> redact("https://ghp_secret@github.com/o/r.git")
    'https://***@github.com/o/r.git'
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = [
    "MASK",
    "add_secret_rules",
    "RunNameRedactor",
    "active_run_name_redactor",
    "is_secret_name",
    "redact",
    "redacting_run_names",
]

MASK = "***"

#: Environment variables that hold secrets, beyond the name patterns below (each tracker adds its own,
#: :func:`add_secret_rules`).
SECRET_VARIABLES = [
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
]
_SECRET_SUFFIXES = ("_TOKEN", "_API_KEY", "_APIKEY", "_SECRET", "_PASSWORD", "_ACCESS_KEY", "_SECRET_KEY")
#: Values shorter than this are not searched for (a variable set to "1" must not blank every digit).
_MIN_SECRET = 6

#: The user-info ends at the *last* ``@`` of the authority: a password may hold ``@`` (``alice:p@ss@host``).
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^/?#\s]+)@")
_SECRET_NAME = r"[^=&#\s?;]*(?:token|key|secret|passw(?:or)?d|pwd|sig|signature|auth|credential|session)[^=&#\s?;]*"
_QUERY = re.compile(rf"(?P<head>[?&;]{_SECRET_NAME}=)(?P<value>[^&#\s'\"]+)", re.IGNORECASE)
_HEADER = re.compile(
    r"(?P<head>\b(?:Authorization\s*[:=]\s*(?:Bearer|Basic|Token)?|Bearer)\s+)(?P<value>[A-Za-z0-9._~+/=\-]{6,})",
    re.IGNORECASE,
)
#: A netrc ``password`` token: first on its line, or after another netrc token (``machine h login u password p``),
#: never the word in a sentence (zipfile's "is encrypted, password required for extraction" holds no secret).
_NETRC = re.compile(
    r"(?P<head>(?:^[ \t]*|\b(?:machine|login|account|default)\b(?:[ \t]+\S+)?[ \t\r\n]+)password[ \t\r\n]+)"
    r"(?P<value>\S{6,})",
    re.MULTILINE,
)
#: Patterns of a tracker's API keys (from its plugin, :func:`add_secret_rules`): a match is masked unless its
#: ``pre`` group (e.g. "commit ", for a git hash that looks like a key) is set.
_KEY_PATTERNS: list[re.Pattern[str]] = []
_ASSIGN = re.compile(
    r"(?P<head>\b(?:api[_-]?key|access[_-]?token|auth[_-]?token|token|password|passwd|secret)\b\s*[=:]\s*['\"]?)"
    r"(?P<value>[^\s'\",;&]{4,})",
    re.IGNORECASE,
)


#: A field whose name says it holds a secret (``api_key``, ``tracker-token``, ``db_password``, ``Secret``).
_SECRET_FIELD = re.compile(
    r"(?:^|[_\-.\s])(?:api[_\-]?key|apikey|token|secret|passw(?:or)?d|pwd|credentials?|auth|"
    r"private[_\-]?key|access[_\-]?key|secret[_\-]?key|session[_\-]?key)(?:$|[_\-.\s])",
    re.IGNORECASE,
)


def add_secret_rules(variables: Iterable[str] = (), patterns: Iterable[str] = ()) -> None:
    """Also redact the values of these environment variables and every match of these key patterns.

    The tracker registry calls it with each plugin's rules, so this module names no tracker.
    """
    SECRET_VARIABLES.extend(v for v in variables if v not in SECRET_VARIABLES)
    known = {p.pattern for p in _KEY_PATTERNS}
    _KEY_PATTERNS.extend(re.compile(p) for p in patterns if p not in known)


def is_secret_name(name: object) -> bool:
    """Whether a field (column, config key) is named like a secret: its values are never copied into outputs.

    Example:
        >>> [is_secret_name(n) for n in ("api_key", "TRACKER_TOKEN", "db-password", "tokens_per_step", "lr")]
        [True, True, True, False, False]
    """
    return bool(_SECRET_FIELD.search(str(name)))


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
    for pattern in _KEY_PATTERNS:
        out = pattern.sub(lambda m: m[0] if m.groupdict().get("pre") else MASK, out)
    if _ACTIVE is not None:
        out = _ACTIVE(out)
    return out


# ---------------------------------------------------------------------------- run names that carry secrets
class RunNameRedactor:
    """Replaces every match of a user's regular expression by ``redacted-<8 hex digits>``.

    For users whose run names carry secrets (``--redact-run-names REGEX``). The *matched part* is replaced,
    not the whole name, so ``ppo-seed3-tok_8f2a9c`` with ``tok_\\w+`` becomes ``ppo-seed3-redacted-1c0e7d2a``:
    the same rule works inside free text (an error message quoting a run name), where a name's boundaries are
    unknown; ``.+`` replaces whole names. The 8 hex digits are the start of the SHA-256 of the matched text:
    stable (the same secret gives the same label in every file and every run, and two different secrets two
    labels, so run ids stay unique) but not reversible for a secret of real entropy (a short guessable one
    could be found by trying candidates: match more of the name then).

    Example:
        >>> r = RunNameRedactor(r"tok_\\w+")
        >>> r("ppo-3-tok_abc") == r("run ppo-3-tok_abc failed").split()[1]
        True
        >>> "tok_abc" in r("ppo-3-tok_abc")
        False
    """

    def __init__(self, pattern: str) -> None:
        if not isinstance(pattern, str) or not pattern:
            raise ValueError("the run-name pattern must be a non-empty regular expression")
        try:
            self.regex = re.compile(pattern)
        except (re.error, RecursionError, OverflowError) as err:
            raise ValueError(f"not a valid regular expression ({err})") from None
        if self.regex.fullmatch(""):
            raise ValueError(f"{pattern!r} matches the empty string: it would mark every position of every text")
        self.pattern = pattern

    @staticmethod
    def label(secret: str) -> str:
        """The stable replacement of one matched text."""
        return "redacted-" + hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:8]

    def __call__(self, text: object) -> str:
        # labels already in the text are kept as they are: applying the redactor twice changes nothing
        parts = _LABEL.split(str(text))
        return "".join(
            part if i % 2 else self.regex.sub(lambda m: self.label(m[0]), part) for i, part in enumerate(parts)
        )

    def scrub(self, value: Any) -> Any:
        """``value`` with every string in it redacted: strings, dict keys and values, lists, tuples, sets and
        the text cells, column names and ``attrs`` of pandas DataFrames (numbers are never touched)."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self.scrub(k): self.scrub(v) for k, v in value.items()}
        if isinstance(value, (list, tuple, set, frozenset)):
            return type(value)(self.scrub(v) for v in value)
        if hasattr(value, "select_dtypes") and hasattr(value, "columns"):  # a DataFrame, without importing pandas
            frame = value.copy()
            for col in frame.columns:
                if frame[col].dtype == object or str(frame[col].dtype) in ("string", "str"):
                    frame[col] = [self(v) if isinstance(v, str) else v for v in frame[col]]
            frame.columns = [self(c) if isinstance(c, str) else c for c in frame.columns]
            frame.attrs = self.scrub(dict(frame.attrs))
            return frame
        return value

    def matches(self, text: object) -> bool:
        return self.regex.search(str(text)) is not None


#: A label already written (``redacted-`` and 8 hex digits): never redacted again.
_LABEL = re.compile(r"(redacted-[0-9a-f]{8})")

_ACTIVE: RunNameRedactor | None = None


def active_run_name_redactor() -> RunNameRedactor | None:
    """The run-name redactor :func:`redact` applies now (``None``: no run names are redacted)."""
    return _ACTIVE


@contextlib.contextmanager
def redacting_run_names(redactor: RunNameRedactor | str | None) -> Iterator[RunNameRedactor | None]:
    """Within the block, :func:`redact` also replaces the run-name pattern's matches (``None``: no change)."""
    global _ACTIVE
    if isinstance(redactor, str):
        redactor = RunNameRedactor(redactor)
    previous = _ACTIVE
    _ACTIVE = redactor if redactor is not None else previous
    try:
        yield _ACTIVE
    finally:
        _ACTIVE = previous
