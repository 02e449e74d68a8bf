"""A real HTTP server on 127.0.0.1 that replays recorded responses (tests, benchmarks, offline demos).

Routes are keyed by method + path + sorted query pairs (+ canonical JSON body for POST). A route
holds a list of responses served in turn (the last one repeats), so "429 then 200" or "500 then
200" sequences are one route. VCR.py cassettes (the ``s2-api-recordings`` format, bodies under
``response.body.string`` or ``response.content``) load with :meth:`ReplayServer.add_cassette`.
Unmatched requests get HTTP 418 with a JSON error naming the request, so a missing recording is
never mistaken for a real 404. ``hits`` counts every request per route key.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

RouteKey = tuple[str, str, tuple[tuple[str, str], ...], str]
Handler = Callable[[re.Match[str], dict[str, str], Any], "Reply"]


@dataclass
class Reply:
    """One recorded response."""

    status: int = 200
    body: str = ""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})


def _canonical_body(body: str | bytes | None) -> str:
    if not body:
        return ""
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    try:
        return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
    except json.JSONDecodeError:
        return text


def route_key(
    method: str, url_or_path: str, query: Mapping[str, Any] | None = None, body: Any = None
) -> RouteKey:
    """Key of a request: ``(METHOD, path, sorted query pairs, canonical body)``.

    ``url_or_path`` may carry a query string; ``query`` adds pairs (values are str()-ed).
    """
    parts = urlsplit(url_or_path)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    pairs += [(str(k), str(v)) for k, v in (query or {}).items()]
    body_text = body if isinstance(body, str | bytes) or body is None else json.dumps(body)
    return (method.upper(), parts.path, tuple(sorted(pairs)), _canonical_body(body_text))


class ReplayServer:
    """Threaded HTTP server replaying registered responses; use as a context manager.

    ``ignore_params`` names query parameters left out of route keys on both sides (e.g. a
    recording made by a client that sent ``offset``/``limit`` where ours does not).
    ``base_url`` is ``http://127.0.0.1:<port>``; ``hits`` is a Counter of route keys requested;
    ``requests`` the total number of requests received; ``log`` lists ``(route key, status)`` of
    every request in order. ``fail_after`` (settable) makes every
    request after that many total requests answer ``fail_status`` (simulated outage/interruption).
    """

    def __init__(self, *, ignore_params: Iterable[str] = ()) -> None:
        self.ignore_params = frozenset(ignore_params)
        self.routes: dict[RouteKey, list[Reply]] = {}
        self._served: Counter[RouteKey] = Counter()
        self.hits: Counter[RouteKey] = Counter()
        self.requests = 0
        self.fail_after: int | None = None
        self.fail_status = 400
        self.handlers: list[tuple[str, re.Pattern[str], Handler]] = []
        self.log: list[tuple[RouteKey, int]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def _key(self, method: str, url_or_path: str, query: Mapping[str, Any] | None, body: Any) -> RouteKey:
        m, path, pairs, b = route_key(method, url_or_path, query, body)
        return (m, path, tuple(p for p in pairs if p[0] not in self.ignore_params), b)

    # -- registration -------------------------------------------------------------------------
    def add(
        self,
        method: str,
        url_or_path: str,
        replies: Reply | Iterable[Reply],
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
    ) -> RouteKey:
        """Register the replies for one request; returns its route key."""
        key = self._key(method, url_or_path, query, body)
        self.routes[key] = [replies] if isinstance(replies, Reply) else list(replies)
        return key

    def add_json(
        self,
        method: str,
        url_or_path: str,
        data: Any,
        *,
        status: int = 200,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
    ) -> RouteKey:
        """Register one JSON reply."""
        return self.add(method, url_or_path, Reply(status, json.dumps(data)), query=query, body=body)

    def add_handler(self, method: str, path_pattern: str, handler: Handler) -> None:
        """Answer requests whose path fully matches ``path_pattern`` (regex) with
        ``handler(match, query_dict, json_body_or_None) -> Reply`` (after exact routes)."""
        self.handlers.append((method.upper(), re.compile(path_pattern), handler))

    def add_cassette(self, path: str | Path) -> list[RouteKey]:
        """Register every interaction of a VCR.py cassette (YAML); returns their route keys.

        Raises:
            ValueError: the file is not a VCR cassette.
        """
        import yaml  # optional: only the replay tooling reads cassettes

        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "interactions" not in data:
            raise ValueError(f"{path}: not a VCR cassette (no 'interactions')")
        keys = []
        for item in data["interactions"]:
            req, resp = item["request"], item["response"]
            if isinstance(resp.get("body"), dict) and "string" in resp["body"]:
                body = resp["body"]["string"]
            else:
                body = resp.get("content", "")
            status = resp["status"]["code"] if "status" in resp else resp["status_code"]
            key = self._key(req["method"], req["uri"], None, req.get("body") or None)
            self.routes.setdefault(key, []).append(Reply(int(status), body or ""))
            keys.append(key)
        return keys

    # -- serving ------------------------------------------------------------------------------
    def _answer(self, method: str, raw_path: str, body: bytes) -> Reply:
        key = self._key(method, raw_path, None, body or None)
        with self._lock:
            self.requests += 1
            self.hits[key] += 1
            if self.fail_after is not None and self.requests > self.fail_after:
                self.log.append((key, self.fail_status))
                return Reply(self.fail_status, json.dumps({"error": "simulated failure"}))
            replies = self.routes.get(key)
            if replies:
                index = min(self._served[key], len(replies) - 1)
                self._served[key] += 1
                reply = replies[index]
            else:
                reply = self._dynamic(method, raw_path, body)
            self.log.append((key, reply.status))
            return reply

    def _dynamic(self, method: str, raw_path: str, body: bytes) -> Reply:
        parts = urlsplit(raw_path)
        for m, pattern, handler in self.handlers:
            match = pattern.fullmatch(parts.path)
            if m == method.upper() and match:
                query = dict(parse_qsl(parts.query, keep_blank_values=True))
                payload = json.loads(body) if body else None
                try:
                    return handler(match, query, payload)
                except Exception as exc:  # a handler bug must show up as a failed request
                    return Reply(500, json.dumps({"error": f"handler failed: {exc!r}"}))
        return Reply(418, json.dumps({"error": f"no recording for {method} {raw_path}"}))

    def __enter__(self) -> ReplayServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                payload = self.rfile.read(length) if length else b""
                reply = server._answer(self.command, self.path, payload)
                data = reply.body.encode("utf-8")
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = _handle  # noqa: N815
            do_POST = _handle  # noqa: N815

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` of the running server."""
        if self._server is None:
            raise RuntimeError("ReplayServer is not running; use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"
