"""LigBench replies: the final JSON verdict, degenerate formalisations and generated ideas, and
comparisons with an unparsed order that never become an outcome (issue 9, items 1, 4 and 16)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ideaharness import arun
from ideaharness.benchmarks.ligbench import IdeaScorer, ScoringSettings, parse_comparison, parse_formalization
from ideaharness.benchmarks.ligbench.corpus import ReferenceCorpus
from ideaharness.benchmarks.ligbench.judge_eval import JudgeAccuracyConfig
from ideaharness.benchmarks.ligbench.run import parse_generated_idea
from ideaharness.errors import ParseError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.llm.types import Message
from ideaharness.metrics.elo import EloSettings
from ideaharness.runner.options import ExecutionOptions
from ideaharness.runner.steps import StepRunner
from ideaharness.runs.store import RunStore
from tests.blinding_support import is_rewrite, scripted_rewrite
from tests.ligbench.test_scoring import FORMAL, IDEA

_MAIN = re.compile(r"Main target: (.+)")  # the comparison shows no title
WIN = '{"rating": 1, "soundness": 1, "contribution": 1}'


def test_the_final_json_verdict_counts() -> None:
    reply = ('A first impression: {"rating": 0, "soundness": 0, "contribution": 0}. Looking closer at the '
             'experimental designs, A is stronger.\n{"rating": 1, "soundness": 0.5, "contribution": 1}')
    assert parse_comparison(reply) == {"rating": 1.0, "soundness": 0.5, "contribution": 1.0}


@pytest.mark.parametrize("bad", ["", "\u200b", "...", "   ", "N/A"])
def test_degenerate_formalisation_parts_are_parse_failures(bad: str) -> None:
    with pytest.raises(ParseError, match="core_breakthrough"):
        parse_formalization(json.dumps(FORMAL | {"core_breakthrough": bad}))


PLAN = ("## Problem\nGraph network predictions are hard to explain for domain experts.\n"
        "## Method\nExtract logic rules over learned concepts.\n"
        "## Experiment Design\nCompare with GNNExplainer on three molecule datasets by fidelity.")


@pytest.mark.parametrize("bad", [
    "\u200b" * 50, "." * 60, "I'm sorry, but I cannot propose a research idea.",
    PLAN.replace("## Method", "Method and more"),  # a section missing
    PLAN.replace("Extract logic rules over learned concepts.", "..."),  # a section empty
    PLAN.replace("Graph network", "I'm sorry, but I cannot help.\nGraph network"),  # a refusal in a section
])
def test_degenerate_generated_ideas_are_parse_failures(bad: str) -> None:
    with pytest.raises(ParseError):
        parse_generated_idea(bad)
    assert parse_generated_idea("\u200b" + PLAN + "\n") == PLAN
    assert parse_generated_idea(PLAN.replace("## ", "**").replace("\n", "**\n", 1)) is not None


async def test_a_comparison_with_an_unparsed_order_is_no_outcome(tmp_path: Path,
                                                                 shared_corpus: ReferenceCorpus) -> None:
    """A judge that answers only when the idea is shown first: one order alone is position-biased,
    so no comparison counts and the idea gets no score (was: scored from the idea-first order)."""

    def reply(messages: list[Message]) -> str:
        text = messages[-1]["content"]
        if is_rewrite(text):
            return scripted_rewrite(text)
        if "Restate the research idea" in text:
            return json.dumps(FORMAL)
        if "score this new idea" in text:
            return '{"rating": 2.0, "contribution": 2.0, "soundness": 2.0, "novelty": 4.0}'
        if text.index("MARKER-IDEA") < text.index("<idea_b>"):
            return WIN
        return "Both ideas have merit."

    store = RunStore(tmp_path / "run", {})
    scorer = IdeaScorer(shared_corpus, ScriptedModel(reply), StepRunner(store, progress=False),
                        ScoringSettings(elo=EloSettings(min_comparisons=2, max_comparisons=3)))
    result = await scorer.score("idea-1", IDEA)
    assert result.comparisons and all(c.outcome is None for c in result.comparisons)
    assert all(c.outcomes["idea-first"] is not None for c in result.comparisons)
    assert result.status == "compare_failed" and result.scores is None
    assert result.parse_failures["compare"] == len(result.comparisons)


async def test_judge_accuracy_counts_a_pair_only_when_both_orders_parse(tmp_path: Path,
                                                                       shared_corpus_path: Path) -> None:
    def reply(messages: list[Message]) -> str:  # "always A", but silent whenever the titles are descending
        a_target, b_target = _MAIN.findall(messages[-1]["content"])[:2]
        return WIN if a_target < b_target else "I cannot tell."

    config = JudgeAccuracyConfig(judge="scripted/test", corpus=str(shared_corpus_path), n_pairs=8)
    results = await arun("ligbench-judge", config=config, options=ExecutionOptions(out=tmp_path / "run",
                                                                                   progress=False),
                                         judge=ScriptedModel(reply))
    for dim, r in results["dimensions"].items():
        assert r["n"] == 0 and r["accuracy"] is None and r["n_failed"] > 0, dim
