"""Hybrid retrieval (BM25 + cosine, RRF) and the reference corpus with persisted embeddings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ideaharness.benchmarks.ligbench.corpus import ReferenceCorpus, embeddings_stem
from ideaharness.data.pairiq import load_pairiq
from ideaharness.errors import DataError
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


def test_corpus_persists_embeddings_and_debiases(corpus_path: Path) -> None:
    corpus = ReferenceCorpus.load(corpus_path)
    stem = embeddings_stem(corpus_path, corpus.embedding_model)
    npy = stem.with_name(stem.name + ".npy")
    assert npy.is_file() and len(corpus) == 20
    mtime = npy.stat().st_mtime_ns
    again = ReferenceCorpus.load(corpus_path)
    assert npy.stat().st_mtime_ns == mtime  # reused, not recomputed
    assert np.allclose(again.index.embeddings, corpus.index.embeddings)
    first = corpus.records[0]
    assert corpus.score(first.id, "rating") == pytest.approx(first.debiased["rating"])
    hits = corpus.retrieve("explanations for graph neural networks with logic rules over concepts", 3)
    assert "Graph" in corpus.by_id[hits[0].id].title


def test_corpus_needs_scored_records(corpus_path: Path) -> None:
    records = load_pairiq(corpus_path)[:5]
    records = records[:2] + [r.model_copy(update={"soundness": None}) for r in records[2:]]
    with pytest.raises(DataError, match="only 2 record"):
        ReferenceCorpus(records, embeddings=np.zeros((2, 384), np.float32))
