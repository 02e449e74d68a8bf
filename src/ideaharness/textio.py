"""Reading users' text files with an error that names the file, never a decoding traceback, and
making decoded text safe to store (no lone surrogates)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ideaharness.errors import DataError
from ideaharness.text import REPLACEMENT_CHARACTER, has_lone_surrogate, replace_lone_surrogates

__all__ = [
    "REPLACEMENT_CHARACTER",
    "decode_utf8",
    "has_lone_surrogate",
    "iter_utf8_lines",
    "not_utf8_message",
    "read_text",
    "utf8_error_position",
    "replace_lone_surrogates",
    "replace_surrogates_in",
]


UTF8_BOM = b"\xef\xbb\xbf"


def utf8_error_position(data: bytes, offset: int) -> tuple[int, int]:
    """Where byte ``offset`` of ``data`` lies, as an editor shows it: ``(line, byte in the line)``,
    both 1-based. Only ``b"\\n"`` ends a line (the JSON Lines and CSV readers' rule; a ``"\\r"``
    before it belongs to the line).

    Args:
        data: the bytes read so far from the file's start, at least up to ``offset``.
        offset: 0-based byte offset in ``data`` (``0 <= offset <= len(data)``).

    Raises:
        ValueError: ``offset`` outside ``data``.
    """
    if not 0 <= offset <= len(data):
        raise ValueError(f"offset {offset} outside 0..{len(data)}")
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - line_start + 1


def not_utf8_message(line: int, byte_in_line: int, offset: int, reason: str, row: int | None = None) -> str:
    """The one wording of a non-UTF-8 byte, for every reader:
    ``"line 2 (row 2), byte 5 of the line (byte 17 of the file): not UTF-8 text (invalid start
    byte); save the file as UTF-8"``; ``row`` is given where rows are not lines (CSV) and left out
    where they are (JSON Lines: the line is the row). ``line``, ``byte_in_line`` are 1-based,
    ``offset`` 0-based (Python's ``UnicodeDecodeError.start``)."""
    where = f"line {line}" + (f" (row {row})" if row is not None else "")
    return (f"{where}, byte {byte_in_line} of the line (byte {offset} of the file): not UTF-8 text "
            f"({reason}); save the file as UTF-8")


def decode_utf8(data: bytes, path: str | Path) -> str:
    """``data`` (a whole file) as UTF-8 text; a leading UTF-8 byte-order mark is not part of the text.

    Raises:
        DataError: a byte that is not UTF-8, named by line and offset (:func:`not_utf8_message`).
    """
    skip = len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = skip + exc.start
        line, byte = utf8_error_position(data, offset)
        raise DataError(path, not_utf8_message(line, byte, offset, exc.reason)) from None


def iter_utf8_lines(chunks: Iterable[bytes], path: str | Path, *,
                    row_of: Any = None) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a binary line stream (a file opened ``"rb"`` and iterated: each
    item ends at ``b"\\n"``, which is kept), each line decoded as UTF-8 on its own, so a bad byte
    is named by its own line however the stream is buffered. A BOM starting the first line is
    dropped. Lines are numbered from 1.

    Args:
        chunks: the lines as bytes (keep their ``b"\\n"``: offsets count it).
        path: named in the error.
        row_of: optional callable ``() -> int``, the row the reader is at (CSV, where a row may
            span lines); named in the error next to the line.

    Raises:
        DataError: the first non-UTF-8 byte, named by line, byte of the line and byte of the file.
    """
    offset = 0
    for lineno, raw in enumerate(chunks, start=1):
        skip = len(UTF8_BOM) if lineno == 1 and raw.startswith(UTF8_BOM) else 0
        try:
            text = raw[skip:].decode("utf-8")
        except UnicodeDecodeError as exc:
            start = skip + exc.start
            row = row_of() if row_of is not None else None
            detail = not_utf8_message(lineno, start + 1, offset + start, exc.reason, row)
            raise DataError(path, detail) from None
        offset += len(raw)
        yield lineno, text


def read_text(path: str | Path) -> str:
    """The whole file as UTF-8 text; a leading UTF-8 byte-order mark is not part of the text.

    Raises:
        DataError: the file is not UTF-8 (names the line and the byte, :func:`decode_utf8`), is a
            folder, or cannot be read.
    """
    file = Path(path)
    try:
        data = file.read_bytes()
    except IsADirectoryError:
        raise DataError(file, "is a directory, expected a file") from None
    except OSError as exc:
        raise DataError(file, f"cannot be read ({exc.strerror})") from None
    return decode_utf8(data, file)


def replace_surrogates_in(value: Any, where: str = "") -> tuple[Any, list[str]]:
    """A copy of a decoded JSON value with lone surrogates replaced in every string (keys too).

    Returns:
        (the cleaned value, the JSON paths of the strings that changed, e.g. ``target.abstract``).
        The value is returned unchanged (same object) when nothing needed replacing.
    """
    changed = list(_surrogate_paths(value, where))
    if not changed:
        return value, []
    return _replaced(value), changed


def _surrogate_paths(value: Any, where: str) -> Iterator[str]:
    if isinstance(value, str):
        if has_lone_surrogate(value):
            yield where or "(value)"
    elif isinstance(value, dict):
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            if has_lone_surrogate(str(key)):
                yield f"{path} (key)"
            yield from _surrogate_paths(item, path)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _surrogate_paths(item, f"{where}[{i}]")


def _replaced(value: Any) -> Any:
    if isinstance(value, str):
        return replace_lone_surrogates(value)
    if isinstance(value, dict):
        return {_replaced(k): _replaced(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replaced(v) for v in value]
    return value
