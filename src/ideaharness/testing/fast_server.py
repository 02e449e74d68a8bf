"""A fast OpenAI-compatible loopback server on asyncio (stdlib only), for benchmarks.

:class:`~ideaharness.testing.openai_server.OpenAICompatServer` answers each request in a thread
(``ThreadingHTTPServer``): at 64 requests in flight its own CPU time can be what a benchmark
measures. This one parses HTTP/1.1 itself on one asyncio event loop (keep-alive, ``Content-Length``
bodies) and waits its latency with a timer instead of a sleeping thread: about 0.1–0.3 ms of CPU per
request. It answers ``POST .../chat/completions`` with the same chat completion as
OpenAICompatServer (``id``, ``model`` from the request, one choice with the responder's text,
``finish_reason`` ``stop``, usage counted in words), ``GET .../models`` with one model, and
``GET /stats`` with ``{"requests": <chat completions received>, "peak_in_flight": <most waiting
at once>, "cpu_s": <CPU seconds of the server process>}``. No scripts, faults or Batch API:
use OpenAICompatServer for those.

Three ways to run it:

* ``python -m ideaharness.testing.fast_server --latency 0.1 --port 0 [--reply TEXT |
  --responder module:function]``: prints its base URL (``http://127.0.0.1:<port>/v1``) on stdout,
  serves until SIGTERM/SIGINT, or until its stdin closes when stdin is a pipe;
* :func:`serve_in_child`: that command as a child process (its CPU time stays out of the measuring
  process), yielding a :class:`ServerHandle` (``base_url``, ``requests()``);
* :class:`FastServer` in this process: an event loop in a background thread (``with
  FastServer(...) as server``; ``server.base_url``, ``server.requests``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Self

from ideaharness.testing._http import LoopbackServer, echo_responder
from ideaharness.testing.openai_server import chat_completion

Responder = Callable[[dict[str, Any]], str]
MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024


def fixed_responder(text: str) -> Responder:
    """A responder answering ``text`` to every request."""
    def respond(body: dict[str, Any]) -> str:
        return text
    return respond


def load_responder(spec: str) -> Responder:
    """The callable named by ``module:function`` (importable in the server's process).

    Raises:
        ValueError: ``spec`` is not ``module:function`` or names no callable.
    """
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"responder {spec!r}: expected module:function")
    value = getattr(importlib.import_module(module_name), attr, None)
    if not callable(value):
        raise ValueError(f"responder {spec!r}: {attr} is not a callable of {module_name}")
    return value  # type: ignore[no-any-return]


def _loads(raw: bytes) -> Any:
    try:
        import orjson
    except ImportError:  # stdlib only is enough, just slower
        return json.loads(raw)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


def _dumps(value: Any) -> bytes:
    try:
        import orjson
    except ImportError:
        return json.dumps(value).encode()
    try:
        return orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(value).encode()


_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 413: "Payload Too Large",
            500: "Internal Server Error"}


class _Counter:
    def __init__(self) -> None:
        self.requests = 0
        self.in_flight = 0
        self.peak_in_flight = 0


class _HTTPProtocol(asyncio.Protocol):
    """One connection: HTTP/1.1 requests one after another (a pipelined request waits its turn)."""

    def __init__(self, app: _App) -> None:
        self.app = app
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.busy = False
        self.close_after = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.busy:
            self._next()

    def _next(self) -> None:
        while self.transport is not None and not self.busy:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEADER_BYTES:
                    self._reply(400, {"error": {"message": "header too large"}}, close=True)
                return
            head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
            method, _, rest = head[0].partition(" ")
            path = rest.rsplit(" ", 1)[0]
            headers = {}
            for line in head[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            if "chunked" in headers.get("transfer-encoding", "").lower():
                self._reply(400, {"error": {"message": "chunked bodies are not supported"}}, close=True)
                return
            try:
                length = int(headers.get("content-length") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY_BYTES:
                self._reply(413, {"error": {"message": "bad Content-Length"}}, close=True)
                return
            if len(self.buffer) < end + 4 + length:
                return
            raw = bytes(self.buffer[end + 4:end + 4 + length])
            del self.buffer[:end + 4 + length]
            self.close_after = headers.get("connection", "").lower() == "close"
            self.busy = True
            self.app.handle(self, method, path, raw)

    def _reply(self, status: int, payload: Any, *, close: bool = False) -> None:
        transport = self.transport
        if transport is None:
            return
        data = _dumps(payload)
        close = close or self.close_after
        head = (f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n")
        transport.write(head.encode("latin-1") + data)
        if close:
            transport.close()
            self.transport = None
            return
        self.busy = False
        if self.buffer:
            self._next()


class _App:
    def __init__(self, responder: Responder, latency_s: float, counter: _Counter) -> None:
        self.responder = responder
        self.latency_s = latency_s
        self.counter = counter
        self.loop: asyncio.AbstractEventLoop | None = None

    def handle(self, conn: _HTTPProtocol, method: str, path: str, raw: bytes) -> None:
        route = path.split("?", 1)[0].rstrip("/")
        if method == "POST" and route.endswith("/chat/completions"):
            try:
                body = _loads(raw or b"{}")
            except ValueError:
                body = {"_raw": raw.decode("utf-8", "replace")}
            if not isinstance(body, dict):
                body = {"_raw": body}
            counter = self.counter
            counter.requests += 1
            counter.in_flight += 1
            counter.peak_in_flight = max(counter.peak_in_flight, counter.in_flight)
            payload = chat_completion(body, self.responder(body), counter.requests)
            if self.latency_s > 0 and self.loop is not None:
                self.loop.call_later(self.latency_s, self._answer, conn, payload)
            else:
                self._answer(conn, payload)
        elif method == "GET" and route.endswith("/models"):
            conn._reply(200, {"object": "list", "data": [{"id": "test-model", "object": "model"}]})
        elif method == "GET" and route == "/stats":
            counter = self.counter
            conn._reply(200, {"requests": counter.requests, "peak_in_flight": counter.peak_in_flight,
                              "cpu_s": time.process_time()})
        else:
            conn._reply(404, {"error": {"message": f"no route {method} {path}", "type": "not_found"}})

    def _answer(self, conn: _HTTPProtocol, payload: dict[str, Any]) -> None:
        self.counter.in_flight -= 1
        conn._reply(200, payload)


async def _start(app: _App, host: str, port: int) -> asyncio.Server:
    app.loop = asyncio.get_running_loop()
    return await app.loop.create_server(lambda: _HTTPProtocol(app), host, port, backlog=2048,
                                        reuse_address=True)


class FastServer(LoopbackServer):
    """The server on an event loop in a background thread of this process.

    Args:
        responder: request body -> reply text (default :func:`echo_responder`).
        latency_s: seconds every chat completion waits before it is sent (a timer, no thread).
        host, port: where to listen (port 0: chosen by the OS).

    ``requests`` counts the chat completions received; ``peak_in_flight`` is the most that
    waited for their answer at once (with a latency, how many the clients had in flight).
    """

    def __init__(self, responder: Responder = echo_responder, *, latency_s: float = 0.0,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        self._counter = _Counter()
        self._app = _App(responder, latency_s, self._counter)
        self._host, self._port = host, port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def requests(self) -> int:
        return self._counter.requests

    @property
    def peak_in_flight(self) -> int:
        return self._counter.peak_in_flight

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the server is not started")
        port = self._server.sockets[0].getsockname()[1]
        return f"http://{self._host}:{port}/v1"

    def start(self) -> Self:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            self._server = loop.run_until_complete(_start(self._app, self._host, self._port))
            ready.set()
            loop.run_forever()
            self._server.close()
            loop.run_until_complete(self._server.wait_closed())
            loop.close()

        self._thread = threading.Thread(target=run, name="fast-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)


class ServerHandle:
    """A server running in a child process: its ``base_url``, :meth:`requests` and :meth:`stats`."""

    def __init__(self, base_url: str, process: subprocess.Popen[str]) -> None:
        self.base_url = base_url
        self.process = process

    def stats(self) -> dict[str, float]:
        """``GET /stats``: ``requests`` (chat completions received), ``peak_in_flight`` (most
        waiting for their answer at once) and ``cpu_s`` (the server process's CPU seconds so far)."""
        from urllib.request import urlopen

        root = self.base_url.split("/v1", 1)[0]
        with urlopen(f"{root}/stats", timeout=10) as reply:  # noqa: S310 (loopback)
            return {k: float(v) for k, v in json.loads(reply.read()).items()}

    def requests(self) -> int:
        """Chat completions the server has received so far."""
        return int(self.stats()["requests"])


@contextlib.contextmanager
def serve_in_child(latency_s: float = 0.0, *, reply: str | None = None, responder: str | None = None,
                   python: str | None = None, env: dict[str, str] | None = None) -> Iterator[ServerHandle]:
    """The server as a child process (``python -m ideaharness.testing.fast_server``).

    Args:
        latency_s: seconds every chat completion waits.
        reply: a fixed reply text; or ``responder``: ``module:function`` importable by the child
            (``env`` may carry its ``PYTHONPATH``); neither: :func:`echo_responder`.
        python: the interpreter (default: this one).

    Yields:
        The :class:`ServerHandle`; the child ends when the block exits.

    Raises:
        RuntimeError: the child did not print its URL (its stderr is shown).
    """
    command = [python or sys.executable, "-m", "ideaharness.testing.fast_server", "--latency", f"{latency_s}",
               "--port", "0"]
    if reply is not None:
        command += ["--reply", reply]
    if responder is not None:
        command += ["--responder", responder]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        if not url.startswith("http://"):
            child.kill()
            raise RuntimeError(f"fast_server did not start (exit {child.wait()})")
        yield ServerHandle(url, child)
    finally:
        if child.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                child.stdin.close()
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _stdin_is_pipe() -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m ideaharness.testing.fast_server",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds each chat completion waits")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: chosen by the OS")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--reply", help="answer this text to every request")
    group.add_argument("--responder", help="module:function, body -> reply text")
    args = parser.parse_args(argv)
    try:
        responder = (fixed_responder(args.reply) if args.reply is not None
                     else load_responder(args.responder) if args.responder else echo_responder)
    except (ValueError, ImportError) as exc:
        parser.exit(2, f"fast_server: {exc}\n")
    app = _App(responder, args.latency, _Counter())

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        server = await _start(app, args.host, args.port)
        port = server.sockets[0].getsockname()[1]
        print(f"http://{args.host}:{port}/v1", flush=True)
        done = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, done.set)
        if _stdin_is_pipe():  # a parent that holds our stdin: its end (or death) ends us

            def watch() -> None:
                sys.stdin.read()
                loop.call_soon_threadsafe(done.set)

            threading.Thread(target=watch, name="stdin-watch", daemon=True).start()
        await done.wait()
        server.close()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
    sys.exit(0)


if __name__ == "__main__":
    main()
