"""Reading users' text files with an error that names the file, never a decoding traceback, and
making decoded text safe to store (no lone surrogates)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ideaharness.errors import DataError
from ideaharness.text import REPLACEMENT_CHARACTER, has_lone_surrogate, replace_lone_surrogates

__all__ = [
    "REPLACEMENT_CHARACTER",
    "has_lone_surrogate",
    "read_text",
    "replace_lone_surrogates",
    "replace_surrogates_in",
]


def read_text(path: str | Path) -> str:
    """The whole file as UTF-8 text; a leading UTF-8 byte-order mark is not part of the text.

    Raises:
        DataError: the file is not UTF-8 (names the byte offset), or cannot be read.
    """
    file = Path(path)
    try:
        return file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(file, f"not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None
    except IsADirectoryError:
        raise DataError(file, "is a directory, expected a file") from None
    except OSError as exc:
        raise DataError(file, f"cannot be read ({exc.strerror})") from None


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
