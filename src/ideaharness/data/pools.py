"""Candidate pools for inspiration retrieval (ResearchBench, Liu, Yang et al. 2025, §3.1).

A pool = every ground-truth inspiration ("gold") + negatives at three distance levels:

* level 1 (``negative_t1``): papers near the question or the ground truth — the cited/citing
  neighbours when known, otherwise the same-discipline papers with the highest embedding cosine
  (all-MiniLM-L6-v2) to the research question or to any gold inspiration;
* level 2 (``negative_t2``): other papers of the same discipline, drawn at random (seeded);
* level 3 (``negative_t3``): papers of other disciplines, drawn at random (seeded).

The published builder fills the non-gold slots round-robin from the three levels; so does
:func:`build_pool`, with at most ``per_level`` candidates per level (75 and 25 by default). Titles
are de-duplicated after normalisation, and a paper whose title matches a gold title (normalised or
fuzzy >= the title threshold) is never a negative. When level 3 has no source (a single-discipline
corpus such as TOMATO-Chem), ``level3_fill="level2"`` fills its slots with further level-2 papers
(labelled ``negative_t2``, so per-level metrics stay honest; the count is noted in the pool), and
``"empty"`` leaves the pool short (also noted).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, Field

from ideaharness.data.matching import DEFAULT_TITLE_THRESHOLD, match_title, normalise_title
from ideaharness.schema import Paper

if TYPE_CHECKING:
    from ideaharness.metrics.embedding_store import EmbeddingRuntime

Label = Literal["gold", "negative_t1", "negative_t2", "negative_t3", "negative_unknown"]
LEVEL_LABELS: tuple[Label, Label, Label] = ("negative_t1", "negative_t2", "negative_t3")
DEFAULT_POOL_SIZE = 75
DEFAULT_PER_LEVEL = 25


class Candidate(BaseModel):
    """One candidate inspiration shown to the screening model."""

    index: int
    title: str
    abstract: str | None = None
    label: Label


class CandidatePool(BaseModel):
    """The pool of one instance, in presentation order; saved in the run."""

    instance_id: str
    candidates: list[Candidate]
    source: Literal["built", "given"] = "built"
    seed: int | None = None
    notes: list[str] = Field(default_factory=list)

    def titles(self) -> list[str]:
        return [c.title for c in self.candidates]

    def gold(self) -> list[Candidate]:
        return [c for c in self.candidates if c.label == "gold"]

    def label_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for c in self.candidates:
            counts[c.label] = counts.get(c.label, 0) + 1
        return counts


def derive_seed(seed: int, *parts: object) -> int:
    """A 32-bit seed derived from ``seed`` and any labels (sha256), stable across processes."""
    blob = "\x1f".join([str(seed), *map(str, parts)]).encode()
    return int(hashlib.sha256(blob).hexdigest()[:8], 16)


def paper_text(paper: Paper) -> str:
    """Title and abstract joined, the text embedded for similarity."""
    return f"{paper.title}. {paper.abstract}" if paper.abstract else paper.title


def similarity_to_queries(
    queries: Sequence[str], papers: Sequence[Paper], paper_embeddings: np.ndarray | None = None,
    *, runtime: EmbeddingRuntime | None = None,
) -> np.ndarray:
    """Max cosine similarity of each paper to any query text (all-MiniLM-L6-v2).

    Args:
        queries: e.g. the research question and the gold inspirations' texts; at least one.
        paper_embeddings: precomputed L2-normalised embeddings of ``papers`` (shape (n, d)), to
            embed a corpus once for many instances.
        runtime: device and embedding store of the run (None: CPU, the default store).

    Returns:
        Array of shape (len(papers),) with values in [-1, 1].
    """
    from ideaharness.metrics.embeddings import cosine_matrix, embed

    if not queries:
        raise ValueError("similarity_to_queries needs at least one query text")
    if len(papers) == 0:
        return np.zeros(0)
    emb = (paper_embeddings if paper_embeddings is not None
           else embed([paper_text(p) for p in papers], runtime=runtime))
    if emb.shape[0] != len(papers):
        raise ValueError(f"paper_embeddings has {emb.shape[0]} rows for {len(papers)} papers")
    return cosine_matrix(emb, embed(list(queries), runtime=runtime)).max(axis=1)


def build_pool(
    instance_id: str,
    gold: Sequence[Paper],
    *,
    same_discipline: Sequence[Paper],
    other_disciplines: Sequence[Paper] = (),
    cited: Sequence[Paper] | None = None,
    similarity: Sequence[float] | np.ndarray | None = None,
    size: int = DEFAULT_POOL_SIZE,
    per_level: int = DEFAULT_PER_LEVEL,
    seed: int = 0,
    level3_fill: Literal["level2", "empty"] = "level2",
    title_threshold: float = DEFAULT_TITLE_THRESHOLD,
) -> CandidatePool:
    """Build one instance's candidate pool: all gold + round-robin negatives from three levels.

    Args:
        gold: the ground-truth inspirations; all are included (labelled ``gold``).
        same_discipline: level-1 (by similarity) and level-2 source.
        other_disciplines: level-3 source; may be empty (see ``level3_fill``).
        cited: level-1 papers by citation (cited/citing neighbours); when non-empty they are level 1
            (in seeded random order) and ``similarity`` is not used.
        similarity: score of each ``same_discipline`` paper to the question/gold, shape
            (len(same_discipline),), e.g. from :func:`similarity_to_queries`; level 1 = the
            highest-scoring papers. Required when ``cited`` is empty.
        size: pool size (gold included); per_level: cap per negative level.
        seed: seed of every random choice (level-2/3 draws, order of the cited list, final order).

    Returns:
        The pool, shuffled (seeded), ``index`` = position. Notes record any shortfall or fill.

    Raises:
        ValueError: ``size`` smaller than the number of gold papers, duplicate gold titles, or no
            level-1 information (neither ``cited`` nor ``similarity``).
    """
    if size < len(gold):
        raise ValueError(f"pool size {size} is smaller than the {len(gold)} gold inspirations")
    rng = np.random.default_rng(seed)
    gold_titles = [g.title for g in gold]
    seen = {normalise_title(t) for t in gold_titles}
    if len(seen) != len(gold_titles):
        raise ValueError(f"{instance_id}: two gold inspirations have the same normalised title")
    notes: list[str] = []

    def usable(paper: Paper) -> bool:
        key = normalise_title(paper.title)
        if not key or key in seen:
            return False
        return match_title(paper.title, gold_titles, title_threshold).index is None

    if cited:
        order = rng.permutation(len(cited))
        level1_source = [cited[i] for i in order]
        level1_by = "citation"
    else:
        if similarity is None:
            raise ValueError(f"{instance_id}: level 1 needs 'cited' papers or a 'similarity' array")
        sim = np.asarray(similarity, dtype=float)
        if sim.shape != (len(same_discipline),):
            raise ValueError(f"similarity has shape {sim.shape}, expected ({len(same_discipline)},)")
        level1_source = [same_discipline[i] for i in np.argsort(-sim, kind="stable")]
        level1_by = "embedding cosine"
    level1: list[Paper] = []
    level1_keys: set[str] = set()
    for paper in level1_source:
        if len(level1) >= per_level:
            break
        key = normalise_title(paper.title)
        if usable(paper) and key not in level1_keys:
            level1.append(paper)
            level1_keys.add(key)
    level2 = [
        same_discipline[i]
        for i in rng.permutation(len(same_discipline))
        if normalise_title(same_discipline[i].title) not in level1_keys
    ]
    level3 = [other_disciplines[i] for i in rng.permutation(len(other_disciplines))]
    levels = [level1, level2, level3]

    needed = size - len(gold)
    chosen: list[tuple[Paper, Label]] = []
    counts = [0, 0, 0]
    pointers = [0, 0, 0]

    def take(level: int, cap: int | None) -> bool:
        source = levels[level]
        while pointers[level] < len(source):
            if cap is not None and counts[level] >= cap:
                return False
            paper = source[pointers[level]]
            pointers[level] += 1
            if usable(paper):
                seen.add(normalise_title(paper.title))
                chosen.append((paper, LEVEL_LABELS[level]))
                counts[level] += 1
                return True
        return False

    progress = True
    while len(chosen) < needed and progress:
        progress = False
        for level in range(3):
            if len(chosen) < needed and take(level, per_level):
                progress = True
    if counts[2] < per_level and len(chosen) < needed:
        if level3_fill == "level2" and not other_disciplines:
            before = counts[1]
            while len(chosen) < needed and take(1, None):
                pass
            notes.append(
                f"no level-3 (other discipline) source: {counts[1] - before} level-3 slots filled with "
                "further level-2 papers (labelled negative_t2)"
            )
        elif not other_disciplines:
            notes.append("no level-3 (other discipline) source: level-3 slots left empty")
    if len(chosen) < needed:
        notes.append(f"pool short: {len(gold) + len(chosen)} candidates instead of {size}")
    notes.append(f"level 1 by {level1_by}")

    entries: list[tuple[Paper, Label]] = [(g, "gold") for g in gold] + chosen
    order = rng.permutation(len(entries))
    candidates = [
        Candidate(index=pos, title=entries[i][0].title, abstract=entries[i][0].abstract, label=entries[i][1])
        for pos, i in enumerate(order)
    ]
    return CandidatePool(
        instance_id=instance_id, candidates=candidates, source="built", seed=seed, notes=notes
    )
