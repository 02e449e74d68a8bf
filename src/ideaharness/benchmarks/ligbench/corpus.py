"""LigBench's scored reference corpus: PAIR-IQ records, debiased scores, hybrid retrieval.

The corpus is read with :func:`ideaharness.data.pairiq.load_pairiq` (the paper's record format or
the ``pairiq`` builder's output), venue-debiased (ŝ = s − μ_venue + μ_all) and indexed for hybrid
BM25 + MiniLM retrieval. The papers' embeddings are kept in the run's embedding store under the
cache folder (:mod:`ideaharness.metrics.embedding_store`, off with ``--no-embedding-cache``), keyed by
model and text, so a second run embeds nothing; nothing is ever written beside the corpus (its folder
may be read-only or versioned).

:func:`read_corpus` reads and checks the records without embedding them, so a benchmark checks its
``--corpus`` in :meth:`~ideaharness.runner.Benchmark.load`, before the run folder is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from ideaharness.data.pairiq import PAPER_VENUE_MEANS, SCORE_DIMENSIONS, PairIQRecord, debias, load_pairiq
from ideaharness.errors import DataError
from ideaharness.metrics.embedding_store import EmbeddingRuntime
from ideaharness.metrics.embeddings import DEFAULT_EMBEDDING_MODEL, aembed, embed
from ideaharness.retrieval import HybridIndex, RetrievalHit

DebiasMeans = Literal["corpus", "paper", "none"]


def usable_records(records: Sequence[PairIQRecord], *, debias_means: DebiasMeans = "corpus",
                   source: str = "<records>") -> list[PairIQRecord]:
    """The records that can serve as Elo references (rating, contribution and soundness all
    given), debiased with ``debias_means`` (see :class:`ReferenceCorpus`).

    Raises:
        DataError: fewer than 4 usable records, or ``debias_means="paper"`` with a venue the
            paper gives no mean for (naming ``source``).
    """
    usable = [r for r in records if all(getattr(r, d) is not None for d in SCORE_DIMENSIONS)]
    if len(usable) < 4:
        raise DataError(source, f"only {len(usable)} record(s) carry rating, contribute and soundness; "
                                "LigBench needs at least 4 scored reference papers")
    if debias_means != "none":
        try:
            usable = debias(usable, means=PAPER_VENUE_MEANS if debias_means == "paper" else None)
        except ValueError as exc:
            raise DataError(source, f"{exc}; use debias_means='corpus'") from None
    return usable


def read_corpus(path: str | Path, *, debias_means: DebiasMeans = "corpus") -> list[PairIQRecord]:
    """Read and check a PAIR-IQ corpus (:func:`~ideaharness.data.pairiq.load_pairiq`: a repeated
    paper is refused) and keep its usable, debiased records (:func:`usable_records`); nothing is
    embedded or written.

    Raises:
        DataError: one line naming the file and row (or both rows of a repeated paper).
    """
    return usable_records(load_pairiq(path), debias_means=debias_means, source=str(path))


class ReferenceCorpus:
    """Scored reference papers with a hybrid index.

    Args:
        records: PAIR-IQ records (scores on 0-5); those lacking any of rating, contribution,
            soundness cannot serve as Elo references and are dropped.
        embeddings: (n, dim) rows for the kept records; computed if None.
        debias_means: ``"corpus"`` (μ from these records), ``"paper"`` (LigBench's published venue
            means; only for ICLR 2024/2025 and NeurIPS 2024) or ``"none"`` (raw projected scores).
        runtime: device and embedding store of the run (None: CPU, the default store).

    Raises:
        DataError: fewer than 4 usable records (3 calibration papers plus one comparison).
    """

    def __init__(self, records: Sequence[PairIQRecord], *, embeddings: np.ndarray | None = None,
                 embedding_model: str = DEFAULT_EMBEDDING_MODEL, debias_means: DebiasMeans = "corpus",
                 source: str = "<records>", runtime: EmbeddingRuntime | None = None) -> None:
        usable = usable_records(records, debias_means=debias_means, source=source)
        self.records = usable
        self.source = source
        self.debias_means = debias_means
        self.embedding_model = embedding_model
        self.runtime = runtime
        self.by_id = {r.id: r for r in usable}
        self.index = HybridIndex([r.id for r in usable], [r.text() for r in usable], embeddings,
                                 embedding_model=embedding_model, runtime=runtime)

    @classmethod
    def load(cls, path: str | Path, *, embedding_model: str = DEFAULT_EMBEDDING_MODEL,
             debias_means: DebiasMeans = "corpus", runtime: EmbeddingRuntime | None = None
             ) -> ReferenceCorpus:
        """Load a PAIR-IQ file or directory (:func:`read_corpus`) and index it; the papers'
        embeddings come from ``runtime``'s embedding store when it holds them (None: the default
        store under the cache folder), else they are computed and stored there.

        Raises:
            DataError: as :func:`read_corpus`.
        """
        records = read_corpus(path, debias_means=debias_means)
        return cls(records, embedding_model=embedding_model, debias_means=debias_means,
                   source=str(path), runtime=runtime)

    def __len__(self) -> int:
        return len(self.records)

    def score(self, record_id: str, dimension: str) -> float:
        """The (debiased) reference score s_ref of one record on one dimension."""
        value = self.by_id[record_id].score(dimension, debiased=self.debias_means != "none")
        if value is None:
            raise KeyError(f"{record_id} has no {dimension} score")
        return value

    def query_embedding(self, text: str) -> np.ndarray:
        """The embedding of a query (dim,), L2-normalised."""
        return embed([text], model=self.embedding_model, runtime=self.runtime)[0]

    async def aquery_embedding(self, text: str) -> np.ndarray:
        """:meth:`query_embedding` for coroutines: the queries of ideas scored concurrently share
        batched forward passes, off the event loop (:func:`~ideaharness.metrics.embeddings.aembed`)."""
        return (await aembed([text], self.embedding_model, runtime=self.runtime))[0]

    def retrieve(self, text: str, k: int, *, exclude: Sequence[str] = (),
                 query_embedding: np.ndarray | None = None) -> list[RetrievalHit]:
        """Top-k reference papers for ``text`` by hybrid retrieval (RRF of BM25 and cosine)."""
        q = query_embedding if query_embedding is not None else self.query_embedding(text)
        return self.index.search(text, k, query_embedding=q, exclude=exclude)

    def similarities(self, text: str, n: int, *, query_embedding: np.ndarray | None = None,
                     exclude: Sequence[str] = ()) -> list[float]:
        """Cosine similarities of ``text`` to its ``n`` nearest records (dense only), best first;
        records in ``exclude`` (e.g. dated after the idea's cutoff) are never counted."""
        q = query_embedding if query_embedding is not None else self.query_embedding(text)
        return self.index.nearest_cosines(q, n, exclude=exclude)
