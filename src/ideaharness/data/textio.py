"""Reading users' text files with an error that names the file, never a decoding traceback."""

from __future__ import annotations

from pathlib import Path

from ideaharness.errors import DataError


def read_text(path: str | Path) -> str:
    """The whole file as UTF-8 text.

    Raises:
        DataError: the file is not UTF-8 (names the byte offset), or cannot be read.
    """
    file = Path(path)
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(file, f"not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None
    except IsADirectoryError:
        raise DataError(file, "is a directory, expected a file") from None
    except OSError as exc:
        raise DataError(file, f"cannot be read ({exc.strerror})") from None
