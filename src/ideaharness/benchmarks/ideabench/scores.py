"""IdeaBench per-instance scores (the primary output of a run; the headline is their mean).

Per scenario ``s`` and selected instance: ``ideabench.bertscore_f1`` (group ``s``) the best
BERTScore F1 of the instance's ideas, ``ideabench.overlap`` (group ``s``) the 1-10 overlap rating
of the best idea, and ``ideabench.insight_score`` (group ``s/<indicator>``) the summand
``(r - 1) / n`` of the Insight Score (Guo et al. 2024, Eq. 1: I = (1/m) sum_i (r_i - 1) / n), so
the mean over the m ranked instances is the Insight Score. A judgment that did not parse, a
skipped or failed generation, or a unit not done is unscored with that reason (never a 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ideaharness.metrics.ranking import target_rank
from ideaharness.runs.scores import Record, Score, selected_records

DROPPED = "target dropped: its rewrite failed the check (final)"
"""The reason of an Insight Score summand whose target was never ranked because its rewrite failed."""


def _parsed(data: dict[str, Any] | None) -> Any:
    judgment = (data or {}).get("judgment") or {}
    return judgment.get("parsed") if judgment.get("parse_ok") else None


def ideabench_scores(records: Sequence[Record], results: dict[str, Any]) -> list[Score]:
    """Scores of an IdeaBench run (module docstring); reads the records of key "" of the selected
    instances (any other key is an extra call) and ``results["n"]`` (ideas ranked with the target)."""
    recs = {(step, inst): data for step, inst, key, data in selected_records(records, results) if not key}
    ids = [str(i) for i in (results.get("selection") or {}).get("ids") or sorted({i for _, i in recs})]
    n = int(results.get("n") or 0)
    out: list[Score] = []
    for s, block in (results.get("scenarios") or {}).items():
        for iid in ids:
            gen = recs.get((f"generate/{s}", iid))
            why = ("not done" if gen is None else f"skipped: {gen['skipped']}" if "skipped" in gen
                   else "generation reply unparsed" if _parsed(gen) is None else None)
            sim = recs.get((f"similarity/{s}", iid))
            best = sim.get("best_f1") if sim else None
            out.append(Score(metric="ideabench.bertscore_f1", group=s, instance_id=iid, value=best,
                             reason=None if best is not None else why or "no comparison text"))
            overlap = recs.get((f"overlap/{s}", iid))
            rating = _parsed(overlap)
            out.append(Score(metric="ideabench.overlap", group=s, instance_id=iid,
                             value=None if rating is None else float(rating["rating"]),
                             reason=None if rating is not None else why or
                             ("overlap reply unparsed" if overlap else "not judged")))
            for indicator in block.get("insight") or {}:
                rank = recs.get((f"rank/{s}/{indicator}", iid))
                parsed = _parsed(rank)
                value = None
                if rank is not None and parsed is not None and n:
                    value = (target_rank(parsed, rank["target_label"]) - 1) / n
                dropped = _parsed(recs.get((f"rewrite/{s}", iid))) is None and (f"rewrite/{s}", iid) in recs
                out.append(Score(metric="ideabench.insight_score", group=f"{s}/{indicator}", instance_id=iid,
                                 value=value, reason=None if value is not None else why or
                                 ("ranking reply unparsed" if rank else DROPPED if dropped
                                  else "not ranked")))
    return out
