"""Loader of the published target_paper_data.json schema, TOMATO mapping and external-idea import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ideaharness.benchmarks.aiideabench.decompose import apply_decomposition, parse_decomposition
from ideaharness.data.aiideabench import (
    from_tomato,
    inspiration_text,
    load_target_paper_data,
    needs_decomposition,
)
from ideaharness.errors import DataError, ParseError
from ideaharness.generation.aiideabench import parse_idea
from ideaharness.generation.external import load_external_ideas
from ideaharness.schema import GroundTruth, Instance, Paper, Reference

FIX = Path(__file__).parent / "fixtures"


def test_load_published_schema() -> None:
    insts = load_target_paper_data(FIX / "target_paper_data.json")
    assert [i.id for i in insts] == ["aiib-0", "aiib-1", "aiib-2"]
    first = insts[0]
    # revised_topic wins; the original topic (with the method name) is kept aside
    assert first.topic == "The topic of this paper is efficient attention for long documents."
    assert "X0" in first.extra["original_topic"]
    # revised_topic null -> topic
    assert insts[2].topic.endswith("with our named method X2.")
    assert first.ground_truth.experiment_plan == (
        "Block-sparse attention: Split the sequence into blocks and attend within and across "
        "selected blocks.\n"
        "Global memory tokens: Add a few tokens that attend to all positions to carry global context."
    )
    assert first.ground_truth.motivation.startswith("Long-document transformers")
    assert first.extra["keywords"] == ["long document", "sparse attention"]
    assert len(first.references) == 3 and first.references[0].title.startswith("Longformer")
    assert inspiration_text(first.references[0]).startswith("Longformer: the long-document transformer. ")
    assert not needs_decomposition(first)
    assert first.knowledge_cutoff.isoformat() == "2023-10-03"


def test_loader_names_row_and_field(tmp_path: Path) -> None:
    data = json.loads((FIX / "target_paper_data.json").read_text())
    del data[1]["summary"]["method"]["targeted_designs_details"][0]["description"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    field = r"row 1, field 'summary.method.targeted_designs_details\[0\].description'"
    with pytest.raises(DataError, match=field):
        load_target_paper_data(bad)


def test_tomato_mapping_and_decomposition_parse() -> None:
    inst = Instance(
        id="tomato-chem/1", dataset="tomato-chem", target=Paper(id="1", title="T"),
        research_question="How can we make X?", references=[Reference(id="r", title="R", abstract="A")],
        ground_truth=GroundTruth(hypothesis="H", idea="H"),
    )
    mapped = from_tomato([inst])[0]
    assert mapped.topic == "How can we make X?" and needs_decomposition(mapped)
    topic = "The topic of this paper is making X at room temperature."
    motivation = "Prior routes to X need high pressure; a catalyst could lower the barrier."
    steps = ["Step 1: screen catalysts for X.", "Step 2: measure the yield at room temperature."]
    body = json.dumps({"topic": topic, "motivation": motivation, "experiment_plan": steps})
    reply = "```json\n" + body + "\n```"
    parsed = parse_decomposition(reply)
    assert parsed == {"topic": topic, "motivation": motivation, "experiment_plan": "\n".join(steps)}
    done = apply_decomposition(mapped, parsed)
    assert done.topic == "How can we make X?" and done.ground_truth.experiment_plan == "\n".join(steps)
    assert done.extra["decomposed_topic"] == topic and not needs_decomposition(done)
    for bad in ("", "\u200b", "..."):
        with pytest.raises(ParseError):
            parse_decomposition(json.dumps({"topic": topic, "motivation": bad, "experiment_plan": steps}))


def test_external_ideas_both_formats(tmp_path: Path) -> None:
    ai = load_external_ideas(FIX / "ai_scientist_ideas.json")
    assert set(ai) == {"aiib-0", "aiib-1"}
    idea = ai["aiib-0"][0]
    assert idea.title == "Sparse attention with learned global tokens"
    assert idea.experiment_plan.startswith("Step 1: add 8 global tokens")
    assert idea.provenance.generator == "ai_scientist_ideas"
    jl = load_external_ideas(FIX / "external_ideas.jsonl", system="chunky")
    assert jl["aiib-1"][0].motivation.startswith("Unlabeled pixels")
    assert jl["aiib-1"][0].provenance.generator == "chunky"
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"instance_id": "a", "motivation": "Attention windows are too short."}\n')
    with pytest.raises(DataError, match="line 1, field 'experiment_plan': missing or empty"):
        load_external_ideas(bad)


def test_parse_idea_accepts_ai_scientist_keys() -> None:
    motivation = "Quadratic attention is slow on long documents; learned global tokens keep context cheaply."
    plan = "Step 1: add 8 global tokens. Step 2: compare with Longformer."
    reply = json.dumps({"Title": "t", "Motivation": motivation, "Experiment": plan})
    assert parse_idea(reply) == {"title": "t", "motivation": motivation, "experiment_plan": plan}
    with pytest.raises(ParseError):
        parse_idea(json.dumps({"title": "t", "motivation": motivation}))
