"""Hybrid retrieval (BM25 + cosine, RRF) and the reference corpus with persisted embeddings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ideaharness.benchmarks.ligbench.corpus import ReferenceCorpus
from ideaharness.data.pairiq import load_pairiq
from ideaharness.errors import DataError
from ideaharness.metrics.embedding_store import EmbeddingRuntime
from ideaharness.retrieval import HybridIndex, reciprocal_rank_fusion


def test_reciprocal_rank_fusion_by_hand() -> None:
    fused = reciprocal_rank_fusion([[2, 0, 1], [0, 3]], k=60)
    scores = dict(fused)
    assert scores[0] == pytest.approx(1 / 62 + 1 / 61)
    assert scores[2] == pytest.approx(1 / 61)
    assert scores[3] == pytest.approx(1 / 62)
    assert [d for d, _ in fused] == [0, 2, 3, 1]


def test_hybrid_index_with_given_embeddings() -> None:
    texts = ["graph neural network explanations", "reinforcement learning offline", "protein folding"]
    emb = np.eye(3, dtype=np.float32)
    index = HybridIndex(["g", "r", "p"], texts, emb)
    hits = index.search("offline reinforcement", k=2, query_embedding=np.array([0, 0.6, 0.8], np.float32))
    assert [h.id for h in hits] == ["r", "p"]  # r: BM25 1st + dense 2nd; p: dense 1st only
    assert hits[0].bm25_rank == 1 and hits[0].dense_rank == 2 and hits[1].bm25_rank is None
    assert [h.id for h in index.search("offline", k=3, query_embedding=emb[1], exclude=["r"])][0] != "r"


def test_corpus_keeps_embeddings_in_the_store_not_beside_it(corpus_path: Path, tmp_path: Path) -> None:
    """Issue 33, item 5: the papers' embeddings go to the embedding store under the cache folder and
    are reused from it; the corpus folder is left exactly as it was."""
    before = sorted(p.name for p in corpus_path.parent.iterdir())
    runtime = EmbeddingRuntime(store_path=tmp_path / "cache" / "embeddings.sqlite")
    corpus = ReferenceCorpus.load(corpus_path, runtime=runtime)
    assert len(corpus) == 20 and sorted(p.name for p in corpus_path.parent.iterdir()) == before
    (label, counts), = runtime.counts.items()
    assert counts.embedded == 20 and counts.reused == 0
    again_rt = EmbeddingRuntime(store_path=tmp_path / "cache" / "embeddings.sqlite")
    again = ReferenceCorpus.load(corpus_path, runtime=again_rt)
    assert again_rt.counts[label].embedded == 0 and again_rt.counts[label].reused == 20  # from the store
    assert np.allclose(again.index.embeddings, corpus.index.embeddings)
    off = EmbeddingRuntime(cache=False)  # --no-embedding-cache: computed, nothing stored anywhere
    assert off.store is None
    uncached = ReferenceCorpus.load(corpus_path, runtime=off)
    assert np.allclose(uncached.index.embeddings, corpus.index.embeddings, atol=1e-5)
    assert off.counts[label].embedded == 20
    assert sorted(p.name for p in corpus_path.parent.iterdir()) == before
    first = corpus.records[0]
    assert corpus.score(first.id, "rating") == pytest.approx(first.debiased["rating"])
    hits = corpus.retrieve("explanations for graph neural networks with logic rules over concepts", 3)
    assert "Graph" in corpus.by_id[hits[0].id].title


def test_corpus_needs_scored_records(corpus_path: Path) -> None:
    records = load_pairiq(corpus_path)[:5]
    records = records[:2] + [r.model_copy(update={"soundness": None}) for r in records[2:]]
    with pytest.raises(DataError, match="only 2 record"):
        ReferenceCorpus(records, embeddings=np.zeros((2, 384), np.float32))
