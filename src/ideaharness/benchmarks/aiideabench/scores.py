"""AI Idea Bench 2025 per-instance scores (the primary output of a run; the headline is their mean).

Per selected instance and component ``c`` (motivation, experiment plan): ``aiideabench.imcq``
S_M (1 when any idea picks the ground truth, Eq. 2), ``aiideabench.i2i`` and ``aiideabench.i2t``
the best idea's rating (Eq. 3-4; unscored when any of its ideas' judgments did not parse: the best
is then unknown); ``aiideabench.novelty`` (group ``c/novelty`` or ``c/novelty_bounded``, Eq. 7)
and ``aiideabench.feasibility`` (Eq. 8-10) the mean over the instance's ideas with a value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ideaharness.metrics.choice import imcq_hit
from ideaharness.runs.scores import Record, Score, selected_records

COMPONENTS = ("motivation", "experiment_plan")
NOVELTY_KEYS = ("novelty", "novelty_bounded")


def _judged(data: dict[str, Any]) -> dict[str, Any] | None:
    judgment = data.get("judgment") if isinstance(data, dict) else None
    return judgment if isinstance(judgment, dict) and judgment.get("parse_ok") else None


def aiideabench_scores(records: Sequence[Record], results: dict[str, Any],
                       metrics: Sequence[str] = ("imcq", "i2i", "i2t")) -> list[Score]:
    """Scores of an AI Idea Bench run (module docstring), from its records; ``metrics``: those the
    run computed (config ``metrics``; literature novelty and feasibility also need their results
    blocks)."""
    by_step: dict[str, list[Record]] = {}
    for rec in selected_records(records, results):
        by_step.setdefault(rec[0], []).append(rec)
    ids = [str(i) for i in (results.get("selection") or {}).get("ids")
           or sorted({r[1] for r in by_step.get("decompose", [])})]
    out: list[Score] = []
    if "imcq" in metrics and results.get("imcq"):
        questions = {(i, k): d for _, i, k, d in by_step.get("imcq_question", [])}
        choices: dict[tuple[str, str], list[str | None]] = {}
        for _, inst, key, data in by_step.get("imcq", []):
            j = _judged(data)
            choices.setdefault((inst, key.split("/")[0]), []).append(j["parsed"] if j else None)
        for comp in COMPONENTS:
            if comp not in results["imcq"]:
                continue
            for iid in ids:
                question = questions.get((iid, comp))
                picks = choices.get((iid, comp), [])
                if question is None or "skipped" in question:
                    why = (question or {}).get("skipped") or "no question (no ground truth)"
                    out.append(Score.unscored("aiideabench.imcq", iid, str(why), group=comp))
                    continue
                hit = imcq_hit(picks, question["question"]["answer"])
                out.append(Score(metric="aiideabench.imcq", group=comp, instance_id=iid,
                                 value=None if hit is None else float(hit),
                                 reason=None if hit is not None else
                                 "a choice reply unparsed" if picks else "not asked"))
    for step in ("i2i", "i2t"):
        if step not in metrics or not results.get(step):
            continue
        judged: dict[tuple[str, str], list[float | None]] = {}
        for _, inst, key, data in by_step.get(step, []):
            j = _judged(data)
            comps = [key.split("/")[0]] if step == "i2i" else list(COMPONENTS)
            for comp in comps:
                value = None if j is None else j["parsed"] if step == "i2i" else j["parsed"].get(comp)
                judged.setdefault((inst, comp), []).append(None if value is None else float(value))
        for comp in COMPONENTS:
            if comp not in results[step]:
                continue
            for iid in ids:
                values = judged.get((iid, comp), [])
                ok = bool(values) and all(v is not None for v in values)
                out.append(Score(metric=f"aiideabench.{step}", group=comp, instance_id=iid,
                                 value=max(v for v in values if v is not None) if ok else None,
                                 reason=None if ok else
                                 "a rating reply unparsed" if values else "no ideas rated"))
    novelty = results.get("novelty") or {}
    if any(isinstance(b, dict) and "n" in b for b in novelty.values()):
        means: dict[tuple[str, str], list[float]] = {}
        for _, inst, _key, data in by_step.get("novelty", []):
            for comp in COMPONENTS:
                for key in NOVELTY_KEYS:
                    value = (data.get(comp) or {}).get(key)
                    if value is not None:
                        means.setdefault((inst, f"{comp}/{key}"), []).append(float(value))
        for group, block in novelty.items():
            if isinstance(block, dict) and "n" in block:
                out += [_mean_score("aiideabench.novelty", group, iid, means.get((iid, group)),
                                    "no idea's novelty") for iid in ids]
    if "n" in (results.get("feasibility") or {}):
        per_idea: dict[str, list[float]] = {}
        for _, inst, _key, data in by_step.get("feasibility", []):
            if data.get("feasibility") is not None:
                per_idea.setdefault(inst, []).append(float(data["feasibility"]))
        out += [_mean_score("aiideabench.feasibility", "", iid, per_idea.get(iid), "no idea's feasibility")
                for iid in ids]
    return out


def _mean_score(metric: str, group: str, iid: str, values: list[float] | None, missing: str) -> Score:
    if not values:
        return Score.unscored(metric, iid, missing, group=group)
    return Score(metric=metric, group=group, instance_id=iid, value=sum(values) / len(values))
