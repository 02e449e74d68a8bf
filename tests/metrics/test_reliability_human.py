"""Si et al. (2024) expert reviews and ScholarIdeas rubric coverage, on the real released data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ideaharness.data.scholarideas import load_plan
from ideaharness.errors import DataError
from ideaharness.metrics.reliability.human import (
    condition_means,
    human_ceiling,
    load_si2024_reviews,
    rubric_coverage,
    si2024_candidates,
)
from tests.shared_data import RAW, need


def si_path() -> Path:
    for candidate in si2024_candidates():
        if candidate.is_dir():
            return candidate
    return need(RAW / "si2024-ideation-human-study")


def scholarideas_plan(name: str) -> Path:
    bundled = (
        Path(__file__).resolve().parents[2] / "src/ideaharness/data/bundled/scholarideas/ScholarIdeas" / name
    )
    return bundled if bundled.is_dir() else need(RAW / "scholarideas" / "ScholarIdeas" / name)


def test_si2024_condition_means_reproduce_the_paper() -> None:
    reviews = load_si2024_reviews(si_path())
    assert len(reviews) == 337 and len({r["idea_id"] for r in reviews}) == 147
    means = condition_means(reviews)
    assert {c: round(m, 2) for c, m in means.items()} == {"Human": 4.68, "AI": 4.85, "AI_Rerank": 5.34}
    assert round(condition_means(reviews, "novelty_score")["AI"], 2) == 5.64


def test_si2024_human_ceiling() -> None:
    ceiling = human_ceiling(load_si2024_reviews(si_path()))
    assert (ceiling.n_pairs, ceiling.n_ideas) == (234, 147)
    assert ceiling.r == pytest.approx(0.1007, abs=5e-4)
    assert round(human_ceiling(load_si2024_reviews(si_path()), "novelty_score").r, 2) == 0.18


def test_si2024_bad_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "reviews.json"
    bad.write_text('{"idea_id": ["a"], "condition": ["AI", "Human"]}')
    with pytest.raises(DataError, match="reviews.json.*'condition'"):
        load_si2024_reviews(bad)


def test_rubric_coverage_with_real_rubrics() -> None:
    plan = load_plan(scholarideas_plan("ai_1"))
    major = [r for r in plan.rubrics if r.type == "weakness" and r.severity == "major"]
    assert len(major) == 8
    critique = (
        "The POMDP framework is needlessly complex and not well motivated.\n"
        "The figures are clear and the writing is good."
    )
    result = rubric_coverage(critique, plan.rubrics)
    assert result.total == 8 and result.covered == 1 and result.coverage == pytest.approx(1 / 8)
    (hit,) = [m for m in result.matches if m.covered]
    assert hit.statement.startswith("The Communication POMDP framework is overly complicated")
    assert "MiniLM" in result.method
    assert rubric_coverage("The authors should release their code.", plan.rubrics).covered == 0
    everything = rubric_coverage("\n".join(r.statement for r in major), plan.rubrics)
    assert everything.coverage == 1.0


def test_rubric_coverage_with_another_embedder_and_no_rubrics() -> None:
    plan = load_plan(scholarideas_plan("ai_1"))

    def one_hot(texts):
        return np.eye(len(texts), 64)[: len(texts)] if texts else np.zeros((0, 64))

    assert rubric_coverage("x", plan.rubrics, type="strength", severity="nonexistent").coverage is None
    assert rubric_coverage("x.", plan.rubrics, embed_fn=one_hot).covered <= 1
