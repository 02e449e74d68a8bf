"""What every dataset builder shares: an append-only JSONL state file, the manifest, the output folder.

Resume model: each finished unit of work (a target found, a target's references fetched) is one
JSONL line appended and flushed as soon as it is done; a re-run reads the lines, skips the
units already present and, because every HTTP response is cached on disk, never repeats a
request that succeeded. A line cut short by a crash is cut off when the log opens (and kept aside
in ``<name>.torn``), so the next unit starts a line of its own. Final files (instances, CSVs,
manifest) are rewritten from the state at the end of each run, so the same state always gives
the same dataset.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ideaharness.errors import UserError, storage_error
from ideaharness.fileio import append_line, atomic_write_text
from ideaharness.jsonl import dumps_line, repair_torn_tail, scan_jsonl
from ideaharness.schema import Instance

MANIFEST_FILE = "manifest.json"
SETTINGS_FILE = "settings.json"
INSTANCES_FILE = "instances.jsonl"
CACHE_DIR = "cache"


def library_version() -> str:
    """Installed ideaharness version (``"unknown"`` when not installed)."""
    try:
        from importlib.metadata import version

        return version("ideaharness")
    except Exception:  # noqa: BLE001  (not installed: running from a checkout)
        return "unknown"


class JsonlLog:
    """Append-only JSONL file of dicts (see :mod:`ideaharness.jsonl`).

    Opening it cuts off a line a crash left without its newline (kept in ``<name>.torn``), so the
    next append starts a line of its own; reading skips lines that are not JSON objects. Both are
    counted in ``torn``.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise storage_error(self.path.parent, exc) from exc
        self.torn = int(repair_torn_tail(self.path, self.path.with_suffix(".torn")))

    def read(self) -> Iterator[dict[str, Any]]:
        """Every complete line, in order."""
        scan = scan_jsonl(self.path)
        self.torn += len(scan.invalid)
        for _, value in scan.rows:
            if isinstance(value, dict):
                yield value
            else:
                self.torn += 1

    def append(self, item: dict[str, Any]) -> None:
        """Append one line and flush it to disk (all or nothing; :class:`StorageError` on failure)."""
        append_line(self.path, dumps_line(item))


class Manifest(BaseModel):
    """What a builder did: settings (the query), dates, counts, cutoff, library version, HTTP figures.

    ``created`` is the first run's time; ``updated`` the latest. ``http`` holds the
    ``requests`` / ``cache_hits`` / ``retries`` of the latest run.
    """

    builder: str
    library_version: str = Field(default_factory=library_version)
    created: str
    updated: str
    settings: dict[str, Any]
    cutoff: str | None = None
    counts: dict[str, Any] = Field(default_factory=dict)
    http: dict[str, Any] = Field(default_factory=dict)
    runs: int = 1


def now_iso() -> str:
    """UTC now, seconds precision."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def write_manifest(out_dir: Path, manifest: Manifest) -> Path:
    """Write ``manifest.json`` atomically, keeping ``created`` and counting ``runs`` from an old one."""
    path = out_dir / MANIFEST_FILE
    if path.exists():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
            manifest = manifest.model_copy(
                update={"created": old.get("created", manifest.created), "runs": int(old.get("runs", 0)) + 1}
            )
        except (json.JSONDecodeError, ValueError):
            pass
    atomic_write_text(path, manifest.model_dump_json(indent=2))
    return path


def write_instances(path: Path, instances: list[Instance]) -> Path:
    """Write instances as JSONL atomically (one ``Instance`` per line)."""
    atomic_write_text(path, "".join(dumps_line(i.model_dump(mode="json")) + "\n" for i in instances))
    return path


def check_settings(out_dir: Path, builder: str, settings: dict[str, Any]) -> None:
    """Record the settings on the first run (``settings.json``); refuse to resume with others.

    Raises:
        UserError: ``out_dir`` holds a build of another builder or with other settings.
    """
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise storage_error(out_dir, exc) from exc
    path = out_dir / SETTINGS_FILE
    new = json.loads(json.dumps({"builder": builder, **settings}, default=str, sort_keys=True))
    if not path.exists():
        atomic_write_text(path, json.dumps(new, indent=2, sort_keys=True))
        return
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not readable ({exc}); restore it or use another --out") from None
    if not isinstance(old, dict):
        raise UserError(f"{path}: not a settings object; restore it or use another --out")
    if old != new:
        diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        raise UserError(
            f"{out_dir}: holds a {old.get('builder')} build with other settings "
            f"({', '.join(diff)}); use another --out or delete the folder"
        )
