"""ResearchBench JSONL release loaders, on invented fixtures in the release's field layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ideaharness.data.researchbench_jsonl import (
    load_generation_jsonl,
    load_papers_jsonl,
    load_ranking_jsonl,
    load_release_dir,
    load_retrieve_jsonl,
    sample_id_doi,
)
from ideaharness.errors import DataError

RELEASE = Path(__file__).parent / "fixtures" / "release"


def test_papers_jsonl_maps_fields() -> None:
    instances = load_papers_jsonl(RELEASE / "papers.jsonl")
    assert [i.domain for i in instances] == ["Chemistry", "Physics"]
    first = instances[0]
    assert first.id == "Chemistry/" + sample_id_doi("10.1000/Chem.0001") == "Chemistry/101000chem0001"
    assert first.target.external_ids == {"DOI": "10.1000/Chem.0001"}
    assert first.research_question.startswith("How can ammonia")
    assert [r.relation for r in first.references] == ["Provides mechanism 1.", "Provides mechanism 2."]
    assert first.references[0].abstract == "Invented abstract 1 for Chemistry."
    assert first.ground_truth.hypothesis.startswith("Catalyst X works")
    assert first.ground_truth.fine_grained_hypothesis.startswith("Detailed:")


def test_retrieve_jsonl_pool_is_used_as_given() -> None:
    tasks = load_retrieve_jsonl(RELEASE / "retrieve.jsonl")
    pool = tasks[1].to_pool()
    assert pool.source == "given" and pool.instance_id == "Physics/101000phys0002"
    assert [c.index for c in pool.candidates] == list(range(20))
    assert pool.label_counts() == {"gold": 2, "negative_t1": 6, "negative_t2": 6, "negative_t3": 5,
                                   "negative_unknown": 1}
    assert [c.title for c in pool.gold()] == tasks[1].gold_titles
    assert tasks[0].default_params["window_size"] == 15


def test_generation_and_ranking_jsonl() -> None:
    gen = load_generation_jsonl(RELEASE / "generation.jsonl")
    assert len(gen[0].references) == 2 and gen[0].ground_truth.hypothesis
    ranking = load_ranking_jsonl(RELEASE / "ranking.jsonl")
    assert len(ranking[0].fake_negative_hypotheses) == 5
    assert len(ranking[0].negatives) == 15 and ranking[0].negatives[0].startswith("Fake negative 0")


def test_release_dir_loads_all_four() -> None:
    release = load_release_dir(RELEASE)
    sizes = {len(release.papers), len(release.generation), len(release.retrieve), len(release.ranking)}
    assert sizes == {2}
    assert release.instances() is release.papers


def test_bad_row_names_file_row_and_field(tmp_path: Path) -> None:
    rows = (RELEASE / "papers.jsonl").read_text().splitlines()
    broken = json.loads(rows[1])
    del broken["research_question"]
    path = tmp_path / "papers.jsonl"
    path.write_text(rows[0] + "\n" + json.dumps(broken) + "\n")
    with pytest.raises(DataError, match=r"papers\.jsonl: line 2, field 'research_question'"):
        load_papers_jsonl(path)
    path.write_text(rows[0] + "\n{not json\n")
    with pytest.raises(DataError, match="line 2: not valid JSON"):
        load_papers_jsonl(path)


def test_gold_title_must_be_a_gold_candidate(tmp_path: Path) -> None:
    row = json.loads((RELEASE / "retrieve.jsonl").read_text().splitlines()[0])
    row["gold_titles"] = ["A paper that is not in the pool"]
    path = tmp_path / "retrieve.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(DataError, match="line 1, field 'gold_titles'"):
        load_retrieve_jsonl(path)


def test_empty_dir_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no ResearchBench release file"):
        load_release_dir(tmp_path)
