"""Self-contained HTML reports: tables, embedded PNG figures, the run's configuration.

Every string that comes from a paper, a model or a user is escaped by Jinja2's autoescape;
figures are embedded as base64 PNG, so the file can be mailed or archived alone. As a last guard,
every secret value known to the process (:func:`ideaharness.redaction.known_secrets`) is removed
from the page before it is written.
"""

from __future__ import annotations

import base64
import datetime as dt
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from ideaharness import __version__
from ideaharness.fileio import atomic_write_text
from ideaharness.redaction import redact_values
from ideaharness.tables import Section, Table, format_cell

__all__ = ["Section", "Table", "figure_to_base64", "format_cell", "write_report"]


def figure_to_base64(figure: Any) -> str:
    """PNG bytes of a matplotlib figure, base64-encoded (the figure is closed afterwards)."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ideaharness", "report/templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["cell"] = format_cell
    return env


def write_report(
    path: str | Path,
    *,
    title: str,
    config: dict[str, Any],
    tables: Sequence[Table],
    figures: Sequence[tuple[str, Any]] = (),
    notes: Sequence[str] = (),
    sections: Sequence[Section] = (),
    banner: str | None = None,
    evidence: Table | None = None,
) -> Path:
    """Write a self-contained HTML report and return its path.

    Args:
        figures: ``(caption, matplotlib Figure)`` pairs; each is embedded as base64 PNG.
        notes: plain-text remarks (parse failures, skipped metrics) shown above the tables.
        sections: example texts (ideas, judge replies), escaped like everything else.
        banner: a line shown first, above the title, as an alert (e.g. the metrics a run could
            not compute, :func:`ideaharness.runner.run.banner_line`); escaped.
        evidence: the verdict of each headline value (evidence, weak, not evidence, with its
            value, interval, n and reasons; :func:`ideaharness.metrics.evidence.evidence_table`),
            shown near the top, above the notes and tables; escaped.

    When the report lies in a run directory, the "System" panel (which system the run evaluates
    and how its ideas were produced, from its results.json) opens the page and the per-instance
    viewer of that run (:mod:`ideaharness.report.viewer`) is embedded too.
    """
    out = Path(path)
    notes = list(notes)
    viewer = _viewer_for(out.parent, notes)
    systems = _system_panel_for(out.parent)
    html = (
        _environment()
        .get_template("report.html.j2")
        .render(
            title=title,
            generated=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            version=__version__,
            config_json=json.dumps(config, indent=2, sort_keys=True, default=str),
            tables=tables,
            figures=[(caption, figure_to_base64(fig)) for caption, fig in figures],
            notes=notes,
            sections=sections,
            viewer=viewer,
            system_panel=systems,
            evidence=evidence,
        )
    )
    if banner:
        html = html.replace("<body>", f"<body>\n{BANNER_HTML.format(text=markupsafe.escape(banner))}", 1)
    return atomic_write_text(out, redact_values(html))


BANNER_HTML = ('<p class="run-banner" role="alert" style="background:#fde8e8;border:1px solid #c0392b;'
               'color:#7b1d12;padding:.6em .8em;font-weight:600">{text}</p>')
"""The banner line of a report: the first thing on the page."""


def _viewer_for(run_dir: Path, notes: list[str]) -> str:
    """The viewer section of the run in ``run_dir`` ("" when it is not a run directory); a run
    whose records cannot be shown still gets its report, with a note saying why."""
    from ideaharness.runs.store import CONFIG_FILE, RECORDS_DIR

    if not ((run_dir / CONFIG_FILE).is_file() and (run_dir / RECORDS_DIR).is_dir()):
        return ""
    from ideaharness.errors import UserError
    from ideaharness.report.viewer import viewer_section

    try:
        # the reliability table is in the report, the System panel at its top
        return viewer_section(_load(run_dir), reliability_panel=False, system_panel=False)
    except (UserError, KeyError, TypeError, ValueError) as exc:
        notes.append(f"per-instance viewer not included: {type(exc).__name__}: {exc}")
        return ""


def _system_panel_for(run_dir: Path) -> str:
    """The "System" panel of the run in ``run_dir`` ("" when it is not a run directory or names
    no generator)."""
    from ideaharness.runs.store import CONFIG_FILE

    if not (run_dir / CONFIG_FILE).is_file():
        return ""
    from ideaharness.report.viewer import run_dir_system_views, system_panel

    return system_panel(run_dir_system_views(run_dir))


def _load(run_dir: Path) -> Any:
    from ideaharness.analysis.load import load_run

    return load_run(run_dir)
