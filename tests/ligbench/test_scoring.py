"""The scoring pipeline's logic with scripted judges (no LLM): named outputs, order swapping,
parse failures counted and never scored."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ideaharness.benchmarks.ligbench.corpus import ReferenceCorpus
from ideaharness.benchmarks.ligbench.steps import (
    IdeaScorer,
    ScoringSettings,
    parse_comparison,
    parse_formalization,
    parse_initial_scores,
)
from ideaharness.errors import ParseError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.llm.types import Message
from ideaharness.metrics.elo import EloSettings
from ideaharness.runner.steps import StepRunner
from ideaharness.runs.store import RunStore
from tests.blinding_support import is_rewrite, scripted_rewrite

IDEA = "We explain graph neural network predictions with logic rules over concepts. MARKER-IDEA"
FORMAL = {"main_target": "Explain GNN predictions MARKER-IDEA",
          "core_breakthrough": "logic rules over concepts",
          "innovative_methods": ["concept discovery", "rule extraction"],
          "experimental_design": "benchmarks against GNNExplainer on molecules"}
WIN = {"rating": 1.0, "soundness": 1.0, "contribution": 1.0}


def responder(compare: str) -> object:
    def reply(messages: list[Message]) -> str:
        text = messages[-1]["content"]
        if is_rewrite(text):
            return scripted_rewrite(text)
        if "Restate the research idea" in text:
            return json.dumps(FORMAL)
        if "score this new idea" in text:
            return '{"rating": 2.0, "contribution": 2.0, "soundness": 2.0, "novelty": 4.0}'
        if compare == "always-a":
            return 'reasoning... {"rating": 1, "soundness": 1, "contribution": 1}'
        if compare == "idea":  # prefers the idea wherever it is shown
            a_is_idea = text.index("MARKER-IDEA") < text.index("<idea_b>")
            v = 1 if a_is_idea else 0
            return json.dumps({"rating": v, "soundness": v, "contribution": v})
        return "I cannot decide."
    return reply


async def _score(tmp_path: Path, corpus: ReferenceCorpus, compare: str, **settings: object):  # type: ignore[no-untyped-def]
    model = ScriptedModel(responder(compare))  # type: ignore[arg-type]
    store = RunStore(tmp_path / "run", {"test": compare})
    cfg = ScoringSettings(elo=EloSettings(min_comparisons=2, max_comparisons=4), **settings)  # type: ignore[arg-type]
    scorer = IdeaScorer(corpus, model, StepRunner(store, progress=False), cfg)
    return await scorer.score("idea-1", IDEA), model, store


@pytest.fixture
def corpus(shared_corpus: ReferenceCorpus) -> ReferenceCorpus:
    return shared_corpus


def test_parsers_use_named_keys() -> None:
    methods = parse_formalization(json.dumps(FORMAL))["innovative_methods"]
    assert methods == "1. concept discovery\n2. rule extraction"
    assert parse_initial_scores('{"novelty": 1, "rating": 2, "soundness": 3, "contribution": 4.5}') == {
        "rating": 2.0, "contribution": 4.5, "soundness": 3.0, "novelty": 1.0}
    assert parse_comparison('{"contribution": 0, "rating": "A", "soundness": 0.5}') == {
        "rating": 1.0, "soundness": 0.5, "contribution": 0.0}
    for bad in ('[1, 0.5, 0]', '{"rating": 2, "soundness": 1, "contribution": 0}'):
        with pytest.raises(ParseError):
            parse_comparison(bad)
    with pytest.raises(ParseError):
        parse_initial_scores('{"rating": 6, "contribution": 2, "soundness": 2, "novelty": 2}')


async def test_judge_preferring_the_idea_raises_scores(tmp_path: Path, corpus: ReferenceCorpus) -> None:
    result, model, store = await _score(tmp_path, corpus, "idea")
    assert result.status == "scored" and result.initial is not None
    assert len(result.calibration) == 3
    assert all(c.outcome == WIN for c in result.comparisons)
    assert not any(any(c.disagreement.values()) for c in result.comparisons)
    for dim in ("rating", "soundness", "contribution"):
        assert result.scores[dim] > 2.0  # type: ignore[index]
        assert result.trajectories[dim].stopped in ("max_comparisons", "converged")
    assert 0 <= result.scores["novelty"] <= 5  # type: ignore[index]
    assert result.novelty["source"] == "corpus"  # type: ignore[index]
    # both orders were asked for every comparison, with positions recorded
    keys = [k for _, k, _ in store.records("ligbench/compare")]
    assert len(keys) == 2 * len(result.comparisons)
    assert {k.split("|")[1] for k in keys} == {"idea-first", "ref-first"}
    # resume: a second scorer on the same store asks the model nothing
    calls = len(model.calls)
    again = IdeaScorer(corpus, model, StepRunner(store, progress=False),
                       ScoringSettings(elo=EloSettings(min_comparisons=2, max_comparisons=4)))
    assert (await again.score("idea-1", IDEA)).scores == result.scores
    assert len(model.calls) == calls


async def test_position_biased_judge_averages_to_ties(tmp_path: Path, corpus: ReferenceCorpus) -> None:
    result, _, _ = await _score(tmp_path, corpus, "always-a")
    assert result.comparisons
    for c in result.comparisons:
        assert c.outcome == {"rating": 0.5, "soundness": 0.5, "contribution": 0.5}
        assert all(c.disagreement.values())


async def test_fixed_order_is_one_call_per_comparison(tmp_path: Path, corpus: ReferenceCorpus) -> None:
    result, _, store = await _score(tmp_path, corpus, "always-a", order="fixed")
    assert all(list(c.outcomes) == ["idea-first"] for c in result.comparisons)
    assert all(c.outcome == WIN for c in result.comparisons)
    assert len(store.records("ligbench/compare")) == len(result.comparisons)


async def test_unparseable_comparisons_are_counted_and_leave_no_score(tmp_path: Path,
                                                                      corpus: ReferenceCorpus) -> None:
    result, _, _ = await _score(tmp_path, corpus, "never")
    assert all(c.outcome is None for c in result.comparisons)
    assert result.parse_failures["compare"] == 2 * len(result.comparisons) > 0
    # no comparison used: the Elo scores would be the initial scores unchanged, a default (issue 9.16)
    assert all(result.trajectories[d].steps == [] for d in ("rating", "soundness", "contribution"))
    assert result.status == "compare_failed" and result.scores is None
    assert result.initial == {"rating": 2.0, "contribution": 2.0, "soundness": 2.0, "novelty": 4.0}


async def test_failed_formalisation_stops_the_idea(tmp_path: Path, corpus: ReferenceCorpus) -> None:
    model = ScriptedModel(["no json here"], cycle=True)
    store = RunStore(tmp_path / "run", {})
    result = await IdeaScorer(corpus, model, StepRunner(store, progress=False)).score("x", "idea")
    assert result.status == "formalize_failed" and result.scores is None
    assert result.parse_failures["formalize"] == 1 and len(model.calls) == 3  # bounded retries


async def test_online_novelty_from_semantic_scholar(tmp_path: Path, corpus: ReferenceCorpus) -> None:
    from ideaharness.testing.scholarly_replay import ReplayServer, Reply

    papers = [{"paperId": "s2a", "title": "Logic explanations of graph neural networks",
               "abstract": "Rules over concepts explain GNN predictions."},
              {"paperId": "s2b", "title": "Protein folding", "abstract": "Structure prediction."}]
    queries: list[str] = []

    def search(match, query, body):  # type: ignore[no-untyped-def]
        queries.append(query.get("query", ""))
        return Reply(200, json.dumps({"total": 2, "offset": 0, "data": papers}))

    with ReplayServer() as server:
        server.add_handler("GET", r"/graph/v1/paper/search", search)
        result, _, store = await _score(tmp_path, corpus, "idea", novelty_source="semantic-scholar",
                                        scholar_base_url=server.base_url)
    assert queries and "MARKER-IDEA" in queries[0]  # searched with the main target
    nov = result.novelty
    assert nov is not None and nov["source"] == "semantic-scholar" and nov["n_related"] == 2
    assert store.get("ligbench/novelty_search", "idea-1")["paper_ids"] == ["s2a", "s2b"]  # type: ignore[index]


async def test_online_novelty_falls_back_with_a_note(tmp_path: Path, corpus: ReferenceCorpus) -> None:
    from ideaharness.testing.scholarly_replay import ReplayServer, Reply

    with ReplayServer() as server:
        server.add_handler("GET", r"/graph/v1/paper/search",
                           lambda m, q, b: Reply(400, json.dumps({"error": "bad query"})))
        result, _, _ = await _score(tmp_path, corpus, "idea", novelty_source="semantic-scholar",
                                    scholar_base_url=server.base_url)
    nov = result.novelty
    assert nov is not None and nov["source"] == "corpus" and "unavailable" in nov["note"]


def _fields(block: str) -> list[str]:
    return re.findall(r"^([A-Z][a-z ]+):", block, re.MULTILINE)


async def test_both_sides_of_a_comparison_show_the_same_fields_and_no_title(
        tmp_path: Path, corpus: ReferenceCorpus) -> None:
    """A judge that prefers the side with a ``Title:`` line (the published paper's, before) finds
    none: it falls back to Idea A, so over both orders every outcome is a tie."""
    base = responder("never")

    def reply(messages: list[Message]) -> str:
        text = messages[-1]["content"]
        if "Compare Idea A and Idea B" not in text:
            return base(messages)  # type: ignore[operator]
        a, b = text.split("<idea_b>")
        v = 0 if "Title:" in b and "Title:" not in a else 1
        return json.dumps({"rating": v, "soundness": v, "contribution": v})

    for name, blind in (("blind", True), ("published", False)):
        model = ScriptedModel(reply)
        store = RunStore(tmp_path / name, {"test": name})
        cfg = ScoringSettings(elo=EloSettings(min_comparisons=2, max_comparisons=3), blind_references=blind)
        result = await IdeaScorer(corpus, model, StepRunner(store, progress=False), cfg).score("idea-1", IDEA)
        assert result.comparisons
        assert all(c.outcome == {"rating": 0.5, "soundness": 0.5, "contribution": 0.5}
                   for c in result.comparisons)
        assert result.parse_failures["rewrite"] == 0
        compares = [m[-1]["content"] for m, _ in model.calls if "Compare Idea A" in m[-1]["content"]]
        for prompt in compares:
            a = prompt.split("<idea_a>")[1].split("</idea_a>")[0]
            b = prompt.split("<idea_b>")[1].split("</idea_b>")[0]
            assert "Title:" not in prompt
            assert _fields(a) == _fields(b) == ["Main target", "Core breakthrough", "Innovative methods",
                                                "Experimental design"]
        rewrites = store.records("ligbench/rewrite")
        if blind:  # the paper's side is its rewrite, recorded once per paper with the published text
            assert {i for i, _, _ in rewrites} == {c.reference_id for c in result.comparisons}
            shown = [d["judgment"]["parsed"]["main_target"] for _, _, d in rewrites]
            assert all(any(s in p for p in compares) for s in shown)
            assert all(d["original"].startswith("Title: ") for _, _, d in rewrites)
        else:
            assert rewrites == []


async def test_a_paper_that_cannot_be_rewritten_is_not_an_opponent(
        tmp_path: Path, corpus: ReferenceCorpus) -> None:
    base = responder("always-a")

    def reply(messages: list[Message]) -> str:
        if is_rewrite(messages[-1]["content"]):
            return json.dumps({"main_target": "This paper improves accuracy by 5%."})
        return base(messages)  # type: ignore[operator]

    model = ScriptedModel(reply)
    store = RunStore(tmp_path / "run", {})
    cfg = ScoringSettings(elo=EloSettings(min_comparisons=2, max_comparisons=3))
    result = await IdeaScorer(corpus, model, StepRunner(store, progress=False), cfg).score("idea-1", IDEA)
    assert result.status == "scored" and result.comparisons == []
    assert result.parse_failures["rewrite"] == 3 + cfg.extra_opponents
    assert store.records("ligbench/compare") == []
