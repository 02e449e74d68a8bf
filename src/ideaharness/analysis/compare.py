"""``ideaharness compare``: a leaderboard of systems from saved runs of one benchmark.

For every metric: each system's mean over its instances with a percentile-bootstrap 95 % interval
(resampling instances), and for every pair of systems the paired difference over the instances
both were scored on, with a paired bootstrap interval (the per-instance differences resampled
together, so instance difficulty cancels out); a difference whose interval excludes 0 is marked
significant. Means are those ``results.json`` reports (re-aggregated from the per-instance scores,
:mod:`ideaharness.analysis.scores`); every metric is read as higher = better.

Runs are compared only when every setting that changes results (judge, data, seeds, parity,
metric settings ...) is equal; the settings that define the system under test (generator, ideas
file, generation sampling) may differ. Otherwise :class:`~ideaharness.errors.UserError` names the
differing keys, unless ``allow_mismatch``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ideaharness.analysis.load import RunData, load_run
from ideaharness.analysis.scores import score_reader
from ideaharness.errors import UserError
from ideaharness.metrics.reliability.summary import reliability_warnings
from ideaharness.metrics.stats import bootstrap_ci
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


def compare_runs(
    runs: Sequence[str | Path | RunData],
    *,
    allow_mismatch: bool = False,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """Leaderboard and paired differences of the systems in saved runs of one benchmark.

    Args:
        runs: run directories (or loaded runs); a LigBench run may hold several systems.
        allow_mismatch: compare even when result-changing settings differ (they are listed in
            ``settings_mismatch``).
        n_resamples, confidence, seed: percentile bootstrap over instances (paired for
            differences), :func:`ideaharness.metrics.stats.bootstrap_ci`.

    Returns:
        ``{"benchmark", "systems": [{label, run_id, system, run_dir}], "settings_mismatch",
        "method", "metrics": {metric: {"leaderboard": [{system, n, mean, ci95, rank}],
        "paired": [{a, b, n_shared, mean_diff, ci95, significant}]}}, "reliability": {label: {...}},
        "instances": [{pair_key, metric, values: {label: value}}]}``; ``ci95`` is ``[lo, hi]`` or
        None (fewer than 2 instances).

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
            table.setdefault(row.metric, {}).setdefault(label, {})[row.pair_key] = float(row.value)
    boot = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    metrics: dict[str, Any] = {}
    order = list(labels.values())
    for metric in sorted(table):
        per = table[metric]
        board = []
        for label in order:
            values = list(per.get(label, {}).values())
            board.append(
                {
                    "system": label,
                    "n": len(values),
                    "mean": float(np.mean(values)) if values else None,
                    "ci95": _ci(bootstrap_ci(values, **boot)),
                }
            )
        ranked = sorted((b for b in board if b["mean"] is not None), key=lambda b: -b["mean"])
        for i, b in enumerate(ranked):
            b["rank"] = i + 1
        paired = []
        for a, b in itertools.combinations([x["system"] for x in ranked], 2):
            shared = sorted(set(per.get(a, {})) & set(per.get(b, {})))
            diffs = [per[a][k] - per[b][k] for k in shared]
            ci = _ci(bootstrap_ci(diffs, **boot))
            paired.append(
                {
                    "a": a,
                    "b": b,
                    "n_shared": len(shared),
                    "mean_diff": float(np.mean(diffs)) if diffs else None,
                    "ci95": ci,
                    "significant": bool(ci is not None and (ci[0] > 0 or ci[1] < 0)),
                }
            )
        metrics[metric] = {"leaderboard": ranked + [b for b in board if b["mean"] is None], "paired": paired}
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
