"""Client CPU of one recorded LLM unit apart from the HTTP request, part by part, beside a baseline
source tree measured in the same run.

The unit is the one of the scale benchmarks (:mod:`_unit`: an IdeaBench overlap rating, rendered,
fitted, asked through :class:`ideaharness.llm.LLM` with its SQLite cache, parsed, recorded by
:meth:`~ideaharness.runner.steps.StepRunner.judge_step`); it is defined again here so that this
script also runs against an older tree that lacks what :mod:`_unit` imports.

Rows, CPU ms per unit (``time.process_time``: every thread of the measuring process) and wall ms:

* each part of the unit alone, one unit at a time (N units, server latency 0), done the way the
  tree's own hot path does it (an older tree's cache get and put are ``asyncio.to_thread`` hops,
  its prompt line is written before its record in a group of its own): render, fit, request,
  cache key, cache lookup (miss), provider call (HTTP to a loopback server in another process),
  reasoning split, parse, cache store, judgment (prompt hash, Judgment, dump), produced_by,
  prompt + record write (fsync);
* ``all parts but HTTP``: the sum of the parts above without the provider call;
* whole units without HTTP (a provider answering at once in this process), one at a time and
  with 128 in flight (``run_bounded``, as a run with ``--max-concurrency 64``): everything a unit
  costs except the HTTP request, the number issue 22 asks to keep well under 1 ms;
* ``WHOLE judge_step``: whole units through HTTP, one at a time.

Each tree is measured in a child process of its own (``PYTHONPATH=<tree>/src``), ``--rounds``
times, alternating; the table shows the lowest value of each row over the rounds (the least
disturbed on a loaded machine) and the ratio baseline / this tree.

Usage: python benchmarks/hot_path.py [--n 300] [--units 2000] [--rounds 2] [--baseline SRC]
(SRC: the ``src`` folder of another checkout, e.g. a worktree at an older commit).
Run under ``flock /tmp/ideaharness-model.lock`` (CPU-heavy).
"""

# ruff: noqa: B023  (each lambda is called at once by timed(), inside its loop iteration)
from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPLY = '{"rating": 7, "explanation": "Both study the same catalyst under different conditions."}'
STEP = "overlap"
TEMPLATE = "ideabench_overlap"
HTTP_PART = "provider call (HTTP)"
SUM_PART = "all parts but HTTP"
SEQ_PART = "unit w/o HTTP, sequential"
FLYING_PART = "unit w/o HTTP, 128 at once"
WHOLE_PART = "WHOLE judge_step"
HERE = Path(__file__).resolve()


def instance(i: int) -> Any:
    from ideaharness.schema import Instance, Paper

    abstract = " ".join(f"word{(i * 7 + k) % 5000}" for k in range(120))
    return Instance(id=f"inst-{i:06d}", dataset="synthetic",
                    target=Paper(id=f"p{i}", title=f"Paper {i}", abstract=abstract))


def parse_overlap(text: str) -> int:
    from ideaharness.llm.parsing import extract_json_object

    return int(extract_json_object(text, ("rating",))["rating"])


def unit_prompt(inst: Any) -> Any:
    from ideaharness.prompts import render

    idea = f"Idea for {inst.target.title}: " + (inst.target.abstract or "")[:300]
    return render(TEMPLATE, idea=idea, target=inst.target.abstract)


async def overlap_unit(runner: Any, model: Any, inst: Any) -> None:
    """:func:`_unit.overlap_unit`."""
    await runner.judge_step(STEP, inst.id, "", model, unit_prompt(inst), parse_overlap, max_tokens=64)


class InstantProvider:
    """A provider answering :data:`REPLY` at once, in this process: a unit without HTTP."""

    base_url = "http://127.0.0.1:9/v1"

    async def complete(self, request: Any) -> Any:
        from ideaharness.llm.types import Completion, Usage

        return Completion(text=REPLY, model=request.model, finish_reason="stop",
                          usage=Usage(prompt_tokens=300, completion_tokens=20))

    async def aclose(self) -> None:
        return None


async def timed(parts: dict[str, list[float]], name: str, fn: Callable[[], Any]) -> Any:
    cpu, wall = time.process_time(), time.perf_counter()
    value = fn()
    if isinstance(value, Awaitable):
        value = await value
    parts.setdefault(name, []).extend([time.process_time() - cpu, time.perf_counter() - wall])
    return value


async def breakdown(url: str, n: int, tmp: Path) -> dict[str, list[float]]:
    """Part name -> ``[cpu_s, wall_s, cpu_s, wall_s, ...]`` of n units, one at a time, each part
    done as this tree's hot path does it (see the module docstring)."""
    from ideaharness.llm import get_llm
    from ideaharness.llm.cache import ResponseCache, request_key
    from ideaharness.llm.reasoning import with_reasoning
    from ideaharness.runner.provenance import produced_by
    from ideaharness.runner.steps import StepRunner
    from ideaharness.runs.store import RunStore, keep_prompt

    make_judgment = importlib.import_module("ideaharness.llm.judge")._judgment  # the module, not the function
    llm = get_llm("openai/bench", base_url=url, use_cache=False, max_retries=0)
    cache = ResponseCache(tmp / "parts.sqlite")
    store = RunStore(tmp / "parts-run", {"benchmark": "hot_path"})
    runner = StepRunner(store, progress=False)
    grouped_prompt = "prompt" in RunStore.aput.__code__.co_varnames  # this tree: one group
    parts: dict[str, list[float]] = {}
    await llm.chat([{"role": "user", "content": "warm"}], sample_index=-1, max_tokens=4)

    def cache_get(key: str) -> Any:
        if hasattr(cache, "aput"):  # read in the event loop's thread
            return cache.get(key)
        return asyncio.to_thread(cache.get, key)  # as LLM.chat did

    def cache_put(key: str, request: Any, completion: Any) -> Any:
        if hasattr(cache, "aput"):
            return cache.aput(key, request, completion)
        return asyncio.to_thread(cache.put, key, request, completion)

    async def write(inst: Any, judgment: Any, record: dict[str, Any], fitted: Any) -> None:
        if grouped_prompt:
            await store.aput(STEP, inst.id, record, "", prompt=(judgment.prompt_hash, fitted))
        else:
            await keep_prompt(store, judgment.prompt_hash, fitted)
            await store.aput(STEP, inst.id, record, "")

    for i in range(n):
        inst = instance(i)
        messages = await timed(parts, "render prompt", lambda: unit_prompt(inst))
        fitted = await timed(parts, "fit to budget", lambda: runner.fit(messages))
        request = await timed(parts, "request (ChatRequest)", lambda: llm.request(fitted, max_tokens=64))
        key = await timed(parts, "cache key", lambda: request_key(request, url))
        await timed(parts, "cache lookup (miss)", lambda: cache_get(key))
        reply = await timed(parts, HTTP_PART, lambda: llm.provider.complete(request))
        completion = await timed(parts, "reasoning split", lambda: with_reasoning(reply))
        value = await timed(parts, "parse reply", lambda: parse_overlap(completion.text))
        await timed(parts, "cache store", lambda: cache_put(key, request, reply))
        usage = {"prompt_tokens": 300, "completion_tokens": 20}
        def build(completion: Any = completion, value: Any = value) -> tuple[Any, dict[str, Any]]:
            judgment = make_judgment(llm, fitted, completion, value, True, 1, [], None, usage, None)
            return judgment, judgment.model_dump(mode="json")

        judgment, dumped = await timed(parts, "judgment (hash,build,dump)", build)
        provenance = await timed(parts, "produced_by", lambda: produced_by(TEMPLATE, parse_overlap))
        record = {"judgment": dumped, "produced_by": provenance}
        await timed(parts, "prompt + record write", lambda: write(inst, judgment, record, fitted))
    means = {name: (sum(v[0::2]) / n, sum(v[1::2]) / n) for name, v in parts.items() if name != HTTP_PART}
    parts[SUM_PART] = [sum(c for c, _ in means.values()), sum(w for _, w in means.values())]
    cached = get_llm("openai/bench", base_url=url, cache_path=tmp / "whole.sqlite", max_retries=0)
    for i in range(n):
        await timed(parts, WHOLE_PART, lambda: overlap_unit(runner, cached, instance(10_000 + i)))
    store.close()
    cache.close()
    await llm.aclose()
    await cached.aclose()
    return parts


async def without_http(n: int, in_flight: int, tmp: Path, name: str) -> tuple[float, float]:
    """(CPU s, wall s) per unit of n whole units on :class:`InstantProvider` with a real cache and
    run store; ``in_flight`` 1: one at a time, else streamed with ``run_bounded``."""
    from ideaharness.llm.cache import ResponseCache
    from ideaharness.llm.client import LLM
    from ideaharness.runner.steps import StepRunner
    from ideaharness.runs.store import RunStore
    from ideaharness.runs.stream import run_bounded

    model = LLM("openai/bench", InstantProvider(), base_url=InstantProvider.base_url,  # type: ignore[arg-type]
                cache=ResponseCache(tmp / f"{name}.sqlite"), max_concurrency=64, max_retries=0)
    store = RunStore(tmp / f"{name}-run", {"benchmark": "hot_path"})
    runner = StepRunner(store, progress=False)
    for i in range(20):  # warm: templates compiled, files open
        await overlap_unit(runner, model, instance(-1 - i))
    instances = [instance(i) for i in range(n)]
    cpu, wall = time.process_time(), time.perf_counter()
    if in_flight == 1:
        for inst in instances:
            await overlap_unit(runner, model, inst)
    else:
        await run_bounded(instances, lambda inst: overlap_unit(runner, model, inst), max_in_flight=in_flight)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert len(store.records(STEP)) == n + 20, "every unit must be recorded"
    store.close()
    await model.aclose()
    return cpu / n, wall / n


def measure(url: str, n: int, units: int) -> dict[str, tuple[float, float]]:
    """Row -> (CPU ms, wall ms) per unit, for the tree this process imports."""
    with tempfile.TemporaryDirectory() as tmp:
        parts = asyncio.run(breakdown(url, n, Path(tmp)))
        rows = {name: (sum(v[0::2]) / (len(v) // 2) * 1000, sum(v[1::2]) / (len(v) // 2) * 1000)
                for name, v in parts.items()}
        whole = rows.pop(WHOLE_PART)
        for label, in_flight in ((SEQ_PART, 1), (FLYING_PART, 128)):
            cpu, wall = asyncio.run(without_http(units if in_flight > 1 else n, in_flight, Path(tmp),
                                                 f"w{in_flight}"))
            rows[label] = (cpu * 1000, wall * 1000)
        rows[WHOLE_PART] = whole
    return rows


def _child(src: Path, url: str, n: int, units: int) -> dict[str, tuple[float, float]]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, str(HERE), "--measure", url, "--n", str(n), "--units", str(units)],
                         env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"measuring {src} failed:\n{out.stderr[-3000:]}")
    return {k: tuple(v) for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}  # type: ignore[misc]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="units of the part-by-part rows")
    parser.add_argument("--units", type=int, default=2000, help="units of the 128-in-flight row")
    parser.add_argument("--rounds", type=int, default=2, help="measurements of each tree, alternating")
    parser.add_argument("--baseline", type=Path, default=None, help="src folder of the tree to compare with")
    parser.add_argument("--measure", metavar="URL", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:  # child mode: one tree, rows as JSON on the last line
        print(json.dumps(measure(args.measure, args.n, args.units)))
        return
    from ideaharness.testing.fast_server import serve_in_child

    here = HERE.parents[1] / "src"
    trees = [("baseline", args.baseline.resolve())] if args.baseline else []
    trees.append(("this tree", here))
    print(f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; N={args.n} units one at a time, "
          f"{args.units} with 128 in flight; {args.rounds} round(s) per tree, the lowest shown")
    for label, src in trees:
        print(f"  {label}: {src}")
    results: dict[str, list[dict[str, tuple[float, float]]]] = {label: [] for label, _ in trees}
    with serve_in_child(0.0, reply=REPLY) as server:
        for _ in range(args.rounds):
            for label, src in trees:
                results[label].append(_child(src, server.base_url, args.n, args.units))
    best = {label: {row: (min(r[row][0] for r in rounds), min(r[row][1] for r in rounds))
                    for row in rounds[0]} for label, rounds in results.items()}
    rows = list(best["this tree"])
    rows += [r for label in best for r in best[label] if r not in rows]
    head = "".join(f"{label + ' CPU':>16}{'wall':>8}" for label, _ in trees)
    print(f"\n{'part (ms per unit)':<36}{head}{'  x (CPU)' if args.baseline else ''}")
    for row in rows:
        cells = ""
        for label, _ in trees:
            cpu, wall = best[label].get(row, (float("nan"), float("nan")))
            cells += f"{cpu:>16.3f}{wall:>8.3f}"
        ratio = ""
        before, after = best.get("baseline", {}).get(row), best["this tree"].get(row)
        if before is not None and after is not None and after[0] > 0:
            ratio = f"{before[0] / after[0]:>9.1f}"
        print(f"{row:<36}{cells}{ratio}")


if __name__ == "__main__":
    main()
