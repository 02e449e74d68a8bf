"""The one step-naming rule: how a benchmark names the steps it records (``records/<step>.jsonl``).

Rule: ``<action>[/<qualifier>...]``.

* ``action`` says what the step does, in lower-case snake_case (``[a-z][a-z0-9]*(_[a-z0-9]+)*``):
  ``generate``, ``critique``, ``rank``, ``judge_pair``.
* each ``qualifier`` narrows it (a scenario, a stage, an indicator): no ``/``, no whitespace, not
  empty. Fixed qualifiers are lower-case snake_case too (``review/idea``); a qualifier that is a
  user-given value (IdeaBench's ``rank/low/<indicator name>``) is kept as given.
* no benchmark prefix: the action is never a registered benchmark's name nor starts with
  ``<benchmark>_`` (records already live in one benchmark's run directory).

A judgment adapter key (``Benchmark.judgment_adapters``) is a step name or a prefix of one
ending in ``/``, and follows the same rule. ``tests/runner/test_step_names.py`` checks every
registered benchmark's adapter keys and the steps a fixture run of it records.

Legacy exceptions (:data:`LEGACY_STEP_NAMES`): LigBench's (and its judge-accuracy task's)
``ligbench/...`` and ResearchBench's
``researchbench_...`` steps predate the rule. Renaming them changes record file names, so old run
directories would no longer resume; they stay until those benchmarks bump their version. No new
name may be added to the list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

ACTION = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
QUALIFIER = re.compile(r"[^/\s]+")

_LIGBENCH = frozenset({
    "ligbench/compare",
    "ligbench/formalize",
    "ligbench/generate",
    "ligbench/initial_score",
    "ligbench/judge_pair",
    "ligbench/novelty_search",
    "ligbench/rewrite",
})

LEGACY_STEP_NAMES: Mapping[str, frozenset[str]] = {
    "ligbench": _LIGBENCH,
    "ligbench-judge": _LIGBENCH,  # the judge-accuracy task shares LigBench's steps and adapters
    "researchbench": frozenset({
        "researchbench_generate",
        "researchbench_matched_score",
        "researchbench_pool",
        "researchbench_rank_pair",
        "researchbench_rewrite",
        "researchbench_screen_window",
    }),
}
"""Benchmark -> the step names (and adapter keys) recorded before the rule; exact names only."""


def step_name_problem(step: str, *, benchmark: str = "", benchmark_names: Iterable[str] = ()) -> str | None:
    """Why ``step`` breaks the naming rule, or None when it follows it (or is a legacy name of
    ``benchmark``).

    Args:
        step: a recorded step name, or an adapter key (a trailing ``/`` marks a prefix).
        benchmark: the benchmark that records it (for its legacy names and its own prefix).
        benchmark_names: every registered benchmark name (no action may be one or start with
            ``<name>_``).

    Returns:
        One sentence naming the part that breaks the rule, e.g. ``"action 'Rank' is not
        lower-case snake_case"``; None when the name is fine.
    """
    if step in LEGACY_STEP_NAMES.get(benchmark, frozenset()):
        return None
    parts = (step[:-1] if step.endswith("/") else step).split("/")
    action, qualifiers = parts[0], parts[1:]
    if not ACTION.fullmatch(action):
        return f"action {action!r} is not lower-case snake_case"
    for qualifier in qualifiers:
        if not QUALIFIER.fullmatch(qualifier):
            return f"qualifier {qualifier!r} is empty or holds whitespace"
    for name in {benchmark, *benchmark_names} - {""}:
        prefix = name.replace("-", "_")
        if action == prefix or action.startswith(f"{prefix}_"):
            return f"action {action!r} carries the benchmark prefix {name!r}"
    return None


__all__ = ["ACTION", "LEGACY_STEP_NAMES", "QUALIFIER", "step_name_problem"]
