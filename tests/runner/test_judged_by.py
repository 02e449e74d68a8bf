"""Every registered metric declares the judged steps its value rests on (``MetricSpec.judged_by``),
and the evidence verdict places the reliability block's judge flags by that declaration
(docs/evidence.md, "Which judge flags a headline takes").

Registry-wide: a metric that declares nothing, a declared step that is no judgment of its
benchmark, or a benchmark with judgments none of whose metrics rests on one fails, and so does an
empty registry; a real run of every benchmark (the one-number recipes) has every judged metric of
its reliability block claimed by a headline's declaration, and every declared judged headline's
entries name a judged metric of the run. Regressions: IdeaBench with a constant ranking judge
(the Insight Score is not evidence for it, the BERTScore carries no judge flag) and AI Idea Bench
(IMCQ never takes the i2i/i2t judges' flags)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from ideaharness.metrics.evidence import evidence_block, judged_entry_matches
from ideaharness.metrics.reliability.adapters import adapter_for
from ideaharness.runner.protocol import MetricSpec
from ideaharness.runner.registry import benchmarks
from tests.runner.test_one_number import recipes

JUDGE_RULES = ("constant judge", "near-constant judge", "position bias", "consistency at chance")
"""How the reasons of the reliability flags begin (``metrics.evidence._flag_reason``)."""


SNAPSHOT = """
import json
from ideaharness.runner.registry import benchmarks, metrics
print(json.dumps({
    "metrics": {n: {"judged_by": None if s.judged_by is None else list(s.judged_by), "inputs": list(s.inputs)}
                for n, s in metrics().items()},
    "benchmarks": {n: {step: a is not None for step, a in c.judgment_adapters.items()}
                   for n, c in benchmarks().items()},
}))
"""


@pytest.fixture(scope="module")
def registry() -> dict[str, Any]:
    """The package's registry as a fresh interpreter sees it (built-in benchmarks and installed
    plugins), not the test process's, where test modules register toy metrics at import."""
    done = subprocess.run([sys.executable, "-c", SNAPSHOT], capture_output=True, text=True, check=True,
                          timeout=300)
    snapshot: dict[str, Any] = json.loads(done.stdout)
    assert snapshot["metrics"], "the metric registry is empty: nothing to check"
    assert snapshot["benchmarks"], "the benchmark registry is empty: nothing to check"
    return snapshot


def _benchmarks_of(metric: str, names: Iterable[str]) -> list[str]:
    """The registered benchmarks a metric belongs to: its name's prefix (``ligbench.`` ->
    ``ligbench`` and ``ligbench-judge``)."""
    prefix = metric.split(".", 1)[0]
    return sorted(n for n in names if n == prefix or n.startswith(f"{prefix}-"))


def _entry_step(entry: str) -> str:
    """The recorded step an entry declares, with ``{group}`` filled by a sample group."""
    return entry.split("[", 1)[0].replace("{group}", "g")


def _judge_reasons(verdict: dict[str, Any]) -> list[str]:
    return [r for r in verdict["reasons"] if r.startswith(JUDGE_RULES)]


def _verdicts(block: dict[str, Any], metric: str) -> list[dict[str, Any]]:
    found = [v for v in block["verdicts"] if v["metric"] == metric]
    assert found, f"no verdict for {metric}"
    return found


def test_every_registered_metric_declares_judged_steps_of_its_benchmark(registry: dict[str, Any]) -> None:
    steps: dict[str, dict[str, bool]] = registry["benchmarks"]
    problems = []
    for name, spec in sorted(registry["metrics"].items()):
        owners = _benchmarks_of(name, steps)
        if not owners:
            problems.append(f"{name}: no registered benchmark named {name.split('.', 1)[0]!r}")
            continue
        if spec["judged_by"] is None:
            problems.append(f"{name}: declares no judged_by (() for a metric no judge scores)")
            continue
        for entry in spec["judged_by"]:
            if not any(adapter_for(_entry_step(entry), steps[b]) for b in owners):  # type: ignore[arg-type]
                problems.append(f"{name}: judged_by entry {entry!r} names no judgment step of {owners}")
    assert not problems, "\n".join(problems)


def test_every_judged_benchmark_has_a_metric_resting_on_a_judgment(registry: dict[str, Any]) -> None:
    steps: dict[str, dict[str, bool]] = registry["benchmarks"]
    for name, adapters in sorted(steps.items()):
        judged = [s for s, is_judgment in adapters.items() if is_judgment]
        own = [spec for metric, spec in registry["metrics"].items() if name in _benchmarks_of(metric, steps)]
        assert own, f"{name}: no registered metric"
        if judged:
            assert any(spec["judged_by"] for spec in own), (
                f"{name} records judgments ({', '.join(judged)}) but none of its metrics declares "
                "judged_by: its judge flags would reach no headline")


def test_a_derived_metric_declares_the_judgments_of_its_inputs(registry: dict[str, Any]) -> None:
    specs: dict[str, Any] = registry["metrics"]
    derived = {n: s for n, s in specs.items() if s["inputs"]}
    assert derived, "no registered metric has inputs: nothing to check"
    for name, spec in derived.items():
        for source in spec["inputs"]:
            for entry in specs[source]["judged_by"] or ():
                assert any(judged_entry_matches(mine, "", entry) for mine in spec["judged_by"] or ()), (
                    f"{name} is computed from {source}, which rests on {entry!r}; {name} does not declare it")


def test_a_judged_by_entry_with_another_placeholder_is_refused() -> None:
    with pytest.raises(ValueError, match=r"toy\.m: judged_by entry 'review\[\{dim\}\]'"):
        MetricSpec("toy.m", higher_is_better=True, judged_by=("review[{dim}]",))
    with pytest.raises(ValueError, match="judged_by entry ''"):
        MetricSpec("toy.m", higher_is_better=True, judged_by=("",))


@pytest.mark.parametrize(("entry", "group", "judged", "expected"), [
    ("imcq[{group}]", "motivation", "imcq[motivation]", True),
    ("imcq[{group}]", "motivation", "imcq[experiment_plan]", False),
    ("imcq[{group}]", "", "imcq[experiment_plan]", True),  # no group: every dimension
    ("imcq[{group}]", "motivation", "i2i[motivation]", False),
    ("rank/{group}", "low/novelty", "rank/low/novelty", True),
    ("rank/{group}", "low/novelty", "rank/low/feasibility", False),
    ("rank/{group}", "", "rank/low/feasibility", True),  # no group: the prefix
    ("critique", "", "critique[clarity]", True),
    ("critique[originality]", "", "critique[clarity]", False),
    ("review/", "", "review/idea[novelty]", True),
    ("review/idea[novelty]", "", "review/proposal[novelty]", False),
    ("match", "", "matched", False),
])
def test_entry_matching(entry: str, group: str, judged: str, expected: bool) -> None:
    assert judged_entry_matches(entry, group, judged) is expected


def _cases() -> list[tuple[str, str]]:
    known = recipes()
    cases = [(name, variant) for name in sorted(benchmarks()) for variant in known.get(name) or ["(none)"]]
    return cases or [("(empty registry)", "(none)")]


@pytest.mark.parametrize(("name", "variant"), _cases())
def test_declarations_name_the_judged_metrics_of_a_real_run(name: str, variant: str, tmp_path: Path) -> None:
    """Every judged metric of a real run's reliability block is claimed by some headline's
    declaration (no flag lost), and a headline that declares judgments finds one of them."""
    assert name in benchmarks(), "the benchmark registry is empty: nothing to check"
    run, _ = recipes()[name][variant]
    out = tmp_path / "run"
    run(out)
    results = json.loads((out / "results.json").read_text())
    judged = sorted((results.get("reliability") or {}).get("metrics") or {})
    declared = results["evidence"]["judged_by"]
    headlines = results["metrics"]
    assert headlines, f"{name} ({variant}): no headline"
    unclaimed = [r for r in judged if not any(
        judged_entry_matches(e, str(h.get("group") or ""), r)
        for h in headlines for e in declared.get(h["metric"], []))]
    assert not unclaimed, f"{name} ({variant}): judged metrics no headline declares: {unclaimed}"
    for h in headlines:
        entries = declared.get(h["metric"])
        assert entries is not None, f"{name}: headline {h['metric']} has no declaration in results.json"
        group = str(h.get("group") or "")
        if entries and judged:
            assert any(judged_entry_matches(e, group, r) for e in entries for r in judged), (
                f"{name}: {h['metric']} ({h.get('group')}) declares {entries}, none a judged metric of the "
                f"run ({judged})")


def test_ideabench_constant_ranking_judge_flags_the_insight_score_not_the_bertscore(tmp_path: Path) -> None:
    """A judge that ranks the ideas in the order shown is constant on every ranking: the Insight
    Score is not evidence for it; the BERTScore (an embedding similarity, no judge) carries no
    judge flag — which the name-matching guess gave it (no judged metric's name names it)."""
    from tests.runner.test_one_number import _ideabench

    out = tmp_path / "run"
    _ideabench(out)
    results = json.loads((out / "results.json").read_text())
    block = results["evidence"]
    assert block["judged_by"]["ideabench.bertscore_f1"] == []
    for v in _verdicts(block, "ideabench.insight_score"):
        assert v["verdict"] == "not evidence"
        assert any(r.startswith("constant judge") and f"rank/{v['group']}" in r for r in v["reasons"]), v
        assert all(f"rank/{v['group']}" in r for r in _judge_reasons(v)), v  # only its own ranking
    for metric in ("ideabench.bertscore_f1", "ideabench.bertscore_f1_p80"):
        for v in _verdicts(block, metric):
            assert _judge_reasons(v) == [], v
    # without the declarations (a run written before them) the guess puts the flags on the BERTScore
    guessed = evidence_block({k: v for k, v in results.items() if k != "evidence"})
    assert any(_judge_reasons(v) for v in _verdicts(guessed, "ideabench.bertscore_f1"))
    assert "judged_by" in guessed and guessed["judged_by"] == {}


def test_aiideabench_imcq_is_not_flagged_by_the_i2i_and_i2t_judges(tmp_path: Path) -> None:
    """The fixture's i2i and i2t judges give one rating throughout (constant judges); IMCQ's
    verdicts carry none of their flags, and i2i/i2t each only their own component's."""
    from tests.analysis.saved_runs import aiib_run

    out = tmp_path / "run"
    aiib_run(out)
    results = json.loads((out / "results.json").read_text())
    flagged = {m for m, b in results["reliability"]["metrics"].items()
               if any(w["rule"] == "constant_judge" for j in b["judges"].values() for w in j["warnings"])}
    assert {"i2i[motivation]", "i2t[motivation]"} <= flagged, flagged
    block = results["evidence"]
    for v in _verdicts(block, "aiideabench.imcq"):
        assert not [r for r in _judge_reasons(v) if "i2i[" in r or "i2t[" in r], v
        assert all(f"imcq[{v['group']}]" in r for r in _judge_reasons(v)), v
    for step in ("i2i", "i2t"):
        for v in _verdicts(block, f"aiideabench.{step}"):
            own = f"{step}[{v['group']}]"
            assert any(r.startswith("constant judge") and own in r for r in v["reasons"]), v
            assert all(own in r for r in _judge_reasons(v)), v
