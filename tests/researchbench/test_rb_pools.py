"""Candidate pools: size, level mix, no duplicate titles, every gold inside, seeded."""

from __future__ import annotations

import numpy as np
import pytest

from ideaharness.data.matching import normalise_title
from ideaharness.data.pools import build_pool, similarity_to_queries
from ideaharness.schema import Paper

WORDS = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau"
    .split()
)


def papers(prefix: str, n: int) -> list[Paper]:
    # distinct titles that are far apart after normalisation (no accidental fuzzy matches)
    return [
        Paper(id=f"{prefix}{i}", title=f"{prefix} {WORDS[i % 19]} {WORDS[(i * 7) % 19]} study {i}")
        for i in range(n)
    ]


GOLD = [
    Paper(id="g1", title="Chain rule for layered functions"),
    Paper(id="g2", title="Gradient flows in graphs"),
]


def check(pool, size: int) -> None:
    titles = [normalise_title(c.title) for c in pool.candidates]
    assert len(titles) == len(set(titles)) == size
    assert {c.title for c in pool.gold()} == {g.title for g in GOLD}
    assert [c.index for c in pool.candidates] == list(range(size))


def test_pool_size_and_level_mix_with_three_sources() -> None:
    same = papers("same", 200)
    sim = np.linspace(1, 0, 200)
    pool = build_pool(
        "x", GOLD, same_discipline=same, other_disciplines=papers("other", 60), similarity=sim, seed=1
    )
    check(pool, 75)
    counts = pool.label_counts()
    assert counts["gold"] == 2
    assert all(counts[lvl] <= 25 for lvl in ("negative_t1", "negative_t2", "negative_t3"))
    assert counts["negative_t1"] + counts["negative_t2"] + counts["negative_t3"] == 73
    # level 1 = the 25 most similar same-discipline papers (sim decreasing with index)
    level1 = {c.title for c in pool.candidates if c.label == "negative_t1"}
    assert level1 <= {p.title for p in same[:25]}
    assert pool == build_pool("x", GOLD, same_discipline=same, other_disciplines=papers("other", 60),
                              similarity=sim, seed=1)
    assert pool != build_pool("x", GOLD, same_discipline=same, other_disciplines=papers("other", 60),
                              similarity=sim, seed=2)


def test_gold_duplicates_in_the_corpus_are_not_negatives() -> None:
    corpus = papers("c", 100) + [Paper(id="dup", title="Chain rule for layered functions."),
                                 Paper(id="typo", title="Gradient flow in graphs")]
    pool = build_pool("x", GOLD, same_discipline=corpus, similarity=np.ones(len(corpus)), seed=0)
    check(pool, 75)
    near_gold = ("Chain rule for layered functions.", "Gradient flow in graphs")
    assert not any(c.title in near_gold for c in pool.candidates)


def test_single_discipline_fills_level3_from_level2_or_reports_it() -> None:
    corpus = papers("c", 150)
    filled = build_pool("x", GOLD, same_discipline=corpus, similarity=np.zeros(150), seed=0)
    check(filled, 75)
    assert filled.label_counts() == {"gold": 2, "negative_t1": 25, "negative_t2": 48}
    assert any("filled with further level-2" in n for n in filled.notes)
    empty = build_pool(
        "x", GOLD, same_discipline=corpus, similarity=np.zeros(150), seed=0, level3_fill="empty"
    )
    check(empty, 52)
    assert any("pool short: 52" in n for n in empty.notes)


def test_level1_by_citation_and_small_pool() -> None:
    cited = papers("cited", 8)
    pool = build_pool("x", GOLD, same_discipline=papers("s", 40), cited=cited, size=15, per_level=5, seed=3)
    check(pool, 15)
    level1 = {c.title for c in pool.candidates if c.label == "negative_t1"}
    assert len(level1) == 5 and level1 <= {p.title for p in cited}
    assert "level 1 by citation" in pool.notes


def test_invalid_requests() -> None:
    with pytest.raises(ValueError, match="smaller than"):
        build_pool("x", GOLD, same_discipline=[], similarity=[], size=1)
    with pytest.raises(ValueError, match="needs 'cited'"):
        build_pool("x", GOLD, same_discipline=papers("s", 3))


def test_embedding_similarity_prefers_related_papers() -> None:
    corpus = [Paper(id="a", title="Palladium catalysed cross-coupling of aryl halides"),
              Paper(id="b", title="Medieval trade routes of the Hanseatic league")]
    sim = similarity_to_queries(["Which palladium catalyst couples aryl chlorides?"], corpus)
    assert sim.shape == (2,) and sim[0] > sim[1]
