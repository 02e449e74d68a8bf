"""Adapters: recorded judgments of every judged benchmark -> :class:`JudgmentView` (read only).

Input is what :meth:`ideaharness.runs.store.RunStore.all_records` returns, a sequence of
``(step, instance_id, key, data)`` with ``data["judgment"]`` a dumped
:class:`ideaharness.schema.Judgment`. One small function per judged step kind; generation steps
(``generate*``, ``target_idea``, ``decompose``, ``digest``, ``keywords``, ``concepts``,
``ligbench/formalize``, ``researchbench_generate``) are not judgments and are skipped. A key
ending in :data:`~ideaharness.metrics.reliability.views.REASK_SUFFIX` is a consistency re-ask of
the judgment recorded under the key without it (same step and instance).

Judged steps covered:

=============================== ========= =====================================================
step                            kind      metric (one per dimension where one reply has several)
=============================== ========= =====================================================
IdeaBench ``rank/<s>/<ind>``    ranking   ``rank/<s>/<ind>`` (target = gold)
IdeaBench ``overlap/<s>``       rating    ``overlap/<s>`` (1–10)
AI Idea Bench ``imcq``          choice    ``imcq[<component>]`` (ground-truth option = gold)
AI Idea Bench ``i2i``           rating    ``i2i[<component>]`` (1–5)
AI Idea Bench ``i2t``           rating    ``i2t[motivation]``, ``i2t[experiment_plan]``
AI Idea Bench ``compete``       pairwise  ``compete`` (items = the two systems)
ResearchBench rank pair         pairwise  ``researchbench_rank_pair`` (gold hypothesis = gold)
ResearchBench screen window     choice    ``researchbench_screen_window`` (several chosen)
ResearchBench matched score     rating    ``researchbench_matched_score`` (0–5)
LigBench ``ligbench/compare``   pairwise  ``ligbench/compare[<dim>]``
LigBench ``ligbench/initial_score`` rating ``ligbench/initial_score[<dim>]``
LigBench ``ligbench/judge_pair`` pairwise ``ligbench/judge_pair[<dim>]``
=============================== ========= =====================================================

Human labels: a record that carries the human answer to its question (``ligbench/judge_pair``:
``human_preference``, per dimension 1 / 0.5 / 0 when the paper shown first has the higher / equal /
lower venue-debiased reviewer score) gives its views a
:attr:`~ideaharness.metrics.reliability.views.JudgmentView.human_label`, from which the block's
human agreement is computed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from ideaharness.metrics.reliability.sampling import original_key
from ideaharness.metrics.reliability.views import JudgmentView

Record = tuple[str, str, str, dict[str, Any]]
Adapter = Callable[[str, str, str, dict[str, Any], dict[str, str]], list[JudgmentView]]


def _base(
    metric: str,
    instance_id: str,
    key: str,
    data: dict[str, Any],
    kind: str,
    value: Any,
    *,
    generators: dict[str, str],
    gen_key: str | None = None,
    group: str | None = None,
    positions: Sequence[str] | None = None,
    gold: int | None = None,
    generator: str | None = None,
) -> JudgmentView:
    j = data["judgment"]
    orig, reask = original_key(key)
    shown = positions if positions is not None else j.get("positions")
    return JudgmentView(
        metric=metric,
        instance_id=instance_id,
        key=key,
        judge_model=j["judge_model"],
        kind=kind,  # type: ignore[arg-type]
        value=value if j["parse_ok"] else None,
        parse_ok=bool(j["parse_ok"]),
        attempts=int(j.get("attempts") or 1),
        positions=tuple(shown) if shown is not None else None,
        gold_position=gold,
        group=group if group is not None else orig,
        generator_model=generator if generator is not None else generators.get(gen_key or instance_id),
        reask=reask,
    )


def _parsed(data: dict[str, Any]) -> Any:
    j = data["judgment"]
    return j["parsed"] if j["parse_ok"] else None


# --------------------------------------------------------------------------- IdeaBench
def ideabench_rank(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``rank/<scenario>/<indicator>``: labels in ranking order -> item ids best first (the
    target's rewriter, ``reference_by``, as the view's reference model)."""
    labels, shown = data["labels"], data["judgment"]["positions"]
    parsed = _parsed(data)
    value = tuple(shown[labels.index(label)] for label in parsed) if parsed is not None else None
    scenario = step.split("/")[1]
    view = _base(
        step,
        iid,
        key,
        data,
        "ranking",
        value,
        generators=gens,
        gen_key=f"{scenario}|{iid}",
        gold=labels.index(data["target_label"]),
    )
    return [replace(view, reference_model=data.get("reference_by"))]


def ideabench_overlap(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``overlap/<scenario>``: the 1–10 overlap rating."""
    parsed = _parsed(data)
    scenario = step.split("/")[1]
    return [
        _base(
            step,
            iid,
            key,
            data,
            "rating",
            None if parsed is None else float(parsed["rating"]),
            generators=gens,
            gen_key=f"{scenario}|{iid}",
        )
    ]


# --------------------------------------------------------------------------- AI Idea Bench
def aiib_imcq(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``imcq``: option letter -> chosen position; the ground-truth option is gold."""
    parsed = _parsed(data)
    comp = original_key(key)[0].split("/")[0]
    value = (ord(str(parsed).upper()) - ord("A"),) if parsed is not None else None
    answer = data.get("answer")
    gold = ord(str(answer).upper()) - ord("A") if answer else None
    return [
        _base(
            f"imcq[{comp}]",
            iid,
            key,
            data,
            "choice",
            value,
            generators=gens,
            gen_key=data.get("idea_id"),
            gold=gold,
        )
    ]


def aiib_i2i(step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]) -> list[JudgmentView]:
    """``i2i``: 1–5 alignment rating of one component."""
    parsed = _parsed(data)
    comp = original_key(key)[0].split("/")[0]
    return [
        _base(
            f"i2i[{comp}]",
            iid,
            key,
            data,
            "rating",
            None if parsed is None else float(parsed),
            generators=gens,
            gen_key=data.get("idea_id"),
        )
    ]


def aiib_i2t(step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]) -> list[JudgmentView]:
    """``i2t``: one view per rated component (motivation, experiment_plan)."""
    parsed = _parsed(data)
    return [
        _base(
            f"i2t[{dim}]",
            iid,
            key,
            data,
            "rating",
            None if parsed is None else float(parsed[dim]),
            generators=gens,
            gen_key=data.get("idea_id"),
        )
        for dim in ("motivation", "experiment_plan")
    ]


def aiib_compete(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``compete``: ``final_choice`` 0 (idea 0 shown first wins) -> 1.0, 1 -> 0.0; items are the
    systems; self-preference when the judge model names one of the two systems."""
    parsed = _parsed(data)
    systems = (data["idea0_system"], data["idea1_system"])
    value = None if parsed is None else 1.0 - float(parsed["final_choice"])
    judge = data["judgment"]["judge_model"]
    return [
        _base(
            step,
            iid,
            key,
            data,
            "pairwise",
            value,
            generators=gens,
            positions=systems,
            group="|".join(sorted(systems)),
            generator=judge if judge in systems else None,
        )
    ]


# --------------------------------------------------------------------------- ResearchBench
def rb_rank_pair(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``researchbench_rank_pair``: candidate 1 (shown first) -> 1.0, candidate 2 -> 0.0."""
    parsed = _parsed(data)
    shown = data["judgment"]["positions"]
    orig = original_key(key)[0]
    return [
        _base(
            step,
            iid,
            key,
            data,
            "pairwise",
            None if parsed is None else (1.0 if parsed == 1 else 0.0),
            generators=gens,
            group=orig.split("/")[0],
            gold=shown.index("gold") if "gold" in shown else None,
        )
    ]


def rb_screen_window(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``researchbench_screen_window``: the chosen positions of one window."""
    parsed = _parsed(data)
    value = tuple(sorted(int(p) for p in parsed["selected"])) if parsed is not None else None
    return [_base(step, iid, key, data, "choice", value, generators=gens)]


def rb_matched_score(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``researchbench_matched_score``: the 0–5 matched score."""
    parsed = _parsed(data)
    return [_base(step, iid, key, data, "rating", None if parsed is None else float(parsed), generators=gens)]


# --------------------------------------------------------------------------- LigBench
def lig_compare(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``ligbench/compare`` and ``ligbench/judge_pair``: one pairwise view per dimension (1 = A,
    the item shown first, better; 0.5 equal; 0 B better). Group: the pair without its order."""
    parsed = _parsed(data)
    orig = original_key(key)[0]
    group = orig.rsplit("|", 1)[0] if step == "ligbench/compare" else ""
    dims = list(parsed) if parsed is not None else ["rating", "soundness", "contribution"]
    views = [
        _base(
            f"{step}[{dim}]",
            iid,
            key,
            data,
            "pairwise",
            None if parsed is None else float(parsed[dim]),
            generators=gens,
            group=group,
        )
        for dim in dims
    ]
    human = data.get("human_preference")  # ligbench/judge_pair: 1 = the paper shown first scores higher
    if isinstance(human, dict):
        out = []
        for v in views:
            label = human.get(v.metric[len(step) + 1 : -1])
            shown = v.positions or ()
            if label in (0.0, 0.5, 1.0) and len(shown) == 2:
                v = replace(v, human_label="tie" if label == 0.5 else shown[0] if label == 1.0 else shown[1])
            out.append(v)
        views = out
    return views


def lig_initial_score(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``ligbench/initial_score``: one rating view per dimension (0–5); the calibration papers
    are the shown items."""
    parsed = _parsed(data)
    dims = list(parsed) if parsed is not None else ["rating", "contribution", "soundness", "novelty"]
    return [
        _base(
            f"{step}[{dim}]",
            iid,
            key,
            data,
            "rating",
            None if parsed is None else float(parsed[dim]),
            generators=gens,
            positions=data.get("calibration"),
        )
        for dim in dims
    ]


ADAPTERS: dict[str, Adapter] = {
    "imcq": aiib_imcq,
    "i2i": aiib_i2i,
    "i2t": aiib_i2t,
    "compete": aiib_compete,
    "researchbench_rank_pair": rb_rank_pair,
    "researchbench_screen_window": rb_screen_window,
    "researchbench_matched_score": rb_matched_score,
    "ligbench/compare": lig_compare,
    "ligbench/judge_pair": lig_compare,
    "ligbench/initial_score": lig_initial_score,
}


def adapter_for(step: str) -> Adapter | None:
    """The adapter of a recorded step, None for a step that is not a judgment."""
    if step in ADAPTERS:
        return ADAPTERS[step]
    if step.startswith("rank/"):
        return ideabench_rank
    if step.startswith("overlap/"):
        return ideabench_overlap
    return None


def generator_models(records: Iterable[Record]) -> dict[str, str]:
    """Who generated what: IdeaBench ``<scenario>|<instance>``, AI Idea Bench idea id, LigBench idea
    id and ResearchBench instance -> generator model (from the generation records)."""
    out: dict[str, str] = {}
    for step, iid, _key, data in records:
        j = data.get("judgment") if isinstance(data, dict) else None
        if step.startswith("generate/") and j:
            out[f"{step.split('/')[1]}|{iid}"] = j["judge_model"]
        elif step in ("ligbench/generate", "researchbench_generate") and j:
            out.setdefault(iid, j["judge_model"])
        elif step == "ideas":
            for idea in data.get("ideas", []):
                model = (idea.get("provenance") or {}).get("model")
                if model:
                    out[idea["id"]] = model
    return out


def views_from_records(records: Iterable[Record]) -> list[JudgmentView]:
    """Judgment views of every judged record, in (step, instance, key) order whatever order the
    records were written in (a streamed, batched or Ray run writes them in completion order, and
    the figures and their intervals must not depend on that); other records are ignored.

    A record without a ``judgment`` (a skipped unit) is ignored.
    """
    rows = sorted(records, key=lambda r: (str(r[0]), str(r[1]), str(r[2])))
    gens = generator_models(rows)
    views: list[JudgmentView] = []
    for step, iid, key, data in rows:
        adapter = adapter_for(step)
        if adapter is not None and isinstance(data, dict) and isinstance(data.get("judgment"), dict):
            views.extend(adapter(step, iid, key, data, gens))
    return views


def views_from_run(run_dir: str) -> list[JudgmentView]:
    """Judgment views of a run directory's ``records/*.jsonl`` (read only, no lock taken).

    Raises:
        DataError: a records file is not JSON lines.
    """
    from pathlib import Path

    from ideaharness.data.jsonl import scan_jsonl

    rows: list[Record] = []
    for path in sorted((Path(run_dir) / "records").glob("*.jsonl")):
        for _, rec in scan_jsonl(path).rows:
            if isinstance(rec, dict) and {"step", "instance_id", "key", "data"} <= set(rec):
                rows.append((rec["step"], rec["instance_id"], rec["key"], rec["data"]))
    return views_from_records(rows)
