"""Whole-run efficiency: real ``ideaharness run`` commands against an asyncio loopback server, where
their wall time goes, against the LLM-bound ideal and a raw aiohttp client measured in the same run.

Each run is the command line in a child process (``python -m ideaharness run ...``: imports, option
parsing, data, models, run directory, phases, metrics, results and report, as a user runs it),
with ``openai/`` models at a loopback OpenAI-compatible server
(:mod:`ideaharness.testing.fast_server`, its own process, answering every prompt with
:func:`_run_efficiency_data.reply` after ``--latency`` seconds) and ``--max-concurrency C``.
Caches (LLM responses, embeddings) start empty in a temporary ``IDEAHARNESS_CACHE_DIR``.

Per run it prints: the requests the server answered (R), the LLM-bound ideal R·L/C, the wall time
from spawn to exit and its parts from the run's ``timing.json`` (start-up before the runner; load,
models and setup; the model phases; work between phases, i.e. BERTScore; aggregation, results and
report; process exit), the process's CPU time, CPU ms per request (model phases; whole process),
and the same R requests (the run's own rendered prompts, from ``prompts.jsonl``) sent by a raw
aiohttp client (one ClientSession, C in flight) from this process to the same server right after
the run: its wall, ideal/wall and CPU ms per request. Goal (issue 22): model phases within 1.5x
of the ideal.

1. IdeaBench on ``--n`` synthetic instances (5 references each) — generator ``openai/gen-a``,
   judge ``openai/judge``.
2. LigBench (pairwise Elo against a reference corpus) on ``--topics`` synthetic topics and a
   synthetic PAIR-IQ corpus — same models.
3. Embeddings reused: IdeaBench again with another generator (``openai/gen-b``: new ideas) on the
   same targets, then generator A again into a new run directory; prints the target abstracts and
   ideas each run embedded or read from the store (results.json ``similarity_embeddings``) and the
   largest difference between the per-target BERTScore values of the first run and of its re-run
   from the store.

Usage: python benchmarks/run_efficiency.py [--n 700] [--topics N] [--latency 0.1] [--concurrency 64]
                                           [--skip-ideabench] [--skip-pairwise] [--skip-reuse]
                                           [--src OLD/src] [--keep DIR]
A short check: ``--n 40 --skip-pairwise``. BERTScore of 700 instances takes minutes on 2 cores.
Run under ``flock /tmp/ideaharness-model.lock`` (CPU-heavy, a timing measurement).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _run_efficiency_data import (  # noqa: E402
    write_ideabench_instances,
    write_pairiq_corpus,
    write_topics,
)

from ideaharness.analysis.load import read_records  # noqa: E402
from ideaharness.runs.store import read_prompts  # noqa: E402
from ideaharness.testing.fast_server import ServerHandle, serve_in_child  # noqa: E402

RESPONDER = "_run_efficiency_data:reply"
IDEAL_GOAL = 1.5
"""Model phases may take at most this multiple of the LLM-bound ideal R·L/C (issue 22)."""


@dataclass
class CliRun:
    """One ``ideaharness run`` child process and what it left."""

    label: str
    out: Path
    spawn: float
    wall_s: float
    cpu_s: float
    exit_code: int
    requests: int
    stderr_tail: str
    timing: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)


def run_cli(label: str, args: list[str], out: Path, server: ServerHandle, env: dict[str, str]) -> CliRun:
    """Run ``python -m ideaharness run <args> --out out`` to its end; its wall and CPU time (wait4),
    the requests the server answered meanwhile, its timing.json and results.json."""
    before = server.requests()
    log = out.with_suffix(".stderr")
    out.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as err:
        spawn, start = time.time(), time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "ideaharness", "run", *args, "--out", str(out)],
                                 env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    run = CliRun(label, out, spawn, wall, usage.ru_utime + usage.ru_stime, child.returncode,
                 server.requests() - before, log.read_text()[-1500:])
    for name in ("timing", "results"):
        path = out / f"{name}.json"
        if path.exists():
            setattr(run, name, json.loads(path.read_text()))
    if not run.timing and (out / "records").is_dir():
        run.timing = timing_from_records(out)
    if run.exit_code != 0:
        print(f"warning: {label} exited {run.exit_code}: {run.stderr_tail.strip().splitlines()[-1:]}")
    return run


def timing_from_records(run_dir: Path) -> dict[str, Any]:
    """For a run that wrote no timing.json (an older version): each step's span from its records'
    ``created`` times (whole seconds, so each span is known to about ±1 s), the model steps (records
    holding a judgment) as phases (their union as the model phases' time) and the rest of the time
    from the first to the last record as "between phases" (BERTScore). No marks, no CPU split."""
    import datetime as dt

    records, created, _ = read_records(run_dir)
    spans: dict[str, list[float]] = {}
    model_steps: set[str] = set()
    for (step, _, _, data), when in zip(records, created, strict=True):
        if when is None or step == "cutoff":
            continue
        at = dt.datetime.fromisoformat(when).timestamp()
        span = spans.setdefault(step, [at, at])
        span[0], span[1] = min(span[0], at), max(span[1], at + 1.0)  # the record's whole second
        if isinstance(data, dict) and "judgment" in data:
            model_steps.add(step)
    if not spans:
        return {}
    ordered = sorted(spans.items(), key=lambda kv: kv[1][0])
    phases: list[dict[str, Any]] = [
        {"name": f"{step} (record times)", "items": 0, "wall_s": b - a, "cpu_s": 0.0}
        for step, (a, b) in ordered if step in model_steps]
    model, reach = 0.0, float("-inf")  # the union of the model steps' spans (LigBench's overlap)
    for a, b in sorted(span for step, span in ordered if step in model_steps):
        model += max(0.0, b - max(a, reach))
        reach = max(reach, b)
    first, last = min(a for a, _ in spans.values()), max(b for _, b in spans.values())
    between = max(0.0, last - first - model)
    return {"phases": phases, "spans_s": {"model_phases": model, "between_phases": between},
            "spans_cpu_s": {}, "from_records": True}


async def raw_aiohttp(url: str, bodies: list[dict[str, Any]], n: int,
                      concurrency: int) -> tuple[float, float]:
    """(wall s, CPU ms per request) of ``n`` chat completions cycling over ``bodies``, at most
    ``concurrency`` in flight, through one aiohttp ClientSession (after one warm-up request)."""
    import aiohttp

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        async def call(body: dict[str, Any]) -> None:
            async with session.post(f"{url}/chat/completions", json=body) as response:
                reply = await response.json()
            if not reply["choices"][0]["message"]["content"]:
                raise RuntimeError("empty reply")

        await call(bodies[0])
        gate = asyncio.Semaphore(concurrency)

        async def one(body: dict[str, Any]) -> None:
            async with gate:
                await call(body)

        cycle = itertools.islice(itertools.cycle(bodies), n)
        cpu, start = time.process_time(), time.perf_counter()
        await asyncio.gather(*(one(b) for b in cycle))
        return time.perf_counter() - start, (time.process_time() - cpu) / max(n, 1) * 1000


def replay_bodies(run: CliRun) -> list[dict[str, Any]]:
    """The run's rendered prompts as chat completion bodies (what the raw client sends)."""
    prompts = read_prompts(run.out)
    return [{"model": "raw-aiohttp", "messages": messages, "temperature": 0.0, "max_tokens": 700}
            for _, messages in sorted(prompts.items())]


def _f(value: float | None, spec: str = ".2f") -> str:
    return "–" if value is None else format(value, spec)


def report(run: CliRun, latency: float, concurrency: int, raw: tuple[float, float] | None) -> None:
    """Print one run's table (see the module docstring)."""
    t, r = run.timing, run.requests
    spans, cpu = t.get("spans_s", {}), t.get("spans_cpu_s", {})
    ideal = r * latency / concurrency
    startup = t["started"] - run.spawn if "started" in t else None
    tail = run.spawn + run.wall_s - t["report_written"] if "report_written" in t else None
    phases = spans.get("model_phases")
    print(f"\n== {run.label}: exit {run.exit_code}, status {run.results.get('status')}, "
          f"{r:,} requests answered by the server")
    print(f"  LLM-bound ideal R·L/C = {r:,} x {latency} s / {concurrency}: {ideal:.2f} s")
    if t.get("from_records"):
        print("  (no timing.json: phases from the records' creation times, whole seconds, about ±1 s each)")
    print(f"  {'part':<42}{'wall s':>9}{'CPU s':>9}")
    rows = [("whole process (spawn to exit)", run.wall_s, run.cpu_s),
            ("  start-up: imports, options (to runner)", startup, cpu.get("before_runner")),
            ("  load data, models, run dir, setup", spans.get("before_execute"), cpu.get("before_execute")),
            ("  model phases", phases, cpu.get("model_phases")),
            ("  between phases (local metrics: BERTScore)", spans.get("between_phases"),
             cpu.get("between_phases")),
            ("  aggregate, results, report", spans.get("after_execute"), cpu.get("after_execute")),
            ("  process exit (after the report)", tail, None)]
    for name, wall, c in rows:
        print(f"  {name:<42}{_f(wall):>9}{_f(c):>9}")
    if phases:
        verdict = "ok" if phases <= IDEAL_GOAL * ideal else f"over the goal of {IDEAL_GOAL}x"
        print(f"  model phases / ideal: {phases / ideal:.2f}x ({verdict}); ideal / model phases: "
              f"{ideal / phases:.2f}")
    if r:
        in_phases = cpu.get("model_phases")
        per_request = None if in_phases is None else in_phases * 1000 / r
        print(f"  CPU ms per request: model phases {_f(per_request)}, "
              f"whole process {run.cpu_s * 1000 / r:.2f}")
    if raw is not None and r:
        wall, ms = raw
        print(f"  raw aiohttp, the same {r:,} requests (the run's prompts), C = {concurrency}: "
              f"wall {wall:.2f} s, ideal / wall {ideal / wall:.2f}, CPU ms per request {ms:.3f}")
        if phases and cpu.get("model_phases") is not None:
            print(f"  harness vs raw: model phases / raw wall {phases / wall:.2f}x; CPU ms per request "
                  f"above raw {cpu['model_phases'] * 1000 / r - ms:+.2f}")
    for p in t.get("phases", []):
        print(f"    phase {p['name']:<28} items {p['items']:>5}  wall {p['wall_s']:7.2f} s  "
              f"CPU {p['cpu_s']:7.2f} s")


def measured_run(label: str, args: list[str], out: Path, server: ServerHandle, env: dict[str, str],
                 latency: float, concurrency: int) -> CliRun:
    """Run, replay its prompts through raw aiohttp, print both."""
    run = run_cli(label, args, out, server, env)
    bodies = replay_bodies(run)
    raw = asyncio.run(raw_aiohttp(server.base_url, bodies, run.requests, concurrency)) \
        if bodies and run.requests else None
    report(run, latency, concurrency, raw)
    return run


def similarity_values(run_dir: Path) -> dict[str, list[float]]:
    """Instance id -> the BERTScore F1 of each of its ideas (similarity records of every scenario)."""
    records, _, _ = read_records(run_dir)
    return {f"{step}|{inst}": [float(x) for x in data["f1"]] for step, inst, _, data in records
            if step.startswith("similarity/") and isinstance(data, dict) and "f1" in data}


def embedding_line(run: CliRun) -> str:
    block = run.results.get("similarity_embeddings")
    if not isinstance(block, dict):
        return f"  {run.label:<44} (no similarity_embeddings block in results.json)"
    refs, cands = block.get("references", {}), block.get("candidates", {})
    between = run.timing.get("spans_s", {}).get("between_phases")
    return (f"  {run.label:<44}{refs.get('embedded', 0):>10,}{refs.get('reused', 0):>9,}"
            f"{cands.get('embedded', 0):>11,}{cands.get('reused', 0):>9,}{_f(between):>12}")


def reuse_runs(first: CliRun, ideabench: list[str], root: Path, server: ServerHandle, env: dict[str, str],
               latency: float, concurrency: int, n: int) -> None:
    """Generator B on the same targets, generator A again into a new run directory; the embedding
    counts of the three runs and the largest per-target difference between A and A again."""
    second = measured_run(f"IdeaBench, generator B ({n} instances)",
                          [*ideabench, "--generator", "openai/gen-b"], root / "ideabench-b", server, env,
                          latency, concurrency)
    again = run_cli("IdeaBench, generator A again", [*ideabench, "--generator", "openai/gen-a"],
                    root / "ideabench-a-again", server, env)
    print("\n== Embeddings reused (texts embedded by the model / read from the store, "
          "results.json similarity_embeddings)")
    print(f"  {'run':<44}{'targets:':>10}{'':>9}{'ideas:':>11}{'':>9}{'BERTScore':>12}")
    print(f"  {'':<44}{'embedded':>10}{'reused':>9}{'embedded':>11}{'reused':>9}{'wall s':>12}")
    for run in (first, second, again):
        print(embedding_line(run))
    a, a2 = similarity_values(first.out), similarity_values(again.out)
    shared = sorted(set(a) & set(a2))
    diff = max((abs(x - y) for k in shared for x, y in zip(a[k], a2[k], strict=True)), default=None)
    print(f"  generator A again: {again.requests} requests (LLM cache), per-target F1 of {len(shared)} of "
          f"{len(a)} targets compared with the first run: max |difference| {_f(diff, '.2e')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=700, help="IdeaBench instances")
    parser.add_argument("--topics", type=int, help="LigBench topics (default --n)")
    parser.add_argument("--latency", type=float, default=0.1, help="server latency L, seconds")
    parser.add_argument("--concurrency", type=int, default=64, help="--max-concurrency C of every run")
    parser.add_argument("--skip-ideabench", action="store_true", help="no IdeaBench run (nor reuse)")
    parser.add_argument("--skip-pairwise", action="store_true", help="no LigBench run")
    parser.add_argument("--skip-reuse", action="store_true", help="no second generator / re-run")
    parser.add_argument("--src", type=Path, help="run the CLI from this tree's src/ folder (an older "
                        "version, for a baseline measured the same way); the server stays this tree's")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary)")
    args = parser.parse_args()
    topics = args.topics or args.n
    with tempfile.TemporaryDirectory() as scratch:
        root = (args.keep or Path(scratch)).resolve()
        root.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
        env["IDEAHARNESS_CACHE_DIR"] = str(root / "cache")  # cold LLM and embedding caches
        server_env = dict(env, PYTHONPATH=os.pathsep.join(filter(None, [str(HERE), str(HERE.parent / "src"),
                                                                         env.get("PYTHONPATH")])))
        if args.src is not None:
            env["PYTHONPATH"] = str(args.src.resolve())
        print(f"run efficiency: IdeaBench n = {args.n}, LigBench topics = {topics}, L = {args.latency} s, "
              f"C = {args.concurrency}, {os.cpu_count()} CPUs; caches cold in {root / 'cache'}; CLI from "
              f"{(args.src or HERE.parent / 'src').resolve()}")
        with serve_in_child(args.latency, responder=RESPONDER, env=server_env) as server:
            common = ["--base-url", server.base_url, "--max-concurrency", str(args.concurrency),
                      "--no-progress"]
            data = write_ideabench_instances(root / "instances.jsonl", args.n)
            ideabench = ["ideabench", "--data", str(data), "--judge", "openai/judge", *common]
            if not args.skip_ideabench:
                first = measured_run(f"IdeaBench ({args.n} instances)",
                                     [*ideabench, "--generator", "openai/gen-a"], root / "ideabench-a",
                                     server, env, args.latency, args.concurrency)
            if not args.skip_pairwise:
                ligbench = ["ligbench", "--corpus", str(write_pairiq_corpus(root / "corpus.jsonl")),
                            "--topics", str(write_topics(root / "topics.txt", topics)),
                            "--generator", "openai/gen-a", "--judge", "openai/judge", *common]
                measured_run(f"LigBench pairwise Elo ({topics} topics)", ligbench, root / "ligbench", server,
                             env, args.latency, args.concurrency)
            if not (args.skip_reuse or args.skip_ideabench):
                reuse_runs(first, ideabench, root, server, env, args.latency, args.concurrency, args.n)


if __name__ == "__main__":
    main()
