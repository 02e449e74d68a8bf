"""What the loopback servers share (stdlib only): scripted replies, recorded requests, the default
responder, and a threaded HTTP/1.1 server on 127.0.0.1 that hands every request to one method.

:class:`LoopbackServer` is the start/stop/context-manager shape of every server here;
:class:`ThreadedServer` adds a ``ThreadingHTTPServer`` (port chosen by the OS, keep-alive, a
backlog of 1,024 connections) in a background thread whose GET and POST requests go to
:meth:`ThreadedServer.handle`. The OpenAI-compatible and Anthropic servers subclass it; the
asyncio ``FastServer`` keeps its own event loop and shares only :class:`LoopbackServer`.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

Answered = tuple[int, dict[str, str], Any]
"""``(status, extra headers, payload)``: a JSON value, a text sent as is, or bytes."""


@dataclass
class Reply:
    """One scripted answer. ``body`` None with status 200 means "use the responder"."""

    status: int = 200
    body: dict[str, Any] | str | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class RecordedRequest:
    """One request a server received: its path, headers and JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def echo_responder(body: dict[str, Any]) -> str:
    """Default reply: ``echo: <content of the last message>``."""
    messages = body.get("messages") or [{"content": ""}]
    last = messages[-1] if isinstance(messages[-1], dict) else {}
    return f"echo: {last.get('content', '')}"


class LoopbackServer:
    """``start()`` / ``stop()`` and their context manager (``with Server(...) as server``)."""

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ThreadedServer(LoopbackServer):
    """A threaded HTTP/1.1 server on 127.0.0.1 (port chosen by the OS) answering every GET and
    POST with :meth:`handle`; subclasses set their state, then call ``super().__init__()``."""

    def __init__(self) -> None:
        self._httpd = _Server(("127.0.0.1", 0), _make_handler(self))
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port the OS chose."""
        return int(self._httpd.server_address[1])

    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Answered:
        """Answer one HTTP request (``raw``: its body) with ``(status, extra headers, payload)``."""
        raise NotImplementedError

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # socketserver's default backlog of 5 resets bursts of connections
    daemon_threads = True


def _make_handler(server: ThreadedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # else headers and body wait on delayed ACKs (~40 ms a reply)

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            self._send(*server.handle("GET", self.path, dict(self.headers.items()), b""))

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            self._send(*server.handle("POST", self.path, dict(self.headers.items()), raw))

        def _send(self, status: int, headers: dict[str, str], payload: Any) -> None:
            if isinstance(payload, bytes):
                data = payload
            else:
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            try:
                self.send_response(status)
                if not any(k.lower() == "content-type" for k in headers):
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout) first
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:  # silence stderr logging
            return

    return Handler
