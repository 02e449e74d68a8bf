"""JSON Lines and JSON files, read and written one way everywhere in the package.

A JSON Lines file (https://jsonlines.org) is UTF-8 text with one JSON value per line. Only
``"\\n"`` ends a line (a ``"\\r"`` before it is JSON whitespace). U+2028, U+2029, U+0085, U+000B,
U+000C, U+001C..U+001E are *not* line ends: inside a string they are text (``str.splitlines``
splits at all of them and would break a valid line). A UTF-8 byte-order mark at the start is
skipped; a line holding only JSON whitespace is blank and skipped. Line numbers are 1-based and
count blank lines.

Readers:

* :func:`iter_jsonl_models` — input rows validated into a pydantic model, one error spelling for
  every reader: ``"<path>: line 7, field 'target.title': Field required"`` (the first error of the
  first bad line), ``"<path>: line 3: expected a JSON object, got list"``.
* :func:`iter_jsonl` — input files (datasets, ideas, corpora): the first invalid line is a
  :class:`~ideaharness.errors.DataError` naming the file and line. Strings holding a lone UTF-16
  surrogate (a JSON escape such as ``"\\ud83d"`` without its partner) cannot be stored or shown,
  so it is replaced by U+FFFD and one :class:`~ideaharness.errors.DataWarning` per file names the
  line and field.
* :func:`scan_jsonl` — files the package writes itself (run records, builder state): invalid
  lines are skipped and returned for counting, strings come back exactly as written.
* :func:`load_json` / :func:`parse_json_document` — a whole ``.json`` document, same surrogate rule.

Writers: :func:`dumps_line` gives one line of valid UTF-8 for any value (lone surrogates written
as ``\\udXXX`` escapes, which :func:`scan_jsonl` reads back exactly);
:func:`ideaharness.fileio.append_line` appends it. :func:`repair_torn_tail` cuts off a last line
that a crash left without its newline, so the next append starts on a line of its own.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ideaharness.errors import DataError, DataWarning, storage_error
from ideaharness.textio import iter_utf8_lines, read_text, replace_surrogates_in

M = TypeVar("M", bound=BaseModel)
_JSON_BLANK = " \t\r"
# written as escapes: lone surrogates (not UTF-8) and the characters other tools take for line ends
_ESCAPED_CHARS = re.compile("[\ud800-\udfff\u2028\u2029\x85]")


def split_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of every non-blank line of JSON Lines ``text`` (see the module
    docstring: only ``"\\n"`` ends a line; a BOM at the start is dropped)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    for lineno, line in enumerate(text.split("\n"), start=1):
        if line.strip(_JSON_BLANK):
            yield lineno, line


MAX_DEPTH = 200
"""Deepest nesting of arrays/objects accepted in an input value (the published formats nest < 10
levels; Python's own decoder and every recursive walk over a value fail near 1,000)."""
_TOO_DEEP = f"arrays/objects nested more than {MAX_DEPTH} levels deep"


class UnplacedJSONError(json.JSONDecodeError):
    """A refusal of decodable text that no single position explains (arrays/objects nested too
    deep, a key given twice): its message carries no column."""


def decode_json(text: str, object_pairs_hook: Any = None) -> Any:
    """``text`` decoded with :func:`json.loads`; every way valid-looking text can fail to decode is
    a ``json.JSONDecodeError``: bad syntax, an integer longer than Python's limit on digits
    (``sys.get_int_max_str_digits()``, 4,300 by default; ``ValueError`` from ``json``), or
    arrays/objects nested more than :data:`MAX_DEPTH` levels (``RecursionError`` from ``json``
    near 1,000). ``object_pairs_hook`` is :func:`json.loads`'s; a ``ValueError`` it raises
    propagates.

    Raises:
        json.JSONDecodeError: ``msg`` says which (``"an integer with more than 4300 digits"``).
    """
    try:
        value = json.loads(text, object_pairs_hook=object_pairs_hook)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise UnplacedJSONError(_TOO_DEEP, text, 0) from None
    except ValueError as exc:  # int("9" * 4301): "Exceeds the limit (4300 digits) ..."
        if "limit" not in str(exc) or "digits" not in str(exc):
            raise  # e.g. raised by object_pairs_hook
        import sys

        message = f"an integer with more than {sys.get_int_max_str_digits()} digits"
        raise json.JSONDecodeError(message, text, _first_long_integer(text)) from None
    if not _nested_at_most(value, MAX_DEPTH):
        raise UnplacedJSONError(_TOO_DEEP, text, 0)
    return value


def _nested_at_most(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays/objects at most ``limit`` levels (iterative: no recursion)."""
    if not isinstance(value, list | dict):
        return True
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, list | dict))
    return True


def _first_long_integer(text: str) -> int:
    import sys

    digits = sys.get_int_max_str_digits() + 1
    found = re.search(r"\d{" + str(digits) + ",}", text)
    return found.start() if found else 0


def decode_line(line: str) -> Any:
    """One JSON Lines line decoded with :func:`decode_json` (raises ``json.JSONDecodeError``)."""
    return decode_json(line)


class DuplicateKeyError(ValueError):
    """A JSON object of an input file names one key twice (RFC 8259 leaves the value undefined;
    Python keeps the last one silently)."""


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for input files: the object, or :class:`DuplicateKeyError` naming the
    key given twice."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(f"key {key!r} given twice in one object")
            seen.add(key)
    return obj


def decode_input(text: str) -> Any:
    """:func:`decode_json` for a user's input file: also refuses an object naming a key twice.

    Raises:
        json.JSONDecodeError: as :func:`decode_json`, or a key given twice (``msg`` names it).
    """
    try:
        return decode_json(text, object_pairs_hook=unique_object)
    except DuplicateKeyError as exc:
        raise UnplacedJSONError(str(exc), text, 0) from None


def describe_json_error(exc: json.JSONDecodeError) -> str:
    """``"Expecting ',' delimiter at column 12"``: the decoder's message and where."""
    return _where(exc)


def _invalid(exc: json.JSONDecodeError) -> str:
    return f"not valid JSON ({_where(exc)})"


def _file_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Non-blank lines of a (possibly ``.gz``) UTF-8 file, streamed; only ``"\\n"`` ends a line.
    Read as bytes and decoded line by line (:func:`~ideaharness.textio.iter_utf8_lines`), so a
    non-UTF-8 byte is named by its own line and offset, not by the first line of a read chunk."""
    import gzip

    try:
        opener: Any = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as fh:
            for lineno, line in iter_utf8_lines(fh, path):
                line = line[:-1] if line.endswith("\n") else line
                if line.strip(_JSON_BLANK):
                    yield lineno, line
    except IsADirectoryError:
        raise DataError(path, "is a directory, expected a file") from None
    except (OSError, EOFError) as exc:
        raise DataError(path, f"cannot be read ({getattr(exc, 'strerror', None) or exc})") from None


def iter_jsonl(path: str | Path, *, text: str | None = None) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of every non-blank line of an input JSON Lines file, in order.

    Args:
        path: the file (UTF-8, or gzip-compressed UTF-8 when it ends in ``.gz``; streamed, so any
            size works); named in errors and warnings.
        text: the file's content, when already read (``path`` is then only named).

    Raises:
        DataError: unreadable or non-UTF-8 file, or a line that is not valid JSON
            (``"<path>: line 7: not valid JSON (Expecting ',' delimiter at column 12)"``).

    Warns:
        DataWarning: once per file when lone surrogates were replaced by U+FFFD.
    """
    source = Path(path)
    lines = split_lines(text) if text is not None else _file_lines(source)
    replaced: list[str] = []
    for lineno, line in lines:
        try:
            value = decode_input(line)
        except json.JSONDecodeError as exc:
            raise DataError(source, f"line {lineno}: {_invalid(exc)}") from None
        value, changed = replace_surrogates_in(value)
        replaced += [f"line {lineno}, field '{where}'" for where in changed]
        yield lineno, value
    _warn_replaced(source, replaced)


def first_error(exc: ValidationError) -> tuple[str, str]:
    """``(field, message)`` of the first error of a pydantic validation: the field as a dotted
    path (``"target.title"``, ``"references.0.id"``; ``"(row)"`` for an error of the whole row)."""
    err = exc.errors()[0]
    return ".".join(str(p) for p in err["loc"]) or "(row)", str(err["msg"])


def validate_row(model: type[M], value: Any, path: str | Path, lineno: int, *, noun: str | None = None) -> M:
    """``value`` (line ``lineno`` of ``path``) validated as ``model``; ``noun`` names what a row
    is in the error (``"an instance"``).

    Raises:
        DataError: ``"line 3: expected a JSON object (an instance), got list"`` or
            ``"line 7, field 'target.title': Field required"``.
    """
    if not isinstance(value, dict):
        what = f"a JSON object ({noun})" if noun else "a JSON object"
        raise DataError(path, f"line {lineno}: expected {what}, got {type(value).__name__}")
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        where, message = first_error(exc)
        raise DataError(path, f"line {lineno}, field '{where}': {message}") from None


def iter_jsonl_models(
    path: str | Path, model: type[M], *, text: str | None = None, noun: str | None = None
) -> Iterator[tuple[int, M]]:
    """``(line number, row)`` of every non-blank line of an input JSON Lines file, each validated
    as ``model`` (:func:`iter_jsonl`, then :func:`validate_row`).

    Raises:
        DataError: what :func:`iter_jsonl` and :func:`validate_row` raise, at the first bad line.
    """
    for lineno, value in iter_jsonl(path, text=text):
        yield lineno, validate_row(model, value, path, lineno, noun=noun)


@dataclass
class JsonlScan:
    """What :func:`scan_jsonl` found: decoded lines and the lines it skipped."""

    rows: list[tuple[int, Any]] = field(default_factory=list)
    """``(line number, value)`` of every valid non-blank line."""
    invalid: list[tuple[int, str]] = field(default_factory=list)
    """``(line number, reason)`` of every line that is not valid JSON."""


def scan_jsonl(path: str | Path) -> JsonlScan:
    """Every line of a JSON Lines file the package wrote itself; invalid lines are skipped and
    reported in :attr:`JsonlScan.invalid`, never fatal. A missing file gives an empty scan.

    Raises:
        DataError: the file exists but cannot be read or is not UTF-8.
    """
    source = Path(path)
    scan = JsonlScan()
    if not source.exists():
        return scan
    for lineno, line in _file_lines(source):
        try:
            scan.rows.append((lineno, decode_line(line)))
        except json.JSONDecodeError as exc:
            scan.invalid.append((lineno, _invalid(exc)))
    return scan


def parse_json_document(text: str, path: str | Path) -> Any:
    """A whole JSON document (``.json`` file content), lone surrogates replaced as in :func:`iter_jsonl`.

    Raises:
        DataError: not valid JSON (names the line and column).
    """
    try:
        value = decode_input(text[1:] if text.startswith("\ufeff") else text)
    except json.JSONDecodeError as exc:
        raise DataError(
            path, f"line {exc.lineno}: not valid JSON ({_where(exc)})"
        ) from None
    value, changed = replace_surrogates_in(value)
    _warn_replaced(Path(path), [f"field '{where}'" for where in changed])
    return value


def load_json(path: str | Path) -> Any:
    """A ``.json`` file decoded (see :func:`parse_json_document`).

    Raises:
        DataError: unreadable, not UTF-8 or not valid JSON.
    """
    return parse_json_document(read_text(path), path)


def _warn_replaced(path: Path, where: list[str]) -> None:
    if not where:
        return
    more = f" (and {len(where) - 1} more string(s))" if len(where) > 1 else ""
    warnings.warn(
        f"{path}: {where[0]}{more}: a lone UTF-16 surrogate (half of an emoji or other character) "
        "was replaced by U+FFFD",
        DataWarning,
        stacklevel=3,
    )


def dumps_line(value: Any) -> str:
    """``value`` as one line of JSON (no newline), non-ASCII text kept, always valid UTF-8.

    Lone surrogates (and U+2028, U+2029, U+0085, which naive readers take for line ends) are
    written as ``\\uXXXX`` escapes, so :func:`json.loads` returns the strings that were written
    (as for ``json.dumps`` with ASCII output: a high surrogate directly followed by a low one reads
    back as the one character they encode). Values that are not JSON types are written with ``str``.
    """
    text = json.dumps(value, ensure_ascii=False, default=str)
    if not text.isascii() and _ESCAPED_CHARS.search(text):  # only inside strings, where an escape is valid
        text = _ESCAPED_CHARS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def repair_torn_tail(path: str | Path, aside: str | Path) -> bool:
    """Cut off a last line that has no newline (a write cut short by a crash or kill).

    The fragment is appended, with a newline, to ``aside`` (kept for inspection, never read as
    records), and ``path`` is truncated to its last complete line, so the next append starts a
    line of its own instead of being glued to the fragment.

    Returns:
        True when a fragment was removed.

    Raises:
        DataError: ``path`` is a folder or another non-file.
        StorageError: the fragment cannot be saved or the file cannot be truncated.
    """
    from ideaharness.fileio import append_line

    target = Path(path)
    try:
        size = target.stat().st_size
    except FileNotFoundError:
        return False
    if not target.is_file():  # a folder (or a device) where a records file belongs
        raise DataError(target, "is a directory, expected a JSON Lines file; move it out of the way "
                        "and run the same command again" if target.is_dir()
                        else "not a regular file, expected a JSON Lines file")
    if size == 0:
        return False
    with open(target, "rb") as fh:
        keep = _last_newline_end(fh, size)
        if keep == size:
            return False
        fh.seek(keep)
        fragment = fh.read()
    append_line(aside, fragment.decode("utf-8", "replace").replace("\n", " "))
    try:
        os.truncate(target, keep)
    except OSError as exc:
        raise storage_error(target, exc) from exc
    return True


def _last_newline_end(fh: Any, size: int, block: int = 1 << 16) -> int:
    """Offset just after the last ``\\n`` of an open binary file (0 when there is none)."""
    end = size
    while end > 0:
        start = max(0, end - block)
        fh.seek(start)
        chunk = fh.read(end - start)
        at = chunk.rfind(b"\n")
        if at >= 0:
            return start + at + 1
        end = start
    return 0


def _where(exc: json.JSONDecodeError) -> str:
    """``"Expecting ',' delimiter at column 12"``; json's own "... starting at" messages end in "at"
    already, so they read "Unterminated string starting at column 86", not "at at"; an
    :class:`UnplacedJSONError` has no column."""
    if isinstance(exc, UnplacedJSONError):
        return exc.msg
    return f"{exc.msg.removesuffix(' at')} at column {exc.colno}"
