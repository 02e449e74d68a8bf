"""Presentation types: the tables and example sections a benchmark hands to the report.

A bottom-layer module (imports only pydantic): the benchmark protocol (``runner/protocol.py``)
returns these, the console and HTML reports (``report/``) render them. ``report.html``
re-exports them, so ``from ideaharness.report.html import Table`` keeps working.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

__all__ = ["Section", "Table", "format_cell"]


class Table(BaseModel):
    """A results table: ``rows`` are lists aligned with ``columns``; floats are shown with 3 decimals."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    note: str | None = None


class Section(BaseModel):
    """Free-text examples shown under the tables (e.g. one instance's ideas and judgments)."""

    title: str
    items: list[tuple[str, str]] = Field(default_factory=list)


def format_cell(value: Any) -> str:
    """Text of one table cell: floats to 3 decimals, intervals as [lo, hi], None as an en dash."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, tuple | list) and len(value) == 2 and all(isinstance(v, float | int) for v in value):
        return f"[{value[0]:.3f}, {value[1]:.3f}]"
    return str(value)
