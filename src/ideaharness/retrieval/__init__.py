"""Retrieval of comparison papers: hybrid BM25 + dense cosine, fused by reciprocal rank fusion."""

from ideaharness.retrieval.ann import ANN_THRESHOLD, IVFIndex
from ideaharness.retrieval.hybrid import (
    DEFAULT_CANDIDATES,
    HybridIndex,
    RetrievalHit,
    reciprocal_rank_fusion,
)
from ideaharness.retrieval.topk import top_k

__all__ = [
    "ANN_THRESHOLD",
    "DEFAULT_CANDIDATES",
    "HybridIndex",
    "IVFIndex",
    "RetrievalHit",
    "reciprocal_rank_fusion",
    "top_k",
]
