"""Judge reliability in every run: the ``reliability`` block of ``results.json``, its table and
warnings.

* :func:`reliability_enricher` (a registered result enricher, so every benchmark gets it):
  ``results["reliability"] = reliability_section(records, human_ceiling=...)``; the Si et al.
  (2024) human–human agreement is kept as a ceiling only beside a judge–human comparison in the
  same statistic (:mod:`ideaharness.metrics.reliability`).
* :func:`reliability_table` / :func:`reliability_warning_lines`: what the console and report show
  under the score tables.
* the re-asks of ``--consistency-sample F`` are chosen and asked by
  :meth:`~ideaharness.runner.steps.StepRunner.run_reasks` (judgments given a ``reorder``).
"""

from __future__ import annotations

import functools
from typing import Any

from ideaharness.errors import DataError, UserError
from ideaharness.metrics.reliability import (
    ceiling_line,
    reliability_columns,
    reliability_rows,
    reliability_section,
    reliability_warnings,
)
from ideaharness.report.html import Table
from ideaharness.runner.protocol import Benchmark, RunContext
from ideaharness.runner.registry import get_benchmark, register_enricher

Record = tuple[str, str, str, dict[str, Any]]


@functools.cache
def _human_ceiling() -> dict[str, Any] | None:
    from ideaharness.metrics.reliability.human import human_ceiling

    try:
        return human_ceiling().model_dump(mode="json")
    except (DataError, OSError, ValueError):
        return None


@register_enricher
def reliability_enricher(ctx: RunContext, results: dict[str, Any]) -> None:
    """Add ``results["reliability"]`` (see :func:`~ideaharness.metrics.reliability.reliability_section`)
    computed from every record of the run, read through the run's benchmark's
    ``judgment_adapters`` and ``generator_models``. ``human_ceiling`` (Si et al. 2024) is set only
    when a judge was compared with human scores in the ceiling's own statistic; None otherwise."""
    try:
        bench: type[Benchmark] = get_benchmark(str(results.get("benchmark")))
    except UserError:  # a class run without registering it: nothing declared
        bench = Benchmark
    results["reliability"] = reliability_section(
        ctx.store.all_records(), adapters=bench.judgment_adapters, generators=bench.generator_models,
        human_ceiling=_human_ceiling)


def reliability_table(results: dict[str, Any]) -> Table | None:
    """The "Judge reliability" table (:func:`~ideaharness.metrics.reliability.reliability_columns`,
    one row per metric and judge; the human-agreement column only when some judge was compared
    with human labels) with the warnings and, where there is one, the human ceiling as its note;
    None when the run has no reliability block."""
    section = results.get("reliability")
    if not isinstance(section, dict) or not isinstance(section.get("metrics"), dict):
        return None
    notes = reliability_warning_lines(results)
    ceiling = ceiling_line(section)
    if ceiling:
        notes.append(ceiling)
    return Table(title="Judge reliability", columns=reliability_columns(section),
                 rows=reliability_rows(section), note="\n".join(notes) or None)


def reliability_ceiling_line(results: dict[str, Any]) -> str | None:
    """The human-ceiling sentence of a run (:func:`~ideaharness.metrics.reliability.ceiling_line`),
    None when the run compared no judge with human scores in the ceiling's statistic."""
    section = results.get("reliability")
    return ceiling_line(section) if isinstance(section, dict) else None


def reliability_warning_lines(results: dict[str, Any]) -> list[str]:
    """The degenerate-judge warnings of a run, each as ``"⚠ <message>"``."""
    section = results.get("reliability")
    return [f"⚠ {w}" for w in reliability_warnings(section)] if isinstance(section, dict) else []
