"""Read a saved run directory into pandas DataFrames: scores and judgments.

``load_run(path)`` reads ``config.json``, ``results.json``, ``scores.jsonl`` (the per-instance
scores the runner wrote, :mod:`ideaharness.runs.scores`) and ``records/*.jsonl`` (read-only: no
lock is taken, nothing is written, so a run in progress can be read) of any benchmark. The
analysis layer knows no benchmark: a run directory written before scores were stored (no
``scores.jsonl``) is scored again by its registered benchmark's ``scores()``, found through a
lookup function (default :func:`registered_benchmark`). Columns are documented in
``docs/export.md``.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ideaharness.analysis.systems import (
    SystemInfo,
    find_system,
    recorded_config,
    run_systems,
    spec_kind,
    spec_name,
)
from ideaharness.errors import DataWarning, UserError
from ideaharness.jsonl import scan_jsonl
from ideaharness.results import BenchmarkResults, RunResults, parse_results
from ideaharness.runs.scores import Record, Score, read_scores, scored_records
from ideaharness.runs.store import CONFIG_FILE, RECORDS_DIR, RESULTS_FILE

if TYPE_CHECKING:
    import pandas as pd

SCORE_COLUMNS = ["benchmark", "run_id", "system", "system_kind", "instance_id", "pair_key", "metric", "group",
                 "value", "weight", "reason"]
"""One row per unit x metric x group (a :class:`~ideaharness.runs.scores.Score`): ``system`` the
system evaluated and ``system_kind`` how its ideas were produced (``model``, ``ideas-file``,
``command``, ``http``; None for a system that is not a generator of the run, e.g. LigBench's
ScholarIdeas references), ``metric`` the registered name (``ideabench.insight_score``), ``group``
its headline group (``low/novelty``), ``value`` NaN when unscored (``reason`` says why),
``weight`` the unit's weight in a pooled ratio."""
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
    "answer",
    "reasoning",
    "truncated_reasoning",
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
    "system_task",
    "stderr",
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
        scores: one row per instance x metric x group (:data:`SCORE_COLUMNS`; unscored units
            included with a NaN value and their reason).
        score_list: the same scores as :class:`~ideaharness.runs.scores.Score` objects.
        judgments: one row per model judgment (:data:`JUDGMENT_COLUMNS`).
        corrupt_lines: record lines that could not be read (skipped, as on resume).
        systems: the run's systems and how their ideas were produced
            (:func:`~ideaharness.analysis.systems.run_systems`).
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
    score_list: list[Score] = field(default_factory=list)
    systems: list[SystemInfo] = field(default_factory=list)

    def system_info(self, name: str | None = None) -> SystemInfo | None:
        """The :class:`SystemInfo` of system ``name`` (default: the run's system), or None when
        the run names no such generator (e.g. LigBench's ScholarIdeas references)."""
        return find_system(self.systems, self.system if name is None else name, self.system)

    def system_of(self, instance_id: str) -> str:
        """The system an instance (a record, a failed unit) belongs to: the one its scores name
        (a run of several systems), else the run's system."""
        for score in self.score_list:
            if score.instance_id == instance_id and score.system:
                return score.system
        return self.system


def metric_key(metric: str, group: str) -> str:
    """One name for a metric and group, as compare and the viewer show them:
    ``ideabench.insight_score[low/novelty]``, or the metric alone for group ""."""
    return f"{metric}[{group}]" if group else metric


def run_system(config: dict[str, Any], results: dict[str, Any], run_dir: Path) -> str:
    """The system a one-system run evaluates: the ``generator`` entry of results.json's
    ``idea_sources`` block; for a run saved before it, ``system``, the ideas file's stem, the generator
    (a system spec by its default name, :func:`~ideaharness.analysis.systems.spec_name`), or (a
    run with no generator, e.g. judge accuracy) the judge; the directory name otherwise."""
    systems = run_systems(config, results)
    main = next((s for s in systems if s.role == "generator"), None)
    if main is not None:
        return main.system
    cfg = recorded_config(config, results)
    if cfg.get("system"):
        return str(cfg["system"])
    if len(systems) == 1:
        return systems[0].system
    generator = results.get("generator") or cfg.get("generator")
    if isinstance(generator, str) and generator:
        return spec_name(generator)
    judge = cfg.get("judge")
    return str(judge) if isinstance(judge, str) and judge else run_dir.name


BenchmarkLookup = Callable[[str], Any]
"""benchmark name -> its Benchmark class, or None when unknown."""


def registered_benchmark(name: str) -> Any:
    """The registered Benchmark class of ``name``, or None when no benchmark has that name.

    The import of :mod:`ideaharness.runner.registry` is function-local on purpose: the analysis
    layer sits below the runner and asks it only here, to score a run saved before
    ``scores.jsonl`` existed (pass another ``lookup`` to :func:`load_run` to avoid it)."""
    from ideaharness.runner.registry import get_benchmark

    try:
        return get_benchmark(name)
    except UserError:
        return None


def _config_of(cls: Any, config: dict[str, Any], results: dict[str, Any]) -> Any:
    recorded = (results.get("settings") or {}).get("config") or config
    fields = {k: v for k, v in recorded.items() if k in cls.config_class.model_fields}
    try:
        return cls.config_class.model_validate(fields)
    except ValidationError:  # e.g. a data path that no longer exists: scoring reads no file
        return cls.config_class.model_construct(**fields)


def recompute_scores(benchmark: str, records: Sequence[Record], config: dict[str, Any],
                     results: dict[str, Any], lookup: BenchmarkLookup = registered_benchmark) -> list[Score]:
    """The scores of a run saved without ``scores.jsonl``: its benchmark's ``scores()`` on its
    records (re-asks removed) and results; none for a benchmark ``lookup`` does not know."""
    cls = lookup(benchmark)
    if cls is None:
        return []
    bench = cls(_config_of(cls, config, results))
    return list(bench.scores(scored_records(records), results))


def _score_frame(scores: Sequence[Score], benchmark: str, run_id: str, system: str,
                 systems: Sequence[SystemInfo] = ()) -> pd.DataFrame:
    import pandas as pd

    kinds: dict[str, str | None] = {}

    def kind_of(name: str) -> str | None:
        if name not in kinds:
            found = find_system(systems, name, system)
            kinds[name] = found.kind if found is not None else None
        return kinds[name]

    rows = [{"benchmark": benchmark, "run_id": run_id, "system": s.system or system,
             "system_kind": kind_of(s.system or system), "instance_id": s.instance_id,
             "pair_key": s.pair_key, "metric": s.metric, "group": s.group,
             "value": math.nan if s.value is None else s.value, "weight": s.weight, "reason": s.reason}
            for s in scores]
    frame = pd.DataFrame(rows, columns=SCORE_COLUMNS)
    frame["value"] = frame["value"].astype(float)
    return frame


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
    """One row of the judgments table from a record, or None when the record holds no judgment.

    ``system_task`` is True for a step a system answered (the record's ``system_task`` mark, or
    a generator spec ``ideas:``/``cmd:``/``http(s)://`` as its model): its prompt is the task
    JSON and its raw reply the answer JSON; ``stderr`` is what a ``cmd:`` system wrote there."""
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
        "answer": judgment.get("answer") if isinstance(judgment.get("answer"), str) else None,
        "reasoning": judgment.get("reasoning") if isinstance(judgment.get("reasoning"), str) else None,
        "truncated_reasoning": bool(judgment.get("truncated_reasoning")),
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
        "system_task": bool(data.get("system_task"))
        or spec_kind(str(judgment.get("judge_model") or "")) != "model",
        "stderr": judgment.get("stderr") if isinstance(judgment.get("stderr"), str) else None,
    }


def load_run(path: str | Path, lookup: BenchmarkLookup = registered_benchmark) -> RunData:
    """Load a run directory of any benchmark into DataFrames.

    Args:
        path: a run directory (holding ``config.json``); ``results.json`` may be missing (a run
            in progress: no ``scores.jsonl`` yet either, so it is scored from what it has).
        lookup: benchmark name -> Benchmark class (None if unknown), used only for a run without
            ``scores.jsonl`` (:func:`recompute_scores`).

    Returns:
        :class:`RunData` with ``scores`` (one row per instance x metric) and ``judgments`` (one
        row per model judgment: step, instance, model, prompt hash, raw reply, parsed value,
        parse status, attempts, tokens, latency, cost).

    Raises:
        UserError: ``path`` is not a run directory, or its config/results JSON is unreadable.
    """
    import pandas as pd

    run_dir = Path(path)
    config = _read_json(run_dir / CONFIG_FILE, required=True)
    results = _read_json(run_dir / RESULTS_FILE, required=False)
    benchmark = str(config.get("benchmark") or results.get("benchmark") or "unknown")
    run_id = run_dir.resolve().name
    system = run_system(config, results, run_dir)
    systems = run_systems(config, results)
    records, created, corrupt = read_records(run_dir)
    stored = read_scores(run_dir)
    if stored is None:  # a run saved before scores.jsonl: its benchmark scores it again
        stored = recompute_scores(benchmark, records, config, results, lookup)
    score_list = stored
    owners = {s.instance_id: s.system for s in score_list if s.system}
    rows = []
    for (step, inst, key, data), when in zip(records, created, strict=True):
        owner = owners.get(inst, system)
        row = judgment_row(
            step, inst, key, data, benchmark=benchmark, run_id=run_id, system=owner, created=when
        )
        if row is not None:
            rows.append(row)
    judgments = pd.DataFrame(rows, columns=JUDGMENT_COLUMNS)
    scores = _score_frame(score_list, benchmark, run_id, system, systems)
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
        score_list=score_list,
        systems=systems,
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
