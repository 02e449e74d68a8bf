"""``ideaharness compare``: a leaderboard of systems from saved runs of one benchmark.

For every metric: each system's value with its n (instances) and its metric's 95 %
interval over the instances *every* compared system with a value was scored
on (paired: a system that failed or did not parse on the hard instances is not ranked on the easy
ones alone), beside it its value over all its own scored instances and its coverage (answered /
asked generations, from the run's ``coverage`` block; a system more than :data:`COVERAGE_GAP` below
the best-covered one is marked), and for every pair of systems the paired difference over the
instances both were scored on, with a paired bootstrap interval (the per-instance differences
resampled together, so instance difficulty cancels out) and a two-sided paired sign-flip
permutation test (:func:`~ideaharness.metrics.stats.paired_permutation_test`, exact up to 13
shared instances). Every statistic comes from the metric's registered
:class:`~ideaharness.runner.protocol.MetricSpec` applied to the runs' per-instance scores
(``scores.jsonl``): its ``aggregate`` (mean, pooled ratio, a percentile such as LiveIdeaBench's
flexibility, a statistic over several inputs per unit) gives each system's value and, over the
shared units, the paired difference; its ``interval`` gives each system's interval (the paired
interval is always a percentile bootstrap of the difference). So the values are those
``results.json`` reports. Systems are ranked in the metric's direction (``higher_is_better``).

Significance: a difference is marked significant only when (1) the pair shares at least
:data:`MIN_PAIRED_N` instances and (2) its Holm-adjusted p-value is below ``1 - confidence``. The
Holm family (Holm 1979) is every metric x pair comparison of the leaderboard that has at least
:data:`MIN_PAIRED_N` shared instances (``method.family_size``); a pair below the minimum gets no
mark ("n too small"), whatever its interval says.

Runs are compared only when every setting that changes results (judge, data, seeds, parity,
metric settings ...) is equal; the settings that define the system under test may differ: they
are what is compared (the generator spec, whether a model, an ideas file, a command or an HTTP
service, the ideas file and its format, the system name, generation sampling). Otherwise
:class:`~ideaharness.errors.UserError` names the differing keys, unless ``allow_mismatch``.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ideaharness.analysis.load import BenchmarkLookup, RunData, load_run, metric_key, registered_benchmark
from ideaharness.errors import UserError
from ideaharness.metrics.aggregate import IntervalSettings, mean
from ideaharness.metrics.reliability.summary import reliability_warnings
from ideaharness.metrics.stats import (
    BOOTSTRAP_ORDER,
    PERMUTATION_RESAMPLES,
    bootstrap_ci,
    holm_adjust,
    paired_permutation_test,
)
from ideaharness.runs.inputs import INPUTS_KEY
from ideaharness.runs.scores import Row, Score, summarise, table_of, unit_rows
from ideaharness.runs.store import PRODUCED_BY_KEY

SYSTEM_KEYS = frozenset(
    {
        "generator",
        "generators",
        "ideas",
        "ideas_file",
        "ideas_format",
        "system",
        "generation_temperature",
        "generation_max_tokens",
    }
)
"""config.json keys that define the system under test (how its ideas were produced): they may
differ between compared runs."""
SYSTEM_INPUTS = frozenset({"--ideas", "--generator", "--generators"})
"""Input flags whose files are the system's own output (may differ)."""
PATH_KEYS = {"data": "--data", "corpus": "--corpus", "scholarideas_root": "--scholarideas-root"}
"""Path settings compared by the sha256 of the files read, not by where they lay."""


def result_settings(config: dict[str, Any], benchmark: str | None = None,
                    lookup: BenchmarkLookup = registered_benchmark) -> dict[str, Any]:
    """The settings of a run that change its results: config.json without the system's own keys
    and the free settings of ``benchmark`` (default ``config["benchmark"]``; its class's
    ``free_settings``, found through ``lookup``), with input files compared by content (sha256)
    rather than by path."""
    inputs = config.get(INPUTS_KEY) or {}
    cls = lookup(str(benchmark or config.get("benchmark") or ""))
    free = frozenset(getattr(cls, "free_settings", frozenset())) if cls is not None else frozenset()
    out = {k: v for k, v in config.items()
           if k not in SYSTEM_KEYS | free and k not in (INPUTS_KEY, PRODUCED_BY_KEY)}  # the store's own
    for key, flag in PATH_KEYS.items():
        if flag in inputs:
            out.pop(key, None)
    for flag, files in inputs.items():
        if flag not in SYSTEM_INPUTS:
            out[f"{INPUTS_KEY}[{flag}]"] = sorted((files or {}).values())
    return out


def settings_mismatch(configs: Sequence[dict[str, Any]], benchmark: str | None = None,
                      lookup: BenchmarkLookup = registered_benchmark) -> list[str]:
    """Names of the result-changing settings that differ between the configs (sorted) of runs of
    ``benchmark`` (default: each config's ``benchmark`` key)."""
    settings = [result_settings(c, benchmark, lookup) for c in configs]
    keys = sorted(set().union(*settings))
    return [k for k in keys if any(s.get(k) != settings[0].get(k) for s in settings[1:])]


def _systems_of(run: RunData) -> list[str]:
    return list(run.scores["system"].unique()) if len(run.scores) else [run.system]


def _labels(runs: Sequence[RunData]) -> dict[tuple[str, str], str]:
    """(run_id, system) -> a unique display label: the system's name; a name that two runs share
    gets its kind when their kinds differ (``agent (command)``, ``agent (ideas file)``), else its
    run (``agent (run_b)``)."""
    pairs = list(dict.fromkeys((r.run_id, s) for r in runs for s in _systems_of(r)))
    kinds = {(r.run_id, s): _kind_label(r, s) for r in runs for s in _systems_of(r)}
    by_name: dict[str, list[tuple[str, str]]] = {}
    for pair in pairs:
        by_name.setdefault(pair[1], []).append(pair)
    out = {}
    for name, same in by_name.items():
        labels = [kinds[p] for p in same]
        by_kind = len(same) > 1 and None not in labels and len(set(labels)) == len(labels)
        for pair, kind in zip(same, labels, strict=True):
            if len(same) == 1:
                out[pair] = name
            else:
                out[pair] = f"{name} ({kind})" if by_kind else f"{name} ({pair[0]})"
    return {pair: out[pair] for pair in pairs}


def _kind_label(run: RunData, system: str) -> str | None:
    info = run.system_info(system)
    return None if info is None else info.kind_label


def _distinct_runs(runs: Sequence[RunData]) -> list[RunData]:
    """The runs, each once: a run directory given twice is refused (one line); two directories of
    the same name (``a/run``, ``b/run``) are told apart by their paths."""
    seen: set[Path] = set()
    for run in runs:
        if (run.path / "config.json").is_file():  # a directory on disk (not frames built in memory)
            where = run.path.resolve()
            if where in seen:
                raise UserError(f"compare: {run.path} is given twice; give each run directory once")
            seen.add(where)
    counts: dict[str, int] = {}
    for run in runs:
        counts[run.run_id] = counts.get(run.run_id, 0) + 1
    out: list[RunData] = []
    for i, run in enumerate(runs):
        if counts[run.run_id] > 1:
            name = str(run.path) if str(run.path) not in (".", run.run_id) else f"{run.run_id}#{i + 1}"
            run = dataclasses.replace(run, run_id=name)
        out.append(run)
    return out


def _system_entry(run: RunData, system: str, label: str) -> dict[str, Any]:
    """One system of the comparison: its run, name, kind, spec, ideas file, the instances it
    answered, missed or failed (failed units: never scored, compared on the shared instances only)
    or added (ignored), and its coverage (:func:`_coverage`); kind and spec None for a system that
    is no generator of its run (LigBench's references)."""
    info = run.system_info(system)
    known = info.as_dict() if info is not None else {}
    answers = known.get("answers") or {"asked": None, "missing": [], "failed": [], "extra_instances": []}
    recorded = info is not None and info.recorded
    scored = run.scores[(run.scores["system"] == system) & run.scores["value"].notna()]
    coverage = _coverage(run, known)
    failed = coverage["failed"] if coverage is not None else list(answers.get("missing") or [])
    return {
        "label": label,
        "run_id": run.run_id,
        "system": system,
        "run_dir": str(run.path),
        **{k: known.get(k) for k in ("kind", "kind_label", "spec", "role", "ideas_file", "ideas_format")},
        "recorded": recorded,
        "answers": answers,
        "missing": len(failed) if recorded else None,
        "extra": len(answers["extra_instances"]) if recorded else None,
        "instances_scored": int(scored["instance_id"].nunique()),
        "coverage": coverage,
        "coverage_differs": False,
    }


COVERAGE_GAP = 0.05
"""A system is marked (``coverage_differs``) when its coverage (answered / asked generations) is
below the best-covered compared system's by more than this (5 percentage points): its value over
its own units would rest on the instances it could answer, so the leaderboard ranks every system
on the instances all of them were scored on."""


def _coverage(run: RunData, system: Mapping[str, Any]) -> dict[str, Any] | None:
    """A system's coverage ``{asked, answered, failed, rate}``: the run's ``coverage`` entry of its
    role and name (:func:`ideaharness.runner.sources.coverage_block`), else derived from its
    ``idea_sources`` answers (failed, else missing); None when the run recorded neither (a run saved
    before them, or a system that is no generator of its run)."""
    if not system or not system.get("recorded"):
        return None
    block = run.results.get("coverage")
    for entry in block if isinstance(block, list) else []:
        if isinstance(entry, Mapping) and entry.get("role") == system.get("role") and (
                entry.get("system") == system.get("system")):
            asked = int(entry.get("asked") or 0)
            failed = [str(i) for i in entry.get("failed") or []]
            given = entry.get("answered")
            answered = int(given) if given is not None else asked - len(failed)
            return {"asked": asked, "answered": answered, "failed": failed,
                    "rate": answered / asked if asked else None}
    answers = system.get("answers") or {}
    if not isinstance(answers.get("asked"), int):
        return None
    asked = int(answers["asked"])
    failed = [str(i) for i in answers.get("failed") or answers.get("missing") or []]
    answered = max(asked - len(failed), 0)
    return {"asked": asked, "answered": answered, "failed": failed,
            "rate": answered / asked if asked else None}


def _mark_coverage(systems: list[dict[str, Any]], gap: float = COVERAGE_GAP) -> None:
    """Set ``coverage_differs`` on each system whose coverage rate is below the highest rate of the
    compared systems by more than ``gap`` (:data:`COVERAGE_GAP`)."""
    rates = [s["coverage"]["rate"] for s in systems
             if s.get("coverage") and s["coverage"]["rate"] is not None]
    if len(rates) < 2:
        return
    best = max(rates)
    for s in systems:
        rate = (s.get("coverage") or {}).get("rate")
        s["coverage_differs"] = rate is not None and best - rate > gap + 1e-12


def _reliability_columns(run: RunData, system: str) -> dict[str, Any]:
    frame = run.judgments[run.judgments["system"] == system]
    n = len(frame)
    block = run.results.get("reliability") if isinstance(run.results.get("reliability"), dict) else {}
    warnings = reliability_warnings(block or {})
    return {
        "judgments": n,
        "parse_failure_rate": float((~frame["parse_ok"].astype(bool)).mean()) if n else None,
        "retry_rate": float((frame["attempts"] > 1).mean()) if n else None,
        "reliability_warnings": warnings,
    }


MIN_PAIRED_N = 10
"""Fewest shared instances for a significance mark. Below it a paired test at the 5 % level has
almost no power and the percentile bootstrap interval no coverage: with n paired values the exact
sign-flip test cannot reach two-sided p < 0.05 for n <= 5 (smallest p = 2 / 2^n), and a bootstrap
over n < 10 values draws from at most a few distinct resample means, so its interval can collapse
(n = 3 identical differences give [d, d]). 10 is where both become usable; the interval and the
p-value are still shown below it."""


def _finite_ci(value: tuple[float, float] | None) -> list[float] | None:
    if value is None or not all(np.isfinite(value)):
        return None
    return [float(value[0]), float(value[1])]


def _as_float(stat: Callable[[np.ndarray], float | None]) -> Callable[[np.ndarray], float]:
    def value(table: np.ndarray) -> float:
        result = stat(table)
        return float("nan") if result is None else float(result)

    return value


def _paired_ci(stat: Callable[[np.ndarray], float], ta: np.ndarray, tb: np.ndarray,
               boot: dict[str, Any]) -> list[float] | None:
    """Bootstrap interval of ``stat(a) - stat(b)``, resampling the shared units (rows) together."""
    n = len(ta)
    if n < 2:
        return None

    def resampled(index: np.ndarray) -> float:
        rows = np.asarray(index, dtype=int)
        return stat(ta[rows]) - stat(tb[rows])

    return _finite_ci(bootstrap_ci(list(range(n)), resampled, **boot))


def _pair(spec: Any, a: str, b: str, rows: Mapping[str, dict[str, Row]], boot: dict[str, Any],
          test_seed: int) -> dict[str, Any]:
    """The paired difference of two systems over the units both have complete (every input, for a
    metric with several), by the metric's statistic: for a mean, the mean paired difference with a
    bootstrap interval of the differences; otherwise the statistic's difference with the units
    resampled and swapped whole."""
    multi = bool(spec.inputs)
    shared = sorted(set(rows.get(a, {})) & set(rows.get(b, {})))
    ta, tb = table_of(rows.get(a, {}), shared), table_of(rows.get(b, {}), shared)
    both = (np.isfinite(ta).all(axis=1) & np.isfinite(tb).all(axis=1)) if multi else (
        np.isfinite(ta[:, 0]) & np.isfinite(tb[:, 0]))
    ta, tb = ta[both], tb[both]
    n = len(ta)
    if spec.aggregate is mean:
        x, y = ta[:, 0], tb[:, 0]
        test = paired_permutation_test(x, y, seed=test_seed)
        return {"a": a, "b": b, "n_shared": n, "mean_diff": float(np.mean(x - y)) if n else None,
                "ci95": _ci(bootstrap_ci((x - y).tolist(), **boot)),
                "p_value": None if test is None else test.p_value,
                "exact": None if test is None else test.exact}
    stat = _as_float(spec.aggregate)
    diff = stat(ta) - stat(tb) if n else float("nan")
    test = paired_permutation_test(ta, tb, stat, seed=test_seed) if np.isfinite(diff) else None
    return {"a": a, "b": b, "n_shared": n, "mean_diff": float(diff) if np.isfinite(diff) else None,
            "ci95": _paired_ci(stat, ta, tb, boot) if np.isfinite(diff) else None,
            "p_value": None if test is None or not np.isfinite(test.p_value) else test.p_value,
            "exact": None if test is None else test.exact}


def _scored_keys(rows: Mapping[str, Row], multi: bool) -> set[str]:
    """The units of a table with a value (every input, for a metric with several)."""
    return {k for k, row in rows.items()
            if (all(np.isfinite(v) for v in row) if multi else np.isfinite(row[0]))}


def _shared_units(labels: Sequence[str], scored: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """Label -> the units it is ranked on: systems whose scored units overlap (directly or through
    another) form a group, ranked on the units every member of the group was scored on; a system
    overlapping none (LigBench's reference plans beside generated ideas) gets no entry (its own units)."""
    group = {label: label for label in labels}

    def root(label: str) -> str:
        while group[label] != label:
            label = group[label]
        return label

    for a, b in itertools.combinations(labels, 2):
        if scored[a] & scored[b]:
            group[root(a)] = root(b)
    members: dict[str, list[str]] = {}
    for label in labels:
        members.setdefault(root(label), []).append(label)
    out: dict[str, set[str]] = {}
    for same in members.values():
        if len(same) > 1:
            units = set.intersection(*(scored[label] for label in same))
            out.update({label: units for label in same} if units else {})
    return out


def _metric_block(spec: Any, rows: Mapping[str, dict[str, Row]], order: Sequence[str],
                  settings: IntervalSettings, test_seed: int) -> dict[str, Any]:
    """Leaderboard and paired differences. Each system's ``mean``, ``n`` and ``ci95`` (what it is
    ranked by) are the spec's over the units every system with a value was scored on (paired: its
    row's ``ranked_on`` "shared"); ``own_mean``, ``own_n`` and ``own_ci95`` over all its own scored
    units. Systems scored on other units by design (LigBench's reference plans beside generated
    ideas) form their own group (:func:`_shared_units`); a system sharing no unit with any other, or
    a group whose members share no unit in common, is ranked on its own units (its row's
    ``ranked_on`` "own"; the block's ``ranked_on`` "own" when no row is on shared units;
    ``n_shared_all``: the largest group's shared units)."""
    multi = bool(spec.inputs)
    scored = {label: _scored_keys(rows.get(label, {}), multi) for label in order}
    with_value = [label for label in order if scored[label]]
    shared_of = _shared_units(with_value, scored)
    board = []
    for label in order:
        own = summarise(spec, rows.get(label, {}), settings)
        on, basis = own, "own"
        shared_here = shared_of.get(label)
        if shared_here:
            on = summarise(spec, {k: v for k, v in rows.get(label, {}).items() if k in shared_here}, settings)
            basis = "shared"
        board.append({"system": label, "n": on.n, "mean": on.value, "ci95": _ci(on.ci), "ranked_on": basis,
                      "own_n": own.n, "own_mean": own.value, "own_ci95": _ci(own.ci),
                      **({"ci_why": on.ci_why} if on.ci_why else {})})  # "n too small for an interval"
    shared = max((units for units in shared_of.values()), key=len, default=set())
    basis = "shared" if shared else "own"
    ranked = _ranked(board, spec.higher_is_better)
    boot = {"n_resamples": settings.n_resamples, "confidence": settings.confidence, "seed": settings.seed}
    paired = [_pair(spec, a, b, rows, boot, test_seed)
              for a, b in itertools.combinations([x["system"] for x in ranked], 2)]
    block = {"statistic": spec.aggregation, "interval": spec.ci, "higher_is_better": spec.higher_is_better,
             "leaderboard": ranked + [{**b, "rank": None} for b in board if b["mean"] is None],  # unranked
             "paired": paired, "ranked_on": basis, "n_shared_all": len(shared)}
    if spec.inputs:
        block["inputs"] = list(spec.inputs)
    return block


def _ranked(board: list[dict[str, Any]], higher_is_better: bool = True) -> list[dict[str, Any]]:
    sign = -1.0 if higher_is_better else 1.0
    ranked = sorted((b for b in board if b["mean"] is not None), key=lambda b: sign * b["mean"])
    for i, b in enumerate(ranked):
        b["rank"] = i + 1
    return ranked


def _mark(metrics: dict[str, Any], alpha: float, min_n: int) -> int:
    """Holm-adjust the p-values of every pair with at least ``min_n`` shared instances (one family
    over all metrics), and set ``p_holm``, ``significant`` and ``verdict``; returns the family size."""
    family = [p for block in metrics.values() for p in block["paired"]
              if p["n_shared"] >= min_n and p["p_value"] is not None]
    for pair, adjusted in zip(family, holm_adjust([p["p_value"] for p in family]), strict=True):
        pair["p_holm"] = adjusted
    for block in metrics.values():
        for pair in block["paired"]:
            pair.setdefault("p_holm", None)
            if pair["mean_diff"] is None or pair["p_value"] is None:
                pair["significant"], pair["verdict"] = False, "no test"
            elif pair["n_shared"] < min_n:
                pair["significant"], pair["verdict"] = False, f"n too small ({pair['n_shared']} < {min_n})"
            else:
                pair["significant"] = bool(pair["p_holm"] < alpha)
                pair["verdict"] = "significant" if pair["significant"] else "not significant"
    return len(family)


def compare_runs(
    runs: Sequence[str | Path | RunData],
    *,
    allow_mismatch: bool = False,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    min_n: int = MIN_PAIRED_N,
    specs: Mapping[str, Any] | None = None,
    lookup: BenchmarkLookup = registered_benchmark,
) -> dict[str, Any]:
    """Leaderboard and paired differences of the systems in saved runs of one benchmark.

    Args:
        runs: run directories (or loaded runs); a LigBench run may hold several systems.
        allow_mismatch: compare even when result-changing settings differ (they are listed in
            ``settings_mismatch``).
        n_resamples, confidence, seed: percentile bootstrap over instances (paired for
            differences), :func:`ideaharness.metrics.stats.bootstrap_ci`; ``seed`` also seeds
            the permutation test where it is not exact; ``1 - confidence`` is the test level.
        min_n: fewest shared instances for a significance mark (:data:`MIN_PAIRED_N`).
        specs: metric name -> :class:`~ideaharness.runner.protocol.MetricSpec` (default: the
            registered metrics, through a function-local import of the runner's registry; a
            metric with no spec is a mean, higher = better).
        lookup: benchmark name -> class, for ``free_settings`` and runs without ``scores.jsonl``.

    Returns:
        ``{"benchmark", "systems": [{label, run_id, system, run_dir, kind, kind_label, spec, role,
        ideas_file, ideas_format, recorded, answers: {asked, missing, failed, extra_instances}, missing
        (failed generations: missing, failed or unparsed), extra, instances_scored, coverage: {asked,
        answered, failed, rate} or None, coverage_differs}], "settings_mismatch",
        "method", "metrics": {key: {"statistic", "interval", "higher_is_better", "ranked_on" ("shared"
        or "own"), "n_shared_all", "leaderboard": [{system, n, mean, ci95, rank, ranked_on, own_n,
        own_mean, own_ci95, coverage, coverage_differs, ci_why (only where ci95 is withheld: "n too
        small for an interval (n < 5)")}],
        "paired": [{a, b, n_shared, mean_diff, ci95, p_value, exact, p_holm, significant,
        verdict}]}}, "reliability": {label: {...}}, "instances": [{pair_key, metric, values:
        {label: value}}]}``; ``key`` is :func:`~ideaharness.analysis.load.metric_key` of the
        metric and group (``ideabench.insight_score[low/novelty]``); ``mean`` is the metric's
        value (by its spec's statistic) over the instances shared by every system with a value
        (``n`` of them; ``ranked_on`` "own" when they share none: each over its own), ``own_mean``
        over all the system's scored instances (``own_n``), ``ci95`` is ``[lo, hi]`` or None (fewer than 2
        instances); ``p_holm`` is None outside the Holm family (fewer than ``min_n`` shared
        instances); ``verdict`` is "significant", "not significant", "n too small (n < min_n)" or "no test".

    Raises:
        UserError: fewer than 2 systems, a run directory given twice, runs of different
            benchmarks, or differing result-changing settings without ``allow_mismatch``.

    A system's kind (``model``, ``ideas-file``, ``command``, ``http``; ``kind_label`` as shown),
    spec and answers come from the run's ``idea_sources`` block
    (:func:`~ideaharness.analysis.systems.run_systems`); ``missing`` counts the instances it gave
    no usable answer for: missing from its file, a failed call or a reply that did not parse (None
    for a run saved before the block). Every system is ranked on the instances all of them were
    scored on (``n``) and compared with another on the instances both were scored on
    (``n_shared``), never with zeros for the missing ones.
    """
    loaded = _distinct_runs([r if isinstance(r, RunData) else load_run(r, lookup) for r in runs])
    benchmarks = sorted({r.benchmark for r in loaded})
    if len(benchmarks) != 1:
        raise UserError(
            f"compare: the runs are of different benchmarks ({', '.join(benchmarks)}); "
            "compare runs of one benchmark"
        )
    mismatch = settings_mismatch([r.config for r in loaded], benchmarks[0], lookup)
    if mismatch and not allow_mismatch:
        raise UserError(
            f"compare: the runs differ in settings that change results ({', '.join(mismatch)}); "
            "re-run them alike, or pass --allow-mismatch"
        )
    labels = _labels(loaded)
    if len(labels) < 2:
        raise UserError("compare: give at least 2 systems (run directories of different systems)")
    if specs is None:
        from ideaharness.runner.registry import metrics as registered  # the analysis layer's one ask

        specs = registered()
    # (metric, group) -> label -> pair_key -> row, by each metric's unit table
    score_lists = {r.run_id: scores_of(r) for r in loaded}
    names = sorted({s.metric for r in loaded for s in score_lists[r.run_id]})
    derived = [spec for name, spec in specs.items() if spec.inputs and any(i in names for i in spec.inputs)]
    tables: dict[tuple[str, str], dict[str, dict[str, Row]]] = {}
    spec_of: dict[str, Any] = {}
    for name in [*names, *(d.name for d in derived)]:
        spec_of[name] = specs.get(name) or _default_spec(name)
        for run in loaded:
            try:
                per = unit_rows(score_lists[run.run_id], name, spec_of[name].inputs)
            except ValueError as exc:  # one value per unit: a second is a benchmark bug, not a score
                raise UserError(f"compare: {run.path}: {exc}") from None
            for (system, group), units in per.items():
                label = labels[(run.run_id, system or run.system)]
                tables.setdefault((name, group), {})[label] = units
    settings = IntervalSettings(n_resamples=n_resamples, confidence=confidence, seed=seed)
    metrics: dict[str, Any] = {}
    order = list(labels.values())
    for (name, group), by_label in sorted(tables.items()):
        metrics[metric_key(name, group)] = _metric_block(spec_of[name], by_label, order, settings, seed)
    family = _mark(metrics, 1 - confidence, min_n)
    instances = []
    for (name, group), by_label in sorted(tables.items()):
        if spec_of[name].inputs:
            continue
        keys = sorted(set().union(*(set(v) for v in by_label.values())))
        for key in keys:
            values = {label: by_label.get(label, {}).get(key, [np.nan])[0] for label in order}
            instances.append({"pair_key": key, "metric": metric_key(name, group),
                              "values": {k: float(v) if np.isfinite(v) else None for k, v in values.items()}})
    systems = [_system_entry(next(r for r in loaded if r.run_id == run_id), system, label)
               for (run_id, system), label in labels.items()]
    _mark_coverage(systems)
    by_label = {s["label"]: s for s in systems}
    for block in metrics.values():
        for row in block["leaderboard"]:
            entry: dict[str, Any] = by_label.get(row["system"]) or {}
            coverage: dict[str, Any] = entry.get("coverage") or {}
            row["coverage"] = coverage.get("rate")
            row["coverage_differs"] = bool(entry.get("coverage_differs"))
    _mark_evidence(metrics, tables, labels, loaded, specs)  # issue 32: each system's run verdict
    return {
        "benchmark": benchmarks[0],
        "systems": systems,
        "settings_mismatch": mismatch,
        "method": {
            "interval": "each metric's own interval (its MetricSpec, metrics[key]['interval']: a "
                        "bounded-mean score interval for bounded means and pooled ratios, else a "
                        "percentile bootstrap; none below MIN_INTERVAL_N units); paired differences: "
                        "percentile bootstrap",
            "unit": "instance (paired over shared instances)",
            "n_resamples": n_resamples,
            "confidence": confidence,
            "seed": seed,
            "order": BOOTSTRAP_ORDER,
            "test": "paired sign-flip permutation test, two-sided (scipy.stats.permutation_test, "
                    f"permutation_type='samples'; exact up to {int(np.log2(PERMUTATION_RESAMPLES))} "
                    f"shared instances, else {PERMUTATION_RESAMPLES} seeded resamples)",
            "alpha": round(1 - confidence, 10),
            "min_n": min_n,
            "adjustment": "Holm (1979) over every metric x pair comparison with at least min_n "
                          "shared instances",
            "family_size": family,
            "higher_is_better": "per metric (the metric's spec)",
            "ranked_on": "the units every system with a value was scored on (paired); each system's "
                         "value over all its own units beside it (own_mean, own_n)",
            "coverage": "answered / asked generations per system (the run's coverage block)",
            "coverage_gap": COVERAGE_GAP,
        },
        "metrics": metrics,
        "reliability": {
            label: _reliability_columns(next(r for r in loaded if r.run_id == run_id), system)
            for (run_id, system), label in labels.items()
        },
        "run_reliability": {
            r.run_id: r.results.get("reliability")
            for r in loaded
            if isinstance(r.results.get("reliability"), dict)
        },
        "instances": instances,
    }


def _ci(value: tuple[float, float] | None) -> list[float] | None:
    return None if value is None else [float(value[0]), float(value[1])]


def _mark_evidence(metrics: dict[str, Any], tables: Mapping[tuple[str, str], Any],
                   labels: Mapping[tuple[str, str], str], runs: Sequence[RunData],
                   specs: Mapping[str, Any]) -> None:
    """Set ``evidence`` on every leaderboard row: the verdict of that system's own run for the
    metric and group (``{"verdict", "reasons"}`` from its ``results["evidence"]``, computed for a run
    written before it; :mod:`ideaharness.metrics.evidence`); None when its run has no such headline."""
    from ideaharness.metrics.evidence import evidence_of, verdict_of

    directions = {name: spec.higher_is_better for name, spec in specs.items()}
    inputs = {name: spec.inputs for name, spec in specs.items() if spec.inputs}
    judged_by = {name: spec.judged_by for name, spec in specs.items()}  # for runs without a block
    blocks = {r.run_id: evidence_of(r.results, directions, inputs, judged_by) for r in runs}
    owner = {label: (run_id, system) for (run_id, system), label in labels.items()}
    for name, group in tables:
        for row in metrics[metric_key(name, group)]["leaderboard"]:
            run_id, system = owner.get(row["system"], (None, None))
            found = verdict_of(blocks[run_id], name, group, system) if run_id in blocks else None
            row["evidence"] = ({"verdict": found["verdict"], "reasons": found["reasons"]}
                               if found is not None else None)


def scores_of(run: RunData) -> list[Score]:
    """The scores of a loaded run as :class:`~ideaharness.runs.scores.Score` objects, read from its
    ``scores`` table (NaN value = unscored), so a table edited or built by hand compares too."""
    import pandas as pd

    frame = run.scores
    out = []
    for row in frame.itertuples(index=False):
        value = None if pd.isna(row.value) else float(row.value)
        weight = getattr(row, "weight", 1.0)
        why = None if value is not None else str(getattr(row, "reason", None) or "unscored")
        out.append(Score(metric=str(row.metric), group=str(getattr(row, "group", "") or ""),
                         instance_id=str(row.instance_id), pair_key=str(row.pair_key), system=str(row.system),
                         value=value, weight=1.0 if pd.isna(weight) else float(weight), reason=why))
    return out


def _default_spec(name: str) -> Any:
    """A spec for a metric no benchmark registered: a mean, higher = better."""
    from ideaharness.runner.protocol import MetricSpec

    return MetricSpec(name, higher_is_better=True)
