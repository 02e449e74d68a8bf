"""One number per metric everywhere (issue 18, item 1; issue 19, item 1): for every registered
benchmark a small real run (scripted models, as the benchmarks' own tests use), and for every
headline metric the console tables, results.json, report.html (its tables and its embedded viewer
data), ``load_run(...).scores`` (read from ``scores.jsonl``), the ``export`` files and the
``compare`` leaderboard show the same value and the same n. The headline is computed from the
per-instance scores through each metric's ``MetricSpec``, so re-aggregating the rows by the same
spec gives results.json's number by construction; this test checks every surface agrees.
Extra calls (consistency re-asks, retries, blinding rewrites) are never score rows:
the IdeaBench run re-asks every ranking with a judge whose answer follows the shown positions, so a
re-ask read as a score would change the means.

The test is parametrised over the registry: a registered benchmark without a recipe below fails
(it cannot be checked), and so does an empty registry."""

from __future__ import annotations

import asyncio
import html
import io
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from rich.console import Console

import ideaharness
from ideaharness.analysis.compare import compare_runs
from ideaharness.analysis.export import export_run, read_export
from ideaharness.analysis.load import metric_key
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.aggregate import ratio
from ideaharness.report.console import print_tables
from ideaharness.report.html import format_cell
from ideaharness.runner.registry import benchmarks, metrics
from tests.ideabench.conftest import ideabench_responder

TESTS = Path(__file__).parents[1]
PAIRIQ = TESTS / "ligbench" / "fixtures" / "pairiq_mini.jsonl"


def _corpus(out: Path) -> Path:
    corpus = out.parent / f"{out.name}-corpus" / "pairiq_mini.jsonl"
    corpus.parent.mkdir(parents=True)
    shutil.copy(PAIRIQ, corpus)
    return corpus


def _ideabench(out: Path) -> None:
    """Every ranking re-asked (consistency sample 1.0) by a judge that ranks in the order shown: the
    re-ask (other positions) disagrees with the original, so counting it would move the mean."""
    base = ideabench_responder()

    def by_position(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if "Rank the following" in user:
            labels = re.search(r"exactly once \(([A-Z, ]+)\)", user).group(1).split(", ")  # type: ignore[union-attr]
            return json.dumps({"ranking": labels, "rationale": "in the order shown"})
        return base(messages)

    ideaharness.run("ideabench", generator=ScriptedModel(base, model="scripted/gen"),
                    judge=ScriptedModel(by_position, model="scripted/judge"), limit=4, out=out,
                    progress=False, bootstrap_resamples=100, consistency_sample=1.0)


def _aiideabench(out: Path) -> None:
    from tests.analysis.saved_runs import aiib_run

    aiib_run(out)


def _aiideabench_literature(out: Path) -> None:
    """Literature novelty (NA) and feasibility (FA) against a loopback Semantic Scholar server."""
    import datetime as dt

    from ideaharness.api import arun
    from ideaharness.benchmarks.aiideabench import AIIdeaBenchConfig
    from ideaharness.runner.options import ExecutionOptions
    from tests.aiideabench.test_aiib_pipeline import DATA, _s2_server, responder, toy_embed

    with _s2_server(dt.date(2023, 10, 3)) as server:
        config = AIIdeaBenchConfig(data=DATA, generator="scripted/gen", judge="scripted/judge", n_ideas=1,
                                   metrics=["novelty", "feasibility"], scholar_base_url=server.base_url,
                                   bootstrap_resamples=50)
        asyncio.run(arun("aiideabench", config=config, options=ExecutionOptions(out=out, progress=False),
                         generator=ScriptedModel(responder(), model="scripted/gen"),
                         judge=ScriptedModel(responder(), model="scripted/judge"), embed_fn=toy_embed))


def _researchbench(out: Path) -> None:
    from tests.analysis.saved_runs import researchbench_run

    researchbench_run(out, "gen-strong", "use a copper catalyst at room temperature to couple both reagents.")


def _ligbench(out: Path) -> None:
    from tests.analysis.saved_runs import ligbench_run

    ligbench_run(out, _corpus(out))


def _ligbench_judge(out: Path) -> None:
    """A judge that prefers the paper with the longer main target: right on some pairs, not all."""
    from ideaharness.api import arun
    from ideaharness.benchmarks.ligbench.judge_eval import JudgeAccuracyConfig
    from ideaharness.runner.options import ExecutionOptions

    def reply(messages: list[dict[str, str]]) -> str:
        a, b = re.findall(r"Main target: (.+)", messages[-1]["content"])[:2]
        v = 1.0 if len(a) > len(b) else 0.0
        return json.dumps({"rating": v, "soundness": 1.0 - v, "contribution": v})

    config = JudgeAccuracyConfig(judge="scripted/judge", corpus=str(_corpus(out)), n_pairs=8,
                                 bootstrap_resamples=100)
    asyncio.run(arun("ligbench-judge", config=config, options=ExecutionOptions(out=out, progress=False),
                     judge=ScriptedModel(reply, model="scripted/judge")))


LIVE_KEYWORDS = ["meteorology", "periodic table", "weather forecasting", "stars", "hurricanes", "earthquakes"]


def _liveideabench(out: Path) -> None:
    """Six keywords (flexibility needs five), critiques that differ by keyword and by judge."""

    def generator(messages: list[dict[str, str]]) -> str:
        keyword = re.search(r"<keyword>\n(.*?)\n</keyword>", messages[-1]["content"], re.S).group(1)  # type: ignore[union-attr]
        return f"Idea on {keyword}: measure how {keyword} data improves forecasts with sparse sensors."

    def critic(offset: int) -> Callable[[list[dict[str, str]]], str]:
        def respond(messages: list[dict[str, str]]) -> str:
            user = messages[-1]["content"]
            if "ONLY ANSWER A/B/C/D" in user:
                return "AB"[len(user) % 2]
            found = re.search(r"Idea on ([a-z ]+):", user)
            k = len(found.group(1)) if found else 0
            scores = {"originality": 3 + (k + offset) % 7, "feasibility": 2 + k % 5, "clarity": 4 + offset}
            return f"Brief analysis.\n```json\n{json.dumps(scores)}\n```"
        return respond

    judges = {f"judge:scripted/j{i}": ScriptedModel(critic(i), model=f"scripted/j{i}") for i in range(2)}
    ideaharness.run("liveideabench", generator="scripted/gen", judge=["scripted/j0", "scripted/j1"],
                    keyword=LIVE_KEYWORDS, judges_per_idea=1, fluency_judges=1, out=out, progress=False,
                    models={"generator": ScriptedModel(generator, model="scripted/gen"), **judges},
                    bootstrap_resamples=100)


Recipe = tuple[Callable[[Path], None], tuple[str, ...]]
RECIPES: dict[str, dict[str, Recipe]] = {
    "ideabench": {"all scenarios": (_ideabench, ("ideabench.bertscore_f1", "ideabench.overlap",
                                                 "ideabench.insight_score"))},
    "aiideabench": {"imcq, i2i, i2t": (_aiideabench, ("aiideabench.imcq", "aiideabench.i2i",
                                                      "aiideabench.i2t")),
                    "novelty, feasibility": (_aiideabench_literature, ("aiideabench.novelty",
                                                                        "aiideabench.feasibility"))},
    "researchbench": {"retrieval, composition, ranking": (_researchbench, (
        "researchbench.hit_ratio", "researchbench.matched_score", "researchbench.rank_score",
        "researchbench.directional_accuracy"))},
    "ligbench": {"generated and ScholarIdeas": (_ligbench, ("ligbench.score",))},
    "ligbench-judge": {"both orders": (_ligbench_judge, ("ligbench.judge_accuracy",))},
    "liveideabench": {"v2": (_liveideabench, ("liveideabench.originality", "liveideabench.feasibility",
                                              "liveideabench.clarity", "liveideabench.fluency",
                                              "liveideabench.flexibility"))},
}
"""A small real run of each registered benchmark per variant, and the metrics each must score (a
benchmark with several tasks runs them all in one run, and every task must score)."""


def recipes() -> dict[str, dict[str, Recipe]]:
    """:data:`RECIPES` and every benchmark's own: a module-level ``ONE_NUMBER: dict[str, dict[str,
    Recipe]]`` (benchmark -> variant -> (run into a directory, metrics it must score)) in its
    ``tests/<package>/registry_fixtures.py``, so a new benchmark adds its recipe in its own folder.

    Raises:
        AssertionError: a benchmark given a recipe twice.
    """
    import importlib
    import importlib.util
    import pkgutil

    import tests

    found = dict(RECIPES)
    for module in pkgutil.iter_modules(tests.__path__):
        name = f"tests.{module.name}.registry_fixtures"
        if module.ispkg and importlib.util.find_spec(name):
            for bench, variants in getattr(importlib.import_module(name), "ONE_NUMBER", {}).items():
                assert bench not in found, f"{name}: {bench} already has a one-number recipe"
                found[bench] = variants
    return found


def _viewer_payload(report: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="ih-data">(.*?)</script>', report, re.S)
    assert found, "report.html embeds no viewer data"
    payload: dict[str, Any] = json.loads(found.group(1))
    return payload


def _viewer_values(payload: dict[str, Any], system: str, metric: str) -> list[float]:
    columns = payload["instances"]["columns"]
    if metric not in columns:
        return []
    si, mi = columns.index("system"), columns.index(metric)
    return [row[mi] for row in payload["instances"]["rows"] if row[si] == system and row[mi] is not None]


def _console_text(name: str, results: dict[str, Any]) -> str:
    bench = benchmarks()[name]
    config = bench.config_class.model_validate(results["settings"]["config"])
    buffer = io.StringIO()
    print_tables(bench(config).tables(results), Console(file=buffer, width=400, color_system=None))
    return buffer.getvalue()


def _mean(values: Any) -> float:
    return float(pd.Series(list(values), dtype=float).mean())


def test_every_registered_benchmark_has_a_recipe() -> None:
    names = sorted(benchmarks())
    assert names, "the benchmark registry is empty: nothing to check"
    known = recipes()
    missing = [n for n in names if n not in known]
    assert not missing, (f"no one-number run recipe for {missing}: add ONE_NUMBER to its "
                         "tests/<package>/registry_fixtures.py")


def _cases() -> list[tuple[str, str]]:
    known = recipes()
    cases = [(name, variant) for name in sorted(benchmarks()) for variant in known.get(name) or ["(none)"]]
    return cases or [("(empty registry)", "(none)")]


@pytest.mark.parametrize(("name", "variant"), _cases())
def test_one_value_and_one_n_per_metric_on_every_surface(
    name: str, variant: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    entry = recipes().get(name, {}).get(variant)
    assert entry is not None, f"{name}: registered but no run recipe, so it cannot be checked"
    recipe, prefixes = entry
    out = tmp_path / "run"
    recipe(out)
    results = json.loads((out / "results.json").read_text())
    run = ideaharness.load_run(out)
    scores = run.scores
    assert len(scores) > 0, f"{name}: the run produced no score rows to check"
    for metric in prefixes:
        assert scores.loc[scores["metric"] == metric, "value"].notna().any(), f"{name}: no {metric} scores"
    assert not scores.duplicated(["system", "pair_key", "metric", "group"]).any(), "an instance scored twice"
    assert not scores["instance_id"].str.endswith("#reask").any()

    exported = read_export(export_run(run, "csv", tmp_path / "export")[0])
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    comparison = compare_runs([out, copy], n_resamples=100)
    labels = {(s["run_id"], s["system"]): s["label"] for s in comparison["systems"]}
    report = (out / "report.html").read_text(encoding="utf-8")
    report_text = html.unescape(report)
    viewer = _viewer_payload(report)
    console = _console_text(name, results)
    specs = metrics()
    given = {(m.metric, m.group) for m in benchmarks()[name](
        benchmarks()[name].config_class.model_validate(results["settings"]["config"])).headline(results)}

    checked = 0
    for m in results["metrics"]:
        metric, group, value, n = m["metric"], m["group"], m["value"], m["n"]
        system = m.get("system") or run.system
        where = f"{name} {system} {metric} {group}"
        if (metric, group) in given or value is None:
            continue  # not an aggregate of scores (benchmark.headline), or not computed
        spec = specs[metric]
        key = metric_key(metric, group)
        board = {b["system"]: b for b in comparison["metrics"][key]["leaderboard"]}
        for run_id in (out.name, copy.name):
            entry = board[labels[(run_id, system)]]
            assert entry["mean"] == pytest.approx(value) and entry["n"] == n, f"{where}: compare"
        text = format_cell(float(value))
        assert text in console, f"{where}: the console tables do not show {text}"
        assert text in report_text, f"{where}: report.html does not show {text}"
        checked += 1
        if spec.inputs:
            continue
        rows = scores[(scores["system"] == system) & (scores["metric"] == metric)]
        rows = rows[(rows["group"] == group) & rows["value"].notna()]
        table = rows[["value", "weight"]].to_numpy(dtype=float)
        assert len(rows) == n and spec.value(table) == pytest.approx(value), f"{where}: load_run rows"
        ex = exported[(exported["system"] == system) & (exported["metric"] == metric)
                      & (exported["group"].fillna("") == group) & exported["value"].notna()]
        exported_value = spec.value(ex[["value", "weight"]].to_numpy(dtype=float))
        assert len(ex) == n and exported_value == pytest.approx(value), f"{where}: export"
        shown = _viewer_values(viewer, system, key)
        assert len(shown) == n, f"{where}: viewer"
        if spec.aggregate is not ratio:  # the viewer shows values, not their weights
            assert spec.value(shown) == pytest.approx(value), f"{where}: viewer"
    assert checked >= 2, f"{name}: fewer than 2 metrics checked"
