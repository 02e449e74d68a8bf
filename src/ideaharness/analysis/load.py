"""Read a saved run directory into pandas DataFrames: scores and judgments.

``load_run(path)`` reads ``config.json``, ``results.json`` and ``records/*.jsonl`` (read-only: no
lock is taken, nothing is written, so a run in progress can be read) of any benchmark. Columns are
documented in ``docs/export.md``.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ideaharness.analysis.scores import Record, instance_scores, record_system, run_system
from ideaharness.data.jsonl import scan_jsonl
from ideaharness.errors import DataWarning, UserError
from ideaharness.results import BenchmarkResults, RunResults, parse_results
from ideaharness.runs.store import CONFIG_FILE, RECORDS_DIR, RESULTS_FILE

SCORE_COLUMNS = ["benchmark", "run_id", "system", "instance_id", "pair_key", "metric", "value"]
JUDGMENT_COLUMNS = [
    "benchmark",
    "run_id",
    "system",
    "step",
    "instance_id",
    "key",
    "model",
    "prompt_hash",
    "prompt",
    "raw_reply",
    "parsed",
    "parse_ok",
    "parse_status",
    "attempts",
    "errors",
    "positions",
    "tokens_in",
    "tokens_out",
    "latency_s",
    "cost_usd",
    "created",
]


@dataclass
class RunData:
    """One run directory, loaded.

    Attributes:
        path: the run directory.
        run_id: its name (``path.name``).
        benchmark: ``config.json``'s ``benchmark`` (``"ideabench"``, ``"aiideabench"``, ...).
        system: the system a one-system run evaluates (LigBench runs hold several: see ``scores``).
        config, results: ``config.json`` and ``results.json`` (``{}`` when not written yet).
        scores: one row per instance x metric (:data:`SCORE_COLUMNS`).
        judgments: one row per model judgment (:data:`JUDGMENT_COLUMNS`).
        corrupt_lines: record lines that could not be read (skipped, as on resume).
    """

    path: Path
    run_id: str
    benchmark: str
    system: str
    config: dict[str, Any]
    results: dict[str, Any]
    scores: pd.DataFrame
    judgments: pd.DataFrame
    corrupt_lines: int = 0
    failed_units: list[dict[str, Any]] = field(default_factory=list)


def _read_json(path: Path, required: bool) -> dict[str, Any]:
    if not path.exists():
        if required:
            raise UserError(f"{path.parent}: not a run directory (no {path.name}); give the --out of a run")
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(value, dict):
        raise UserError(f"{path}: expected a JSON object")
    return value


def read_records(run_dir: Path) -> tuple[list[Record], list[str | None], int]:
    """Every record ``(step, instance_id, key, data)`` of a run in file order, the time each was
    written, and the count of unreadable lines (skipped, as a resume does).

    A unit recorded twice (a replaced record whose old line is not compacted away yet, e.g. a run
    in progress) counts once, by its last line, as the run store reads it
    (:meth:`~ideaharness.runs.store.RunStore.replace`): no unit becomes two judgments or two
    scores."""
    records: list[Record] = []
    created: list[str | None] = []
    corrupt = 0
    latest: dict[tuple[str, str, str], int] = {}
    for path in sorted((run_dir / RECORDS_DIR).glob("*.jsonl")):
        scan = scan_jsonl(path)
        corrupt += len(scan.invalid)
        for _, rec in scan.rows:
            try:
                record = (str(rec["step"]), str(rec["instance_id"]), str(rec["key"]), rec["data"])
            except (TypeError, KeyError, AttributeError):
                corrupt += 1
                continue
            latest[record[:3]] = len(records)
            records.append(record)
            created.append(rec.get("created"))
    keep = sorted(latest.values())
    return [records[i] for i in keep], [created[i] for i in keep], corrupt


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _prompt(judgment: dict[str, Any]) -> str | None:
    """The rendered prompt when the record stores one (``prompt`` text or ``messages`` list)."""
    if isinstance(judgment.get("prompt"), str):
        return str(judgment["prompt"])
    messages = judgment.get("messages")
    if isinstance(messages, list):
        return "\n\n".join(
            f"[{m.get('role', '?')}]\n{m.get('content', '')}" for m in messages if isinstance(m, dict)
        )
    return None


def judgment_row(
    step: str,
    instance_id: str,
    key: str,
    data: dict[str, Any],
    *,
    benchmark: str,
    run_id: str,
    system: str,
    created: str | None = None,
) -> dict[str, Any] | None:
    """One row of the judgments table from a record, or None when the record holds no judgment."""
    judgment = data.get("judgment") if isinstance(data, dict) else None
    if not isinstance(judgment, dict) or "raw_text" not in judgment:
        return None
    usage = judgment.get("usage") or {}
    parse_ok = bool(judgment.get("parse_ok"))
    return {
        "benchmark": benchmark,
        "run_id": run_id,
        "system": system,
        "step": step,
        "instance_id": instance_id,
        "key": key,
        "model": judgment.get("judge_model"),
        "prompt_hash": judgment.get("prompt_hash"),
        "prompt": _prompt(judgment),
        "raw_reply": judgment.get("raw_text"),
        "parsed": _text(judgment.get("parsed")) if parse_ok else None,
        "parse_ok": parse_ok,
        "parse_status": "ok" if parse_ok else "parse_failure",
        "attempts": int(judgment.get("attempts") or 1),
        "errors": _text(judgment.get("errors") or []),
        "positions": _text(judgment.get("positions")),
        "tokens_in": usage.get("prompt_tokens"),
        "tokens_out": usage.get("completion_tokens"),
        "latency_s": judgment.get("latency_s"),
        "cost_usd": judgment.get("cost_usd"),
        "created": created,
    }


def load_run(path: str | Path) -> RunData:
    """Load a run directory of any benchmark into DataFrames.

    Args:
        path: a run directory (holding ``config.json``); ``results.json`` may be missing (a run
            in progress: its scores from results-based readers are then empty).

    Returns:
        :class:`RunData` with ``scores`` (one row per instance x metric) and ``judgments`` (one
        row per model judgment: step, instance, model, prompt hash, raw reply, parsed value,
        parse status, attempts, tokens, latency, cost).

    Raises:
        UserError: ``path`` is not a run directory, or its config/results JSON is unreadable.
    """
    run_dir = Path(path)
    config = _read_json(run_dir / CONFIG_FILE, required=True)
    results = _read_json(run_dir / RESULTS_FILE, required=False)
    benchmark = str(config.get("benchmark") or results.get("benchmark") or "unknown")
    run_id = run_dir.resolve().name
    system = run_system(config, results, run_dir)
    records, created, corrupt = read_records(run_dir)
    rows = []
    for (step, inst, key, data), when in zip(records, created, strict=True):
        owner = record_system(benchmark, inst, system)
        row = judgment_row(
            step, inst, key, data, benchmark=benchmark, run_id=run_id, system=owner, created=when
        )
        if row is not None:
            rows.append(row)
    judgments = pd.DataFrame(rows, columns=JUDGMENT_COLUMNS)
    score_rows = instance_scores(benchmark, records, results, config, system)
    scores = pd.DataFrame(
        [{"benchmark": benchmark, "run_id": run_id, **r} for r in score_rows], columns=SCORE_COLUMNS
    )
    if corrupt:
        warnings.warn(f"{run_dir / RECORDS_DIR}: {corrupt} unreadable record line(s) skipped", DataWarning,
                      stacklevel=2)
    return RunData(
        path=run_dir,
        run_id=run_id,
        benchmark=benchmark,
        system=system,
        config=config,
        results=results,
        scores=scores,
        judgments=judgments,
        corrupt_lines=corrupt,
        failed_units=list(results.get("failed_units") or []),
    )


def load_results(path: str | Path, block_class: type[BenchmarkResults] | None = None) -> RunResults:
    """A run directory's ``results.json``, typed (:class:`ideaharness.results.RunResults`: the
    common blocks as fields, the benchmark's keys in ``.block``, a ``block_class``, e.g. the
    benchmark's ``results_class``; default the permissive :class:`~ideaharness.results.BenchmarkResults`).

    Raises:
        UserError: no readable ``results.json`` in ``path``.
        InvalidResults: the file does not fit the model (the message names the field).
    """
    results = _read_json(Path(path) / RESULTS_FILE, required=True)
    return parse_results(results, block_class or BenchmarkResults)
