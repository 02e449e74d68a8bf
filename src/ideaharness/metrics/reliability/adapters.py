"""Adapters: recorded judgments -> :class:`JudgmentView` (read only), as each benchmark declares them.

Input is what :meth:`ideaharness.runs.store.RunStore.all_records` returns, a sequence of
``(step, instance_id, key, data)`` with ``data["judgment"]`` a dumped
:class:`ideaharness.schema.Judgment`. There is no central table: a benchmark declares, in its own
folder (``benchmarks/<name>/reliability.py``), a mapping :data:`Adapters` from a recorded step
name, or a step prefix ending in ``/`` (``"rank/"``), to the function reading that step's records
as views, or to None for a step recorded through the judge call that is not a judgment (a
generation, a decomposition, a rewrite); the benchmark class carries it as
``judgment_adapters`` (:class:`ideaharness.runner.Benchmark`). A key ending in
:data:`~ideaharness.metrics.reliability.views.REASK_SUFFIX` is a consistency re-ask of the
judgment recorded under the key without it (same step and instance).

An adapter is called as ``adapter(step, instance_id, key, data, generators)`` and returns the
record's views (one per dimension where one reply scores several); ``generators`` maps what the
benchmark's ``generator_models`` keys (an idea id, ``"<scenario>|<instance>"``) to the model that
generated the judged idea (self-preference). :func:`judgment_view` builds a view from a record.

Human labels: a record that carries the human answer to its question gives its views a
:attr:`~ideaharness.metrics.reliability.views.JudgmentView.human_label`, from which the block's
human agreement is computed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ideaharness.metrics.reliability.sampling import original_key
from ideaharness.metrics.reliability.views import JudgmentView, Kind

Record = tuple[str, str, str, dict[str, Any]]
Adapter = Callable[[str, str, str, dict[str, Any], dict[str, str]], list[JudgmentView]]
Adapters = Mapping[str, Adapter | None]
"""Step name, or step prefix ending in ``/``, -> its adapter; None: recorded through the judge
call but not a judgment (no view)."""
GeneratorIndex = Callable[[Sequence[Record]], dict[str, str]]
"""Records -> {key the adapters pass as ``gen_key`` -> model that generated that idea}."""


def judgment_view(
    metric: str,
    instance_id: str,
    key: str,
    data: dict[str, Any],
    kind: Kind,
    value: Any,
    *,
    generators: Mapping[str, str],
    gen_key: str | None = None,
    group: str | None = None,
    positions: Sequence[str] | None = None,
    gold: int | None = None,
    generator: str | None = None,
    unit: str | None = None,
) -> JudgmentView:
    """The view of one record's judgment.

    Args:
        metric: the view's metric (the step, with ``[dimension]`` for one of several).
        data: the record (``data["judgment"]`` a dumped Judgment).
        kind, value: the normalised answer (:mod:`~ideaharness.metrics.reliability.views`);
            dropped (None) when the judgment did not parse.
        generators, gen_key: who generated what, and this judgment's key in it (default the
            instance id); ``generator`` overrides both.
        group: judgments asking the same question (default: the key without its re-ask suffix).
        positions: items in the order shown (default: the judgment's recorded ``positions``).
        gold: 0-based position of the gold item, if any. unit: the panel unit (default
            ``instance_id|group``).
    """
    j = data["judgment"]
    orig, reask = original_key(key)
    shown = positions if positions is not None else j.get("positions")
    return JudgmentView(
        metric=metric,
        instance_id=instance_id,
        key=key,
        judge_model=j["judge_model"],
        kind=kind,
        value=value if j["parse_ok"] else None,
        parse_ok=bool(j["parse_ok"]),
        attempts=int(j.get("attempts") or 1),
        positions=tuple(shown) if shown is not None else None,
        gold_position=gold,
        group=group if group is not None else orig,
        unit=unit,
        generator_model=generator if generator is not None else generators.get(gen_key or instance_id),
        reask=reask,
        truncated_reasoning=bool(j.get("truncated_reasoning")) and not j["parse_ok"],
    )


def parsed_value(data: dict[str, Any]) -> Any:
    """The parsed answer of a record's judgment, None when it did not parse."""
    j = data["judgment"]
    return j["parsed"] if j["parse_ok"] else None


def declared(step: str, adapters: Adapters) -> str | None:
    """The key of ``adapters`` that covers ``step``: the step itself, else the longest prefix
    ending in ``/`` that it starts with; None when none does."""
    if step in adapters:
        return step
    prefixes = [k for k in adapters if k.endswith("/") and step.startswith(k)]
    return max(prefixes, key=len) if prefixes else None


def adapter_for(step: str, adapters: Adapters) -> Adapter | None:
    """The adapter of a recorded step, None for a step that is not a judgment (or not declared)."""
    found = declared(step, adapters)
    return adapters[found] if found is not None else None


def undeclared_steps(records: Iterable[Record], adapters: Adapters) -> list[str]:
    """Steps whose records carry a ``judgment`` but that ``adapters`` does not cover (neither as
    a judgment nor as a non-judgment step), sorted; a benchmark must declare every one."""
    return sorted({step for step, _, _, data in records
                   if isinstance(data, dict) and isinstance(data.get("judgment"), dict)
                   and declared(step, adapters) is None})


def idea_generators(records: Sequence[Record]) -> dict[str, str]:
    """Idea id -> generator model, from ``ideas`` records (``data["ideas"]``: dumped
    :class:`ideaharness.schema.Idea` with ``provenance.model``); the default generator index."""
    out: dict[str, str] = {}
    for step, _iid, _key, data in records:
        if step == "ideas" and isinstance(data, dict):
            for idea in data.get("ideas", []):
                model = (idea.get("provenance") or {}).get("model")
                if model:
                    out[idea["id"]] = model
    return out


def views_from_records(records: Iterable[Record], adapters: Adapters,
                       generators: GeneratorIndex = idea_generators) -> list[JudgmentView]:
    """Judgment views of every judged record, in (step, instance, key) order whatever order the
    records were written in (a streamed, batched or Ray run writes them in completion order, and
    the figures and their intervals must not depend on that); other records are ignored.

    Args:
        records: ``(step, instance_id, key, data)`` of one run.
        adapters: the run's benchmark's ``judgment_adapters``.
        generators: the benchmark's generator index (default :func:`idea_generators`).

    A record without a ``judgment`` (a skipped unit) is ignored.
    """
    rows = sorted(records, key=lambda r: (str(r[0]), str(r[1]), str(r[2])))
    gens = generators(rows)
    views: list[JudgmentView] = []
    for step, iid, key, data in rows:
        adapter = adapter_for(step, adapters)
        if adapter is not None and isinstance(data, dict) and isinstance(data.get("judgment"), dict):
            views.extend(adapter(step, iid, key, data, gens))
    return views


def run_records(run_dir: str) -> list[Record]:
    """The ``(step, instance_id, key, data)`` of a run directory's ``records/*.jsonl`` (read only,
    no lock taken).

    Raises:
        DataError: a records file is not JSON lines.
    """
    from pathlib import Path

    from ideaharness.jsonl import scan_jsonl

    rows: list[Record] = []
    for path in sorted((Path(run_dir) / "records").glob("*.jsonl")):
        for _, rec in scan_jsonl(path).rows:
            if isinstance(rec, dict) and {"step", "instance_id", "key", "data"} <= set(rec):
                rows.append((rec["step"], rec["instance_id"], rec["key"], rec["data"]))
    return rows


def views_from_run(run_dir: str, adapters: Adapters,
                   generators: GeneratorIndex = idea_generators) -> list[JudgmentView]:
    """Judgment views of a run directory (:func:`run_records`, :func:`views_from_records`).

    Raises:
        DataError: a records file is not JSON lines.
    """
    return views_from_records(run_records(run_dir), adapters, generators)
