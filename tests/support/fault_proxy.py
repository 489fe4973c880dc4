"""A small HTTP proxy on 127.0.0.1 that delays requests and can answer 500 instead of forwarding.

Why: time budgets must hold against a server that answers slowly or with errors, not only against a
closed port. ``FaultProxy(upstream)`` forwards every request to ``upstream`` after ``delay`` seconds;
with ``status`` set it answers that status itself (after the delay) and forwards nothing. When the
upstream is gone the proxy answers 502. ``hits`` counts the requests it saw.
"""

from __future__ import annotations

import http.client
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FaultProxy:
    """``with FaultProxy(upstream, delay=1, status=500) as url:`` -- a faulty front for ``upstream``."""

    def __init__(self, upstream: str | None, *, delay: float = 0.0, status: int | None = None):
        self.upstream = upstream.rstrip("/") if upstream else None
        self.delay, self.status = delay, status
        self.hits = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _handle(self) -> None:
                proxy.hits += 1
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                time.sleep(proxy.delay)
                if proxy.status is not None or proxy.upstream is None:
                    self._send(proxy.status or 502, b'{"error_code": "INTERNAL_ERROR", "message": "injected"}')
                    return
                request = urllib.request.Request(proxy.upstream + self.path, data=body, method=self.command)
                for key in ("Content-Type", "Authorization"):
                    if self.headers.get(key):
                        request.add_header(key, self.headers[key])
                try:
                    with urllib.request.urlopen(request, timeout=30) as answer:
                        self._send(answer.status, answer.read(), answer.headers.get("Content-Type"))
                except urllib.error.HTTPError as err:
                    self._send(err.code, err.read(), err.headers.get("Content-Type"))
                except (OSError, http.client.HTTPException):  # the upstream gone, or not speaking HTTP
                    self._send(502, b'{"error_code": "BAD_GATEWAY", "message": "upstream gone"}')

            def _send(self, status: int, payload: bytes, content_type: str | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type or "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> str:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self.url

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
