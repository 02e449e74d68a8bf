"""The per-instance viewer of report.html, and the page of ``compare --html``.

One self-contained HTML file (no network, no CDN): the run's data is embedded once as JSON in
``<script type="application/json">`` elements (instances in one, judgments in another, parsed
after the first paint, and the rendered prompts in a third, once per distinct prompt hash, parsed
at the first drill-down; with ``<``, ``>``, ``&``, U+2028 and U+2029 escaped, so no
text can close the element), and a small vanilla-JS viewer renders one page of rows at a time:
a sortable, filterable, searchable table of every instance (parse-failure and failed-unit
filters), a table of every judgment, a drill-down to every step of an instance (the rendered
prompt, every message with its role, from the run's ``prompts.jsonl``; the answer the parser read,
the model's reasoning apart from it in a collapsed block (marked when it ran out of tokens before
an answer), the raw reply as returned, parsed value, parse status, attempts), the judge-reliability
panel and tokens/cost/latency. Every text reaches the page through ``textContent`` or Jinja2's
autoescape.
Timings at 10^5 judgments: ``benchmarks/viewer.py``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup

from ideaharness import __version__
from ideaharness.analysis.load import JUDGMENT_COLUMNS, RunData, load_run, metric_key
from ideaharness.analysis.systems import run_systems
from ideaharness.report.compare import coverage_cell, format_p_value, missing_lines
from ideaharness.report.html import format_cell
from ideaharness.runs.store import read_prompts

if TYPE_CHECKING:
    import pandas as pd

INSTANCE_COLUMNS = [
    "system",
    "instance_id",
    "steps",
    "judgments",
    "parse_failures",
    "retries",
    "failed_units",
    "tokens_in",
    "tokens_out",
    "latency_s",
    "cost_usd",
]
"""Leading columns of the instance table; one column per metric follows."""
JUDGMENT_VIEW_COLUMNS = [c for c in JUDGMENT_COLUMNS
                         if c not in ("benchmark", "run_id", "parse_ok", "created", "prompt")] + ["shown"]
"""The export's judgment columns (:data:`~ideaharness.analysis.load.JUDGMENT_COLUMNS`) less those
the viewer shows elsewhere or not at all (the prompt is in ``prompts``, by hash), plus ``shown``:
for a judgment that names the items by letters (a ranking), ``[[letter, item id, text or None],
...]`` in the order shown, else None."""
LABELS = {
    "system": "system", "instance_id": "instance", "steps": "steps", "judgments": "judgments",
    "parse_failures": "parse failures", "retries": "retries", "failed_units": "failed units",
    "tokens_in": "tokens in", "tokens_out": "tokens out", "latency_s": "latency (s)",
    "cost_usd": "cost (USD)", "step": "step", "key": "key", "model": "model",
    "prompt_hash": "prompt hash", "prompt": "rendered prompt", "raw_reply": "raw reply",
    "answer": "answer (what the parser read)", "reasoning": "reasoning",
    "truncated_reasoning": "ran out of tokens while reasoning",
    "parsed": "parsed value", "parse_status": "parse status", "attempts": "attempts",
    "errors": "parse error", "positions": "positions shown", "shown": "items shown",
}  # fmt: skip
"""Column name -> the header the viewer shows (metric columns keep their metric names)."""


def label(column: str) -> str:
    """The viewer's header for ``column`` (:data:`LABELS`; the name itself for a metric)."""
    return LABELS.get(column, column)


def _item_texts(records: Sequence[tuple[str, str, str, dict[str, Any]]]) -> dict[str, str]:
    """Item id -> text of the ideas a run generated (IdeaBench ``generate/<scenario>`` records:
    ``<instance>/<scenario>/<i>``; ``ideas`` records: each idea's ``id``), for the letter map."""
    out: dict[str, str] = {}
    for step, iid, _key, data in records:
        if not isinstance(data, dict):
            continue
        judgment = data.get("judgment")
        if step.startswith("generate/") and isinstance(judgment, dict) and judgment.get("parse_ok"):
            for i, item in enumerate(judgment.get("parsed") or []):
                if isinstance(item, dict) and isinstance(item.get("idea"), str):
                    out[f"{iid}/{step.split('/', 1)[1]}/{i}"] = item["idea"]
        ideas = data.get("ideas")
        for idea in ideas if isinstance(ideas, list) else []:
            if isinstance(idea, dict) and isinstance(idea.get("id"), str):
                if isinstance(idea.get("text"), str):
                    out[idea["id"]] = idea["text"]
    return out


def shown_items(run: RunData) -> dict[tuple[str, str, str], list[list[Any]]]:
    """(step, instance, key) -> ``[[letter, item id, text], ...]`` for each recorded judgment that
    named the shown items by letters (``labels`` beside the judgment's ``positions``: IdeaBench's
    rankings, HindSight's "research idea" / "published paper"); an item's text is the record's own
    ``shown_texts[item id]`` when it has one, else the generated idea's of that id; empty for a run
    without records on disk."""
    if not ((run.path / "records").is_dir() and (run.path / "config.json").is_file()):
        return {}  # (scores, judgments) frames, or a folder that is not a run
    from ideaharness.analysis.load import read_records

    records, _, _ = read_records(run.path)
    texts = _item_texts(records)
    out: dict[tuple[str, str, str], list[list[Any]]] = {}
    for step, iid, key, data in records:
        judgment = data.get("judgment") if isinstance(data, dict) else None
        labels = data.get("labels") if isinstance(data, dict) else None
        positions = judgment.get("positions") if isinstance(judgment, dict) else None
        if isinstance(labels, list) and isinstance(positions, list) and len(labels) == len(positions):
            own = data.get("shown_texts")
            own = own if isinstance(own, dict) else {}
            out[(step, iid, key)] = [
                [str(letter), str(item), own.get(str(item)) or texts.get(str(item))]
                for letter, item in zip(labels, positions, strict=True)
            ]
    return out

_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(value: Any) -> Markup:
    """``value`` as JSON safe to place inside ``<script type="application/json">``: ``<``, ``>``,
    ``&``, U+2028 and U+2029 are written as ``\\uXXXX`` escapes (``JSON.parse`` reads them back
    exactly), so no string can end the element. NaN and infinities become ``null``."""
    text = json.dumps(_clean(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for char, escape in _ESCAPES.items():
        text = text.replace(char, escape)
    return Markup(text)


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def _rows(frame: pd.DataFrame, columns: Sequence[str]) -> list[list[Any]]:
    """Rows of ``frame`` as plain Python lists, missing values as None."""
    if frame.empty:
        return []
    sub = frame.reindex(columns=list(columns)).astype(object)  # a frame of an older export lacks some
    sub = sub.where(sub.notna(), None)
    return [
        [v.item() if hasattr(v, "item") else v for v in row] for row in sub.itertuples(index=False, name=None)
    ]


def _missing(value: Any) -> bool:
    import pandas as pd

    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _key(system: Any, instance_id: Any) -> str:
    return f"{system}\u0000{instance_id}"


def prompt_map(runs: Sequence[RunData]) -> dict[str, list[list[str | None]]]:
    """Prompt hash -> ``[[role, content], ...]`` for every judgment of ``runs``: the messages each
    run kept (``prompts.jsonl``), else a judgments frame's ``prompt`` text (as ``[[None, text]]``);
    a hash without either is left out (the viewer says the prompt was not kept)."""
    out: dict[str, list[list[str | None]]] = {}
    for run in runs:
        frame = run.judgments
        if frame.empty or "prompt_hash" not in frame:
            continue
        hashes = {str(h) for h in frame["prompt_hash"].dropna()} - set(out)
        kept = read_prompts(run.path, hashes) if (run.path / "config.json").is_file() else {}
        for h, messages in kept.items():
            out[h] = [[_str(m.get("role")), _str(m.get("content"))] for m in messages]
        if "prompt" in frame:
            for h, text in zip(frame["prompt_hash"], frame["prompt"], strict=True):
                if isinstance(h, str) and h not in out and isinstance(text, str):
                    out[h] = [[None, text]]
    return out


def _str(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def viewer_payload(runs: RunData | Sequence[RunData]) -> dict[str, Any]:
    """The JSON the viewer reads: ``instances`` (one row per system x instance: counts, tokens and
    one column per metric), ``judgments`` (one row per judgment), ``failed`` (units left undone,
    by system and instance), ``instance_scores``, ``evidence`` (each headline's verdict:
    :func:`evidence_payload`) and ``prompts`` (:func:`prompt_map`)."""
    import pandas as pd

    items = [runs] if isinstance(runs, RunData) else list(runs)
    frames = []
    for run in items:
        frame = run.judgments.copy()
        if not frame.empty:
            shown = shown_items(run)
            frame["shown"] = pd.Series(
                [shown.get((str(s), str(i), str(k)))
                 for s, i, k in zip(frame["step"], frame["instance_id"], frame["key"], strict=True)],
                index=frame.index, dtype=object)
        frames.append(frame)
    judgments = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    scores = pd.concat([r.scores for r in items], ignore_index=True) if items else pd.DataFrame()
    failed: dict[str, list[dict[str, Any]]] = {}
    for run in items:
        for unit in run.failed_units:
            owner = run.system_of(str(unit.get("instance_id")))
            failed.setdefault(_key(owner, unit.get("instance_id")), []).append(
                {k: unit.get(k) for k in ("step", "key", "status", "error")}
            )
    keys: dict[str, dict[str, Any]] = {}
    if not judgments.empty:
        numeric = ["tokens_in", "tokens_out", "latency_s", "cost_usd"]
        j = judgments[["system", "instance_id", "step", "parse_ok", "attempts", *numeric]].assign(
            _bad=~judgments["parse_ok"].astype(bool),
            _retries=judgments["attempts"] - 1,
            **{c: pd.to_numeric(judgments[c], errors="coerce") for c in numeric},
        )
        groups = j.groupby(["system", "instance_id"], sort=False)
        counts = groups.agg(
            steps=("step", "nunique"),
            judgments=("step", "size"),
            parse_failures=("_bad", "sum"),
            retries=("_retries", "sum"),
        )
        sums = groups[numeric].sum(min_count=1)
        for (system, inst), row in counts.join(sums).to_dict("index").items():
            keys[_key(system, inst)] = {"system": system, "instance_id": inst, **row}
    scored = scores[scores["value"].notna()] if not scores.empty else scores
    columns_of = {(m, g): metric_key(m, g) for m, g in zip(scored.get("metric", []), scored.get("group", []),
                                                          strict=True)}
    metrics = sorted(set(columns_of.values()))
    per_scores: dict[str, dict[str, float]] = {}
    for row in scored.itertuples(index=False) if not scored.empty else []:
        k = _key(row.system, row.instance_id)
        per_scores.setdefault(k, {})[columns_of[(row.metric, row.group)]] = float(row.value)
        keys.setdefault(k, {"system": row.system, "instance_id": row.instance_id})
    for k in failed:
        system, _, inst = k.partition("\u0000")
        keys.setdefault(k, {"system": system, "instance_id": inst})
    inst_rows = []
    for k, base in keys.items():
        base = {c: base.get(c) for c in INSTANCE_COLUMNS}
        base["failed_units"] = len(failed.get(k, []))
        for c in ("steps", "judgments", "parse_failures", "retries"):
            base[c] = int(base[c] or 0)
        inst_rows.append(
            [*(base[c] for c in INSTANCE_COLUMNS), *(per_scores.get(k, {}).get(m) for m in metrics)]
        )
    columns = INSTANCE_COLUMNS + metrics
    return {
        "instances": {"columns": columns, "labels": [label(c) for c in columns], "rows": inst_rows},
        "judgments": {
            "columns": JUDGMENT_VIEW_COLUMNS,
            "labels": [label(c) for c in JUDGMENT_VIEW_COLUMNS],
            "rows": _rows(judgments, JUDGMENT_VIEW_COLUMNS) if not judgments.empty else [],
        },
        "failed": failed,
        "instance_scores": per_scores,
        "evidence": evidence_payload(items),
        "prompts": prompt_map(items),
    }


def evidence_payload(runs: Sequence[RunData]) -> dict[str, Any]:
    """The verdict of each headline value of each run (:func:`ideaharness.metrics.evidence.evidence_rows`:
    the run's ``results["evidence"]``, recomputed for a run written before it): ``{"columns": ["run",
    *EVIDENCE_COLUMNS], "rows": [[run_id, metric, group, system, value, ci, n, verdict, reasons]]}``."""
    from ideaharness.metrics.evidence import EVIDENCE_COLUMNS, evidence_rows

    rows = [[run.run_id, r["metric"], r["group"], r["system"], r["value"], r["ci"], r["n"], r["verdict"],
             r["reasons"]] for run in runs for r in evidence_rows(run.results)]
    return {"columns": ["run", *EVIDENCE_COLUMNS], "rows": rows}


def _usage_rows(runs: Sequence[RunData]) -> list[list[Any]]:
    import pandas as pd

    frames = [r.judgments for r in runs if not r.judgments.empty]
    if not frames:
        return []
    j = pd.concat(frames, ignore_index=True)
    j = j.assign(_bad=~j["parse_ok"].astype(bool), _retried=j["attempts"] > 1)
    out = []
    for model, g in j.groupby("model", sort=True, dropna=False):
        out.append(
            [
                str(model),
                len(g),
                int(g["_bad"].sum()),
                int(g["_retried"].sum()),
                _sum(g["tokens_in"]),
                _sum(g["tokens_out"]),
                _sum(g["latency_s"], float),
                _sum(g["cost_usd"], float),
            ]
        )
    return out


def _sum(series: pd.Series, kind: type = int) -> Any:
    total = series.sum(min_count=1)
    return None if _missing(total) else kind(total)


def format_figure(value: Any) -> str:
    """A figure of a block without a table of its own: numbers as table cells, a pair of numbers as
    an interval, lists as "; "-joined items, mappings as "key: value" pairs (never raw JSON)."""
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int | float) for v in value):
        return format_cell(value)
    if isinstance(value, dict):
        return "; ".join(f"{label(str(k))}: {format_figure(v)}" for k, v in value.items()) or "–"
    if isinstance(value, list | tuple):
        return "; ".join(format_figure(v) for v in value) or "–"
    return format_cell(value)


def reliability_view(section: Any) -> dict[str, Any] | None:
    """What the HTML reliability panel shows of a ``results["reliability"]`` section: the table of
    :func:`~ideaharness.metrics.reliability.reliability_columns` (one row per metric and judge, as
    on the console), the warnings, and the human-ceiling sentence when a judge was compared with
    human scores in its statistic (None otherwise). None when ``section`` is not a reliability
    section (no ``metrics`` mapping)."""
    from ideaharness.metrics.reliability import (
        ceiling_line,
        reliability_columns,
        reliability_rows,
        reliability_warnings,
    )

    if not isinstance(section, dict) or not isinstance(section.get("metrics"), dict):
        return None
    return {
        "columns": reliability_columns(section),
        "rows": reliability_rows(section),
        "warnings": reliability_warnings(section),
        "ceiling": ceiling_line(section),
    }


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ideaharness", "report/templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["cell"] = format_cell
    env.filters["figure"] = format_figure
    env.filters["pvalue"] = lambda v: format_cell(format_p_value(v))  # compare: <0.001, never 0.000
    env.filters["coverage"] = lambda s: format_cell(coverage_cell(s))  # compare: answered/asked (rate)
    env.globals["reliability_view"] = reliability_view
    return env


def _asset(name: str) -> Markup:
    text = resources.files("ideaharness").joinpath("report", "templates", name).read_text(encoding="utf-8")
    if "</" + "script" in text.lower() or "</" + "style" in text.lower():
        raise ValueError(f"report/templates/{name} must not contain a closing script/style tag")
    return Markup(text)


def system_views(runs: RunData | Sequence[RunData]) -> list[dict[str, Any]]:
    """What the "System" panel shows of each run that has a generator: ``{run_id, benchmark,
    recorded, systems: [SystemInfo.as_dict()]}`` (``recorded``: read from results.json's
    ``idea_sources`` block, else derived from the run's settings)."""
    items = [runs] if isinstance(runs, RunData) else list(runs)
    out = []
    for run in items:
        systems = run.systems or run_systems(run.config, run.results)
        if systems:
            out.append({"run_id": run.run_id, "benchmark": run.benchmark,
                        "recorded": all(s.recorded for s in systems),
                        "systems": [s.as_dict() for s in systems]})
    return out


def run_dir_system_views(run_dir: Path) -> list[dict[str, Any]]:
    """:func:`system_views` of the run in ``run_dir`` from its config.json and results.json alone
    (no records read); ``[]`` when they are missing or unreadable."""
    from ideaharness.runs.store import CONFIG_FILE, RESULTS_FILE

    texts = []
    for name in (CONFIG_FILE, RESULTS_FILE):
        try:
            value = json.loads((run_dir / name).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            value = {}
        texts.append(value if isinstance(value, dict) else {})
    config, results = texts
    systems = run_systems(config, results)
    if not systems:
        return []
    benchmark = config.get("benchmark") or results.get("benchmark")
    return [{"run_id": run_dir.resolve().name, "benchmark": benchmark,
             "recorded": all(s.recorded for s in systems), "systems": [s.as_dict() for s in systems]}]


def system_panel(views: Sequence[dict[str, Any]]) -> Markup:
    """The "System" panel (``system_panel.html.j2``) of :func:`system_views`; every text escaped;
    empty for a run without a generator."""
    return Markup(_environment().get_template("system_panel.html.j2").render(system_views=list(views)))


def viewer_section(runs: RunData | Sequence[RunData], *, reliability_panel: bool = True,
                   system_panel: bool = True) -> Markup:
    """The viewer as an HTML fragment (system panel, reliability panel, usage, tables).

    Args:
        runs: the run(s) shown.
        reliability_panel: False in report.html, whose "Judge reliability" table already shows the
            block (so the table, its warnings and any human ceiling appear once).
        system_panel: False in report.html, which shows the "System" panel at its top.
    """
    items = [runs] if isinstance(runs, RunData) else list(runs)
    reliability = next(
        (r.results.get("reliability") for r in items if isinstance(r.results.get("reliability"), dict)), None
    ) if reliability_panel else None
    payload = viewer_payload(items)
    judgments = payload.pop("judgments")
    prompts = payload.pop("prompts")
    html = (
        _environment()
        .get_template("viewer_fragment.html.j2")
        .render(
            payload_json=script_json(payload),
            judgments_json=script_json(judgments),
            prompts_json=script_json(prompts),
            reliability=reliability,
            reliability_panel=reliability_panel,
            system_views=system_views(items) if system_panel else [],
            usage_rows=_usage_rows(items),
            css=_asset("viewer.css"),
            js=_asset("viewer.js"),
        )
    )
    return Markup(html)


def _as_run(source: str | Path | RunData | tuple[pd.DataFrame, pd.DataFrame]) -> RunData:
    if isinstance(source, RunData):
        return source
    if isinstance(source, tuple):
        scores, judgments = source
        benchmark = str(scores["benchmark"].iloc[0]) if len(scores) else "unknown"
        return RunData(
            path=Path("."),
            run_id="dataframes",
            benchmark=benchmark,
            system="",
            config={},
            results={},
            scores=scores,
            judgments=judgments,
        )
    return load_run(source)


def render_viewer(
    source: str | Path | RunData | tuple[pd.DataFrame, pd.DataFrame], title: str | None = None
) -> str:
    """A standalone viewer page of a run directory, a loaded run, or ``(scores, judgments)``
    DataFrames (columns as :func:`ideaharness.load_run` returns them).

    Raises:
        UserError: a path that is not a run directory.
    """
    run = _as_run(source)
    return (
        _environment()
        .get_template("viewer_page.html.j2")
        .render(
            title=title or f"{run.benchmark} run {run.run_id}",
            version=__version__,
            subtitle=f"{len(run.judgments)} judgments, "
            f"{run.scores['instance_id'].nunique()} scored instances",
            body=viewer_section(run),
        )
    )


def render_compare(comparison: dict[str, Any], title: str | None = None) -> str:
    """The ``compare --html`` page: leaderboard with CIs, paired differences (significant ones
    marked), reliability per system and run, and a paged table of per-instance differences.

    Args:
        comparison: the dict :func:`ideaharness.analysis.compare.compare_runs` returns.
    """
    labels = [s["label"] for s in comparison["systems"]]
    rows = []
    for item in comparison["instances"]:
        values = [item["values"].get(label) for label in labels]
        present = [v for v in values if v is not None]
        spread = (max(present) - min(present)) if len(present) > 1 else None
        rows.append([item["pair_key"], item["metric"], *values, spread])
    payload = {"diff": {"columns": ["pair_key", "metric", *labels, "spread"], "rows": rows}}
    env = _environment()
    body = env.get_template("compare_body.html.j2").render(
        c=comparison, payload_json=script_json(payload), css=_asset("viewer.css"), js=_asset("viewer.js"),
        missing_lines=missing_lines(comparison),
    )
    return env.get_template("viewer_page.html.j2").render(
        title=title or f"Comparison of {len(labels)} systems ({comparison['benchmark']})",
        version=__version__,
        subtitle=", ".join(labels),
        body=Markup(body),
    )
