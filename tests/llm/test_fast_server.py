"""The asyncio loopback server of the benchmarks (ideaharness.testing.fast_server) answers like
OpenAICompatServer, over keep-alive and pipelined HTTP/1.1, in this process or as a child."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from typing import Any

import pytest

from ideaharness.llm import get_llm
from ideaharness.testing.fast_server import FastServer, load_responder, serve_in_child
from ideaharness.testing.openai_server import OpenAICompatServer


def _post(sock: socket.socket, path: str, body: Any, *, close: bool = False) -> bytes:
    data = json.dumps(body).encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n")
    return head.encode() + data


def _read_replies(sock: socket.socket, count: int) -> list[tuple[int, dict[str, Any]]]:
    buffer, replies = b"", []  # type: tuple[bytes, list[tuple[int, dict[str, Any]]]]
    while len(replies) < count:
        chunk = sock.recv(65536)
        if not chunk:
            break
        buffer += chunk
        while b"\r\n\r\n" in buffer:
            head, rest = buffer.split(b"\r\n\r\n", 1)
            lines = head.decode().split("\r\n")
            length = int(next(v for k, _, v in (line.partition(": ") for line in lines[1:])
                              if k.lower() == "content-length"))
            if len(rest) < length:
                break
            replies.append((int(lines[0].split()[1]), json.loads(rest[:length])))
            buffer = rest[length:]
    return replies


BODY = {"model": "m", "messages": [{"role": "system", "content": "be brief"},
                                   {"role": "user", "content": "two words ünïcode ✓"}]}


def test_the_reply_is_the_one_openai_compat_server_gives() -> None:
    import urllib.request

    replies = []
    for server_type in (FastServer, OpenAICompatServer):
        with server_type() as server:
            request = urllib.request.Request(f"{server.base_url}/chat/completions",
                                             data=json.dumps(BODY).encode(),
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=10) as reply:  # noqa: S310 (loopback)
                replies.append(json.loads(reply.read()))
    ours, theirs = ({k: v for k, v in r.items() if k not in ("id", "created")} for r in replies)
    assert ours == theirs
    assert ours["choices"][0]["message"]["content"] == "echo: two words ünïcode ✓"
    assert ours["usage"] == {"prompt_tokens": 6, "completion_tokens": 5, "total_tokens": 11}


def test_keep_alive_and_pipelined_requests_are_answered_in_order() -> None:
    with FastServer(latency_s=0.05) as server:
        port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            bodies = [{**BODY, "messages": [{"role": "user", "content": f"n{i}"}]} for i in range(4)]
            sock.sendall(b"".join(_post(sock, "/v1/chat/completions", b) for b in bodies))
            replies = _read_replies(sock, 4)
            sock.sendall(_post(sock, "/v1/nothing", {})
                         + _post(sock, "/v1/chat/completions", BODY, close=True))
            more = _read_replies(sock, 2)
            assert sock.recv(10) == b"", "Connection: close is honoured"
        texts = [r[1]["choices"][0]["message"]["content"] for r in replies]
        assert texts == [f"echo: n{i}" for i in range(4)]
        assert [status for status, _ in more] == [404, 200]
        assert server.requests == 5 and server.peak_in_flight == 1


def test_a_bad_length_or_a_chunked_body_is_refused_and_closed() -> None:
    with FastServer() as server:
        port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        for head in (b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: nope\r\n\r\n",
                     b"POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(head)
                [(status, body)] = _read_replies(sock, 1)
                assert status in (400, 413) and body["error"]["message"]
                assert sock.recv(10) == b""
        assert server.requests == 0


async def test_the_openai_provider_runs_against_it_with_latency() -> None:
    with FastServer(latency_s=0.2) as server:
        llm = get_llm("openai/m", base_url=server.base_url, use_cache=False, max_concurrency=20)
        import asyncio

        replies = await asyncio.gather(*(llm.chat([{"role": "user", "content": f"q{i}"}]) for i in range(40)))
        await llm.aclose()
    assert [r.text for r in replies] == [f"echo: q{i}" for i in range(40)]
    assert server.requests == 40 and server.peak_in_flight == 20


def test_as_a_child_process_it_prints_its_url_and_counts_requests() -> None:
    with serve_in_child(0.0, reply="fixed answer") as server:
        llm = get_llm("openai/m", base_url=server.base_url, use_cache=False)
        import asyncio

        async def ask() -> str:
            try:
                return (await llm.chat([{"role": "user", "content": "hi"}])).text
            finally:
                await llm.aclose()

        assert asyncio.run(ask()) == "fixed answer"
        assert server.requests() == 1 and server.stats()["peak_in_flight"] == 1
        child = server.process
    assert child.returncode == 0, "closing its stdin ends the child"


def test_the_command_line_refuses_a_bad_responder() -> None:
    command = [sys.executable, "-m", "ideaharness.testing.fast_server", "--responder", "nomodule"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "module:function" in done.stderr
    with pytest.raises(ValueError, match="not a callable"):
        load_responder("json:nothing_here")
    assert load_responder("json:dumps") is json.dumps
