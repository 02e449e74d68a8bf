"""Judge reliability in every run: the ``reliability`` block of ``results.json``, its table and
warnings, and the seeded choice of judgments to re-ask for position consistency.

* :func:`reliability_enricher` (a registered result enricher, so every benchmark gets it):
  ``results["reliability"] = reliability_section(records, human_ceiling=...)`` with the Si et al.
  (2024) human–human agreement as the ceiling where that data is found
  (:mod:`ideaharness.metrics.reliability`).
* :func:`reliability_table` / :func:`reliability_warning_lines`: what the console and report show
  under the score tables.
* :func:`reask_units`: the recorded judgments ``--consistency-sample F`` re-asks (seeded by the run's
  seed; 0 re-asks nothing). Each benchmark re-renders a chosen judgment with its items in
  :func:`~ideaharness.metrics.reliability.sampling.reask_permutation` order and records it under
  :func:`~ideaharness.metrics.reliability.sampling.reask_key` (scoring reads the original key only).
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable
from typing import Any

from ideaharness.errors import DataError
from ideaharness.metrics.reliability import (
    COLUMNS,
    reliability_rows,
    reliability_section,
    reliability_warnings,
)
from ideaharness.metrics.reliability.sampling import select_for_reask
from ideaharness.metrics.reliability.views import REASK_SUFFIX
from ideaharness.report.html import Table
from ideaharness.runner.protocol import RunContext
from ideaharness.runner.registry import register_enricher

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
    computed from every record of the run; ``human_ceiling`` is None where the Si et al. data is absent."""
    results["reliability"] = reliability_section(ctx.store.all_records(), human_ceiling=_human_ceiling())


def _ceiling_text(ceiling: dict[str, Any] | None) -> str | None:
    if not ceiling or ceiling.get("r") is None:
        return None
    return f"human–human r {ceiling['r']:.2f}"


def reliability_table(results: dict[str, Any]) -> Table | None:
    """The "Judge reliability" table (:data:`~ideaharness.metrics.reliability.COLUMNS`, one row per
    metric and judge) with the human ceiling beside human agreement and the warnings as its note;
    None when the run has no reliability block."""
    section = results.get("reliability")
    if not isinstance(section, dict) or not isinstance(section.get("metrics"), dict):
        return None
    ceiling = _ceiling_text(section.get("human_ceiling"))
    human = COLUMNS.index("human agreement")
    rows = reliability_rows(section)
    if ceiling:
        for row in rows:
            if row[human] != "—":
                row[human] = f"{row[human]} (ceiling: {ceiling})"
    notes = reliability_warning_lines(results)
    if ceiling:
        c = section["human_ceiling"]
        notes.append(f"Human ceiling: Si et al. 2024 expert reviewers agree at {ceiling} "
                     f"({c.get('n_pairs')} review pairs of {c.get('n_ideas')} ideas).")
    return Table(title="Judge reliability", columns=list(COLUMNS), rows=rows, note="\n".join(notes) or None)


def reliability_warning_lines(results: dict[str, Any]) -> list[str]:
    """The degenerate-judge warnings of a run, each as ``"⚠ <message>"``."""
    section = results.get("reliability")
    return [f"⚠ {w}" for w in reliability_warnings(section)] if isinstance(section, dict) else []


def reask_units(ctx: RunContext, steps: Collection[str], instance_ids: Iterable[str],
                records: Iterable[Record] | None = None) -> list[Record]:
    """The recorded, parsed judgments of ``steps`` (of the given instances, re-asks excluded) that
    ``--consistency-sample`` chooses for a position-permuted re-ask, in a deterministic order.

    Units are ``"<step>|<instance_id>|<key>"``, chosen by
    :func:`~ideaharness.metrics.reliability.sampling.select_for_reask` with the run's seed.
    """
    fraction = float(getattr(ctx.options, "consistency_sample", 0.0))
    if fraction <= 0:
        return []
    ids = set(instance_ids)
    source = ctx.store.all_records() if records is None else records
    units = {
        f"{step}|{iid}|{key}": (step, iid, key, data)
        for step, iid, key, data in source
        if step in steps and iid in ids and not key.endswith(REASK_SUFFIX)
        and isinstance(data.get("judgment"), dict) and data["judgment"].get("parse_ok")
    }
    seed = int(getattr(ctx.config, "seed", 0))
    return [units[u] for u in select_for_reask(units, fraction, seed=seed)]
