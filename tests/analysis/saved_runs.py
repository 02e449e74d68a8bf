"""Real runs of the four benchmarks, made once per session with scripted models (the same ones
the benchmarks' own tests use), for loading, exporting, comparing and viewing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import ideaharness
from ideaharness.analysis.load import RunData
from ideaharness.api import arun
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.runner.options import ExecutionOptions
from tests.ideabench.conftest import ideabench_responder

HOSTILE = "I cannot decide </script><script>window.pwned=1</script> & <b>bold</b> \u2028 end"
"""An unparsable reply holding markup: the viewer must show it as text."""


def aiib_run(
    out: Path,
    *,
    generator: str = "scripted/gen",
    style: str = "good",
    compare: list[Path] | None = None,
    judge: ScriptedModel | None = None,
    limit: int = 2,
) -> dict:
    import asyncio

    from ideaharness.benchmarks.aiideabench import AIIdeaBenchConfig
    from tests.aiideabench.test_aiib_pipeline import DATA, responder, toy_embed

    base = responder()

    def judge_reply(messages: list[dict[str, str]]) -> str:
        reply = base(messages)
        return HOSTILE if reply == "I cannot decide." else reply

    cfg = AIIdeaBenchConfig(
        data=DATA,
        generator=generator,
        judge="scripted/judge",
        n_ideas=2,
        metrics=["imcq", "i2i", "i2t"],
        bootstrap_resamples=50,
    )
    return asyncio.run(
        arun("aiideabench", config=cfg,
             options=ExecutionOptions(out=out, limit=limit, progress=False, max_attempts=2),
            compare=compare or [],
            generator=ScriptedModel(responder(style), model=generator),
            judge=judge or ScriptedModel(judge_reply, model="scripted/judge"),
            embed_fn=toy_embed,
        )
    )


def researchbench_run(out: Path, generator: str, hypothesis: str, seed: int = 0) -> dict:
    import asyncio

    from ideaharness.benchmarks.researchbench import ResearchBenchConfig
    from tests.researchbench.test_rb_run import RELEASE, scripted

    base = scripted("**Analysis**: x\n**Selection of research hypothesis candidate**: candidate 1")

    def reply(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if "Matched score:" in user:  # the judge rewards the strong generator's wording
            return "Matched score: 4\nReason: r." if "catalyst" in user else "Matched score: 1\nReason: r."
        text = base._responder(messages)
        return text.replace("combine mechanism one with mechanism two at room temperature.", hypothesis)

    model = ScriptedModel(reply, model=generator)
    config = ResearchBenchConfig(
        data=str(RELEASE),
        generator=generator,
        judge="scripted/judge",
        n_mutations=1,
        n_refine=1,
        seed=seed,
        bootstrap_resamples=200,
    )
    return asyncio.run(
        arun("researchbench", config=config, options=ExecutionOptions(out=out, progress=False),
             generator=model, judge=model)
    )


def ideabench_run(out: Path, generator: str, target_position: str, limit: int = 6) -> dict:
    respond = ideabench_responder(rank_target_position=target_position)
    return ideaharness.run(
        "ideabench",
        generator=ScriptedModel(respond, model=generator),
        judge=ScriptedModel(respond, model="scripted/judge"),
        limit=limit,
        out=out,
        progress=False,
        bootstrap_resamples=200,
    )


def ligbench_run(out: Path, corpus: Path) -> dict:
    import asyncio

    from ideaharness.benchmarks.ligbench import LigBenchConfig
    from tests.ligbench.test_cli import SCHOLARIDEAS, _scripted_judge

    plan = "## Problem\nSomething hard.\n## Method\nA new method.\n## Experiment Design\nBenchmarks."
    config = LigBenchConfig(
        generators=["scripted/gen"],
        judge="scripted/judge",
        corpus=str(corpus),
        topics=["graphs"],
        ideas_per_topic=2,
        scholarideas=1,
        scholarideas_root=str(SCHOLARIDEAS),
    )
    return asyncio.run(
        arun("ligbench", config=config, options=ExecutionOptions(out=out, progress=False),
            generators={"scripted/gen": ScriptedModel(lambda m: plan, model="scripted/gen")},
            judge=ScriptedModel(_scripted_judge, model="scripted/judge"),
        )
    )


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """name -> run directory: ``ideabench_a/b`` (target ranked last/first: generators differ),
    ``researchbench_a/b`` (hypotheses the judge scores 4 / 1), ``aiideabench``, ``ligbench``."""
    root = tmp_path_factory.mktemp("runs")
    out = {
        name: root / name
        for name in (
            "ideabench_a",
            "ideabench_b",
            "researchbench_a",
            "researchbench_b",
            "aiideabench",
            "ligbench",
        )
    }
    ideabench_run(out["ideabench_a"], "gen-strong", "last")
    ideabench_run(out["ideabench_b"], "gen-weak", "first")
    # hypotheses of at least 8 words (ResearchBench's minimum): the judge scores 4 / 1
    strong, weak = "use a copper catalyst at room temperature to couple both reagents.", (
        "heat the mixture gently and stir it well for an hour.")
    researchbench_run(out["researchbench_a"], "gen-strong", strong)
    researchbench_run(out["researchbench_b"], "gen-weak", weak)
    aiib_run(out["aiideabench"])
    from tests.ligbench.test_cli import PLAN

    if PLAN.exists():
        corpus = root / "corpus" / "pairiq_mini.jsonl"
        corpus.parent.mkdir()
        shutil.copy(Path(__file__).parents[1] / "ligbench" / "fixtures" / "pairiq_mini.jsonl", corpus)
        ligbench_run(out["ligbench"], corpus)
    return out


def results_of(run_dir: Path) -> dict:
    return json.loads((run_dir / "results.json").read_text())


def reaggregated(run: RunData, results: dict) -> int:
    """Check that every (system, metric, group) of a loaded run's score rows re-aggregates, by the
    metric's registered spec, to the value and n results.json reports (its headline ``metrics``);
    returns how many were checked."""
    from ideaharness.runner.registry import metrics

    specs = metrics()
    headline = {(m.get("system") or run.system, m["metric"], m["group"]): m for m in results["metrics"]}
    scored = run.scores[run.scores["value"].notna()]
    checked = 0
    for (system, metric, group), rows in scored.groupby(["system", "metric", "group"]):
        reported = headline[(system, metric, group)]
        value = specs[metric].value(rows[["value", "weight"]].to_numpy(dtype=float))
        assert value == pytest.approx(reported["value"]), (system, metric, group)
        assert len(rows) == reported["n"], (system, metric, group)
        checked += 1
    return checked
