"""Peak memory and wall time of a streamed run as the dataset grows (1k, 10k, 100k instances).

The parent process serves a fast loopback OpenAI-compatible endpoint
(:class:`ideaharness.testing.openai_server.OpenAICompatServer`, no latency, outside the measured
process). For each size a child process writes nothing but its run: it streams a synthetic
Instance JSONL file through :func:`ideaharness.data.registry.iter_instances_jsonl` and
:func:`ideaharness.runs.stream.run_phases_streaming` at model concurrency C (64) with a real
:class:`StepRunner` / :class:`RunStore` / response cache (benchmarks/_unit.py: render, ask, parse,
record with fsync) and reports its peak RSS (``ru_maxrss``) and wall time.

Prints peak RSS and wall per 1k instances per size, and the ratios largest/smallest
(goals: RSS ratio <= 1.5, wall per 1k ratio ~ 1, i.e. linear).

``--store-only`` leaves the model out (each unit writes a judgment-sized record with
``RunStore.aput``): the memory of reader + stream + store alone, quick at 100k.

Usage: python benchmarks/stream_memory.py [--sizes 1000 10000 100000] [--concurrency 64] [--store-only]
Heavy (minutes at 100k): run under ``flock /tmp/ideaharness-model.lock``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

RSS_GOAL = 1.5


async def run_store_only(data: Path, out: Path, concurrency: int) -> dict[str, float]:
    """No model: each instance's unit is a realistic judgment record written with ``aput``."""
    from _unit import REPLY, STEP

    from ideaharness.data.registry import iter_instances_jsonl
    from ideaharness.runs.store import RunStore
    from ideaharness.runs.stream import run_bounded

    store = RunStore(out / "run", {"benchmark": "stream_memory"})
    record = {"judgment": {"raw": REPLY * 4, "parsed": 7, "parse_ok": True, "attempts": 1}}
    start = time.perf_counter()
    count = await run_bounded(iter_instances_jsonl(data), lambda inst: store.aput(STEP, inst.id, record),
                              max_in_flight=2 * concurrency)
    wall = time.perf_counter() - start
    recorded = sum(1 for _ in store.iter_records(STEP))
    store.close()
    return {"wall_s": wall, "items": count, "recorded": recorded, "failed": 0,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


async def run_child(data: Path, out: Path, base_url: str, concurrency: int) -> dict[str, float]:
    from _unit import STEP, overlap_unit

    from ideaharness.data.registry import iter_instances_jsonl
    from ideaharness.llm import get_llm
    from ideaharness.runner.steps import StepRunner
    from ideaharness.runs.store import RunStore
    from ideaharness.runs.stream import run_phases_streaming

    model = get_llm("openai/bench", base_url=base_url, cache_path=out / "cache.sqlite",
                    max_concurrency=concurrency, max_retries=0)
    store = RunStore(out / "run", {"benchmark": "stream_memory"})
    runner = StepRunner(store, progress=False)
    start = time.perf_counter()
    counts = await run_phases_streaming(
        lambda: iter_instances_jsonl(data),
        [(STEP, lambda inst: overlap_unit(runner, model, inst))],
        max_in_flight=2 * concurrency,
    )
    wall = time.perf_counter() - start
    recorded = sum(1 for _ in store.iter_records(STEP))
    store.close()
    await model.aclose()
    return {"wall_s": wall, "items": counts[STEP], "recorded": recorded, "failed": len(runner.failures),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--store-only", action="store_true",
                        help="no model calls: reader + stream + RunStore.aput only (fast at 100k)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # data out base_url
    args = parser.parse_args()
    if args.child:
        data, out, url = args.child
        work = (run_store_only(Path(data), Path(out), args.concurrency) if args.store_only
                else run_child(Path(data), Path(out), url, args.concurrency))
        print(json.dumps(asyncio.run(work)))
        return

    from _unit import responder, write_instances

    from ideaharness.testing.openai_server import OpenAICompatServer

    rows = []
    with tempfile.TemporaryDirectory() as tmp, OpenAICompatServer(responder=responder) as server:
        server.requests = _Discard()  # the server keeps no per-request history in a long run
        mode = "store only (no model), " if args.store_only else ""
        print(f"{mode}streamed run, C={args.concurrency}, in flight {2 * args.concurrency}, loopback "
              f"{server.base_url}; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"{'instances':>9} {'wall s':>8} {'s / 1k':>7} {'peak RSS MB':>11} {'recorded':>8} "
              f"{'failed':>6}")
        for n in args.sizes:
            data = write_instances(Path(tmp) / f"inst-{n}.jsonl", n)
            out = Path(tmp) / f"out-{n}"
            child = [sys.executable, __file__, "--concurrency", str(args.concurrency),
                     "--child", str(data), str(out), server.base_url] + (
                         ["--store-only"] if args.store_only else [])
            done = subprocess.run(child, check=True, capture_output=True, text=True)
            row = json.loads(done.stdout.splitlines()[-1])
            rows.append((n, row))
            print(f"{n:>9} {row['wall_s']:>8.1f} {row['wall_s'] / n * 1000:>7.2f} "
                  f"{row['peak_rss_mb']:>11.0f} {row['recorded']:>8} {row['failed']:>6}")
    (n0, first), (n1, last) = rows[0], rows[-1]
    rss_ratio = last["peak_rss_mb"] / first["peak_rss_mb"]
    wall_ratio = (last["wall_s"] / n1) / (first["wall_s"] / n0)
    print(f"{n1}/{n0}: RSS ratio {rss_ratio:.2f} (goal <= {RSS_GOAL}), wall per 1k ratio {wall_ratio:.2f} "
          "(1.0 = linear)")


class _Discard(list):  # type: ignore[type-arg]
    def append(self, item: object) -> None:
        pass


if __name__ == "__main__":
    main()
