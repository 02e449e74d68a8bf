"""A small OpenAI-compatible HTTP server (stdlib only) with scripted replies, for tests and benchmarks.

It serves ``POST /v1/chat/completions`` on 127.0.0.1 in a background thread, records every request
(path, headers, JSON body), and answers from a script of :class:`Reply` objects (status, headers,
body) before falling back to a responder function. ``latency_s`` delays every answer, to measure
orchestration overhead (benchmarks/orchestration.py). ``faults`` (:class:`Faults`) makes it a
fault-injecting endpoint: a seeded share of requests get a 429, a 500, a hang, a garbled reply text
or a body that is not JSON (benchmarks/soak.py, tests of the LLM layer). Not for production use.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections import Counter
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


FAULT_KINDS: tuple[str, ...] = ("429", "500", "hang", "garbled", "broken_body")


@dataclass
class Faults:
    """Seeded fault injection: a share ``rate`` of requests fail, each with one of ``kinds``.

    Whether (and how) a request fails depends only on ``seed``, the request body and how many
    times that same body was seen before, so a run's faults do not depend on the order in which
    concurrent requests arrive, and a retry of a failed request is a new draw.

    Kinds: ``"429"`` (with ``Retry-After: retry_after_s``), ``"500"``, ``"hang"`` (the answer comes
    after ``hang_s`` seconds, past a client's timeout), ``"garbled"`` (HTTP 200 whose reply text
    is the right text with its words shuffled and cut to half), ``"broken_body"`` (HTTP 200 whose
    body is a chat completion cut in half: not JSON).
    """

    rate: float = 0.3
    kinds: tuple[str, ...] = FAULT_KINDS
    seed: int = 0
    hang_s: float = 3.0
    retry_after_s: float = 0.05

    def draw(self, body: dict[str, Any], occurrence: int) -> str | None:
        """The fault kind for the ``occurrence``-th request with this body, or None (no fault)."""
        blob = json.dumps(body, sort_keys=True, ensure_ascii=False)
        digest = hashlib.sha256(f"{self.seed}|{occurrence}|{blob}".encode()).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        if u >= self.rate:
            return None
        return self.kinds[int.from_bytes(digest[8:12], "big") % len(self.kinds)]


def garble(text: str, seed: int = 0) -> str:
    """``text`` with its words shuffled (seeded) and only the first half kept."""
    words = text.split()
    random.Random(f"{seed}|{text}").shuffle(words)
    return " ".join(words[: max(1, len(words) // 2)])


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
        faults: inject faults into the answers of the responder (not into scripted replies);
            ``fault_counts`` counts the faults served by kind.
    """

    def __init__(
        self,
        responder: Responder = echo_responder,
        *,
        script: list[Reply] | None = None,
        latency_s: float = 0.0,
        reject_response_format: bool = False,
        faults: Faults | None = None,
    ) -> None:
        self.responder = responder
        self.script = list(script or [])
        self.latency_s = latency_s
        self.reject_response_format = reject_response_format
        self.faults = faults
        self.fault_counts: Counter[str] = Counter()
        self._seen: Counter[str] = Counter()
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

    def _draw_fault(self, body: dict[str, Any]) -> str | None:
        if self.faults is None:
            return None
        blob = json.dumps(body, sort_keys=True, ensure_ascii=False)
        with self._lock:
            occurrence = self._seen[blob]
            self._seen[blob] += 1
        kind = self.faults.draw(body, occurrence)
        if kind is not None:
            with self._lock:
                self.fault_counts[kind] += 1
        return kind

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
        fault = self._draw_fault(body)
        if fault == "429":
            assert self.faults is not None
            return 429, {"Retry-After": f"{self.faults.retry_after_s:g}"}, {
                "error": {"message": "rate limited (injected fault)", "type": "rate_limit"}}
        if fault == "500":
            return 500, {}, {"error": {"message": "internal error (injected fault)", "type": "server_error"}}
        if fault == "hang":
            assert self.faults is not None
            time.sleep(self.faults.hang_s)
        text = self.responder(body)
        if fault == "garbled":
            text = garble(text, self.faults.seed if self.faults else 0)
        completion = self._completion(body, text)
        if fault == "broken_body":
            blob = json.dumps(completion)
            return 200, {}, blob[: len(blob) // 2]
        return 200, {}, completion

    def _completion(self, body: dict[str, Any], text: str) -> dict[str, Any]:
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        return {
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
            try:
                self.send_response(status)
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
