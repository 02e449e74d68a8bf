"""IdeaBench pipeline logic with a scripted model: positions, parity, resume, parse failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ideaharness
from ideaharness.llm.scripted import ScriptedModel
from tests.ideabench.conftest import ideabench_responder


def _records(out: Path, step: str) -> list[dict]:
    path = out / "records" / f"{step}.jsonl"
    return [json.loads(line)["data"] for line in path.read_text().splitlines()]


def test_run_scores_and_resumes(tmp_path: Path) -> None:
    ideas_text = "Idea {i}: minimise {x_i} under {{ y }} to test whether the constrained gel stays strong"
    model = ScriptedModel(ideabench_responder(ideas_text=ideas_text))
    out = tmp_path / "run"
    results = ideaharness.run("ideabench", generator=model, judge=model, limit=4, out=out, progress=False)
    low = results["scenarios"]["low"]
    assert low["instances_generated"] == 4
    # the scripted judge always ranks the target last: Insight Score 1
    assert low["insight"]["novelty"]["insight_score"] == 1.0
    assert low["insight"]["feasibility"]["m"] == 4
    assert low["overlap"]["mean"] == 7.0
    assert (out / "report.html").exists() and (out / "results.json").exists()
    # ideas with braces went through prompts and came back verbatim
    ideas = _records(out, "generate_low")[0]["judgment"]["parsed"]
    assert "{x_i}" in ideas[0]["idea"] and "{{ y }}" in ideas[0]["idea"]
    calls = len(model.calls)
    again = ideaharness.run("ideabench", generator=model, judge=model, limit=4, out=out, progress=False)
    assert len(model.calls) == calls  # nothing redone
    assert again["scenarios"] == results["scenarios"]


def test_target_position_is_shuffled_by_default_and_first_under_parity(tmp_path: Path) -> None:
    model = ScriptedModel(ideabench_responder())
    ideaharness.run("ideabench", generator=model, judge=model, limit=8, out=tmp_path / "a", progress=False)
    labels = [r["target_label"] for r in _records(tmp_path / "a", "rank_low_novelty")]
    assert len(set(labels)) > 1
    positions = _records(tmp_path / "a", "rank_low_novelty")[0]["judgment"]["positions"]
    assert "target" in positions and len(positions) == 4
    ideaharness.run(
        "ideabench", generator=model, judge=model, limit=8, out=tmp_path / "b", parity=True, progress=False
    )
    assert {r["target_label"] for r in _records(tmp_path / "b", "rank_low_novelty")} == {"A"}


def test_same_seed_same_order_other_seed_other_order(tmp_path: Path) -> None:
    model = ScriptedModel(ideabench_responder())
    runs = {}
    for name, seed in (("s0", 0), ("s0b", 0), ("s1", 1)):
        ideaharness.run(
            "ideabench",
            generator=model,
            judge=model,
            limit=8,
            seed=seed,
            out=tmp_path / name,
            progress=False,
            use_cache=False,
        )
        runs[name] = [r["target_label"] for r in _records(tmp_path / name, "rank_low_novelty")]
    assert runs["s0"] == runs["s0b"]
    assert runs["s0"] != runs["s1"]


def test_unparsable_ranking_is_counted_not_scored(tmp_path: Path) -> None:
    base = ideabench_responder()

    def respond(messages: list[dict[str, str]]) -> str:
        if "Rank the following" in messages[-1]["content"]:
            return '{"ranking": ["A", "A", "B", "C"]}'  # repeats an idea: never a partial rank
        return base(messages)

    model = ScriptedModel(respond)
    results = ideaharness.run(
        "ideabench", generator=model, judge=model, limit=2, out=tmp_path / "r", max_attempts=2, progress=False
    )
    novelty = results["scenarios"]["low"]["insight"]["novelty"]
    assert novelty["insight_score"] is None and novelty["m"] == 0
    assert novelty["parse_failures"] == 2
    record = _records(tmp_path / "r", "rank_low_novelty")[0]["judgment"]
    assert record["parse_ok"] is False and record["parsed"] is None and record["attempts"] == 2


def test_other_settings_in_same_directory_are_refused(tmp_path: Path) -> None:
    model = ScriptedModel(ideabench_responder())
    ideaharness.run("ideabench", generator=model, judge=model, limit=1, out=tmp_path / "r", progress=False)
    with pytest.raises(ideaharness.errors.UserError, match="different settings"):
        ideaharness.run(
            "ideabench", generator=model, judge=model, limit=1, out=tmp_path / "r", seed=5, progress=False
        )


def test_shards_merge_into_the_full_run(tmp_path: Path) -> None:
    model = ScriptedModel(ideabench_responder())
    full = ideaharness.run(
        "ideabench",
        generator=model,
        judge=model,
        limit=6,
        out=tmp_path / "full",
        progress=False,
        use_cache=False,
    )
    merged = tmp_path / "merged" / "records"
    merged.mkdir(parents=True)
    for i in range(2):
        shard_dir = tmp_path / f"shard{i}"
        ideaharness.run(
            "ideabench",
            generator=model,
            judge=model,
            limit=6,
            out=shard_dir,
            shard=(i, 2),
            progress=False,
            use_cache=False,
        )
        for part in (shard_dir / "records").glob("*.jsonl"):
            with (merged / part.name).open("a") as fh:
                fh.write(part.read_text())
    (tmp_path / "merged" / "config.json").write_text((tmp_path / "full" / "config.json").read_text())
    calls = len(model.calls)
    result = ideaharness.run(
        "ideabench", generator=model, judge=model, limit=6, out=tmp_path / "merged", progress=False
    )
    assert len(model.calls) == calls
    low, full_low = result["scenarios"]["low"], full["scenarios"]["low"]
    assert low["insight"] == full_low["insight"]
    assert low["overlap"] == full_low["overlap"]
    # BERTScore batches differ between shards: equal up to float rounding
    assert low["similarity"]["mean"] == pytest.approx(full_low["similarity"]["mean"], abs=1e-5)


def _instance_jsonl(path: Path, n_refs: int, abstract_words: int) -> Path:
    from ideaharness.data.registry import write_instances_jsonl
    from ideaharness.schema import Instance, Paper, Reference

    refs = [
        Reference(id=f"r{i}", title=f"Reference {i}", abstract=" ".join(["word"] * abstract_words),
                  citation_count=50 if i % 2 == 0 else 1, intents=["background"],
                  publication_types=["JournalArticle"])
        for i in range(n_refs)
    ]
    inst = Instance(id="x/1", dataset="custom", domain="biomedical", references=refs,
                    target=Paper(id="t", title="Target", abstract="We test whether X causes Y in Z."))
    write_instances_jsonl([inst], path)
    return path


def test_low_resource_uses_relevance_filter_and_k(tmp_path: Path) -> None:
    data = _instance_jsonl(tmp_path / "d.jsonl", n_refs=12, abstract_words=20)
    model = ScriptedModel(ideabench_responder())
    ideaharness.run("ideabench", generator=model, judge=model, data=str(data), out=tmp_path / "r",
                    k_references=3, progress=False)
    shown = _records(tmp_path / "r", "generate_low")[0]["references"]
    assert len(shown) == 3
    # only references with >= 5 citations survive the relevance filter (even indices)
    assert all(int(ref_id[1:]) % 2 == 0 for ref_id in shown)


def test_high_resource_truncates_to_context_and_says_so(tmp_path: Path) -> None:
    data = _instance_jsonl(tmp_path / "d.jsonl", n_refs=10, abstract_words=400)
    model = ScriptedModel(ideabench_responder())
    results = ideaharness.run("ideabench", generator=model, judge=model, data=str(data), out=tmp_path / "r",
                              scenarios=["high"], max_prompt_tokens=1500, progress=False)
    record = _records(tmp_path / "r", "generate_high")[0]
    assert record["truncated"] is True and 1 <= len(record["references"]) < 10
    assert results["scenarios"]["high"]["references_truncated"] == 1
    assert "truncated" in (tmp_path / "r" / "report.html").read_text()
