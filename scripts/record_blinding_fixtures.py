"""Record the blinding fixtures of tests/blinding/fixtures/ with the real embedded model.

Runs IdeaBench's own generation and target-rewrite steps (scenario ``low``, three ideas per
paper, seed 0, the same model generating and rewriting) on the first ``--limit`` bundled TOMATO-Chem
instances, and writes:

  tomato_generated_0.5b.jsonl   {"id", "idea"}: the generated ideas of each instance
  tomato_rewritten_0.5b.jsonl   {"id", "original", "form", "raw_text", "parse_ok", "idea", "errors"}:
                                the rewrite record of each ground-truth idea (idea = the parsed
                                rewrite, null when it failed every attempt)

The run directory resumes, so an interrupted recording continues where it stopped. CPU-heavy:
run it under the model lock.

Usage:  flock /tmp/ideaharness-model.lock .venv/bin/python scripts/record_blinding_fixtures.py \
            [--model local/qwen2.5-coder-0.5b] [--limit 13] [--run-dir DIR] [--cache FILE] [--out DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from ideaharness.benchmarks.ideabench.blinding import rewrite_step, rewrite_target
from ideaharness.benchmarks.ideabench.config import DEFAULT_INDICATORS, IdeaBenchConfig
from ideaharness.benchmarks.ideabench.run import IdeaBench
from ideaharness.data.tomato import load_tomato_chem
from ideaharness.llm import get_llm
from ideaharness.runner import RunContext, StepRunner
from ideaharness.runner.options import ExecutionOptions
from ideaharness.runs.store import RunStore

SCENARIO = "low"


async def record(model_name: str, limit: int, run_dir: Path, cache: Path, out: Path) -> None:
    config = IdeaBenchConfig(generator=model_name, judge=model_name, rewriter=model_name, n_ideas=3,
                             scenarios=[SCENARIO], indicators=DEFAULT_INDICATORS[:1])
    options = ExecutionOptions(out=run_dir, progress=True, cache_path=cache)
    model = get_llm(model_name, cache_path=cache)
    bench = IdeaBench(config)
    store = RunStore(run_dir, config.model_dump(mode="json"))
    steps = StepRunner(store, progress=True, max_prompt_tokens=config.max_prompt_tokens)
    await bench.setup(RunContext(config=config, options=options, store=store, steps=steps,
                                 models={"generator": model, "judge": model}, out=run_dir))
    instances = load_tomato_chem()[:limit]
    await bench.steps.run_phases(instances, [
        ("generate", lambda i: bench.generate(i, SCENARIO)),
        ("rewrite targets", lambda i: rewrite_target(bench, i, SCENARIO)),
    ])
    generated, rewrites = [], []
    for inst in instances:
        for idea in bench.ideas(inst, SCENARIO) or []:
            generated.append({"id": inst.id, "idea": idea.text})
        rec = bench.store.get(rewrite_step(SCENARIO), inst.id)
        if rec is None:
            continue
        judgment = rec["judgment"]
        rewrites.append({
            "id": inst.id, "original": rec["original"], "form": rec["form"], "raw_text": judgment["raw_text"],
            "parse_ok": judgment["parse_ok"],
            "idea": judgment["parsed"]["idea"] if judgment["parse_ok"] else None,
            "errors": judgment.get("errors", []),
        })
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("generated", generated), ("rewritten", rewrites)):
        path = out / f"tomato_{name}_{model_name.rsplit('-', 1)[-1]}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        print(f"{path}: {len(rows)} rows")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local/qwen2.5-coder-0.5b")
    parser.add_argument("--limit", type=int, default=13, help="the first N instances")
    parser.add_argument("--run-dir", type=Path, default=Path("runs/blinding-fixtures"))
    parser.add_argument("--cache", type=Path, default=Path("runs/blinding-fixtures-cache.sqlite"))
    parser.add_argument("--out", type=Path, default=Path(__file__).parents[1] / "tests/blinding/fixtures")
    args = parser.parse_args()
    asyncio.run(record(args.model, args.limit, args.run_dir, args.cache, args.out))


if __name__ == "__main__":
    main()
