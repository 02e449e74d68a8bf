"""A small OpenAI-compatible HTTP server (stdlib only) with scripted replies, for tests and benchmarks.

It serves ``POST /v1/chat/completions`` on 127.0.0.1 in a background thread, records every request
(path, headers, JSON body), and answers from a script of :class:`Reply` objects (status, headers,
body) before falling back to a responder function. ``latency_s`` delays every answer, to measure
orchestration overhead (benchmarks/orchestration.py). Not for production use.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any]], str]


@dataclass
class Reply:
    """One scripted answer. ``body`` None with status 200 means "use the responder"."""

    status: int = 200
    body: dict[str, Any] | str | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def echo_responder(body: dict[str, Any]) -> str:
    """Default reply: ``echo: <content of the last message>``."""
    messages = body.get("messages") or [{"content": ""}]
    return f"echo: {messages[-1].get('content', '')}"


class OpenAICompatServer:
    """Scripted ``/v1/chat/completions`` server on 127.0.0.1 (port chosen by the OS).

    Args:
        responder: body -> reply text, used when the script is exhausted.
        script: replies given in order to the first requests.
        latency_s: seconds every answer waits before it is sent.
        reject_response_format: answer HTTP 400 to any request carrying ``response_format``.
    """

    def __init__(
        self,
        responder: Responder = echo_responder,
        *,
        script: list[Reply] | None = None,
        latency_s: float = 0.0,
        reject_response_format: bool = False,
    ) -> None:
        self.responder = responder
        self.script = list(script or [])
        self.latency_s = latency_s
        self.reject_response_format = reject_response_format
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> OpenAICompatServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAICompatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _answer(
        self, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, dict[str, str], Any]:
        with self._lock:
            self.requests.append(RecordedRequest(path, headers, body))
            scripted = self.script.pop(0) if self.script else None
        if self.latency_s:
            time.sleep(self.latency_s)
        if path.rstrip("/") != "/v1/chat/completions":
            return 404, {}, {"error": {"message": f"no route {path}", "type": "not_found"}}
        if scripted is not None and (scripted.status != 200 or scripted.body is not None):
            return scripted.status, scripted.headers, scripted.body
        if self.reject_response_format and "response_format" in body:
            return 400, {}, {"error": {"message": "response_format is not supported",
                                       "type": "invalid_request_error"}}
        text = self.responder(body)
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        return 200, {}, {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt_words, "completion_tokens": len(text.split()),
                      "total_tokens": prompt_words + len(text.split())},
        }


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # socketserver's default backlog of 5 resets bursts of connections
    daemon_threads = True


def _make_handler(server: OpenAICompatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # else headers and body wait on delayed ACKs (~40 ms a reply)

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"_raw": raw.decode("utf-8", "replace")}
            status, headers, payload = server._answer(self.path, dict(self.headers.items()), body)
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # silence stderr logging
            return

    return Handler
