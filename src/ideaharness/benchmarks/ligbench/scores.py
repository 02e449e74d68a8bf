"""LigBench per-idea scores (the primary output of a run): the final Elo-style score of every
scored idea on each dimension (rating, contribution, soundness, novelty; 0-5, LigBench §3 and
App. F). A run holds several systems: each score names the system from the idea id
(``<system>::t<topic>::<k>``, or ``scholarideas::<id>`` for the human-written plans), and pairs
across runs on the topic and sample (``t<topic>::<k>``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ideaharness.benchmarks.ligbench.config import SCHOLARIDEAS_SYSTEM, SCORE_KEYS
from ideaharness.runs.scores import Record, Score


def ligbench_system(idea_id: str) -> tuple[str, str]:
    """(system, pair key) of a LigBench idea id ``<system>::t<topic>::<k>`` or ``scholarideas::<id>``."""
    owner, sep, rest = idea_id.partition("::")
    if not sep:
        return idea_id, idea_id
    return (SCHOLARIDEAS_SYSTEM if owner == "scholarideas" else owner), rest


def ligbench_scores(records: Sequence[Record], results: dict[str, Any]) -> list[Score]:
    """One score per idea of the ``ideas`` block and dimension; an idea not scored (its comparisons
    did not parse or were not done, its formalisation failed, too few corpus papers before its
    cutoff) is unscored with its status on every dimension."""
    out: list[Score] = []
    for idea_id, idea in (results.get("ideas") or {}).items():
        system, pair_key = ligbench_system(idea_id)
        scores = idea.get("scores") or dict.fromkeys(SCORE_KEYS)
        for key, value in scores.items():
            if idea.get("status") == "scored" and value is not None:
                out.append(Score(metric="ligbench.score", group=key, instance_id=idea_id, pair_key=pair_key,
                                 system=system, value=float(value)))
            else:
                why = f"idea {idea.get('status') or 'not scored'}"
                out.append(Score.unscored("ligbench.score", idea_id, why, group=key, pair_key=pair_key,
                                          system=system))
    return out
