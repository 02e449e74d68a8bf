"""Orchestration overhead of the LLM layer against a local OpenAI-compatible server.

Starts :mod:`ideaharness.testing.fast_server` (an asyncio loopback server in a child process, so
its CPU time stays out of the measured process) with injected latency L per request, sends N
distinct requests through ``get_llm("openai/...", use_cache=False)`` at concurrency C and prints
the wall time and the ratio wall / (N * L / C): 1.0 is perfect overlap; the excess is client +
server overhead. With ``--rpm R`` it also shows the limiter: the ideal is then
max(N * L / C, (N - 1) * 60 / R + L).

Usage: python benchmarks/orchestration.py [--n 64] [--latency 0.5] [--concurrency 1 4 8 16] [--rpm 240]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import time

from ideaharness.llm import get_llm
from ideaharness.testing.fast_server import serve_in_child


async def measure(base_url: str, n: int, concurrency: int, rpm: float | None) -> tuple[float, int]:
    llm = get_llm(
        "openai/bench",
        base_url=base_url,
        use_cache=False,
        max_concurrency=concurrency,
        rpm=rpm,
        max_retries=0,
    )
    messages = [{"role": "user", "content": "ping"}]
    await llm.chat(messages, sample_index=-1, max_tokens=4)  # warm the connection pool and imports
    llm.stats.calls = 0
    start = time.perf_counter()
    await asyncio.gather(*(llm.chat(messages, sample_index=i, max_tokens=4) for i in range(n)))
    wall = time.perf_counter() - start
    await llm.aclose()
    return wall, llm.stats.calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=64, help="requests per measurement")
    parser.add_argument("--latency", type=float, default=0.5, help="injected server latency L, seconds")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8, 16, 32])
    parser.add_argument(
        "--rpm", type=float, default=None, help="also measure with this requests-per-minute limit"
    )
    args = parser.parse_args()

    with serve_in_child(args.latency) as server:
        print(f"N={args.n} requests, injected latency L={args.latency:g} s, server {server.base_url}")
        print(f"{'C':>4} {'rpm':>6} {'wall s':>8} {'ideal s':>8} {'ratio':>6} {'calls':>6}")
        runs = [(c, None) for c in args.concurrency]
        if args.rpm:
            runs.append((max(args.concurrency), args.rpm))
        for concurrency, rpm in runs:
            wall, calls = asyncio.run(measure(server.base_url, args.n, concurrency, rpm))
            ideal = args.n * args.latency / concurrency
            if rpm:
                ideal = max(ideal, (args.n - 1) * 60.0 / rpm + args.latency)
            rpm_text = f"{rpm:g}" if rpm else "-"
            print(
                f"{concurrency:>4} {rpm_text:>6} {wall:>8.2f} {ideal:>8.2f} {wall / ideal:>6.3f} {calls:>6}"
            )
            assert calls == args.n, "every request must reach the server exactly once"
            assert math.isfinite(wall)


if __name__ == "__main__":
    main()
