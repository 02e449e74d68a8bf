"""Persistent response cache: SQLite in WAL mode, keyed on the hash of the full request.

The key is the sha256 of the canonical JSON (sorted keys, no whitespace) of every field of the
:class:`~ideaharness.llm.types.ChatRequest` plus the endpoint's base URL, so an identical re-run
makes zero model calls while any change of model, endpoint, messages, sampling parameters, seed,
response format, sample index or reasoning effort misses. A field added to the request after
entries were stored (:data:`LATER_FIELDS`) is left out of the hash while it holds its default, so
those entries keep their keys. API keys are never part of the key or of the stored value. The
canonical JSON is written by orjson when that gives the very bytes :mod:`json` gives (plain JSON
values, each float checked) and by :mod:`json` otherwise, so every key is the one earlier versions
computed and existing cache files keep hitting.

Reads and writes without a thread-pool hop: :meth:`ResponseCache.get` reads in the caller's thread
(a primary-key look-up on a connection of its own; WAL readers never wait for writers), and
:meth:`ResponseCache.put` / :meth:`ResponseCache.aput` hand the entry to the cache's writer thread,
which commits every entry handed over while it was busy in one transaction (group commit) on a
second connection, and tells the waiting callers at once (one wake-up per group and event loop).
A put returns once its entry is committed, as before: a process killed right after
:meth:`~ideaharness.llm.LLM.chat` returned (a Ray worker that dies) keeps the answer, and a disk-full
error is raised by the put of its entry, as a :class:`~ideaharness.errors.StorageError` naming the
file. Until its group commits, an entry is served from memory, so a ``get`` during a ``put`` hits.

Safe for concurrent use: any thread or coroutine may call every method; several processes may
share one file (WAL journaling plus a busy timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

from ideaharness.errors import StorageError, UserError, is_disk_full, storage_error
from ideaharness.llm.types import ChatRequest, Completion

CACHE_FILE_NAME = "llm-cache.sqlite"
CACHE_DIR_ENV = "IDEAHARNESS_CACHE_DIR"
BUSY_TIMEOUT_MS = 30_000
WRITER_LINGER_S = 0.25
"""Seconds the writer thread waits for more entries before it ends (a later put starts a new one);
also the longest it may delay the interpreter's exit after the last put."""
COMMIT_DELAY_S = 0.005
"""Longest wait of a group for more entries while its last caller said other calls still wait for
their replies (``siblings``), as PostgreSQL's ``commit_delay``/``commit_siblings``: a commit costs
~90 us of CPU beside ~45 us per entry, so replies arriving a few ms apart share one."""
GROUP_MAX = 64
"""Entries a group waits for at most (it is committed at once when it has this many)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    completion TEXT NOT NULL,
    created REAL NOT NULL
)
"""


_ACCESS_CODES = frozenset({sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM})
"""SQLite's primary result codes for a file it may not open or write (permissions, a read-only
mount, a missing folder): the file itself may be healthy."""
_CORRUPT_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
"""SQLite's primary result codes for a damaged file or one that is not a database."""


def sqlite_file_error(path: Path, exc: BaseException, what: str, clear: str, off_flag: str) -> UserError:
    """The one-line error for a cache file SQLite failed on, with the advice that fits its cause.

    Args:
        path: the SQLite file.
        exc: the :class:`sqlite3.Error` (its ``sqlite_errorcode``) or :class:`OSError`.
        what: the file's kind in words (``LLM cache``, ``embedding store``).
        clear: the command that deletes it (``ideaharness cache clear``...).
        off_flag: the ``run`` flag that does without it (``--no-cache``...).

    Returns:
        Disk full: :func:`~ideaharness.errors.storage_error`. Cannot open or write (permissions,
        read-only mount, missing folder): a :class:`~ideaharness.errors.StorageError` saying the
        file is not damaged and must be kept. Damaged or not a database: a
        :class:`~ideaharness.errors.UserError` saying to delete it. Anything else (locked past the
        busy timeout, an I/O error): a UserError with SQLite's reason and no advice to delete.
    """
    if is_disk_full(exc):
        return storage_error(path, exc)
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if isinstance(exc, OSError) or primary in _ACCESS_CODES:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return StorageError(
            f"{path}: the {what} cannot be opened or written ({reason}); this is no sign of damage, "
            f"do not delete it: make the file and its folder writable by this user, point "
            f"${CACHE_DIR_ENV} at a writable folder, or run with {off_flag}")
    if primary in _CORRUPT_CODES:
        return UserError(f"{path}: not a usable {what} ({exc}); delete it or run `{clear}`")
    return UserError(f"{path}: the {what} cannot be used ({exc})")


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
    lone surrogate hashes like any other. The bytes hashed are those of ``json.dumps(payload,
    sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` of ``request.model_dump(mode="json")``
    (encoded with ``surrogatepass``), whichever serialiser writes them (module docstring).
    """
    blob = _fast_canonical(request, base_url)
    if blob is None:
        blob = _canonical(request, base_url)
    return hashlib.sha256(blob).hexdigest()


def _canonical(request: ChatRequest, base_url: str | None) -> bytes:
    """The canonical JSON of the key, as :mod:`json` writes it (every request, any field value)."""
    payload: dict[str, Any] = request.model_dump(mode="json")
    for name, default in LATER_FIELDS.items():
        if payload.get(name, default) == default:
            payload.pop(name, None)
    payload["base_url"] = base_url.rstrip("/") if base_url else None
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # "surrogatepass": a lone surrogate (never valid UTF-8) still hashes, to its own key
    return blob.encode("utf-8", "surrogatepass")


_FIELDS = frozenset(ChatRequest.model_fields)
_INT_RANGE = (-(2**63), 2**64 - 1)  # what orjson writes; json writes any int the same way
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "model": (str,), "messages": (list,), "temperature": (float,), "top_p": (float, type(None)),
    "max_tokens": (int, type(None)), "seed": (int, type(None)), "json_schema": (dict, type(None)),
    "sample_index": (int,), "reasoning_effort": (str, type(None)),
}
"""The type each field holds after validation (``model_dump(mode="json")`` returns it unchanged);
another (a request built with ``model_construct``) takes the :mod:`json` path."""


def _fast_canonical(request: ChatRequest, base_url: str | None) -> bytes | None:
    """:func:`_canonical`'s bytes written by orjson, or None when they might differ: a field of a
    type other than the validated one, a value that is not a plain JSON value (dict with ``str``
    keys, list, ``str``, ``int`` of at most 64 bits, ``bool``, None, finite ``float`` that orjson
    writes as :func:`repr` does), a lone surrogate (orjson refuses it), or a field this function
    does not know (one added to :class:`ChatRequest` since)."""
    if type(request) is not ChatRequest:
        return None
    payload = dict(request.__dict__)
    if payload.keys() != _FIELDS or _FIELDS != _FIELD_TYPES.keys():
        return None
    try:
        for name, kinds in _FIELD_TYPES.items():
            value = payload[name]
            if type(value) not in kinds or (name != "messages" and not _plain(value)):
                return None  # messages: checked below, every key and value a str
    except RecursionError:
        return None
    if not all(type(m) is dict and all(type(k) is str and type(v) is str for k, v in m.items())
               for m in payload["messages"]):
        return None  # Message is dict[str, str]
    for name, default in LATER_FIELDS.items():
        if payload.get(name, default) == default:
            payload.pop(name, None)
    if base_url is not None and type(base_url) is not str:
        return None
    payload["base_url"] = base_url.rstrip("/") if base_url else None
    try:
        return orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
    except (TypeError, ValueError):  # orjson.JSONEncodeError: a lone surrogate, nesting too deep
        return None


def _plain(value: Any) -> bool:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(_INT_RANGE[0] <= value <= _INT_RANGE[1])
    if kind is float:  # json writes repr(value); orjson's digits are checked, not assumed
        return math.isfinite(value) and orjson.dumps(value) == repr(value).encode()
    if kind is list:
        return all(_plain(item) for item in value)
    if kind is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    return False


class CacheInfo(BaseModel):
    """What ``ideaharness cache info`` prints."""

    path: str
    exists: bool
    entries: int
    size_bytes: int
    entries_by_model: dict[str, int]


class _Entry:
    """One entry handed to the writer thread, and who waits for it (a thread or a coroutine)."""

    __slots__ = ("completion", "done", "error", "future", "key", "loop", "request", "siblings")

    def __init__(self, key: str, request: ChatRequest, completion: Completion,
                 loop: asyncio.AbstractEventLoop | None = None, siblings: int = 0) -> None:
        self.key = key
        self.request = request
        self.completion = completion
        self.loop = loop
        self.siblings = siblings
        self.future: asyncio.Future[None] | None = loop.create_future() if loop is not None else None
        self.done = False
        self.error: BaseException | None = None


class ResponseCache:
    """SQLite store of completions keyed by :func:`request_key` (reads in the caller's thread,
    writes group-committed by a writer thread: see the module docstring).

    Args:
        path: the SQLite file; its folder is created if missing.

    Raises:
        UserError: the file exists but is damaged or not an SQLite database (here or at a later
            read: a damaged page is an error naming the file, never a miss).
        StorageError: the file cannot be opened, created or written (disk full, read-only mount,
            permissions): the advice keeps the file (:func:`sqlite_file_error`).
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()  # the reading connection
        self._state = threading.Condition()  # the queue, the entries not yet written, the writer
        self._pending: dict[str, Completion] = {}
        self._queue: list[_Entry] = []
        self._writer: threading.Thread | None = None
        self._writing = False
        self._hurry = 0  # flush() calls waiting: no group waits for more entries meanwhile
        self._closed = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = self._connect()  # the writer thread's
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
            self._reader = self._connect()
        except (sqlite3.DatabaseError, OSError) as exc:
            raise self._error(exc) from exc

    def _error(self, exc: BaseException) -> UserError:
        """:func:`sqlite_file_error` for this cache."""
        return sqlite_file_error(self.path, exc, "LLM cache", "ideaharness cache clear", "--no-cache")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                               isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        return conn

    def get(self, key: str) -> Completion | None:
        """The stored completion for ``key`` (with ``cached=True``), or None; an entry being
        written (:meth:`put`, :meth:`aput`) is served from memory."""
        pending = self._pending.get(key)
        if pending is not None:  # validated anew, as an entry read from the file is
            return Completion.model_validate({**pending.model_dump(), "cached": True})
        try:
            with self._lock:
                row = self._reader.execute("SELECT completion FROM responses WHERE key = ?",
                                           (key,)).fetchone()
        except sqlite3.DatabaseError as exc:  # a damaged page: one line naming the file, never a miss
            raise self._error(exc) from exc
        if row is None:
            return None
        data = json.loads(row[0])
        if isinstance(data, dict):
            data["cached"] = True
        return Completion.model_validate(data)

    def put(self, key: str, request: ChatRequest, completion: Completion) -> None:
        """Store ``completion`` under ``key`` (replacing an earlier value for the same key); returns
        once it is committed (with the other entries handed over meanwhile: group commit).

        Text is stored as ASCII JSON (``\\uXXXX`` escapes), so any string, even one holding a lone
        surrogate, is stored and read back exactly.

        Raises:
            StorageError: the disk is full (SQLite rolls the group back: nothing half-written).
            UserError: the cache was closed.
        """
        entry = self._hand_over(_Entry(key, request, completion))
        with self._state:
            while not entry.done:
                self._state.wait()
        if entry.error is not None:
            raise entry.error

    async def aput(self, key: str, request: ChatRequest, completion: Completion, *,
                   siblings: int = 0) -> None:
        """:meth:`put` for coroutines: the event loop goes on while the writer thread commits the
        entry with the others handed over meanwhile (no thread-pool hop per entry); returns once
        it is committed. A cancelled caller's entry is still written.

        Args:
            siblings: other calls still waiting for their replies (which will be stored soon):
                while the last entry handed over says so, its group waits for them, up to
                :data:`COMMIT_DELAY_S` and :data:`GROUP_MAX` entries; 0: committed at once.

        Raises:
            StorageError: the disk is full (nothing of the group was written).
            UserError: the cache was closed.
        """
        entry = self._hand_over(_Entry(key, request, completion, asyncio.get_running_loop(), siblings))
        assert entry.future is not None
        await asyncio.shield(entry.future)

    def _hand_over(self, entry: _Entry) -> _Entry:
        with self._state:
            if self._closed:
                raise UserError(f"{self.path}: the LLM cache was closed; entries can no longer be stored")
            self._pending[entry.key] = entry.completion
            self._queue.append(entry)
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, name=f"llm-cache {self.path.name}")
                self._writer.start()
            else:
                self._state.notify_all()
        return entry

    def flush(self) -> None:
        """Wait until every entry handed over is written (or failed: its own caller is told); a
        group waiting for more entries is written at once."""
        with self._state:
            self._hurry += 1
            self._state.notify_all()
            try:
                while self._queue or self._writing:
                    self._state.wait()
            finally:
                self._hurry -= 1

    def _write_loop(self) -> None:
        """The writer thread: commits what was handed over, one transaction per group, tells the
        waiters, and ends after :data:`WRITER_LINGER_S` seconds without work."""
        while True:
            with self._state:
                if not self._queue:
                    self._state.wait(WRITER_LINGER_S)
                if not self._queue:
                    self._writer = None
                    self._state.notify_all()
                    return
                self._gather()
                group, self._queue = self._queue, []
                self._writing = True
            error = self._write(group)
            waiting: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
            with self._state:
                for entry in group:
                    if self._pending.get(entry.key) is entry.completion:  # not replaced by a later one
                        del self._pending[entry.key]
                    entry.error, entry.done = error, True
                    if entry.loop is not None and entry.future is not None:
                        waiting.setdefault(entry.loop, []).append(entry.future)
                self._writing = False
                self._state.notify_all()
            for loop, futures in waiting.items():
                with contextlib.suppress(RuntimeError):  # the loop was closed: nobody waits any more
                    loop.call_soon_threadsafe(_settle, futures, error)

    def _gather(self) -> None:
        """(Holding ``_state``.) Commit delay: while the last entry's caller said other calls still
        wait for their replies, wait for them, up to :data:`COMMIT_DELAY_S` and
        :data:`GROUP_MAX` entries; a flush or close cuts it short."""
        deadline = time.monotonic() + COMMIT_DELAY_S
        while not self._hurry and not self._closed and self._queue[-1].siblings > 0:
            left = deadline - time.monotonic()
            if len(self._queue) >= GROUP_MAX or left <= 0:
                return
            self._state.wait(left)

    def _write(self, group: list[_Entry]) -> BaseException | None:
        """Insert ``group`` in one transaction; the error (disk full as a StorageError), or None."""
        now = time.time()
        try:
            rows = [(e.key, e.request.model, _request_text(e.request),
                     json.dumps({**e.completion.model_dump(mode="json"), "cached": False}), now)
                    for e in group]
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for row in rows:
                    self._conn.execute(
                        "INSERT OR REPLACE INTO responses (key, model, request, completion, created) "
                        "VALUES (?, ?, ?, ?, ?)", row)
                self._conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):  # SQLite may have rolled back already
                    self._conn.execute("ROLLBACK")
                raise
        except sqlite3.DatabaseError as exc:
            return self._error(exc)
        except Exception as exc:  # noqa: BLE001 (handed to the waiting callers, never lost in the thread)
            return exc
        return None

    def __len__(self) -> int:
        self.flush()
        try:
            with self._lock:
                return int(self._reader.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from exc

    def info(self) -> CacheInfo:
        """Entry count, per-model counts and bytes on disk (database plus WAL files)."""
        self.flush()
        try:
            with self._lock:
                rows = self._reader.execute("SELECT model, COUNT(*) FROM responses GROUP BY model").fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from exc
        by_model = {str(m): int(n) for m, n in rows}
        return CacheInfo(
            path=str(self.path),
            exists=True,
            entries=sum(by_model.values()),
            size_bytes=_size_on_disk(self.path),
            entries_by_model=by_model,
        )

    def close(self) -> None:
        """Write every entry handed over, stop the writer thread and close the file; safe to call
        twice."""
        with self._state:
            if self._closed:
                return
        self.flush()
        with self._state:
            self._closed = True
            writer = self._writer
            self._state.notify_all()
        if writer is not None:
            writer.join()
        with self._lock:
            self._reader.close()
            self._conn.close()


def _request_text(request: ChatRequest) -> str:
    """The ``request`` column (for people reading the file; never read back): the request's JSON,
    by orjson when it holds plain JSON values only (:func:`_plain`: no lone surrogate, no
    non-finite float, which orjson would write as null), else by :mod:`json`."""
    payload = request.model_dump(mode="json")
    try:
        if _plain(payload):
            return orjson.dumps(payload).decode("utf-8")
    except (TypeError, RecursionError):
        pass
    return json.dumps(payload)


def _settle(futures: list[asyncio.Future[None]], error: BaseException | None) -> None:
    """In the waiters' event loop: their entries' group is written (or failed with ``error``)."""
    for future in futures:
        if future.done():  # the caller was cancelled
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)
            future.exception()  # retrieved: a cancelled caller leaves no "never retrieved" warning


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
