"""Retrieval at corpus scale: exact top-k selection, top-K fusion, optional IVF index."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ideaharness.retrieval import HybridIndex, reciprocal_rank_fusion, top_k
from ideaharness.retrieval.ann import use_ann


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=60), st.integers(0, 70), st.booleans())
def test_top_k_is_the_head_of_a_stable_sort(values: list[int], k: int, as_float32: bool) -> None:
    scores = np.asarray(values, dtype=np.float32 if as_float32 else np.float64) / 2  # many ties
    expected = np.argsort(-scores, kind="stable")[:k]
    assert top_k(scores, k).tolist() == expected.tolist()


def test_top_k_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="1-d"):
        top_k(np.zeros((2, 2)), 1)
    with pytest.raises(ValueError, match=">= 0"):
        top_k(np.zeros(3), -1)


def _corpus(dim: int = 16, seed: int = 0) -> tuple[list[str], list[str], np.ndarray]:
    """The bundled 300-paper inspiration corpus (real text) with seeded random unit embeddings."""
    raw = json.loads(resources.files("ideaharness.data.bundled").joinpath(
        "Inspiration_Corpus_300.json").read_text(encoding="utf-8"))
    texts = [f"{title}. {abstract}" for title, abstract in raw]
    rng = np.random.default_rng(seed)
    emb = rng.standard_normal((len(texts), dim)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    return [f"p{i}" for i in range(len(texts))], texts, emb


QUERIES = ["water oxidation catalyst", "shape memory polymer", "radiative cooling coating",
           "topological insulator disclination", "the of and"]


def test_top_k_fusion_is_exact_when_the_corpus_fits() -> None:
    ids, texts, emb = _corpus()
    fast = HybridIndex(ids, texts, emb, candidates=1000)
    full = HybridIndex(ids, texts, emb, candidates=None)
    rng = np.random.default_rng(1)
    for query in QUERIES:
        q = emb[rng.integers(len(ids))]
        for exclude in ((), (ids[0], ids[5])):
            assert fast.search(query, 25, query_embedding=q, exclude=exclude) == \
                full.search(query, 25, query_embedding=q, exclude=exclude)


def test_top_k_fusion_fuses_each_rankers_head() -> None:
    ids, texts, emb = _corpus()
    index = HybridIndex(ids, texts, emb, candidates=20)
    full = HybridIndex(ids, texts, emb, candidates=None)
    q = emb[7]
    for query in QUERIES:
        dense, keyword = full.dense_ranking(q), full.bm25_ranking(query)
        assert index.dense_ranking(q) == dense[:20] and index.bm25_ranking(query) == keyword[:20]
        expected = reciprocal_rank_fusion([keyword[:20], dense[:20]])[:10]
        hits = index.search(query, 10, query_embedding=q)
        assert [(h.index, h.rrf_score) for h in hits] == [(d, pytest.approx(s)) for d, s in expected]
        assert all(h.dense_rank is None or h.dense_rank <= 20 for h in hits)
        assert [h.cosine for h in hits] == pytest.approx([float(emb[h.index] @ q) for h in hits], abs=1e-6)
    # an excluded id does not shrink the pool: one more candidate per excluded id
    hits = index.search(QUERIES[0], 10, query_embedding=q, exclude=[ids[dense[0]]])
    assert ids[dense[0]] not in {h.id for h in hits}
    assert max(h.dense_rank or 0 for h in hits) <= 21


def test_nearest_cosines_are_the_sorted_head() -> None:
    ids, texts, emb = _corpus()
    index = HybridIndex(ids, texts, emb)
    cos = emb @ emb[3]
    assert index.nearest_cosines(emb[3], 5) == pytest.approx(np.sort(cos)[::-1][:5].tolist())


def _clustered(n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((32, dim))
    vectors = centers[rng.integers(32, size=n)] + 0.5 * rng.standard_normal((n, dim))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32)


def test_ivf_index_scanning_every_cell_is_exact() -> None:
    pytest.importorskip("faiss")
    n = 4000
    emb = _clustered(n, 32, seed=2)
    ids, texts = [f"d{i}" for i in range(n)], [f"token{i % 97} word{i % 13}" for i in range(n)]
    exact = HybridIndex(ids, texts, emb, candidates=100, ann="off")
    ann = HybridIndex(ids, texts, emb, candidates=100, ann="faiss", nprobe=10_000)
    assert exact.ann is None and ann.ann is not None and ann.ann.nprobe == ann.ann.nlist
    for i in (0, 11, 999):
        assert ann.dense_ranking(emb[i]) == exact.dense_ranking(emb[i])
        assert ann.search("token5 word3", 10, query_embedding=emb[i]) == \
            exact.search("token5 word3", 10, query_embedding=emb[i])


def test_ivf_index_with_few_cells_finds_most_neighbours() -> None:
    pytest.importorskip("faiss")
    emb = _clustered(4000, 32, seed=3)
    ids, texts = [str(i) for i in range(4000)], [f"w{i % 50}" for i in range(4000)]
    index = HybridIndex(ids, texts, emb, candidates=50, ann="faiss", nprobe=8)
    exact = HybridIndex(ids, texts, emb, candidates=50, ann="off")
    recall = np.mean([len(set(index.dense_ranking(emb[i])[:10]) & set(exact.dense_ranking(emb[i])[:10])) / 10
                      for i in range(0, 4000, 100)])
    assert recall >= 0.8


def test_ann_auto_needs_the_threshold() -> None:
    assert not use_ann("off", 10**7)
    assert not use_ann("auto", 10, threshold=100)
    ids, texts, emb = _corpus()
    assert HybridIndex(ids, texts, emb).ann is None  # 300 documents: far below the default threshold
