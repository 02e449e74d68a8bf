"""Human reference figures for judges: Si et al. (2024) expert reviews and ScholarIdeas rubric coverage.

* :func:`load_si2024_reviews` reads the 337 blind expert reviews of 147 NLP research ideas released
  with Si, Yang & Hashimoto, "Can LLMs Generate Novel Research Ideas?" (ICLR 2025,
  arXiv:2409.04109; MIT, NoviScl/AI-Researcher). :func:`condition_means` reproduces the paper's
  per-condition means (Table 7 "overall": Human 4.68, AI 4.85, AI+Rerank 5.34) and
  :func:`human_ceiling` the reviewer–reviewer agreement in the paper's own statistic, split-half
  top/bottom-quartile agreement (recomputed: 0.565, chance 0.5; :func:`quartile_agreement`), the
  ceiling to show beside a judge's quartile agreement with the reviewers — and only beside that.
* :func:`rubric_coverage` measures how far a judge's critique covers the experts' major weaknesses
  of a ScholarIdeas plan (ScholarEval, Moussa et al. 2025, "rubric coverage"), by embedding
  similarity (all-MiniLM-L6-v2 cosine between each rubric statement and the critique's sentences,
  covered when the best match reaches ``threshold``). ScholarEval matches with an LLM judge; the
  embedding match used here needs no model call and is stated in the result (``method``).
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel

from ideaharness.errors import DataError

SI2024_DIR = "si2024-ideation-human-study"
SI2024_FILE = Path("reviews_ideation") / "data_points_all_anonymized.json"
SI2024_ENV = "IDEAHARNESS_SI2024"
SCORES = ("overall_score", "novelty_score", "excitement_score", "feasibility_score", "effectiveness_score")


def si2024_candidates() -> list[Path]:
    """Where the Si et al. data is looked for, in order: ``$IDEAHARNESS_SI2024``, the copy bundled in
    the package (``ideaharness/data/bundled/``), the ``shared/data/raw/`` folder beside the checkout."""
    here = Path(__file__).resolve()
    package = here.parents[2]  # src/ideaharness
    out = [Path(os.environ[SI2024_ENV])] if os.environ.get(SI2024_ENV) else []
    out.append(package / "data" / "bundled" / SI2024_DIR)
    out += [p / "shared" / "data" / "raw" / SI2024_DIR for p in here.parents[3:6]]
    return out


def default_si2024_path() -> Path:
    """The first existing :func:`si2024_candidates` folder.

    Raises:
        DataError: none exists (set ``IDEAHARNESS_SI2024`` or pass ``path``).
    """
    for candidate in si2024_candidates():
        if (candidate / SI2024_FILE).is_file():
            return candidate
    raise DataError(
        si2024_candidates()[0] if si2024_candidates() else SI2024_DIR,
        f"Si et al. 2024 reviews not found; set {SI2024_ENV} to the folder holding {SI2024_FILE}",
    )


def load_si2024_reviews(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The ideation-study reviews, one dict per review (337 in the release).

    Fields as released (``idea_id``, ``condition`` ∈ {Human, AI, AI_Rerank}, ``topic``, the 1–10
    ``*_score`` fields, ``confidence_score``, rationales); ``idea_id`` has stray spaces removed
    (upstream has e.g. ``Multilingual_9 _AI``).

    Args:
        path: the dataset folder (holding ``reviews_ideation/``) or the JSON file itself; default
            :func:`default_si2024_path`.

    Raises:
        DataError: the file is missing, not JSON, not parallel arrays, or a score is not an integer.
    """
    root = Path(path) if path is not None else default_si2024_path()
    file = root if root.is_file() else root / SI2024_FILE
    try:
        columns = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(file, f"cannot be read ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise DataError(file, f"line {exc.lineno}: not JSON ({exc.msg})") from None
    if not isinstance(columns, dict) or "idea_id" not in columns or "condition" not in columns:
        raise DataError(file, "expected an object of parallel arrays with 'idea_id' and 'condition'")
    n = len(columns["idea_id"])
    for field, values in columns.items():
        if not isinstance(values, list) or len(values) != n:
            raise DataError(file, f"field '{field}': not an array of {n} values")
    rows = [{field: values[i] for field, values in columns.items()} for i in range(n)]
    for i, row in enumerate(rows):
        row["idea_id"] = str(row["idea_id"]).replace(" ", "")
        for field in SCORES:
            if field in row and not isinstance(row[field], int):
                raise DataError(file, f"row {i}, field '{field}': {row[field]!r} is not an integer score")
    return rows


def condition_means(reviews: Sequence[dict[str, Any]], score: str = "overall_score") -> dict[str, float]:
    """Mean of ``score`` per condition over reviews (the unit of Si et al.'s Test 1, Table 7).

    Raises:
        KeyError: a review lacks ``score``.
    """
    groups: dict[str, list[float]] = defaultdict(list)
    for r in reviews:
        groups[r["condition"]].append(float(r[score]))
    return {c: float(np.mean(v)) for c, v in sorted(groups.items())}


def quartile_agreement(
    first: Sequence[float], second: Sequence[float], *, rng: np.random.Generator | None = None
) -> float:
    """Top/bottom-quartile agreement of two scorings of the same units (Si et al. 2024,
    inter-reviewer agreement, after the NeurIPS 2021 consistency experiment).

    ``first`` picks the top and bottom q = round(n/4) units; ``second`` ranks those 2q units and
    calls its best q "top"; the agreement is the share of the 2q units both put on the same side.
    A scoring unrelated to ``first`` scores 0.5 on average, a perfect match 1.0. Ties are broken
    at random (``rng``; default a generator seeded 0).

    Args:
        first, second: one score per unit (same order), n >= 8 (so that q >= 2).

    Returns:
        The agreement, in [0, 1].

    Raises:
        ValueError: lengths differ or fewer than 8 units.
    """
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"{a.shape} and {b.shape}: one score per unit in both")
    if a.size < 8:
        raise ValueError(f"{a.size} units: the quartile agreement needs at least 8")
    rng = rng if rng is not None else np.random.default_rng(0)
    q = int(round(a.size / 4))
    order = np.lexsort((rng.random(a.size), -a))  # best first, random among equals
    chosen = np.concatenate([order[:q], order[-q:]])
    side = np.r_[np.ones(q, bool), np.zeros(q, bool)]
    within = np.lexsort((rng.random(2 * q), -b[chosen]))
    top_by_second = np.zeros(2 * q, bool)
    top_by_second[within[:q]] = True
    return float((top_by_second == side).mean())


class HumanCeiling(BaseModel):
    """How far two groups of human experts reviewing the same ideas agree (Si et al. 2024).

    ``value``: the paper's inter-reviewer statistic, split-half top/bottom-quartile agreement: the
    reviews of each idea are split at random into two halves, the mean of one half picks the top
    and bottom 25 % of ideas, the other half's mean sorts those into top and bottom
    (:func:`quartile_agreement`); mean over ``n_splits`` seeded splits, ``interval`` the 2.5–97.5 %
    range over splits, ``chance`` 0.5. It is the ceiling of a judge's quartile agreement with the
    reviewers (:attr:`~ideaharness.metrics.reliability.panel.HumanAgreement.quartile_agreement`),
    and only of that. ``pearson_r`` is another statistic (Pearson r over every within-idea pair of
    reviews, both orders; ``n_pairs`` such pairs), kept for reference, not a ceiling of any figure
    shown. ``n_ideas``: ideas with at least two reviews.
    """

    score: str
    statistic: Literal["split_half_quartile_agreement"] = "split_half_quartile_agreement"
    value: float
    interval: tuple[float, float]
    chance: float = 0.5
    n_splits: int
    seed: int
    n_ideas: int
    pearson_r: float
    n_pairs: int
    method: str = (
        "split-half top/bottom-quartile agreement of the reviewers of each idea "
        "(Si et al. 2024 expert reviews)"
    )
    source: str = "Si, Yang & Hashimoto 2024, arXiv:2409.04109 (ICLR 2025)"


def human_ceiling(
    reviews: Sequence[dict[str, Any]] | None = None,
    score: str = "overall_score",
    *,
    n_splits: int = 1000,
    seed: int = 0,
) -> HumanCeiling:
    """Human–human agreement on ``score`` (overall: split-half quartile agreement 0.565 over 1000
    seeded splits of the 147 ideas, all with at least two reviews; Pearson r 0.101 over 234 pairs).

    Args:
        reviews: from :func:`load_si2024_reviews`; default loads the data from the default path.
        n_splits, seed: random halvings averaged, and their seed.

    Raises:
        DataError: the data cannot be found or read. ValueError: fewer than 8 ideas with two reviews.
    """
    from scipy.stats import pearsonr  # scipy.stats takes ~1 s to import

    rows = load_si2024_reviews() if reviews is None else reviews
    by_idea: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        by_idea[r["idea_id"]].append(float(r[score]))
    ideas = [np.asarray(v) for _, v in sorted(by_idea.items()) if len(v) >= 2]
    if len(ideas) < 8:
        raise ValueError(f"{len(ideas)} ideas with two reviews: at least 8 needed")
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_splits):
        first, second = [], []
        for v in ideas:
            perm = rng.permutation(v.size)
            cut = v.size // 2 if rng.random() < 0.5 else (v.size + 1) // 2  # odd counts: either way
            first.append(v[perm[:cut]].mean())
            second.append(v[perm[cut:]].mean())
        values.append(quartile_agreement(first, second, rng=rng))
    pairs = [p for scores in by_idea.values() for p in itertools.combinations(scores, 2)]
    x = [a for a, _ in pairs] + [b for _, b in pairs]
    y = [b for _, b in pairs] + [a for a, _ in pairs]
    return HumanCeiling(
        score=score,
        value=float(np.mean(values)),
        interval=(float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))),
        n_splits=n_splits,
        seed=seed,
        n_ideas=len(ideas),
        pearson_r=float(pearsonr(x, y).statistic),
        n_pairs=len(pairs),
    )


# --------------------------------------------------------------------------- rubric coverage
class RubricMatch(BaseModel):
    statement: str
    similarity: float
    covered: bool
    best_sentence: str


class RubricCoverage(BaseModel):
    """Share of expert rubric statements a critique covers (ScholarEval's rubric coverage).

    ``coverage`` in [0, 1], None when no rubric was selected; ``method`` says how coverage was decided.
    """

    covered: int
    total: int
    coverage: float | None
    threshold: float
    method: str
    matches: list[RubricMatch]


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def critique_sentences(text: str) -> list[str]:
    """The critique split into sentences / lines (bullets kept whole), empty ones dropped."""
    return [s.strip(" -*•\t") for s in _SENTENCE.split(text) if s.strip(" -*•\t")]


def rubric_coverage(
    critique: str,
    rubrics: Sequence[Any],
    *,
    threshold: float = 0.65,
    type: str | None = "weakness",  # noqa: A002 - the rubric field's name
    severity: str | None = "major",
    embed_fn: Callable[[Sequence[str]], np.ndarray] | None = None,
    model: str | None = None,
) -> RubricCoverage:
    """How many of a plan's expert rubric statements (default: major weaknesses) ``critique`` covers.

    A statement is covered when its cosine similarity to the most similar critique sentence is at
    least ``threshold`` (L2-normalised all-MiniLM-L6-v2 embeddings by default; pass ``embed_fn``
    for another embedder). ScholarEval (Moussa et al. 2025, §4) decides coverage with an LLM; this
    embedding match is cheaper and deterministic, and recorded in ``method``.

    Args:
        critique: the judge's free-text critique of the plan.
        rubrics: :class:`ideaharness.data.scholarideas.Rubric` rows (or objects with ``statement``,
            ``type``, ``severity``).
        threshold: cosine in [-1, 1] from which a statement counts as covered.
        type, severity: which rubrics to count (None = all).

    Raises:
        ValueError: ``threshold`` outside [-1, 1].
    """
    if not -1.0 <= threshold <= 1.0:
        raise ValueError("threshold must be in [-1, 1]")
    chosen = [
        r
        for r in rubrics
        if (type is None or r.type == type) and (severity is None or r.severity == severity)
    ]
    embedder = embed_fn
    if embedder is None:
        from ideaharness.metrics.embeddings import DEFAULT_EMBEDDING_MODEL, embed

        name = model or DEFAULT_EMBEDDING_MODEL

        def embedder(texts: Sequence[str]) -> np.ndarray:
            return embed(texts, name)

    embedder_name = "embed_fn given by the caller" if embed_fn is not None else (model or "all-MiniLM-L6-v2")
    method = f"embedding cosine >= {threshold} to the best critique sentence ({embedder_name})"
    sentences = critique_sentences(critique)
    if not chosen:
        return RubricCoverage(
            covered=0, total=0, coverage=None, threshold=threshold, method=method, matches=[]
        )
    matches: list[RubricMatch] = []
    if sentences:
        sims = np.asarray(embedder([r.statement for r in chosen]) @ embedder(sentences).T, dtype=float)
        for r, row in zip(chosen, sims, strict=True):
            best = int(np.argmax(row))
            matches.append(
                RubricMatch(
                    statement=r.statement,
                    similarity=float(row[best]),
                    covered=bool(row[best] >= threshold),
                    best_sentence=sentences[best],
                )
            )
    else:
        matches = [
            RubricMatch(statement=r.statement, similarity=0.0, covered=False, best_sentence="")
            for r in chosen
        ]
    covered = sum(m.covered for m in matches)
    return RubricCoverage(
        covered=covered,
        total=len(chosen),
        coverage=covered / len(chosen),
        threshold=threshold,
        method=method,
        matches=matches,
    )
