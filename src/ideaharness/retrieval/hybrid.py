"""Hybrid keyword + embedding retrieval (LigBench's comparison-paper search).

LigBench retrieves comparison papers from PAIR-IQ "by keyword and embedding similarity" without
further detail. We rank the corpus twice — BM25 (``bm25s``, English stopwords) over the query
tokens and cosine similarity of MiniLM embeddings — and fuse the two rankings by reciprocal rank
fusion (Cormack, Clarke & Büttcher, SIGIR 2009):

    RRF(d) = Σ_r 1 / (k + rank_r(d)),  rank 1-based, k = 60

Documents with a BM25 score of 0 are absent from the keyword ranking (they add nothing).
A corpus's embeddings are computed through the run's embedding store (``runtime``: the cache
folder, :mod:`ideaharness.metrics.embedding_store`), never written beside the corpus.

At corpus scale each ranker contributes only its top ``candidates`` documents (default
:data:`DEFAULT_CANDIDATES`; :func:`~ideaharness.retrieval.topk.top_k`, no full sort), so a query
costs O(n) instead of O(n log n). A document beyond a ranker's top ``candidates`` adds at most
1/(k + candidates + 1) there, so the fused top-10 barely moves (benchmarks/retrieval_scale.py
measures the agreement); with n ≤ ``candidates`` the result is exactly the full fusion. Above
:data:`~ideaharness.retrieval.ann.ANN_THRESHOLD` documents the dense top-K comes from an optional
IVF index when faiss is installed (:mod:`ideaharness.retrieval.ann`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from ideaharness.metrics.embedding_store import EmbeddingRuntime
from ideaharness.metrics.embeddings import DEFAULT_EMBEDDING_MODEL, embed
from ideaharness.retrieval.ann import ANN_THRESHOLD, DEFAULT_NPROBE, AnnMode, IVFIndex, use_ann
from ideaharness.retrieval.topk import top_k

RRF_K = 60
DEFAULT_CANDIDATES = 1000
"""Documents each ranker contributes to the fusion (None = the whole corpus, the exact fusion)."""


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


def fused_top(rankings: Sequence[np.ndarray], top: int, k: int = RRF_K) -> tuple[np.ndarray, np.ndarray]:
    """The ``top`` best documents of :func:`reciprocal_rank_fusion` over index arrays, vectorised.

    Args:
        rankings: int arrays of document indices, best first (no repeats within one array).
        top: how many fused documents to return.
        k: the RRF constant.

    Returns:
        ``(indices, scores)``: the same documents, order and float scores as the head of
        :func:`reciprocal_rank_fusion` (contributions are summed in the same order).
    """
    parts = [np.asarray(r, dtype=np.int64) for r in rankings]
    docs = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
    if docs.size == 0:
        return docs, np.empty(0, dtype=float)
    weights = np.concatenate([1.0 / (k + np.arange(1, len(r) + 1, dtype=np.float64)) for r in parts])
    unique, inverse = np.unique(docs, return_inverse=True)
    scores = np.bincount(inverse, weights=weights, minlength=unique.shape[0])
    best = top_k(scores, top)  # unique is ascending, so ties go to the lower document index
    return unique[best], scores[best]


def _rank_in(ranking: np.ndarray, doc: int) -> int | None:
    where = np.flatnonzero(ranking == doc)
    return int(where[0]) + 1 if where.size else None


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
        candidates: documents each ranker contributes to the fusion, >= 1 (None = all: the exact
            fusion over full rankings). With n <= candidates both are identical.
        ann: ``"auto"`` (an IVF index for the dense ranker when faiss is installed and
            n >= ``ann_threshold``), ``"off"`` or ``"faiss"`` (always; needs faiss).
        ann_threshold: corpus size from which ``ann="auto"`` builds the index.
        nprobe: IVF cells scanned per query (see :class:`~ideaharness.retrieval.ann.IVFIndex`).
        runtime: device and embedding store for documents and queries (None: CPU, default store).

    Raises:
        ValueError: lengths differ, the corpus is empty or ``candidates`` < 1.
        UserError: ``ann="faiss"`` without faiss installed.
    """

    def __init__(self, ids: Sequence[str], texts: Sequence[str], embeddings: np.ndarray | None = None,
                 *, embedding_model: str = DEFAULT_EMBEDDING_MODEL,
                 candidates: int | None = DEFAULT_CANDIDATES, ann: AnnMode = "auto",
                 ann_threshold: int = ANN_THRESHOLD, nprobe: int = DEFAULT_NPROBE,
                 runtime: EmbeddingRuntime | None = None) -> None:
        import bm25s

        if len(ids) != len(texts) or not texts:
            raise ValueError(f"need as many ids as texts (>0), got {len(ids)} and {len(texts)}")
        if candidates is not None and candidates < 1:
            raise ValueError(f"candidates must be >= 1 or None, got {candidates}")
        self.ids = list(ids)
        self.embedding_model = embedding_model
        self.runtime = runtime
        self.candidates = candidates
        self.embeddings = (embeddings if embeddings is not None
                           else embed(list(texts), model=embedding_model, runtime=runtime))
        if self.embeddings.shape[0] != len(texts):
            raise ValueError(f"{self.embeddings.shape[0]} embeddings for {len(texts)} texts")
        self._bm25 = bm25s.BM25()
        self._bm25.index(bm25s.tokenize(list(texts), stopwords="en", show_progress=False),
                         show_progress=False)
        self.ann: IVFIndex | None = (
            IVFIndex(self.embeddings, nprobe=nprobe) if use_ann(ann, len(self.ids), ann_threshold) else None
        )

    def _limit(self, extra: int = 0) -> int:
        return len(self.ids) if self.candidates is None else min(self.candidates + extra, len(self.ids))

    def bm25_ranking(self, query: str, *, extra: int = 0) -> list[int]:
        """Document indices with a positive BM25 score, best first (ties: lower index), at most
        ``candidates + extra`` of them."""
        return self._bm25_top(query, extra).tolist()

    def dense_ranking(self, query_embedding: np.ndarray, *, extra: int = 0) -> list[int]:
        """Document indices by cosine to ``query_embedding`` (dim,), best first (ties: lower index),
        the top ``candidates + extra``; from the ANN index when one was built (approximate recall)."""
        return self._dense_top(np.asarray(query_embedding, dtype=np.float32).reshape(-1), extra).tolist()

    def _bm25_top(self, query: str, extra: int) -> np.ndarray:
        import bm25s

        tokens = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
        if not tokens:
            return np.empty(0, dtype=np.int64)
        scores = np.asarray(self._bm25.get_scores(tokens), dtype=float)
        best = top_k(scores, self._limit(extra))
        return best[scores[best] > 0]

    def _dense_top(self, q: np.ndarray, extra: int) -> np.ndarray:
        if self.ann is not None:
            found, _ = self.ann.search(q, self._limit(extra))
            return found[np.lexsort((found, -(self.embeddings[found] @ q)))]
        return top_k(self.embeddings @ q, self._limit(extra))

    def search(self, query: str, k: int = 10, *, query_embedding: np.ndarray | None = None,
               exclude: Sequence[str] = (), rrf_k: int = RRF_K) -> list[RetrievalHit]:
        """Top-``k`` documents for ``query`` by RRF of the BM25 and cosine rankings.

        ``exclude`` lists document ids never returned (e.g. the query paper itself). Each ranker
        contributes its top ``candidates`` (+ one per excluded id, so exclusion never shrinks the
        pool); ``dense_rank`` / ``bm25_rank`` are None beyond them, ``cosine`` is always exact.
        Scores equal :func:`reciprocal_rank_fusion` of the two rankings bit for bit.
        """
        q = (query_embedding if query_embedding is not None
             else embed([query], model=self.embedding_model, runtime=self.runtime)[0])
        q = np.asarray(q, dtype=np.float32).reshape(-1)
        skip = set(exclude)
        keyword = self._bm25_top(query, len(skip))
        dense = self._dense_top(q, len(skip))
        docs, scores = fused_top([keyword, dense], k + len(skip), rrf_k)
        hits: list[RetrievalHit] = []
        for doc, score in zip(docs.tolist(), scores.tolist(), strict=True):
            if self.ids[doc] in skip:
                continue
            hits.append(RetrievalHit(index=doc, id=self.ids[doc], rank=len(hits) + 1, rrf_score=score,
                                     bm25_rank=_rank_in(keyword, doc), dense_rank=_rank_in(dense, doc),
                                     cosine=float(self.embeddings[doc] @ q)))
            if len(hits) >= k:
                break
        return hits

    def nearest_cosines(self, query_embedding: np.ndarray, n: int, *,
                        exclude: Sequence[str] = ()) -> list[float]:
        """Cosines of the ``n`` documents nearest to ``query_embedding`` (dim,), best first (exact);
        documents whose id is in ``exclude`` are never counted (e.g. those after a knowledge cutoff)."""
        cos = self.embeddings @ np.asarray(query_embedding, dtype=np.float32).reshape(-1)
        skip = set(exclude)
        if skip:
            cos = cos[[i for i, doc in enumerate(self.ids) if doc not in skip]]
        return [float(cos[i]) for i in top_k(cos, n)]
