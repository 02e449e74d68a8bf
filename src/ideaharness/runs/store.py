"""The run directory: config, append-only records, results. Resume by re-running the same command.

Layout of ``--out runs/NAME``::

    config.json          the full configuration of the run (no secrets), written once
    records/<step>.jsonl one line per finished unit of work, appended and flushed as it finishes
    results.json         aggregate results, rewritten at the end of each run
    report.html          self-contained report (when the benchmark writes one)

A record line is ``{"step", "instance_id", "key", "data", "created"}``; ``(step, instance_id,
key)`` identifies a unit of work, so a re-run skips every unit already recorded, and records can
be split by instance id into deterministic shards (:func:`shard_of`) and merged by concatenation.
A line cut short by a crash is ignored on load (and reported), never fatal.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ideaharness.errors import UserError

CONFIG_FILE = "config.json"
RESULTS_FILE = "results.json"
RECORDS_DIR = "records"

RecordKey = tuple[str, str, str]


def shard_of(instance_id: str, num_shards: int) -> int:
    """Deterministic shard index in [0, num_shards) of an instance id (sha256, not Python's hash)."""
    if num_shards < 1:
        raise ValueError("num_shards must be >= 1")
    return int(hashlib.sha256(instance_id.encode()).hexdigest(), 16) % num_shards


class RunStore:
    """Append-only store of one run's records.

    Args:
        out_dir: run directory; created if missing.
        config: JSON-serialisable configuration. If the directory already holds a run, the
            ``identity`` part of both configs must match (a different generator, dataset or seed
            in the same directory is refused rather than mixed).
        identity_keys: the config keys that must match to resume; default all keys.

    Raises:
        UserError: the directory holds a run with a different configuration.
    """

    def __init__(
        self,
        out_dir: str | Path,
        config: dict[str, Any],
        *,
        identity_keys: tuple[str, ...] | None = None,
    ) -> None:
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / RECORDS_DIR).mkdir(exist_ok=True)
        self.config = config
        self.corrupt_lines = 0
        config_path = self.dir / CONFIG_FILE
        if config_path.exists():
            old = json.loads(config_path.read_text(encoding="utf-8"))
            keys = identity_keys or tuple(sorted(set(old) | set(config)))
            diff = [k for k in keys if old.get(k) != config.get(k)]
            if diff:
                raise UserError(
                    f"{config_path}: this run directory holds a run with different settings "
                    f"({', '.join(diff)}); use another --out or delete the directory"
                )
        else:
            _atomic_write(config_path, json.dumps(config, indent=2, sort_keys=True, default=str))
        self._index: dict[RecordKey, dict[str, Any]] = {}
        for record in self._iter_all():
            self._index[(record["step"], record["instance_id"], record["key"])] = record["data"]

    def _iter_all(self) -> Iterator[dict[str, Any]]:
        for path in sorted((self.dir / RECORDS_DIR).glob("*.jsonl")):
            with path.open(encoding="utf-8") as fh:
                for line in fh:
                    if not line.strip():
                        continue
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError:
                        self.corrupt_lines += 1

    def get(self, step: str, instance_id: str, key: str = "") -> dict[str, Any] | None:
        """The recorded data of a unit of work, or None if not done yet."""
        return self._index.get((step, instance_id, key))

    def has(self, step: str, instance_id: str, key: str = "") -> bool:
        return (step, instance_id, key) in self._index

    def put(self, step: str, instance_id: str, data: dict[str, Any], key: str = "") -> None:
        """Append one record and flush it to disk before returning (crash-safe).

        A unit already recorded is not written twice.
        """
        if (step, instance_id, key) in self._index:
            return
        line = json.dumps(
            {
                "step": step,
                "instance_id": instance_id,
                "key": key,
                "data": data,
                "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            },
            ensure_ascii=False,
            default=str,
        )
        path = self.dir / RECORDS_DIR / f"{_safe(step)}.jsonl"
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self._index[(step, instance_id, key)] = data

    def records(self, step: str) -> list[tuple[str, str, dict[str, Any]]]:
        """All records of a step as ``(instance_id, key, data)``, in insertion order."""
        return [(i, k, d) for (s, i, k), d in self._index.items() if s == step]

    def all_records(self) -> list[tuple[str, str, str, dict[str, Any]]]:
        """Every record as ``(step, instance_id, key, data)``, in insertion order."""
        return [(s, i, k, d) for (s, i, k), d in self._index.items()]

    def write_results(self, results: dict[str, Any]) -> Path:
        path = self.dir / RESULTS_FILE
        _atomic_write(path, json.dumps(results, indent=2, sort_keys=False, default=str))
        return path


def _safe(step: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in step)


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
