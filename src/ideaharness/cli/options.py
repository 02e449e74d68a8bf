"""Parsing helpers for CLI options shared by several commands."""

from __future__ import annotations

from ideaharness.errors import UserError


def parse_shard(value: str | None) -> tuple[int, int] | None:
    """``"i/N"`` → ``(i, N)`` with 0 <= i < N; None stays None."""
    if value is None:
        return None
    try:
        index_text, count_text = value.split("/")
        index, count = int(index_text), int(count_text)
    except ValueError:
        raise UserError(f"--shard {value!r}: expected i/N, e.g. 0/4") from None
    if count < 1 or not 0 <= index < count:
        raise UserError(f"--shard {value!r}: need 0 <= i < N")
    return index, count
