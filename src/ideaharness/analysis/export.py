"""``ideaharness export``: a run's scores and judgments as Parquet, CSV or JSON Lines files.

Columns: ``docs/export.md``. Parquet is written by pyarrow; nested values (parsed replies,
positions, errors) are JSON text in every format, so the three formats hold the same table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pandas as pd

from ideaharness.analysis.load import RunData, load_run
from ideaharness.errors import StorageError, UserError

Format = Literal["parquet", "csv", "jsonl"]
FORMATS: tuple[str, ...] = ("parquet", "csv", "jsonl")


def _write(frame: pd.DataFrame, path: Path, fmt: str) -> None:
    if fmt == "parquet":
        frame.to_parquet(path, engine="pyarrow", index=False)
    elif fmt == "csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_json(path, orient="records", lines=True, force_ascii=False)


def export_run(run: str | Path | RunData, fmt: str = "parquet", out: str | Path | None = None) -> list[Path]:
    """Write ``scores.<ext>`` and ``judgments.<ext>`` of a run; returns the two paths.

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
        for name, frame in (("scores", data.scores), ("judgments", data.judgments)):
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
    source = Path(path)
    if source.suffix == ".parquet":
        return pd.read_parquet(source, engine="pyarrow")
    if source.suffix == ".csv":
        return pd.read_csv(source)
    return pd.read_json(source, orient="records", lines=True)
