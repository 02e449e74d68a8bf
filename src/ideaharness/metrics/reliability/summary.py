"""What the runner calls: the reliability section of ``results.json`` and its table rows.

:func:`reliability_section` reads a run's records (a directory or ``RunStore.all_records()``)
and returns the JSON object to store under ``results["reliability"]``; :func:`reliability_rows`
flattens it into one row per (metric, judge) for the console table and the HTML report, and
:func:`reliability_warnings` the warning sentences to print under the score table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ideaharness.metrics.reliability.adapters import (
    Adapters,
    GeneratorIndex,
    Record,
    idea_generators,
    views_from_records,
    views_from_run,
)
from ideaharness.metrics.reliability.block import reliability_blocks, reliability_results

COLUMNS = [
    "metric", "judge", "judgments", "parse failures", "truncated reasoning", "retries", "consistency",
    "chance", "tie rate",
    "modal answer (share)", "position bias (adj. p)", "self-judged", "panel α", "human agreement",
    "warnings",
]  # fmt: skip
"""Columns of :func:`reliability_rows`; ``human agreement`` is dropped by :func:`reliability_columns`
when no judge of the section was compared with human labels, ``truncated reasoning`` (the parse
failures whose reply ran out of tokens while reasoning, counted among ``parse failures``) when no
judge had one."""


def reliability_section(
    source: str | Path | Iterable[Record],
    *,
    adapters: Adapters,
    generators: GeneratorIndex = idea_generators,
    human_labels: Mapping[str, Mapping[str, Any]] | None = None,
    human_ceiling: Mapping[str, Any] | Callable[[], Mapping[str, Any] | None] | None = None,
    **rules: Any,
) -> dict[str, Any]:
    """``results["reliability"]`` of a run: ``{"metrics": {metric: block}, "warnings": [...],
    "human_ceiling": ...}``.

    Args:
        source: a run directory, or records as ``(step, instance_id, key, data)``.
        adapters, generators: the run's benchmark's ``judgment_adapters`` and
            ``generator_models`` (:mod:`.adapters`).
        human_labels: metric -> unit id -> human label, where the benchmark has them (records may
            also carry their own, see :mod:`.adapters`).
        human_ceiling: the human–human figure (``human.human_ceiling().model_dump()``) or a
            callable returning it; kept only when some judge's human agreement is stated in the
            ceiling's statistic (a quartile agreement), None otherwise: a ceiling is shown beside a
            matching judge–human comparison, never on its own.
        rules: thresholds of the warning rules (see :func:`reliability_blocks`).
    """
    views = (views_from_run(str(source), adapters, generators) if isinstance(source, str | Path)
             else views_from_records(source, adapters, generators))
    blocks = reliability_blocks(views, human_labels=human_labels, **rules)
    matching = any(
        jr.human is not None and jr.human.quartile_agreement is not None
        for b in blocks.values()
        for jr in b.judges.values()
    )
    ceiling = None
    if matching:
        ceiling = human_ceiling() if callable(human_ceiling) else human_ceiling
    return {
        "metrics": reliability_results(blocks),
        "warnings": [w.message for b in blocks.values() for w in b.warnings],
        "human_ceiling": dict(ceiling) if ceiling is not None else None,
    }


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def _truncated_cell(jr: Mapping[str, Any]) -> str:
    """``"3 (12%)"``: parse failures whose reply ran out of tokens while reasoning, and their share
    of the judgments; ``"0"`` when none (a block recorded before the count existed: ``"—"``)."""
    n = jr.get("truncated_reasoning")
    if n is None:
        return "—"
    return f"{n} ({_pct(jr.get('truncated_reasoning_rate'))})" if n else "0"


def _consistency_cell(jr: Mapping[str, Any]) -> str:
    cons = jr.get("consistency") or {}
    if cons.get("agreement") is None:
        return "—"
    if jr.get("constant") or cons.get("informative") is False:
        return f"not informative: constant judge ({cons['agreement']:.2f}, {cons['n_pairs']} pairs)"
    return f"{cons['agreement']:.2f} ({cons['n_pairs']} pairs)"


def _position_cell(pos: Mapping[str, Any]) -> str:
    if not pos or pos.get("p_adjusted") is None:
        return "—"
    where = f"{pos['favours']} {pos['position']}" if pos.get("position") else ""
    return f"{where} ({pos['p_adjusted']:.2g}, n = {pos['n_judgments']})".strip()


def _human_cell(human: Mapping[str, Any]) -> str:
    if not human or human.get("value") is None and human.get("quartile_agreement") is None:
        return "—"
    parts = []
    if human.get("value") is not None:
        text = f"{human['measure']} {human['value']:.2f}"
        if human.get("interval"):
            low, high = human["interval"]
            text += f" [{low:.2f}, {high:.2f}]"
        elif human.get("interval_why"):
            text += f" ({human['interval_why']})"
        parts.append(text)
    if human.get("quartile_agreement") is not None:
        parts.append(f"quartile agreement {human['quartile_agreement']:.2f}")
    return ", ".join(parts) + f" (n = {human['n']} units)"


def has_human_agreement(section: Mapping[str, Any]) -> bool:
    """Whether any judge of a :func:`reliability_section` was compared with human labels."""
    return any(
        (jr.get("human") or {}).get("n")
        for block in (section.get("metrics") or {}).values()
        for jr in (block.get("judges") or {}).values()
    )


def has_truncated_reasoning(section: Mapping[str, Any]) -> bool:
    """Whether any judge of a :func:`reliability_section` had a reply that ran out of tokens
    while reasoning (``truncated_reasoning`` > 0)."""
    return any(
        (jr.get("truncated_reasoning") or 0) > 0
        for block in (section.get("metrics") or {}).values()
        for jr in (block.get("judges") or {}).values()
    )


def reliability_columns(section: Mapping[str, Any]) -> list[str]:
    """:data:`COLUMNS` less ``human agreement`` when no judge was compared with human labels and
    less ``truncated reasoning`` when no reply ran out of tokens while reasoning."""
    return [c for c in COLUMNS
            if (c != "human agreement" or has_human_agreement(section))
            and (c != "truncated reasoning" or has_truncated_reasoning(section))]


def reliability_rows(section: Mapping[str, Any]) -> list[list[str]]:
    """One row of :func:`reliability_columns` per (metric, judge) of a :func:`reliability_section`."""
    keep = [COLUMNS.index(c) for c in reliability_columns(section)]
    rows = []
    for metric, block in section["metrics"].items():
        alpha = (block.get("panel") or {}).get("alpha")
        for judge, jr in block["judges"].items():
            cons = jr.get("consistency") or {}
            full = [
                metric, judge, str(jr["judgments"]), _pct(jr["parse_failure_rate"]), _truncated_cell(jr),
                _pct(jr["retry_rate"]),
                _consistency_cell(jr),
                "—" if cons.get("chance") is None else f"{cons['chance']:.2f}",
                _pct(jr["tie_rate"]),
                "—" if jr["modal_share"] is None else f"{jr['modal_answer']} ({jr['modal_share']:.0%})",
                _position_cell(jr.get("position") or {}),
                str(jr["self_judged"]) if jr["self_preference"] else "no",
                "—" if alpha is None else f"{alpha:.2f}",
                _human_cell(jr.get("human") or {}),
                "; ".join(w["rule"] for w in jr["warnings"]) or "ok",
            ]  # fmt: skip
            rows.append([full[i] for i in keep])
    return rows


def ceiling_line(section: Mapping[str, Any]) -> str | None:
    """The one sentence stating the human–human ceiling, None when the section has none (it has
    one only beside a judge–human comparison in the same statistic)."""
    c = section.get("human_ceiling") if isinstance(section, Mapping) else None
    if not c or c.get("value") is None:
        return None
    low, high = c["interval"]
    return (
        f"Human ceiling of the quartile agreement: Si et al. 2024 expert reviewers, split in halves, agree "
        f"on which ideas are in the top or bottom quarter for {c['value']:.2f} of them (range over "
        f"{c['n_splits']} random splits {low:.2f}–{high:.2f}, chance {c['chance']:.2f}; "
        f"{c['n_ideas']} ideas)."
    )


def reliability_warnings(section: Mapping[str, Any]) -> list[str]:
    """The degenerate-judge messages of a section, for the console and the report."""
    return list(section.get("warnings") or [])
