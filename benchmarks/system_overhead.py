"""What the harness adds to a system's call: ``cmd:`` and ``http://`` through ideaharness against
the same process spawns and POSTs made directly, measured in the same run.

1. ``cmd:``: N tasks, C at a time, each a fresh ``python agent.py`` (a tiny agent that reads the
   task from stdin and prints an answer). Baseline: ``asyncio.create_subprocess_exec`` with the
   task on stdin. Harness: ``get_llm("cmd:python agent.py").chat(task_message(task))`` (response
   cache off, so every call spawns the agent).
2. ``http://``: N tasks, C at a time, to a threaded stdlib HTTP server on loopback. Baseline:
   ``httpx.AsyncClient.post``. Harness: ``get_llm("http://127.0.0.1:PORT/ideas").chat(...)``.

Prints each wall time and the ratio harness / baseline (1.0 = no overhead).

Usage: python benchmarks/system_overhead.py [--n 200] [--concurrency 4]
Run under ``flock /tmp/ideaharness-model.lock`` (CPU-heavy).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from ideaharness.llm import get_llm
from ideaharness.systems import task_message

AGENT = """import json, sys
task = json.load(sys.stdin)
print(json.dumps({"instance_id": task["instance_id"], "idea": "an idea on " + task["inputs"]["keyword"]}))
"""


def task(i: int) -> dict[str, Any]:
    """A LiveIdeaBench-shaped task (the harness never reads it: only the agent does)."""
    return {"format": "ideaharness.task/1", "task_id": f"liveideabench/idea/kw{i}/0",
            "benchmark": "liveideabench", "step": "idea", "instance_id": f"kw{i}", "key": "0",
            "sample_index": 0, "seed": i, "inputs": {"keyword": f"kw{i}"}}


async def bounded(n: int, concurrency: int, call: Callable[[int], Awaitable[Any]]) -> float:
    """Wall seconds of ``call(i)`` for i < n with at most ``concurrency`` in flight."""
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            await call(i)

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return time.perf_counter() - start


async def measure_cmd(n: int, concurrency: int, folder: Path) -> tuple[float, float]:
    agent = folder / "agent.py"
    agent.write_text(AGENT)

    async def direct(i: int) -> None:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(agent), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate(task_message(task(i))[0]["content"].encode())
        json.loads(out)

    llm = get_llm(f"cmd:{sys.executable} {agent}", use_cache=False, max_concurrency=concurrency)

    async def harness(i: int) -> None:
        json.loads((await llm.chat(task_message(task(i)), sample_index=i)).text)

    baseline = await bounded(n, concurrency, direct)
    through = await bounded(n, concurrency, harness)
    await llm.aclose()
    return baseline, through


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        reply = json.dumps({"instance_id": body["instance_id"], "idea": "an idea"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


async def measure_http(n: int, concurrency: int) -> tuple[float, float]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/ideas"
    try:
        async with httpx.AsyncClient() as client:
            async def direct(i: int) -> None:
                (await client.post(url, json=task(i))).json()

            baseline = await bounded(n, concurrency, direct)
        llm = get_llm(url, use_cache=False, max_concurrency=concurrency)

        async def harness(i: int) -> None:
            json.loads((await llm.chat(task_message(task(i)), sample_index=i)).text)

        through = await bounded(n, concurrency, harness)
        await llm.aclose()
    finally:
        server.shutdown()
    return baseline, through


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cmd = asyncio.run(measure_cmd(args.n, args.concurrency, Path(folder)))
    http = asyncio.run(measure_http(args.n, args.concurrency))
    print(f"{args.n} tasks, {args.concurrency} in flight")
    for name, (baseline, through) in (("cmd:", cmd), ("http://", http)):
        print(f"{name:8} direct {baseline:7.2f} s  through ideaharness {through:7.2f} s  "
              f"ratio {through / baseline:.2f}  ({1000 * (through - baseline) / args.n:+.1f} ms per call)")


if __name__ == "__main__":
    main()
