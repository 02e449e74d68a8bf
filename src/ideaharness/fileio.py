"""Writing files so that a crash, a kill or a full disk never leaves one half-written.

* :func:`atomic_write_text` replaces a whole file (config, results, report, manifest): the new
  content goes to a temporary file in the same folder, is flushed to disk and renamed over the old
  one, so a reader sees the old file or the new one, never a mix.
* :func:`append_line` appends one line (records, builder state) with a single ``write`` and
  ``fsync``; if the write fails part-way (disk full), the file is cut back to its previous length.
  A process killed during the write can still leave a torn last line: readers repair it
  (:func:`ideaharness.jsonl.repair_torn_tail`).

Every failure is a one-line :class:`~ideaharness.errors.StorageError` naming the path (and, for a
full disk, what to free), never a traceback.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from ideaharness.errors import storage_error


def _encode(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate cannot be UTF-8: write U+FFFD in its place
        from ideaharness.text import replace_lone_surrogates

        return replace_lone_surrogates(text).encode("utf-8")


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Replace ``path`` with ``text`` (UTF-8) atomically; returns the path.

    Raises:
        StorageError: the folder cannot be created or the file cannot be written (the old file,
            if any, is left as it was and no temporary file remains).
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(_encode(text))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise storage_error(target, exc) from exc
    return target


def append_line(path: str | Path, line: str) -> None:
    """Append ``line`` and a newline to ``path`` (created if missing), flushed to disk.

    ``line`` must not contain a newline. All or nothing: when the write fails, the file is cut back
    to its length before the call.

    Raises:
        StorageError: the write failed (disk full, read-only file system, ...).
    """
    append_lines(path, [line])


def append_lines(path: str | Path, lines: Sequence[str]) -> None:
    """Append each of ``lines`` and a newline to ``path`` with one write and one fsync (group
    commit); all or nothing, like :func:`append_line`.

    Raises:
        StorageError: the write failed; the file is cut back to its length before the call.
    """
    target = Path(path)
    data = _encode("".join(line + "\n" for line in lines))
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise storage_error(target, exc) from exc
    try:
        start = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError as exc:
            try:
                os.ftruncate(fd, start)
            except OSError:
                pass
            raise storage_error(target, exc) from exc
    finally:
        os.close(fd)


def file_sha256(path: str | Path, chunk_size: int = 1 << 20) -> str:
    """sha256 hex digest of a file's bytes (read in chunks of ``chunk_size``)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()
