"""What the runner calls: the reliability section of ``results.json`` and its table rows.

:func:`reliability_section` reads a run's records (a directory or ``RunStore.all_records()``)
and returns the JSON object to store under ``results["reliability"]``; :func:`reliability_rows`
flattens it into one row per (metric, judge) for the console table and the HTML report, and
:func:`reliability_warnings` the warning sentences to print under the score table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ideaharness.metrics.reliability.adapters import Record, views_from_records, views_from_run
from ideaharness.metrics.reliability.block import reliability_blocks, reliability_results

COLUMNS = [
    "metric", "judge", "judgments", "parse failures", "retries", "consistency", "chance", "tie rate",
    "modal answer (share)", "position ρ (p)", "self-judged", "panel α", "human agreement", "warnings",
]  # fmt: skip


def reliability_section(
    source: str | Path | Iterable[Record],
    *,
    human_labels: Mapping[str, Mapping[str, Any]] | None = None,
    human_ceiling: Mapping[str, Any] | None = None,
    **rules: Any,
) -> dict[str, Any]:
    """``results["reliability"]`` of a run: ``{"metrics": {metric: block}, "warnings": [...],
    "human_ceiling": ...}``.

    Args:
        source: a run directory, or records as ``(step, instance_id, key, data)``.
        human_labels: metric -> unit id -> human label, where the benchmark has them.
        human_ceiling: e.g. ``human.human_ceiling().model_dump()``, shown beside judge agreement.
        rules: thresholds of the warning rules (see :func:`reliability_blocks`).
    """
    views = views_from_run(str(source)) if isinstance(source, str | Path) else views_from_records(source)
    blocks = reliability_blocks(views, human_labels=human_labels, **rules)
    return {
        "metrics": reliability_results(blocks),
        "warnings": [w.message for b in blocks.values() for w in b.warnings],
        "human_ceiling": dict(human_ceiling) if human_ceiling is not None else None,
    }


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def reliability_rows(section: Mapping[str, Any]) -> list[list[str]]:
    """One row of :data:`COLUMNS` per (metric, judge) of a :func:`reliability_section`."""
    rows = []
    for metric, block in section["metrics"].items():
        alpha = (block.get("panel") or {}).get("alpha")
        for judge, jr in block["judges"].items():
            cons = jr.get("consistency") or {}
            pos = jr.get("position") or {}
            human = jr.get("human") or {}
            rho = pos.get("rho")
            rows.append([
                metric, judge, str(jr["judgments"]), _pct(jr["parse_failure_rate"]), _pct(jr["retry_rate"]),
                "—" if cons.get("agreement") is None
                else f"{cons['agreement']:.2f} ({cons['n_pairs']} pairs)",
                "—" if cons.get("chance") is None else f"{cons['chance']:.2f}",
                _pct(jr["tie_rate"]),
                "—" if jr["modal_share"] is None else f"{jr['modal_answer']} ({jr['modal_share']:.0%})",
                "—" if rho is None else f"{rho:+.2f} ({pos['p_value']:.2g})",
                str(jr["self_judged"]) if jr["self_preference"] else "no",
                "—" if alpha is None else f"{alpha:.2f}",
                "—" if human.get("value") is None else f"{human['measure']} {human['value']:.2f}",
                "; ".join(w["rule"] for w in jr["warnings"]) or "ok",
            ])  # fmt: skip
    return rows


def reliability_warnings(section: Mapping[str, Any]) -> list[str]:
    """The degenerate-judge messages of a section, for the console and the report."""
    return list(section.get("warnings") or [])
