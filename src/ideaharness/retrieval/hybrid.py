"""Hybrid keyword + embedding retrieval (LigBench's comparison-paper search).

LigBench retrieves comparison papers from PAIR-IQ "by keyword and embedding similarity" without
further detail. We rank the corpus twice — BM25 (``bm25s``, English stopwords) over the query
tokens and cosine similarity of MiniLM embeddings — and fuse the two rankings by reciprocal rank
fusion (Cormack, Clarke & Büttcher, SIGIR 2009):

    RRF(d) = Σ_r 1 / (k + rank_r(d)),  rank 1-based, k = 60

Documents with a BM25 score of 0 are absent from the keyword ranking (they add nothing).
Embeddings of a corpus are computed once and persisted next to it (:func:`cached_embeddings`).
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from ideaharness.metrics.embeddings import DEFAULT_EMBEDDING_MODEL, embed

RRF_K = 60


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Fuse rankings of document indices by RRF(d) = Σ_r 1/(k + rank_r(d)) (Cormack et al. 2009).

    Args:
        rankings: each a list of document indices, best first (a document may be absent).
        k: the RRF constant (60 in the original paper).

    Returns:
        ``(index, fused score)`` sorted by score descending, ties broken by lower index.
    """
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, 1):
            scores[int(doc)] = scores.get(int(doc), 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def texts_hash(texts: Sequence[str], model: str) -> str:
    """sha256 of the embedding model name and the texts (identifies persisted embeddings)."""
    h = hashlib.sha256(model.encode())
    for text in texts:
        h.update(b"\x00" + text.encode("utf-8"))
    return h.hexdigest()


def cached_embeddings(
    texts: Sequence[str], stem: str | Path, model: str = DEFAULT_EMBEDDING_MODEL
) -> np.ndarray:
    """Embeddings of ``texts`` persisted as ``<stem>.npy`` + ``<stem>.json`` (model, text hash).

    Loaded when the stored hash matches the texts and model, else computed with
    :func:`ideaharness.metrics.embeddings.embed` and written (a read-only location only warns).

    Returns:
        float32 array (len(texts), dim), rows L2-normalised.
    """
    base = Path(stem)
    npy, meta = base.with_name(base.name + ".npy"), base.with_name(base.name + ".json")
    digest = texts_hash(texts, model)
    if npy.is_file() and meta.is_file():
        try:
            info = json.loads(meta.read_text(encoding="utf-8"))
            if info.get("sha256") == digest:
                arr = np.load(npy)
                if arr.shape[0] == len(texts):
                    return np.asarray(arr, dtype=np.float32)
        except (OSError, ValueError):
            pass
    vectors = embed(list(texts), model=model)
    try:
        npy.parent.mkdir(parents=True, exist_ok=True)
        np.save(npy, vectors)
        meta.write_text(json.dumps({"model": model, "sha256": digest, "n": len(texts),
                                    "dim": int(vectors.shape[1]) if vectors.ndim == 2 else 0}),
                        encoding="utf-8")
    except OSError as exc:
        warnings.warn(f"could not persist embeddings at {npy}: {exc}", stacklevel=2)
    return vectors


class RetrievalHit(BaseModel):
    """One retrieved document: fused rank/score and the rank in each list (None = not ranked)."""

    index: int
    id: str
    rank: int
    rrf_score: float
    bm25_rank: int | None
    dense_rank: int | None
    cosine: float


class HybridIndex:
    """BM25 + dense index over a fixed corpus.

    Args:
        ids: document ids, same length as ``texts``.
        texts: document texts.
        embeddings: (n, dim) L2-normalised rows; computed with ``embedding_model`` if None.
        embedding_model: model for documents (if needed) and queries.

    Raises:
        ValueError: lengths differ or the corpus is empty.
    """

    def __init__(self, ids: Sequence[str], texts: Sequence[str], embeddings: np.ndarray | None = None,
                 *, embedding_model: str = DEFAULT_EMBEDDING_MODEL) -> None:
        import bm25s

        if len(ids) != len(texts) or not texts:
            raise ValueError(f"need as many ids as texts (>0), got {len(ids)} and {len(texts)}")
        self.ids = list(ids)
        self.embedding_model = embedding_model
        self.embeddings = embeddings if embeddings is not None else embed(list(texts), model=embedding_model)
        if self.embeddings.shape[0] != len(texts):
            raise ValueError(f"{self.embeddings.shape[0]} embeddings for {len(texts)} texts")
        self._bm25 = bm25s.BM25()
        self._bm25.index(bm25s.tokenize(list(texts), stopwords="en", show_progress=False),
                         show_progress=False)

    def bm25_ranking(self, query: str) -> list[int]:
        """Document indices with a positive BM25 score, best first."""
        import bm25s

        tokens = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
        if not tokens:
            return []
        scores = np.asarray(self._bm25.get_scores(tokens), dtype=float)
        order = np.argsort(-scores, kind="stable")
        return [int(i) for i in order if scores[i] > 0]

    def search(self, query: str, k: int = 10, *, query_embedding: np.ndarray | None = None,
               exclude: Sequence[str] = (), rrf_k: int = RRF_K) -> list[RetrievalHit]:
        """Top-``k`` documents for ``query`` by RRF of the BM25 and cosine rankings.

        ``exclude`` lists document ids never returned (e.g. the query paper itself).
        """
        q = query_embedding if query_embedding is not None else embed([query], model=self.embedding_model)[0]
        cos = self.embeddings @ np.asarray(q, dtype=np.float32).reshape(-1)
        dense = [int(i) for i in np.argsort(-cos, kind="stable")]
        keyword = self.bm25_ranking(query)
        bm25_rank = {doc: r for r, doc in enumerate(keyword, 1)}
        dense_rank = {doc: r for r, doc in enumerate(dense, 1)}
        skip = set(exclude)
        hits: list[RetrievalHit] = []
        for doc, score in reciprocal_rank_fusion([keyword, dense], k=rrf_k):
            if self.ids[doc] in skip:
                continue
            hits.append(RetrievalHit(index=doc, id=self.ids[doc], rank=len(hits) + 1, rrf_score=score,
                                     bm25_rank=bm25_rank.get(doc), dense_rank=dense_rank.get(doc),
                                     cosine=float(cos[doc])))
            if len(hits) >= k:
                break
        return hits
