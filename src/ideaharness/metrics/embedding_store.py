"""Embeddings kept on disk and reused: one SQLite store for every model, layer and text.

A second system scored against the same targets, a resumed run or a re-run with another generator
embeds only the texts it has not embedded before; BERTScore's per-token embeddings
(:mod:`ideaharness.metrics.similarity`) and sentence embeddings
(:func:`ideaharness.metrics.embeddings.embed`) both live here.

Layout (``$IDEAHARNESS_CACHE_DIR/embeddings.sqlite``, default ``~/.cache/ideaharness/``):

* ``spaces``: one row per embedding space, its id the sha256 (first 32 hex digits) of a canonical
  JSON *identity*: model name, a fingerprint of the model's files (:func:`model_fingerprint`, a
  sha256 of their contents, so retrained weights never reuse old vectors), the layer, the
  tokenizer's max length, the library versions, the normalisation.
* ``vectors``: one row per (space, sha256 of the text's UTF-8): the array as little-endian float32
  bytes plus its shape, and for BERTScore the token ids as int32 (idf weights are derived from
  them at scoring time, so the vectors do not depend on the idf setting). Text is never stored.

The computing device is not part of the identity: GPU and CPU values agree to about 1e-6, not
bit for bit, and a vector computed on one is reused on the other.

Robustness: WAL journaling and a busy timeout let several processes read and write one file;
each batch of new vectors is one transaction, so a crash or kill loses at most the batch being
written. A file that is not an SQLite database, or a row whose bytes do not match its shape, is a
one-line :class:`~ideaharness.errors.UserError` naming the file and the fix (delete it or run
``ideaharness cache clear --embeddings``); the store is never silently rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from ideaharness.errors import UserError
from ideaharness.llm.cache import default_cache_dir, sqlite_file_error

STORE_FILE_NAME = "embeddings.sqlite"
BUSY_TIMEOUT_MS = 60_000
LOOKUP_CHUNK = 500
"""Keys per ``SELECT ... IN (...)`` (SQLite's default limit on host parameters is 32766)."""

DEVICES = ("cpu", "cuda", "auto")
"""Values of ``--device``: ``auto`` picks ``cuda`` when torch sees a GPU, else ``cpu``."""

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS spaces (
        space TEXT PRIMARY KEY,
        label TEXT NOT NULL,
        identity TEXT NOT NULL,
        created REAL NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS vectors (
        space TEXT NOT NULL,
        key TEXT NOT NULL,
        shape TEXT NOT NULL,
        data BLOB NOT NULL,
        ids BLOB,
        created REAL NOT NULL,
        PRIMARY KEY (space, key)
    )""",
)

_CLEAR_HINT = "delete it or run `ideaharness cache clear --embeddings`"


def default_store_path() -> Path:
    """``$IDEAHARNESS_CACHE_DIR/embeddings.sqlite`` (default ``~/.cache/ideaharness/``)."""
    return default_cache_dir() / STORE_FILE_NAME


def text_key(text: str) -> str:
    """sha256 hex digest of ``text`` as UTF-8 (a lone surrogate hashes too, to its own key)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def space_id(identity: Mapping[str, Any]) -> str:
    """The id of an embedding space: sha256 of the canonical JSON of ``identity``, 32 hex digits."""
    blob = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class StoredEmbedding:
    """One text's embedding: ``vectors`` float32, shape (tokens, dim) for BERTScore or (dim,) for a
    sentence; ``ids`` int32 token ids, shape (tokens,), or None."""

    vectors: np.ndarray
    ids: np.ndarray | None = None


class EmbeddingCounts(BaseModel):
    """Distinct texts of one embedding space: computed by the model (``embedded``) or read from the
    store (``reused``)."""

    embedded: int = 0
    reused: int = 0

    @classmethod
    def of(cls, seen: set[str], computed: set[str]) -> EmbeddingCounts:
        """Counts of the text keys ``seen``, of which ``computed`` were embedded."""
        return cls(embedded=len(seen & computed), reused=len(seen - computed))


class EmbeddingStoreInfo(BaseModel):
    """What ``ideaharness cache info`` prints for the embedding store."""

    path: str
    exists: bool
    entries: int
    size_bytes: int
    entries_by_space: dict[str, int]


def _encode(array: np.ndarray, ids: np.ndarray | None) -> tuple[str, bytes, bytes | None]:
    data = np.ascontiguousarray(array, dtype="<f4")
    shape = ",".join(str(n) for n in data.shape)
    raw_ids = None if ids is None else np.ascontiguousarray(ids, dtype="<i4").tobytes()
    return shape, data.tobytes(), raw_ids


class EmbeddingStore:
    """SQLite store of float32 arrays keyed on (embedding space, text).

    Safe for several threads (one connection behind a lock) and several processes (WAL, a busy
    timeout of :data:`BUSY_TIMEOUT_MS`, ``INSERT OR IGNORE``: the first writer of a text wins,
    and any writer's value is that text's embedding).

    Args:
        path: the SQLite file; its folder is created if missing.

    Raises:
        UserError: the file exists but is damaged or not an SQLite database (names the file and
            the fix), here or at a later read.
        StorageError: the folder or file cannot be opened or written (disk full, read-only mount,
            permissions; the advice keeps the file).
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                                         check_same_thread=False, isolation_level=None)
            self._conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            # WAL needs a moment of exclusive access; SQLite answers "locked" at once (no busy
            # wait) when another process creates the same new file at that moment
            for attempt in range(200):
                try:
                    self._conn.execute("PRAGMA journal_mode=WAL")
                    break
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) or attempt == 199:
                        raise
                    time.sleep(0.05)
            self._conn.execute("PRAGMA synchronous=NORMAL")
            for statement in _SCHEMA:
                self._conn.execute(statement)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise self._error(exc) from exc

    def _error(self, exc: BaseException) -> UserError:
        """:func:`~ideaharness.llm.cache.sqlite_file_error` for this store (damaged: delete it;
        cannot open or write: keep it)."""
        return sqlite_file_error(self.path, exc, "embedding store", "ideaharness cache clear --embeddings",
                                 "--no-embedding-cache")

    def space(self, identity: Mapping[str, Any], label: str) -> str:
        """Register an embedding space (idempotent) and return its id (:func:`space_id`)."""
        sid = space_id(identity)
        row = (sid, label, json.dumps(identity, sort_keys=True), time.time())
        try:
            with self._lock:
                self._conn.execute("INSERT OR IGNORE INTO spaces (space, label, identity, created) "
                                   "VALUES (?, ?, ?, ?)", row)
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from exc
        return sid

    def get_many(self, space: str, keys: Iterable[str]) -> dict[str, StoredEmbedding]:
        """The stored embeddings of those ``keys`` (:func:`text_key`) that are in ``space``.

        Raises:
            UserError: a row whose bytes do not match its shape (names the file and the row).
        """
        wanted = list(dict.fromkeys(keys))
        out: dict[str, StoredEmbedding] = {}
        try:
            for start in range(0, len(wanted), LOOKUP_CHUNK):
                chunk = wanted[start : start + LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                with self._lock:
                    rows = self._conn.execute(
                        f"SELECT key, shape, data, ids FROM vectors WHERE space = ? AND key IN ({marks})",
                        (space, *chunk)).fetchall()
                for key, shape, data, ids in rows:
                    out[str(key)] = self._decode(space, str(key), str(shape), data, ids)
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from exc
        return out

    def has_many(self, space: str, keys: Iterable[str]) -> set[str]:
        """Those of ``keys`` stored in ``space`` (reads no vectors)."""
        wanted = list(dict.fromkeys(keys))
        out: set[str] = set()
        try:
            for start in range(0, len(wanted), LOOKUP_CHUNK):
                chunk = wanted[start : start + LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                with self._lock:
                    rows = self._conn.execute(f"SELECT key FROM vectors WHERE space = ? AND key IN ({marks})",
                                              (space, *chunk)).fetchall()
                out.update(str(key) for (key,) in rows)
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from exc
        return out

    def _decode(self, space: str, key: str, shape_text: str, data: bytes,
                ids: bytes | None) -> StoredEmbedding:
        try:
            shape = tuple(int(n) for n in shape_text.split(","))
            vectors = np.frombuffer(data, dtype="<f4").reshape(shape).astype(np.float32)
            token_ids = None if ids is None else np.frombuffer(ids, dtype="<i4").astype(np.int32)
        except (TypeError, ValueError) as exc:
            raise UserError(f"{self.path}: corrupt embedding row (space {space}, key {key[:12]}: "
                            f"{exc}); {_CLEAR_HINT}") from None
        if token_ids is not None and (vectors.ndim != 2 or token_ids.shape[0] != vectors.shape[0]):
            raise UserError(f"{self.path}: corrupt embedding row (space {space}, key {key[:12]}: "
                            f"{token_ids.shape[0]} token ids for shape {shape_text}); {_CLEAR_HINT}")
        return StoredEmbedding(vectors, token_ids)

    def put_many(self, space: str, items: Iterable[tuple[str, StoredEmbedding]]) -> None:
        """Store ``(key, embedding)`` pairs of ``space`` in one transaction (a key already stored
        keeps its value).

        Raises:
            StorageError: the disk is full (the transaction is rolled back: nothing half-written).
        """
        now = time.time()
        rows = [(space, key, *_encode(e.vectors, e.ids), now) for key, e in items]
        if not rows:
            return
        try:
            with self._lock:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    self._conn.executemany(
                        "INSERT OR IGNORE INTO vectors (space, key, shape, data, ids, created) "
                        "VALUES (?, ?, ?, ?, ?, ?)", rows)
                    self._conn.execute("COMMIT")
                except BaseException:
                    with contextlib.suppress(sqlite3.Error):  # SQLite rolls back by itself on a full disk
                        self._conn.execute("ROLLBACK")
                    raise
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from exc

    def info(self) -> EmbeddingStoreInfo:
        """Entries per space label and bytes on disk (database plus WAL files)."""
        try:
            with self._lock:
                rows = self._conn.execute(
                    "SELECT s.label, COUNT(v.key) FROM spaces s LEFT JOIN vectors v ON v.space = s.space "
                    "GROUP BY s.space ORDER BY s.label").fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from exc
        by_space: dict[str, int] = {}
        for label, n in rows:
            by_space[str(label)] = by_space.get(str(label), 0) + int(n)
        return EmbeddingStoreInfo(path=str(self.path), exists=True, entries=sum(by_space.values()),
                                  size_bytes=_size_on_disk(self.path), entries_by_space=by_space)

    def __len__(self) -> int:
        try:
            with self._lock:
                return int(self._conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from exc

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def store_info(path: Path | str | None = None) -> EmbeddingStoreInfo:
    """The :class:`EmbeddingStoreInfo` at ``path`` (default :func:`default_store_path`); creates no file."""
    target = Path(path).expanduser() if path else default_store_path()
    if not target.exists():
        return EmbeddingStoreInfo(path=str(target), exists=False, entries=0, size_bytes=0,
                                  entries_by_space={})
    store = EmbeddingStore(target)
    try:
        return store.info()
    finally:
        store.close()


def clear_store(path: Path | str | None = None) -> int:
    """Delete the embedding store at ``path`` (default :func:`default_store_path`) and its WAL files.

    Returns:
        Bytes freed (0 if there was none).
    """
    target = Path(path).expanduser() if path else default_store_path()
    freed = _size_on_disk(target)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    return freed


def _size_on_disk(path: Path) -> int:
    return sum(p.stat().st_size for p in (Path(f"{path}{s}") for s in ("", "-wal", "-shm")) if p.exists())


# ---------------------------------------------------------------- model identity


_SKIPPED_PARTS = frozenset({"onnx", "openvino", ".git", ".cache"})


def model_fingerprint(directory: Path | str) -> str:
    """sha256 (hex) over the relative names, sizes and contents of a model folder's files.

    Files the torch model does not read are left out (hidden files, ``*.md``, ``onnx/``,
    ``openvino/``). The hash of the contents is memoised per process on (path, size, mtime), so a
    process hashes a model once (about 0.2 s for MiniLM's 90 MB; seconds for a 1.5 GB model).
    """
    root = Path(directory)
    entries = []
    for file in sorted(root.rglob("*")):
        rel = file.relative_to(root)
        if (any(part in _SKIPPED_PARTS or part.startswith(".") for part in rel.parts)
                or file.suffix == ".md" or not file.is_file()):
            continue
        stat = file.stat()
        entries.append((rel.as_posix(), stat.st_size, stat.st_mtime_ns))
    return _fingerprint(str(root), tuple(entries))


@lru_cache(maxsize=32)
def _fingerprint(root: str, entries: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for rel, size, _ in entries:
        digest.update(f"{rel}\0{size}\0".encode())
        digest.update(_file_sha256(Path(root) / rel).encode())
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ---------------------------------------------------------------- runtime: device + store


def resolve_device(device: str) -> str:
    """The torch device for ``--device``: ``cpu``; ``cuda`` (or ``cuda:N``) when torch sees a GPU;
    ``auto``: ``cuda`` if torch sees one, else ``cpu``.

    Raises:
        UserError: ``cuda`` asked and torch sees no CUDA device, or an unknown value (one line).
    """
    text = str(device).strip().lower()
    if text == "cpu":
        return "cpu"
    if text not in DEVICES and not text.startswith("cuda:"):
        raise UserError(f"--device {device}: expected one of {', '.join(DEVICES)}")
    import torch

    available = torch.cuda.is_available()
    if text == "auto":
        return "cuda" if available else "cpu"
    if not available:
        raise UserError(f"--device {device}: torch {torch.__version__} sees no CUDA device; use --device "
                        "cpu (or auto), or install a CUDA build of torch on a machine with a GPU")
    return text


Compute = Callable[[list[str]], Iterator[list[tuple[str, StoredEmbedding]]]]
"""Embeds texts, yielding ``(text, embedding)`` batches as they are done (each batch is stored at
once, so a kill loses at most the batch in progress)."""


class EmbeddingRuntime:
    """Where one run computes embeddings (``device``) and keeps them (``store_path``), with its
    counts of distinct texts embedded and reused per embedding space (:attr:`counts`).

    Args:
        device: ``cpu`` (default), ``cuda`` or ``auto`` (:func:`resolve_device`; ``--device``).
        cache: use the embedding store (``--no-embedding-cache`` turns it off).
        store_path: the store file; default :func:`default_store_path` (read when the runtime is
            made, so ``$IDEAHARNESS_CACHE_DIR`` applies).

    Raises:
        UserError: ``cuda`` asked and torch sees none.
    """

    def __init__(self, device: str = "cpu", *, cache: bool = True,
                 store_path: Path | str | None = None) -> None:
        self.requested_device = device
        self.device = resolve_device(device)
        self.store_path: Path | None = None
        if cache:
            self.store_path = Path(store_path) if store_path else default_store_path()
        self._seen: dict[str, set[str]] = {}
        self._computed: dict[str, set[str]] = {}
        self._store: EmbeddingStore | None = None
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        """Pickles without the lock and the open connection (a Ray worker reopens the store)."""
        state = self.__dict__.copy()
        state["_store"] = None
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def store(self) -> EmbeddingStore | None:
        """The open store (opened on first use), or None with the cache off."""
        if self.store_path is None:
            return None
        with self._lock:
            if self._store is None:
                self._store = EmbeddingStore(self.store_path)
            return self._store

    def absent(self, identity: Mapping[str, Any] | None, label: str, texts: Sequence[str]) -> list[str]:
        """The distinct texts of ``texts`` the store lacks in space ``identity`` (all of them with
        the store off or no identity), in first-seen order."""
        distinct = list(dict.fromkeys(texts))
        store = self.store if identity is not None else None
        if store is None or identity is None:
            return distinct
        sid = store.space(identity, label)
        keys = {t: text_key(t) for t in distinct}
        present = store.has_many(sid, keys.values())
        return [t for t in distinct if keys[t] not in present]

    def keep(self, identity: Mapping[str, Any] | None, label: str,
             embeddings: Mapping[str, StoredEmbedding]) -> None:
        """Store ``embeddings`` (text -> embedding) in space ``identity``; nothing with the store off."""
        store = self.store if identity is not None else None
        if store is not None and identity is not None and embeddings:
            sid = store.space(identity, label)
            store.put_many(sid, [(text_key(t), e) for t, e in embeddings.items()])

    def lookup(self, identity: Mapping[str, Any] | None, label: str, texts: Sequence[str],
               compute: Compute) -> tuple[dict[str, StoredEmbedding], set[str]]:
        """The embedding of every distinct text: read from the store, the rest computed and stored.

        Args:
            identity: the embedding space (see the module docstring); None: this model cannot be
                fingerprinted, nothing is read or stored.
            label: a readable name of the space (``cache info``, :attr:`counts`).
            texts: texts in any order, repeats allowed.
            compute: embeds the texts not found (called once, with each missing text once).

        Returns:
            (text -> embedding, the texts that were computed).
        """
        distinct = list(dict.fromkeys(texts))
        store = self.store if identity is not None else None
        found: dict[str, StoredEmbedding] = {}
        keys = {t: text_key(t) for t in distinct}
        sid = ""
        if store is not None and identity is not None:
            sid = store.space(identity, label)
            rows = store.get_many(sid, keys.values())
            found = {t: rows[keys[t]] for t in distinct if keys[t] in rows}
        missing = [t for t in distinct if t not in found]
        if missing:
            for batch in compute(missing):
                if store is not None:
                    store.put_many(sid, [(keys[t], e) for t, e in batch])
                found.update(batch)
        self._seen.setdefault(label, set()).update(keys.values())
        self._computed.setdefault(label, set()).update(keys[t] for t in missing)
        return found, set(missing)

    @property
    def counts(self) -> dict[str, EmbeddingCounts]:
        """Per space label: distinct texts looked up, embedded by this runtime or reused from the store."""
        return {label: EmbeddingCounts.of(seen, self._computed.get(label, set()))
                for label, seen in self._seen.items()}

    def computed_keys(self, label: str) -> set[str]:
        """:func:`text_key` of every text this runtime embedded in the space ``label``."""
        return self._computed.get(label, set())

    def close(self) -> None:
        """Close the store's connection (it reopens on next use)."""
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
