"""Results tables in the terminal (rich)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from ideaharness.report.html import Table, format_cell


def print_tables(tables: Sequence[Table], console: Console | None = None) -> None:
    """Print each table with its title and note; cells formatted as in the HTML report."""
    if console is None:
        console = Console()
        if not console.is_terminal:  # a file or pipe: no terminal width to respect, keep tables whole
            console = Console(width=200)
    for table in tables:
        rich_table = RichTable(title=Text(table.title), title_justify="left")
        for i, column in enumerate(table.columns):
            rich_table.add_column(Text(column), justify="left" if i == 0 else "right", overflow="fold")
        for row in table.rows:
            rich_table.add_row(*(Text(format_cell(v)) for v in row))
        console.print(rich_table)
        if table.note:
            console.print(Text(table.note, style="dim"))


def print_banner(results: dict[str, Any], console: Console | None = None) -> None:
    """Print the run's banner line first, in bold red: the headline metrics it could not compute
    and why (``results["not_computed"]``, :func:`ideaharness.runner.run.uncomputed_metrics`);
    nothing for a run whose every metric has scored units."""
    from ideaharness.runner.run import banner_line

    line = banner_line(results)
    if not line:
        return
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=max(200, len(line) + 1))
    console.print(Text(line, style="bold red"), soft_wrap=True)


def print_reliability(results: dict[str, Any], console: Console | None = None) -> None:
    """Print the run's "Judge reliability" table, then each degenerate-judge warning in yellow
    (``"⚠ …"``); nothing when ``results`` has no reliability block."""
    from ideaharness.runner.reliability import (
        reliability_ceiling_line,
        reliability_table,
        reliability_warning_lines,
    )

    table = reliability_table(results)
    if table is None:
        return
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=200)
    print_tables([table.model_copy(update={"note": None})], console)
    for line in reliability_warning_lines(results):
        console.print(Text(line, style="yellow"))
    ceiling = reliability_ceiling_line(results)  # only beside a judge–human comparison
    if ceiling:
        console.print(Text(ceiling, style="dim"))
