"""Blinding of the Insight ranking on the bundled TOMATO-Chem data: a judge that recognises the
target idea by its form ("The hypothesis is that ...", "the paper", measured results) finds it
only at chance once the target is rewritten; ``parity`` keeps the published text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import ideaharness
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.surface import measured_results, reference_lead, self_references
from tests.ideabench.conftest import ideabench_responder

N = 16


def has_cue(text: str) -> bool:
    return bool(reference_lead(text) or self_references(text) or measured_results(text))


def cue_judge():  # type: ignore[no-untyped-def]
    """Ranks first the idea that looks like a paper's summary, the others in label order."""
    base = ideabench_responder()

    def respond(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if "Rank the following" in user:
            labels = re.search(r"exactly once \(([A-Z, ]+)\)", user).group(1).split(", ")  # type: ignore[union-attr]
            blocks = dict(re.findall(r"Idea ([A-Z]):\n(.*?)(?=\n\nIdea [A-Z]:|\n\nAnswer)", user, re.S))
            cued = [label for label in labels if has_cue(blocks[label])]
            return json.dumps({"ranking": cued + [x for x in labels if x not in cued], "rationale": "form"})
        return base(messages)

    return respond


def _rank_records(out: Path) -> list[dict]:
    path = out / "records" / "rank_low_novelty.jsonl"
    return [json.loads(line)["data"] for line in path.read_text().splitlines()]


def test_a_judge_that_recognises_the_target_by_form_ranks_it_first_only_at_chance(tmp_path: Path) -> None:
    model = ScriptedModel(cue_judge())
    blind = ideaharness.run("ideabench", generator=model, judge=model, limit=N, out=tmp_path / "blind",
                            progress=False)
    parity = ideaharness.run("ideabench", generator=model, judge=model, limit=N, out=tmp_path / "parity",
                             parity=True, progress=False)
    # published text: the target idea carries a cue in every one of these instances -> always first
    assert parity["scenarios"]["low"]["insight"]["novelty"]["rank_counts"] == {"1": N}
    assert parity["scenarios"]["low"]["insight"]["novelty"]["insight_score"] == 0.0
    # rewritten: the judge can only follow the (shuffled) labels: every position, Insight Score near 0.5
    insight = blind["scenarios"]["low"]["insight"]["novelty"]
    assert insight["m"] == N
    assert set(insight["rank_counts"]) == {"1", "2", "3", "4"}
    assert insight["rank_counts"]["1"] <= N / 2
    assert 0.3 <= insight["insight_score"] <= 0.7
    # what the judge saw carries no cue; the published text is kept in the rewrite record for audit
    for rec in _rank_records(tmp_path / "blind"):
        assert "target" in rec["judgment"]["positions"]
    lines = (tmp_path / "blind/records/rewrite_low.jsonl").read_text().splitlines()
    rewrites = [json.loads(x)["data"] for x in lines]
    assert len(rewrites) == N and all(r["judgment"]["parse_ok"] for r in rewrites)
    assert sum(has_cue(r["original"]) for r in rewrites) == N
    assert not any(has_cue(r["judgment"]["parsed"]["idea"]) for r in rewrites)
    field = rewrites[0]["form"]["fields"][0]
    assert field["name"] == "idea" and field["min_words"] <= field["target_words"] <= field["max_words"]


def test_the_surface_check_reports_the_cues_before_and_after(tmp_path: Path) -> None:
    model = ScriptedModel(cue_judge())
    res = ideaharness.run("ideabench", generator=model, judge=model, limit=N, out=tmp_path / "r",
                          progress=False)
    blinding = res["scenarios"]["low"]["blinding"]
    assert blinding["reference_text"] == "rewritten"
    assert {k: blinding["rewrite"][k] for k in ("rewritten", "failed", "not_done")} == {
        "rewritten": N, "failed": 0, "not_done": 0}
    before = blinding["surface_published"]["features"]
    after = blinding["surface"]["features"]
    assert before["reference_lead"]["separation"] > 0.9 and before["reference_lead"]["generated"] == 0.0
    assert after["reference_lead"]["reference"] == after["self_references"]["reference"] == 0.0
    assert after["measured_results"]["separation"] == 0.5
    assert "reference_lead" in blinding["surface_published"]["separating"]
    assert "reference_lead" not in blinding["surface"]["separating"]
    report = (tmp_path / "r" / "report.html").read_text()
    assert "Blinding check" in report


def test_a_failed_rewrite_is_counted_and_the_instance_is_not_ranked(tmp_path: Path) -> None:
    base = cue_judge()

    def respond(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if user.startswith("Rewrite the "):  # keeps the published opening: never accepted
            return json.dumps({"idea": "The hypothesis is that catalysts help " * 8})  # 48 words
        return base(messages)

    model = ScriptedModel(respond)
    res = ideaharness.run("ideabench", generator=model, judge=model, limit=2, out=tmp_path / "r",
                          max_attempts=2, progress=False)
    low = res["scenarios"]["low"]
    rewrite = low["blinding"]["rewrite"]
    assert (rewrite["rewritten"], rewrite["failed"], rewrite["not_done"]) == (0, 2, 0)
    assert low["insight"]["novelty"]["m"] == 0 and low["insight"]["novelty"]["insight_score"] is None
    assert not (tmp_path / "r" / "records" / "rank_low_novelty.jsonl").exists()
    record = json.loads((tmp_path / "r/records/rewrite_low.jsonl").read_text().splitlines()[0])["data"]
    assert record["judgment"]["parse_ok"] is False and record["judgment"]["attempts"] == 2
    assert "opens like a paper's summary" in record["judgment"]["errors"][0]
    assert "the rewrite check dropped 2 of 2 target ideas" in (tmp_path / "r" / "report.html").read_text()
