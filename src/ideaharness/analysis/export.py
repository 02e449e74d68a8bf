"""``ideaharness export``: a run's scores, judgments and evidence verdicts as Parquet, CSV or JSON Lines.

Columns: ``docs/export.md``. Parquet is written by pyarrow; nested values (parsed replies,
positions, errors) are JSON text in every format, so the three formats hold the same table. The
judgments' ``prompt`` column is the rendered prompt the run kept for each judgment's prompt hash
(``<run>/prompts.jsonl``, :func:`~ideaharness.runs.store.read_prompts`), as ``[role]`` + content
per message (:func:`~ideaharness.runs.store.prompt_text`); empty for a run that kept none.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ideaharness.analysis.load import RunData, load_run
from ideaharness.errors import StorageError, UserError
from ideaharness.runs.store import prompt_text, read_prompts

if TYPE_CHECKING:
    import pandas as pd

Format = Literal["parquet", "csv", "jsonl"]
FORMATS: tuple[str, ...] = ("parquet", "csv", "jsonl")


def _write(frame: pd.DataFrame, path: Path, fmt: str) -> None:
    if fmt == "parquet":
        frame.to_parquet(path, engine="pyarrow", index=False)
    elif fmt == "csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_json(path, orient="records", lines=True, force_ascii=False)


def with_prompts(judgments: pd.DataFrame, run_dir: Path) -> pd.DataFrame:
    """``judgments`` with each missing ``prompt`` filled from the run's kept prompts (by
    ``prompt_hash``); the frame itself is not changed."""
    import pandas as pd

    if judgments.empty or "prompt_hash" not in judgments:
        return judgments
    kept = read_prompts(run_dir, {str(h) for h in judgments["prompt_hash"].dropna()})
    if not kept:
        return judgments
    texts = judgments["prompt_hash"].map(lambda h: prompt_text(kept[h]) if h in kept else None)
    current = judgments["prompt"] if "prompt" in judgments else pd.Series(None, index=judgments.index)
    return judgments.assign(prompt=current.where(current.notna(), texts))


def evidence_frame(data: RunData) -> pd.DataFrame:
    """One row per headline value of the run: ``benchmark``, ``run_id``, ``metric``, ``group``,
    ``system``, ``value``, ``ci_low``, ``ci_high``, ``ci_why`` (why there is no interval where the
    run withheld it: "n too small for an interval (n < 5)", a value outside the metric's declared
    range; from ``results["metrics"]``), ``n``, ``verdict`` (evidence, weak, not
    evidence) and ``reasons`` (JSON text: a list of sentences), from ``results["evidence"]``
    (recomputed for a run written before it; :func:`ideaharness.metrics.evidence.evidence_rows`)."""
    import json

    import pandas as pd

    from ideaharness.metrics.evidence import evidence_rows

    ci_why = {(m.get("metric"), m.get("group") or "", m.get("system")): m.get("ci_why")
              for m in data.results.get("metrics") or [] if isinstance(m, dict)}
    rows = [{"benchmark": data.benchmark, "run_id": data.run_id, "metric": r["metric"], "group": r["group"],
             "system": r["system"], "value": r["value"], "ci_low": r["ci"][0] if r["ci"] else None,
             "ci_high": r["ci"][1] if r["ci"] else None,
             "ci_why": None if r["ci"] else ci_why.get((r["metric"], r["group"] or "", r["system"])),
             "n": r["n"], "verdict": r["verdict"],
             "reasons": json.dumps(r["reasons"], ensure_ascii=False)} for r in evidence_rows(data.results)]
    return pd.DataFrame(rows, columns=EVIDENCE_EXPORT_COLUMNS)


EVIDENCE_EXPORT_COLUMNS = ["benchmark", "run_id", "metric", "group", "system", "value", "ci_low", "ci_high",
                           "ci_why", "n", "verdict", "reasons"]
"""Columns of the export's ``evidence`` table (docs/export.md)."""


def export_run(run: str | Path | RunData, fmt: str = "parquet", out: str | Path | None = None) -> list[Path]:
    """Write ``scores.<ext>``, ``judgments.<ext>`` and ``evidence.<ext>`` (each headline value's
    verdict, :func:`evidence_frame`) of a run; returns the three paths in that order.

    Args:
        run: a run directory or an already loaded :class:`RunData`.
        fmt: ``"parquet"``, ``"csv"`` or ``"jsonl"``.
        out: folder to write into (created); default ``<run>/export``.

    Raises:
        UserError: unknown format, or not a run directory.
        StorageError: the files cannot be written.
    """
    if fmt not in FORMATS:
        raise UserError(f"--format {fmt}: choose one of {', '.join(FORMATS)}")
    data = run if isinstance(run, RunData) else load_run(run)
    folder = Path(out) if out is not None else data.path / "export"
    paths = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, frame in (("scores", data.scores), ("judgments", with_prompts(data.judgments, data.path)),
                            ("evidence", evidence_frame(data))):
            path = folder / f"{name}.{fmt}"
            _write(frame, path, fmt)
            paths.append(path)
    except OSError as exc:
        raise StorageError(
            f"{folder}: cannot write the export ({exc.strerror or exc}); free space or choose another --out"
        ) from None
    return paths


def read_export(path: str | Path) -> pd.DataFrame:
    """Read back one exported file (format from its extension)."""
    import pandas as pd

    source = Path(path)
    if source.suffix == ".parquet":
        return pd.read_parquet(source, engine="pyarrow")
    if source.suffix == ".csv":
        return pd.read_csv(source)
    return pd.read_json(source, orient="records", lines=True)
