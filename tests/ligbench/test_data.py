"""PAIR-IQ records and ScholarIdeas plans: loaders, projection, debiasing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ideaharness.data.pairiq import (
    PAPER_VENUE_MEANS,
    PairIQRecord,
    debias,
    load_pairiq,
    project_score,
    project_venue_scores,
    record_from_dict,
    venue_means,
    write_pairiq,
)
from ideaharness.data.scholarideas import bundled_root, load_scholarideas, parse_plan
from ideaharness.errors import DataError

SCHOLARIDEAS = bundled_root()

FIXTURE = Path(__file__).parent / "fixtures" / "pairiq_mini.jsonl"


def test_fixture_loads_in_paper_spelling() -> None:
    records = load_pairiq(FIXTURE)
    assert len(records) == 20
    first = records[0]
    assert first.contribution == 3.0 and first.primary_area == "alignment"  # "contribute", "primary area"
    assert first.novelty is None  # the release's "0" string means "no score"
    assert first.analysis is not None and first.analysis.innovative_methods.startswith("1. ")
    assert first.venue == "ICLR 2024"


def test_write_and_read_back(tmp_path: Path) -> None:
    records = load_pairiq(FIXTURE)[:3]
    path = write_pairiq(records, tmp_path / "out.jsonl")
    line = json.loads(path.read_text().splitlines()[0])
    assert "contribute" in line and "primary area" in line and "contribution" not in line
    assert load_pairiq(path) == records


def test_directory_and_json_list(tmp_path: Path) -> None:
    (tmp_path / "ICLR" / "2024").mkdir(parents=True)
    rows = [json.loads(x) for x in FIXTURE.read_text().splitlines()[:2]]
    (tmp_path / "ICLR" / "2024" / "a.json").write_text(json.dumps(rows[0]))
    (tmp_path / "ICLR" / "2024" / "b.json").write_text(json.dumps([rows[1]]))
    (tmp_path / "manifest.json").write_text("{}")
    (tmp_path / ".minilm.json").write_text("{}")
    assert [r.title for r in load_pairiq(tmp_path)] == [rows[0]["title"], rows[1]["title"]]
    # a builder output directory: only its pairiq.jsonl holds records
    built = tmp_path / "built"
    built.mkdir()
    write_pairiq(load_pairiq(FIXTURE)[:4], built / "pairiq.jsonl")
    (built / "submissions.state.jsonl").write_text('{"kind": "venue_done"}\n')
    (built / "extra.json").write_text('{"not": "a record"}')
    assert len(load_pairiq(built)) == 4


def test_bad_rows_name_file_row_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    rows = [{"title": "x", "rating": 2}, {"title": "y", "rating": 7}]
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError, match=r"bad.jsonl: row 2, field 'rating'"):
        load_pairiq(bad)
    bad.write_text(json.dumps({"abstract": "no title"}) + "\n")
    with pytest.raises(DataError, match=r"row 1, field 'title'"):
        load_pairiq(bad)
    with pytest.raises(DataError, match="no such file"):
        load_pairiq(tmp_path / "missing.jsonl")


def test_project_score() -> None:
    assert project_score(1, "1-10") == 0.0
    assert project_score(10, (1, 10)) == 5.0
    assert project_score(5.5, "1-10") == pytest.approx(2.5)
    assert project_score(3, "1-4") == pytest.approx(5 * 2 / 3)
    with pytest.raises(ValueError):
        project_score(11, "1-10")
    with pytest.raises(ValueError):
        project_score(2, "4-1")
    assert project_venue_scores({"rating": 5.5, "contribution": 2.5, "soundness": None}, "ICLR 2024") == {
        "rating": pytest.approx(2.5), "contribution": pytest.approx(2.5), "soundness": None}
    with pytest.raises(ValueError, match="AAAI"):
        project_venue_scores({"rating": 5}, "AAAI")


def test_debiasing_equalises_venue_means() -> None:
    records = load_pairiq(FIXTURE)
    out = debias(records)
    for dim in ("rating", "contribution", "soundness"):
        before = venue_means(records, dim)
        assert len({round(v, 6) for k, v in before.items() if k != "all"}) > 1  # the fixture is biased
        groups: dict[str, list[float]] = {}
        for r in out:
            groups.setdefault(r.venue, []).append(r.debiased[dim])
        for venue, values in groups.items():
            assert sum(values) / len(values) == pytest.approx(before["all"]), venue
        # ŝ = s − μ_venue + μ_all, record by record
        assert out[0].debiased[dim] == pytest.approx(getattr(records[0], dim) - before[out[0].venue]
                                                     + before["all"])


def test_debias_with_paper_means() -> None:
    rec = record_from_dict({"title": "t", "conference": "ICLR", "year": 2024, "rating": 2.74,
                            "contribute": 3.0, "soundness": 2.0})
    out = debias([rec], means=PAPER_VENUE_MEANS)[0]
    assert out.debiased["rating"] == pytest.approx(2.825)
    assert out.score("contribution") == pytest.approx(3.0 - 2.689 + 2.758)
    other = PairIQRecord(title="u", conference="AAAI", year=2024, rating=1.0)
    with pytest.raises(ValueError, match="AAAI 2024"):
        debias([other], means=PAPER_VENUE_MEANS)


def test_scholarideas_counts() -> None:
    ideas = load_scholarideas(SCHOLARIDEAS)
    assert len(ideas) == 118
    assert sum(len(i.rubrics) for i in ideas) == 1076
    assert {i.domain for i in ideas} == {"ai", "neuro", "biochem", "eco"}
    first = ideas[0]
    assert first.id == "ai_1" and first.title == "Defining Deception in Decision Making"
    assert first.problem and first.method and first.experiment_design and first.cutoff is not None
    assert [i.id for i in load_scholarideas(SCHOLARIDEAS, domains=("eco",), limit=2)] == ["eco_1", "eco_2"]
    assert first.to_idea().text == first.text


def test_parse_plan_requires_sections() -> None:
    p, m, e = "Models overfit to noise.", "Regularise the loss with priors.", "Train on three datasets."
    fields = parse_plan(f"# Research Plan: T\n## Problem\n{p}\n## Method\n{m}\n## Experiment Design\n{e}\n")
    assert fields == {"title": "T", "problem": p, "method": m, "experiment_design": e}
    with pytest.raises(DataError, match="## Method"):
        parse_plan(f"## Problem\n{p}\n## Experiment Design\n{e}\n", path="x.txt")
    for degenerate in ("", "...", "\u200b"):  # a present but empty section is not a plan (issue 9.4)
        with pytest.raises(DataError, match="x.txt: field '## Method'"):
            parse_plan(f"## Problem\n{p}\n## Method\n{degenerate}\n## Experiment Design\n{e}\n", path="x.txt")
