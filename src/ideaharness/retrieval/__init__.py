"""Retrieval of comparison papers: hybrid BM25 + dense cosine, fused by reciprocal rank fusion."""

from ideaharness.retrieval.hybrid import (
    HybridIndex,
    RetrievalHit,
    cached_embeddings,
    reciprocal_rank_fusion,
)

__all__ = ["HybridIndex", "RetrievalHit", "cached_embeddings", "reciprocal_rank_fusion"]
