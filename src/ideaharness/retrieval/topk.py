"""Top-k selection without sorting the whole corpus.

:func:`top_k` returns exactly the first ``k`` entries of a stable descending sort
(``np.argsort(-scores, kind="stable")[:k]``: higher score first, ties by lower index) in
O(n + k log k) time with :func:`numpy.argpartition`, instead of O(n log n).
"""

from __future__ import annotations

import numpy as np


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest ``scores``, best first, ties broken by lower index.

    Args:
        scores: 1-d array of n finite scores (any real dtype).
        k: how many to return, >= 0; ``k >= n`` returns the full stable descending order.

    Returns:
        int64 array of min(k, n) indices, identical to ``np.argsort(-scores, kind="stable")[:k]``.

    Raises:
        ValueError: ``scores`` is not 1-d or ``k`` is negative.
    """
    values = np.asarray(scores)
    if values.ndim != 1:
        raise ValueError(f"scores must be 1-d, got shape {values.shape}")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    n = values.shape[0]
    if k == 0:
        return np.empty(0, dtype=np.int64)
    if k >= n:
        return np.argsort(-values, kind="stable").astype(np.int64, copy=False)
    part = np.argpartition(-values, k - 1)[:k]
    kth = values[part].min()  # the k-th highest value; which of its ties argpartition kept is arbitrary
    above = np.flatnonzero(values > kth)
    ties = np.flatnonzero(values == kth)[: k - above.shape[0]]  # ties go to the lower indices
    chosen = np.concatenate([above, ties])
    return chosen[np.lexsort((chosen, -values[chosen]))].astype(np.int64, copy=False)
