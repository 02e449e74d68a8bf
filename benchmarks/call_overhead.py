"""Harness cost per model call: CPU time at zero latency (with its breakdown) and the
orchestration ratio at concurrency C with latency L.

1. Zero latency, one call at a time (N calls, server in another process): the client-side CPU
   time (``time.process_time``) and wall time of each part of one recorded LLM step —
   rendering the prompt (Jinja2 + data filter), fitting it to the budget, the cache key, the cache
   lookup (a miss), the provider call (openai SDK + HTTP to loopback), parsing the reply, the
   cache store (SQLite WAL), the record write (append + fsync) — and of the whole
   ``StepRunner.judge_step`` as a run uses it.
2. Server latency L (default 0.1 s), C calls in flight (default 64), N >= 2,000 distinct calls:
   the ideal wall time is N·L/C; prints ideal / wall (goal >= 0.9) for the LLM layer alone (as
   benchmarks/orchestration.py) and for whole units streamed with
   :func:`ideaharness.runs.stream.run_bounded` through a real StepRunner / RunStore / cache.

Usage: python benchmarks/call_overhead.py [--n 2000] [--latency 0.1] [--concurrency 64] [--zero-n 200]
Run under ``flock /tmp/ideaharness-model.lock`` (CPU-heavy).
"""

# ruff: noqa: B023  (each lambda is called at once by timed(), inside its loop iteration)
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _unit import REPLY, STEP, overlap_unit, parse_overlap, served  # noqa: E402
from orchestration import measure  # noqa: E402

from ideaharness.llm import get_llm  # noqa: E402
from ideaharness.llm.cache import ResponseCache, request_key  # noqa: E402
from ideaharness.llm.types import ChatRequest  # noqa: E402
from ideaharness.prompts import render  # noqa: E402
from ideaharness.runner.steps import StepRunner  # noqa: E402
from ideaharness.runs.store import RunStore  # noqa: E402
from ideaharness.runs.stream import run_bounded  # noqa: E402
from ideaharness.schema import Instance, Paper  # noqa: E402

RATIO_GOAL = 0.9


def instance(i: int) -> Instance:
    abstract = " ".join(f"word{(i * 7 + k) % 5000}" for k in range(120))
    return Instance(id=f"inst-{i:06d}", dataset="synthetic",
                    target=Paper(id=f"p{i}", title=f"Paper {i}", abstract=abstract))


async def timed(parts: dict[str, list[float]], name: str, fn: Callable[[], Any]) -> Any:
    cpu, wall = time.process_time(), time.perf_counter()
    value = fn()
    if isinstance(value, Awaitable):
        value = await value
    parts.setdefault(name, []).extend([time.process_time() - cpu, time.perf_counter() - wall])
    return value


async def zero_latency(url: str, n: int, tmp: Path) -> dict[str, list[float]]:
    llm = get_llm("openai/bench", base_url=url, use_cache=False, max_retries=0)
    cache = ResponseCache(tmp / "parts.sqlite")
    store = RunStore(tmp / "parts-run", {"benchmark": "call_overhead"})
    runner = StepRunner(store, progress=False)
    parts: dict[str, list[float]] = {}
    await llm.chat([{"role": "user", "content": "warm"}], sample_index=-1, max_tokens=4)
    for i in range(n):
        inst = instance(i)
        messages = await timed(parts, "render prompt", lambda: render(
            "ideabench_overlap", idea=f"idea {inst.id}", target=inst.target.abstract))
        fitted = await timed(parts, "fit to budget", lambda: runner.fit(messages))
        request = ChatRequest(model=llm.model, messages=[dict(m) for m in fitted], max_tokens=64)
        key = await timed(parts, "cache key (sha256)", lambda: request_key(request, url))
        await timed(parts, "cache lookup (miss)", lambda: cache.get(key))
        completion = await timed(parts, "provider call (SDK+HTTP)", lambda: llm.provider.complete(request))
        await timed(parts, "parse reply", lambda: parse_overlap(completion.text))
        await timed(parts, "cache store (SQLite)", lambda: cache.put(key, request, completion))
        await timed(parts, "record write (fsync)", lambda: store.put("parts", inst.id, {"text": REPLY}))
    cached = get_llm("openai/bench", base_url=url, cache_path=tmp / "whole.sqlite", max_retries=0)
    for i in range(n):
        await timed(parts, "WHOLE judge_step", lambda i=i: overlap_unit(runner, cached, instance(i)))
    store.close()
    cache.close()
    await llm.aclose()
    await cached.aclose()
    return parts


async def units(url: str, n: int, concurrency: int, tmp: Path) -> float:
    model = get_llm("openai/bench", base_url=url, cache_path=tmp / "units.sqlite",
                    max_concurrency=concurrency, max_retries=0)
    store = RunStore(tmp / "units-run", {"benchmark": "call_overhead"})
    runner = StepRunner(store, progress=False)
    await model.chat([{"role": "user", "content": "warm"}], sample_index=-1, max_tokens=4)
    start = time.perf_counter()
    await run_bounded((instance(i) for i in range(n)), lambda inst: overlap_unit(runner, model, inst),
                      max_in_flight=2 * concurrency)
    wall = time.perf_counter() - start
    assert len(store.records(STEP)) == n, "every unit must be recorded"
    store.close()
    await model.aclose()
    return wall


async def record_writes(tmp: Path, n: int, concurrency: int) -> tuple[float, float]:
    """Wall seconds per record for n records written by `concurrency` coroutines: put (one
    fsync each, in the event loop) vs aput (group commit in a thread)."""
    store = RunStore(tmp / "writes-run", {"benchmark": "call_overhead"})
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int, grouped: bool) -> None:
        async with gate:
            await asyncio.sleep(0)
            if grouped:
                await store.aput("grouped", f"i{i}", {"text": REPLY})
            else:
                store.put("single", f"i{i}", {"text": REPLY})

    walls = []
    for grouped in (False, True):
        start = time.perf_counter()
        await asyncio.gather(*(one(i, grouped) for i in range(n)))
        walls.append((time.perf_counter() - start) / n)
    store.close()
    return walls[0], walls[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="calls for the orchestration ratio")
    parser.add_argument("--latency", type=float, default=0.1, help="server latency L, seconds")
    parser.add_argument("--concurrency", type=int, default=64, help="C")
    parser.add_argument("--zero-n", type=int, default=200, help="sequential calls for the breakdown")
    args = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        with served(0.0) as url:
            parts = asyncio.run(zero_latency(url, args.zero_n, Path(tmp)))
        print(f"\n1. per call at zero latency, mean of {args.zero_n} sequential calls (client process)")
        print(f"{'part':<26} {'CPU ms':>8} {'wall ms':>8}")
        for name, values in parts.items():
            cpu, wall = values[0::2], values[1::2]
            print(f"{name:<26} {sum(cpu) / len(cpu) * 1000:>8.2f} {sum(wall) / len(wall) * 1000:>8.2f}")
        single, grouped = asyncio.run(record_writes(Path(tmp), 640, args.concurrency))
        print(f"record write, {args.concurrency} concurrent: put {single * 1000:.2f} ms/record, "
              f"aput (group commit) {grouped * 1000:.2f} ms/record, x{single / grouped:.1f}")
        ideal = args.n * args.latency / args.concurrency
        with served(args.latency) as url:
            layer_wall, calls = asyncio.run(measure(url, args.n, args.concurrency, None))
            unit_wall = asyncio.run(units(url, args.n, args.concurrency, Path(tmp)))
        print(f"\n2. orchestration at C={args.concurrency}, L={args.latency:g} s, N={args.n}: "
              f"ideal N·L/C = {ideal:.2f} s (goal: ideal / wall >= {RATIO_GOAL})")
        for name, wall in (("LLM layer (no cache)", layer_wall), ("whole units, streamed", unit_wall)):
            print(f"{name:<26} wall {wall:>7.2f} s   ideal / wall {ideal / wall:>5.2f}")


if __name__ == "__main__":
    main()
