"""Persistent response cache: SQLite in WAL mode, keyed on the hash of the full request.

The key is the sha256 of the canonical JSON (sorted keys, no whitespace) of every field of the
:class:`~ideaharness.llm.types.ChatRequest` plus the endpoint's base URL, so an identical re-run
makes zero model calls while any change of model, endpoint, messages, sampling parameters, seed,
response format, sample index or reasoning effort misses. A field added to the request after
entries were stored (:data:`LATER_FIELDS`) is left out of the hash while it holds its default, so
those entries keep their keys. API keys are never part of the key or of the stored value.

Safe for concurrent use: one connection per :class:`ResponseCache` guarded by a thread lock (calls
come from ``asyncio.to_thread``), WAL journaling plus a busy timeout for several processes sharing
one file.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ideaharness.errors import UserError, is_disk_full, storage_error
from ideaharness.llm.types import ChatRequest, Completion

CACHE_FILE_NAME = "llm-cache.sqlite"
CACHE_DIR_ENV = "IDEAHARNESS_CACHE_DIR"
BUSY_TIMEOUT_MS = 30_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    completion TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def default_cache_dir() -> Path:
    """``$IDEAHARNESS_CACHE_DIR`` if set, else ``~/.cache/ideaharness`` (not created here)."""
    env = os.environ.get(CACHE_DIR_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "ideaharness"


MODELS_DIR_ENV = "IDEAHARNESS_MODELS_DIR"


def default_models_dir() -> Path:
    """Folder for assembled local GGUF files: ``$IDEAHARNESS_MODELS_DIR`` or ``~/.cache/ideaharness/models``.

    Deliberately independent of ``$IDEAHARNESS_CACHE_DIR``: pointing the response cache somewhere
    fresh (as tests do) must not re-assemble 0.5–1.1 GB of weights.
    """
    env = os.environ.get(MODELS_DIR_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "ideaharness" / "models"


def default_cache_path() -> Path:
    """The default response-cache file: ``default_cache_dir() / "llm-cache.sqlite"``."""
    return default_cache_dir() / CACHE_FILE_NAME


LATER_FIELDS: dict[str, Any] = {"reasoning_effort": None}
"""ChatRequest fields added after the cache format was fixed, with their defaults: hashed only when
set to something else, so a request without them keys exactly as before they existed."""


def request_key(request: ChatRequest, base_url: str | None = None) -> str:
    """sha256 hex digest (64 chars) of the canonical JSON of ``request`` and ``base_url``.

    ``base_url`` is normalised (trailing ``/`` removed); None for local models. Fields of
    :data:`LATER_FIELDS` at their default are left out. Never raises on text: a string holding a
    lone surrogate hashes like any other.
    """
    payload: dict[str, Any] = request.model_dump(mode="json")
    for name, default in LATER_FIELDS.items():
        if payload.get(name, default) == default:
            payload.pop(name, None)
    payload["base_url"] = base_url.rstrip("/") if base_url else None
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # "surrogatepass": a lone surrogate (never valid UTF-8) still hashes, to its own key
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


class CacheInfo(BaseModel):
    """What ``ideaharness cache info`` prints."""

    path: str
    exists: bool
    entries: int
    size_bytes: int
    entries_by_model: dict[str, int]


class ResponseCache:
    """SQLite store of completions keyed by :func:`request_key`.

    Args:
        path: the SQLite file; its folder is created if missing.

    Raises:
        UserError: if the file exists but is not an SQLite database.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False, isolation_level=None
            )
            self._conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            # switching to WAL needs a moment of exclusive access, and SQLite answers "database is
            # locked" at once (no busy wait) when another process opens the new file at that moment
            for attempt in range(100):
                try:
                    self._conn.execute("PRAGMA journal_mode=WAL")
                    break
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) or attempt == 99:
                        raise
                    time.sleep(0.05)
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            if is_disk_full(exc):
                raise storage_error(self.path, exc) from exc
            raise UserError(
                f"{self.path}: not a usable LLM cache ({exc}); delete it or run `ideaharness cache clear`"
            ) from exc
        except OSError as exc:
            raise storage_error(self.path, exc) from exc

    def get(self, key: str) -> Completion | None:
        """The stored completion for ``key`` (with ``cached=True``), or None."""
        with self._lock:
            row = self._conn.execute("SELECT completion FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        completion = Completion.model_validate(json.loads(row[0]))
        return completion.model_copy(update={"cached": True})

    def put(self, key: str, request: ChatRequest, completion: Completion) -> None:
        """Store ``completion`` under ``key`` (replacing an earlier value for the same key).

        Text is stored as ASCII JSON (``\\uXXXX`` escapes), so any string, even one holding a lone
        surrogate, is stored and read back exactly.

        Raises:
            StorageError: the disk is full (SQLite rolls the insert back: nothing half-written).
        """
        stored = completion.model_copy(update={"cached": False})
        row = (
            key,
            request.model,
            json.dumps(request.model_dump(mode="json")),
            json.dumps(stored.model_dump(mode="json")),
            time.time(),
        )
        try:
            with self._lock:
                self._conn.execute(
                    "INSERT OR REPLACE INTO responses (key, model, request, completion, created) "
                    "VALUES (?, ?, ?, ?, ?)",
                    row,
                )
        except sqlite3.OperationalError as exc:
            if is_disk_full(exc):
                raise storage_error(self.path, exc) from exc
            raise

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def info(self) -> CacheInfo:
        """Entry count, per-model counts and bytes on disk (database plus WAL files)."""
        with self._lock:
            rows = self._conn.execute("SELECT model, COUNT(*) FROM responses GROUP BY model").fetchall()
        by_model = {str(m): int(n) for m, n in rows}
        return CacheInfo(
            path=str(self.path),
            exists=True,
            entries=sum(by_model.values()),
            size_bytes=_size_on_disk(self.path),
            entries_by_model=by_model,
        )

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def cache_info(path: Path | str | None = None) -> CacheInfo:
    """The :class:`CacheInfo` at ``path`` (default :func:`default_cache_path`); creates no file."""
    target = Path(path).expanduser() if path else default_cache_path()
    if not target.exists():
        return CacheInfo(path=str(target), exists=False, entries=0, size_bytes=0, entries_by_model={})
    cache = ResponseCache(target)
    try:
        return cache.info()
    finally:
        cache.close()


def clear_cache(path: Path | str | None = None) -> int:
    """Delete the cache file at ``path`` (default :func:`default_cache_path`) and its WAL files.

    Returns:
        Bytes freed (0 if there was no cache).
    """
    target = Path(path).expanduser() if path else default_cache_path()
    freed = _size_on_disk(target)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    return freed


def _size_on_disk(path: Path) -> int:
    total = 0
    for suffix in ("", "-wal", "-shm"):
        p = Path(f"{path}{suffix}")
        if p.exists():
            total += p.stat().st_size
    return total
