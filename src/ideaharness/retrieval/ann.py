"""Optional approximate nearest-neighbour index for the dense ranker of large corpora.

Exact dense retrieval is one matrix-vector product over the whole corpus: O(n · dim) per query,
about 0.1 s at 1M × 384 float32 on two cores. Above :data:`ANN_THRESHOLD` documents, and only when
``faiss`` is installed (``pip install 'ideaharness[ann]'``, PyPI ``faiss-cpu``), the dense top-K
comes from an inverted-file index instead (faiss ``IndexIVFFlat``, inner product = cosine on
L2-normalised rows; Jégou, Douze & Schmid, TPAMI 2011): k-means partitions the corpus into
``nlist`` cells and a query scans the ``nprobe`` nearest cells only. The candidates it returns
carry exact cosines; only recall is approximate (benchmarks/retrieval_scale.py measures it).
"""

from __future__ import annotations

import importlib.util
import math
from typing import Literal

import numpy as np

from ideaharness.errors import UserError

ANN_THRESHOLD = 200_000
"""Corpus size (documents) from which ``ann="auto"`` uses the ANN index when faiss is installed."""
DEFAULT_NPROBE = 32
"""Cells scanned per query (of ``nlist`` ≈ 4·√n); more = higher recall, slower."""
TRAIN_SAMPLE = 64
"""Training vectors per cell for k-means (faiss warns below 39)."""

AnnMode = Literal["auto", "off", "faiss"]


def faiss_available() -> bool:
    """Whether the optional ``faiss`` module can be imported."""
    return importlib.util.find_spec("faiss") is not None


def use_ann(mode: AnnMode, n_docs: int, threshold: int = ANN_THRESHOLD) -> bool:
    """Whether a corpus of ``n_docs`` gets an ANN index under ``mode``.

    ``"off"``: never; ``"auto"``: when faiss is installed and ``n_docs >= threshold``;
    ``"faiss"``: always.

    Raises:
        UserError: ``mode="faiss"`` without faiss installed, or an unknown mode.
    """
    if mode == "off":
        return False
    if mode == "auto":
        return n_docs >= threshold and faiss_available()
    if mode == "faiss":
        if not faiss_available():
            raise UserError("ann='faiss' needs faiss: pip install 'ideaharness[ann]'")
        return True
    raise UserError(f"unknown ANN mode {mode!r}; use 'auto', 'off' or 'faiss'")


class IVFIndex:
    """faiss ``IndexIVFFlat`` over L2-normalised float32 rows, inner-product metric.

    Args:
        vectors: (n, dim) float32, rows L2-normalised; not copied beyond what faiss stores.
        nlist: number of k-means cells; default ≈ 4·√n (at least 1, at most n / 39).
        nprobe: cells scanned per query.
        seed: k-means seed (recorded so an index is reproducible).

    Raises:
        UserError: faiss is not installed.
    """

    def __init__(self, vectors: np.ndarray, *, nlist: int | None = None, nprobe: int = DEFAULT_NPROBE,
                 seed: int = 0) -> None:
        try:
            import faiss
        except ImportError:
            raise UserError("the ANN index needs faiss: pip install 'ideaharness[ann]'") from None
        data = np.ascontiguousarray(vectors, dtype=np.float32)
        n, dim = data.shape
        self.nlist = nlist or max(1, min(int(4 * math.sqrt(n)), n // 39))
        self.nprobe = min(nprobe, self.nlist)
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFFlat(quantizer, dim, self.nlist, faiss.METRIC_INNER_PRODUCT)
        rng = np.random.default_rng(seed)
        sample = data if n <= self.nlist * TRAIN_SAMPLE else data[
            np.sort(rng.choice(n, self.nlist * TRAIN_SAMPLE, replace=False))]
        index.cp.seed = seed
        index.train(sample)
        index.add(data)
        index.nprobe = self.nprobe
        self._index = index
        self._quantizer = quantizer  # faiss does not own it from Python: keep it alive

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Up to ``k`` approximate nearest rows of ``query`` (dim,): (indices int64, cosines float32),
        best first; fewer than ``k`` when the probed cells hold fewer rows."""
        q = np.ascontiguousarray(np.asarray(query, dtype=np.float32).reshape(1, -1))
        scores, ids = self._index.search(q, k)
        keep = ids[0] >= 0
        return ids[0][keep].astype(np.int64), scores[0][keep]
