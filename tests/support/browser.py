"""A small headless-Chromium driver over the DevTools protocol (CDP), standard library only.

Chromium is started with ``--remote-debugging-pipe``: it reads CDP commands from file descriptor 3
and writes replies (and events) to descriptor 4, each message JSON followed by a NUL byte. No port is
opened and no WebSocket client is needed. Used by the UI tests to open a page of a single-page app
(MLflow's React UI), wait until its text shows up, read what is visible and take a screenshot.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-quic",
    "--disable-sync",
    "--mute-audio",
    "--remote-debugging-pipe",
]


def find_chromium() -> str | None:
    """The Chromium binary (``/usr/bin/chromium`` from Debian, as ``.ci/run`` installs it), if any."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    """Chromium exited, did not answer, or a CDP command failed."""


class Browser:
    """One headless Chromium with one page (tab), driven over CDP on a pipe.

    Example:
        >>> with Browser(find_chromium()) as page:                        # doctest: +SKIP
        ...     page.open("http://127.0.0.1:5000/#/experiments/1")
        ...     page.wait_for_text("Parameters (", timeout=60)
    """

    def __init__(self, binary: str, *, width: int = 1400, height: int = 1000, timeout: float = 60.0):
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="rl-reliable-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def child_fds() -> None:  # runs in the child before exec: the pipes become fds 3 and 4
            import fcntl

            high_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)  # out of the way of 3 and 4 first
            high_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            [binary, *_FLAGS, f"--user-data-dir={self._profile}", f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            close_fds=False,  # Python's own fds are not inheritable; the dup2'd 3 and 4 are
            preexec_fn=child_fds,
            start_new_session=True,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.session: str | None = None
        try:
            target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
            self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)[
                "sessionId"
            ]
            self.send("Page.enable")
            self.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            )
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ protocol
    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_child], [], [], min(left, 1.0))
            if not ready:
                if self._proc.poll() is not None:
                    raise BrowserError(f"Chromium exited with {self._proc.returncode}: {self.stderr()[-2000:]}")
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium closed the pipe: {self.stderr()[-2000:]}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return dict(json.loads(raw))

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: bool = True) -> dict[str, Any]:
        """Send one CDP command (to the page's session unless ``session=False``) and return its result."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:  # events and late replies in between are skipped
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))

    # ------------------------------------------------------------------ page
    def open(self, url: str) -> None:
        """Navigate the page to ``url`` (returns when navigation starts; wait for text after)."""
        result = self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise BrowserError(f"could not open {url}: {result['errorText']}")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaited if it is a promise)."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"script failed: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    def text(self) -> str:
        """The page's visible text (``document.body.innerText``: hidden elements are left out)."""
        return str(self.evaluate("document.body ? document.body.innerText : ''") or "")

    def wait_for(self, expression: str, *, timeout: float = 60.0, what: str = "") -> Any:
        """Poll a JavaScript expression until it is truthy; fail with the page text after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.evaluate(expression)
            except BrowserError:
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(
                    f"waited {timeout:.0f} s for {what or expression}; the page shows:\n{self.text()[:3000]}"
                )
            time.sleep(0.25)

    def wait_for_text(self, *needles: str, timeout: float = 60.0) -> str:
        """Wait until the visible text holds every needle; return that text."""
        probe = " && ".join(f"document.body.innerText.includes({json.dumps(n)})" for n in needles)
        self.wait_for(f"document.body && {probe}", timeout=timeout, what=f"the text {needles!r}")
        return self.text()

    def screenshot(self, path: Path, *, full_page: bool = False) -> Path:
        """Save a PNG of the viewport (or the whole page) to ``path``."""
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full_page}
        data = self.send("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self.send("Browser.close", session=False)
            except (BrowserError, OSError):
                pass
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self._stderr.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
