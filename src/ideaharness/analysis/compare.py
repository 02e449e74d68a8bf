"""``ideaharness compare``: a leaderboard of systems from saved runs of one benchmark.

For every metric: each system's value with its n (instances) and a percentile-bootstrap 95 %
interval (resampling instances), and for every pair of systems the paired difference over the
instances both were scored on, with a paired bootstrap interval (the per-instance differences
resampled together, so instance difficulty cancels out) and a two-sided paired sign-flip
permutation test (:func:`~ideaharness.metrics.stats.paired_permutation_test`, exact up to 13
shared instances). Values are those ``results.json`` reports (re-aggregated from the per-instance
scores, :mod:`ideaharness.analysis.scores`: a mean for every row metric; a benchmark's model-level
metrics, :class:`~ideaharness.analysis.scores.DerivedMetric`, by their own statistic); every metric
is read as higher = better.

Significance: a difference is marked significant only when (1) the pair shares at least
:data:`MIN_PAIRED_N` instances and (2) its Holm-adjusted p-value is below ``1 - confidence``. The
Holm family (Holm 1979) is every metric x pair comparison of the leaderboard that has at least
:data:`MIN_PAIRED_N` shared instances (``method.family_size``); a pair below the minimum gets no
mark ("n too small"), whatever its interval says.

Runs are compared only when every setting that changes results (judge, data, seeds, parity,
metric settings ...) is equal; the settings that define the system under test (generator, ideas
file, generation sampling) may differ. Otherwise :class:`~ideaharness.errors.UserError` names the
differing keys, unless ``allow_mismatch``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ideaharness.analysis.load import RunData, load_run
from ideaharness.analysis.scores import DerivedMetric, score_reader
from ideaharness.errors import UserError
from ideaharness.metrics.reliability.summary import reliability_warnings
from ideaharness.metrics.stats import (
    BOOTSTRAP_ORDER,
    PERMUTATION_RESAMPLES,
    bootstrap_ci,
    holm_adjust,
    paired_permutation_test,
)
from ideaharness.runs.inputs import INPUTS_KEY

SYSTEM_KEYS = frozenset(
    {
        "generator",
        "generators",
        "ideas_file",
        "system",
        "generation_temperature",
        "generation_max_tokens",
    }
)
"""config.json keys that define the system under test: they may differ between compared runs."""
SYSTEM_INPUTS = frozenset({"--ideas"})
"""Input flags whose files are the system's own output (may differ)."""
PATH_KEYS = {"data": "--data", "corpus": "--corpus", "scholarideas_root": "--scholarideas-root"}
"""Path settings compared by the sha256 of the files read, not by where they lay."""


def result_settings(config: dict[str, Any], benchmark: str | None = None) -> dict[str, Any]:
    """The settings of a run that change its results: config.json without the system's own keys
    and the free settings of ``benchmark`` (default ``config["benchmark"]``; see
    :attr:`~ideaharness.analysis.scores.ScoreReader.free_settings`), with input files compared by
    content (sha256) rather than by path."""
    inputs = config.get(INPUTS_KEY) or {}
    reader = score_reader(str(benchmark or config.get("benchmark") or ""))
    free = reader.free_settings if reader else frozenset()
    out = {k: v for k, v in config.items() if k not in SYSTEM_KEYS | free and k != INPUTS_KEY}
    for key, flag in PATH_KEYS.items():
        if flag in inputs:
            out.pop(key, None)
    for flag, files in inputs.items():
        if flag not in SYSTEM_INPUTS:
            out[f"{INPUTS_KEY}[{flag}]"] = sorted((files or {}).values())
    return out


def settings_mismatch(configs: Sequence[dict[str, Any]], benchmark: str | None = None) -> list[str]:
    """Names of the result-changing settings that differ between the configs (sorted) of runs of
    ``benchmark`` (default: each config's ``benchmark`` key)."""
    settings = [result_settings(c, benchmark) for c in configs]
    keys = sorted(set().union(*settings))
    return [k for k in keys if any(s.get(k) != settings[0].get(k) for s in settings[1:])]


def _labels(runs: Sequence[RunData]) -> dict[tuple[str, str], str]:
    """(run_id, system) -> a unique display label (the system, or ``system (run_id)`` if shared)."""
    pairs = list(
        dict.fromkeys(
            (r.run_id, s)
            for r in runs
            for s in (r.scores["system"].unique() if len(r.scores) else [r.system])
        )
    )
    counts: dict[str, int] = {}
    for _, system in pairs:
        counts[system] = counts.get(system, 0) + 1
    return {
        (run_id, system): (system if counts[system] == 1 else f"{system} ({run_id})")
        for run_id, system in pairs
    }


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


def _statistic_of(derived: DerivedMetric) -> Callable[[np.ndarray], float]:
    def value(table: np.ndarray) -> float:
        result = derived.statistic(table)
        return float("nan") if result is None else float(result)

    return value


def _finite_ci(value: tuple[float, float] | None) -> list[float] | None:
    if value is None or not all(np.isfinite(value)):
        return None
    return [float(value[0]), float(value[1])]


def _index_ci(stat: Callable[[np.ndarray], float], tables: Sequence[np.ndarray],
              boot: dict[str, Any]) -> list[float] | None:
    """Bootstrap interval of ``stat`` of one unit table, or of ``stat(a) - stat(b)`` of two paired
    tables, resampling their rows (units) together."""
    n = len(tables[0])
    if n < 2:
        return None

    def resampled(index: np.ndarray) -> float:
        rows = np.asarray(index, dtype=int)
        values = [stat(t[rows]) for t in tables]
        return values[0] if len(values) == 1 else values[0] - values[1]

    return _finite_ci(bootstrap_ci(list(range(n)), resampled, **boot))


def _board_entry(label: str, values: dict[str, float], boot: dict[str, Any]) -> dict[str, Any]:
    data = [values[k] for k in sorted(values)]
    return {"system": label, "n": len(data), "mean": float(np.mean(data)) if data else None,
            "ci95": _ci(bootstrap_ci(data, **boot))}


def _pair_entry(a: str, b: str, per: dict[str, dict[str, float]], boot: dict[str, Any],
                test_seed: int) -> dict[str, Any]:
    shared = sorted(set(per.get(a, {})) & set(per.get(b, {})))
    x = np.asarray([per[a][k] for k in shared], dtype=float)
    y = np.asarray([per[b][k] for k in shared], dtype=float)
    test = paired_permutation_test(x, y, seed=test_seed)
    return {"a": a, "b": b, "n_shared": len(shared), "mean_diff": float(np.mean(x - y)) if shared else None,
            "ci95": _ci(bootstrap_ci((x - y).tolist(), **boot)),
            "p_value": None if test is None else test.p_value, "exact": None if test is None else test.exact}


def _table(per: dict[str, dict[str, dict[str, float]]], inputs: Sequence[str], label: str,
           keys: Sequence[str]) -> np.ndarray:
    return np.asarray([[per.get(m, {}).get(label, {}).get(k, np.nan) for m in inputs] for k in keys],
                      dtype=float).reshape(len(keys), len(inputs))


def _derived_block(name: str, derived: DerivedMetric, table: dict[str, dict[str, dict[str, float]]],
                   order: Sequence[str], boot: dict[str, Any], test_seed: int) -> dict[str, Any] | None:
    """Leaderboard and pairs of a model-level metric: the value is the statistic over each system's
    unit table (units lacking an input included, as results.json computes it); n, the interval
    and the paired figures use the units with every input (in both systems, for pairs), so every
    resample and every swap has a defined value."""
    stat = _statistic_of(derived)
    keys_of = {label: sorted(set().union(*(table.get(m, {}).get(label, {}) for m in derived.inputs)))
               for label in order}
    if not any(keys_of.values()):
        return None
    board = []
    for label in order:
        t = _table(table, derived.inputs, label, keys_of[label])
        value = stat(t) if len(t) else float("nan")
        complete = t[np.isfinite(t).all(axis=1)]  # the units the interval resamples (a defined value)
        board.append({"system": label, "n": len(complete),
                      "mean": float(value) if np.isfinite(value) else None,
                      "ci95": _index_ci(stat, [complete], boot) if np.isfinite(value) else None})
    ranked = _ranked(board)
    paired = []
    for a, b in itertools.combinations([x["system"] for x in ranked], 2):
        shared = sorted(set(keys_of[a]) & set(keys_of[b]))
        ta, tb = _table(table, derived.inputs, a, shared), _table(table, derived.inputs, b, shared)
        both = np.isfinite(ta).all(axis=1) & np.isfinite(tb).all(axis=1)  # swapped whole, always defined
        ta, tb = ta[both], tb[both]
        diff = stat(ta) - stat(tb) if len(ta) else float("nan")
        test = paired_permutation_test(ta, tb, stat, seed=test_seed) if np.isfinite(diff) else None
        paired.append({
            "a": a, "b": b, "n_shared": len(ta), "mean_diff": float(diff) if np.isfinite(diff) else None,
            "ci95": _index_ci(stat, [ta, tb], boot) if np.isfinite(diff) else None,
            "p_value": None if test is None or not np.isfinite(test.p_value) else test.p_value,
            "exact": None if test is None else test.exact,
        })
    return {"statistic": derived.description, "inputs": list(derived.inputs),
            "leaderboard": ranked + [b for b in board if b["mean"] is None], "paired": paired}


def _ranked(board: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ranked = sorted((b for b in board if b["mean"] is not None), key=lambda b: -b["mean"])
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

    Returns:
        ``{"benchmark", "systems": [{label, run_id, system, run_dir}], "settings_mismatch",
        "method", "metrics": {metric: {"statistic", "leaderboard": [{system, n, mean, ci95, rank}],
        "paired": [{a, b, n_shared, mean_diff, ci95, p_value, exact, p_holm, significant,
        verdict}]}}, "reliability": {label: {...}}, "instances": [{pair_key, metric, values:
        {label: value}}]}``; ``mean`` is the metric's value (a mean, or a derived metric's
        statistic), ``ci95`` is ``[lo, hi]`` or None (fewer than 2 instances); ``p_holm`` is
        None outside the Holm family (fewer than ``min_n`` shared instances); ``verdict`` is
        "significant", "not significant", "n too small (n < min_n)" or "no test".

    Raises:
        UserError: fewer than 2 systems, runs of different benchmarks, or differing result-changing
            settings without ``allow_mismatch``.
    """
    loaded = [r if isinstance(r, RunData) else load_run(r) for r in runs]
    benchmarks = sorted({r.benchmark for r in loaded})
    if len(benchmarks) != 1:
        raise UserError(
            f"compare: the runs are of different benchmarks ({', '.join(benchmarks)}); "
            "compare runs of one benchmark"
        )
    mismatch = settings_mismatch([r.config for r in loaded], benchmarks[0])
    if mismatch and not allow_mismatch:
        raise UserError(
            f"compare: the runs differ in settings that change results ({', '.join(mismatch)}); "
            "re-run them alike, or pass --allow-mismatch"
        )
    labels = _labels(loaded)
    if len(labels) < 2:
        raise UserError("compare: give at least 2 systems (run directories of different systems)")
    table: dict[str, dict[str, dict[str, float]]] = {}  # metric -> label -> pair_key -> value
    for run in loaded:
        for row in run.scores.itertuples(index=False):
            label = labels[(run.run_id, row.system)]
            cell = table.setdefault(row.metric, {}).setdefault(label, {})
            if row.pair_key in cell:  # one value per instance: a second row is a reader bug, not a score
                raise UserError(f"compare: {run.path}: two {row.metric} scores for {row.pair_key} "
                                f"({row.system}); a saved run gives one value per instance and metric")
            cell[row.pair_key] = float(row.value)
    boot = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    metrics: dict[str, Any] = {}
    order = list(labels.values())
    for metric in sorted(table):
        per = table[metric]
        board = [_board_entry(label, per.get(label, {}), boot) for label in order]
        ranked = _ranked(board)
        board_rest = [b for b in board if b["mean"] is None]
        paired = [_pair_entry(a, b, per, boot, seed)
                  for a, b in itertools.combinations([x["system"] for x in ranked], 2)]
        metrics[metric] = {"statistic": "mean over instances", "leaderboard": ranked + board_rest,
                           "paired": paired}
    reader = score_reader(benchmarks[0])
    derived = reader.derived_metrics(loaded[0].results) if reader is not None else {}
    for name, spec in derived.items():
        block = _derived_block(name, spec, table, order, boot, seed)
        if block is not None:
            metrics[name] = block
    family = _mark(metrics, 1 - confidence, min_n)
    instances = []
    for metric in sorted(table):
        keys = sorted(set().union(*(set(v) for v in table[metric].values())))
        for key in keys:
            instances.append(
                {
                    "pair_key": key,
                    "metric": metric,
                    "values": {label: table[metric].get(label, {}).get(key) for label in order},
                }
            )
    return {
        "benchmark": benchmarks[0],
        "systems": [
            {
                "label": label,
                "run_id": run_id,
                "system": system,
                "run_dir": str(next(r.path for r in loaded if r.run_id == run_id)),
            }
            for (run_id, system), label in labels.items()
        ],
        "settings_mismatch": mismatch,
        "method": {
            "interval": "percentile bootstrap",
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
            "higher_is_better": True,
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
