"""The leakage block of every run: what the knowledge cutoff excluded, whether any work dated after
an instance's cutoff still reached a prompt or a search, and the models' training cutoffs.

:func:`leakage_enricher` (a registered result enricher, so every benchmark gets it) adds
``results["leakage"]`` (:func:`leakage_block`); ``ideaharness check leakage RUN_DIR`` computes the
same block from a saved run directory (:func:`check_run`).

The check reads what the run recorded, not the filters' counts:

* every item's ``data`` record (:func:`~ideaharness.cutoff.data_record`, written before the run
  whatever is filtered: the works its own data holds, references and target) and every ``cutoff``
  record of an access (:data:`~ideaharness.cutoff.CUTOFF_STEP`: the works it kept and excluded and
  its date window) name an instance's effective cutoff and the works the run knew of; a kept work
  dated after the cutoff, or a search window reaching past it, is a leak (sources the benchmark
  declares ``future_sources`` read after the cutoff by design and are checked only in prompts);
* every recorded prompt of the steps the benchmark declares (``LiteratureAccess.prompt_steps``:
  what a generator sees, retrieved works shown to a judge) is searched for the title of every work
  dated after the instance's cutoff that the run knows of (its references, its target paper, the
  works its searches returned): a title found is a leak. Titles too short to find without false
  alarms (under :data:`MIN_TITLE_WORDS` words) are counted as unchecked. A title is found as
  whole words (``graph neural network`` is not found in ``graph neural networks``).

Models: each role's stated training cutoff (:mod:`.model_cutoffs`, ``--model-cutoff``) against the
instances' cutoffs; an instance whose cutoff is before the model's training cutoff is counted as
"the model may have seen the target" (a warning with n).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ideaharness.cutoff import COUNT_KEYS, CUTOFF_STEP, NO_LITERATURE, DatedWork, LiteratureAccess, verdict
from ideaharness.errors import UserError
from ideaharness.runner.model_cutoffs import training_cutoff
from ideaharness.runner.options import role_value
from ideaharness.runner.protocol import Benchmark, RunContext
from ideaharness.runner.registry import get_benchmark, register_enricher
from ideaharness.tables import Table

Record = tuple[str, str, str, dict[str, Any]]
PromptOf = Callable[[str], Sequence[Mapping[str, Any]] | None]

MIN_TITLE_WORDS = 3
"""A title is looked for in prompts when it has at least this many words and 15 characters."""
MAX_EXAMPLES = 20
"""Leaks listed in the block (all are counted)."""


def normalise(text: str) -> str:
    """The words of ``text`` (NFKC, case-folded) joined by one space: punctuation and markup removed,
    so a title is found whatever its case, quotes or formatting in a prompt."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return " ".join(re.findall(r"[^\W_]+", folded))


def checkable(title: str) -> bool:
    norm = normalise(title)
    return len(norm.split()) >= MIN_TITLE_WORDS and len(norm) >= 15


def _date(text: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(text)) if text else None
    except ValueError:
        return None


def _prompt_text(messages: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for m in messages:
        content = m.get("content")
        parts.append(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False))
    return "\n".join(parts)


def instance_cutoffs(records: Iterable[Record], literature: LiteratureAccess) -> dict[str, dt.date | None]:
    """Instance id -> its effective cutoff, as its ``cutoff`` records state it (the earliest stated;
    future-window records, whose window end is not the instance's cutoff, are not read)."""
    out: dict[str, dt.date | None] = {}
    for step, inst, _, data in records:
        if step != CUTOFF_STEP or data.get("source") in literature.future_sources:
            continue
        date = _date(data.get("cutoff"))
        known = out.get(inst)
        out[inst] = date if known is None else (min(known, date) if date else known)
    return out


def leakage_check(records: Sequence[Record], prompt_of: PromptOf, literature: LiteratureAccess,
                  cutoffs: Mapping[str, dt.date | None]) -> dict[str, Any]:
    """Works dated after their instance's cutoff that reached a search or a prompt (see the module
    docstring), from the records alone.

    Returns:
        ``{"leaks": n, "examples": [...], "accesses_checked", "works_checked", "prompts_checked",
        "titles_checked", "titles_unchecked"}``; each example ``{"kind": "retrieved" | "search window"
        | "prompt", "instance_id", "source" | "step", "work"}``.
    """
    leaks: list[dict[str, Any]] = []
    after: dict[str, dict[str, dict[str, Any]]] = {}  # instance -> normalised title -> work
    accesses = works = 0
    for step, inst, key, data in records:
        cutoff = cutoffs.get(inst)
        if step != CUTOFF_STEP or cutoff is None:
            continue
        if data.get("data"):  # the item's own works (not an access): looked for in prompts only
            for work in data.get("works") or []:
                if verdict(DatedWork.of(work), cutoff) == "after":
                    after.setdefault(inst, {})[normalise(str(work.get("title") or ""))] = work
            continue
        source = str(data.get("source"))
        future = source in literature.future_sources
        accesses += 1
        seen = [*(data.get("kept_works") or []), *(data.get("excluded_works") or [])]
        if isinstance(data.get("target"), dict):
            seen.append(data["target"])
        for work in seen:
            if verdict(DatedWork.of(work), cutoff) == "after":
                after.setdefault(inst, {})[normalise(str(work.get("title") or ""))] = work
        if future:
            continue
        for work in data.get("kept_works") or []:
            works += 1
            if verdict(DatedWork.of(work), cutoff) == "after":
                leaks.append({"kind": "retrieved", "instance_id": inst, "source": source, "key": key,
                              "work": work})
        end = _date((data.get("window") or [None, None])[1])
        if end is not None and end > cutoff:
            leaks.append({"kind": "search window", "instance_id": inst, "source": source, "key": key,
                          "work": {"window_end": end.isoformat(), "cutoff": cutoff.isoformat()}})
    prompts = titles = unchecked = 0
    for by_title in after.values():
        unchecked += sum(1 for t in by_title if not checkable(t))
        titles += sum(1 for t in by_title if checkable(t))
    for step, inst, key, data in records:
        if not literature.shows(step) or inst not in after:
            continue
        judgment = data.get("judgment")
        messages = prompt_of(str(judgment.get("prompt_hash"))) if isinstance(judgment, dict) else None
        if not messages:
            continue
        prompts += 1
        text = f" {normalise(_prompt_text(messages))} "  # a title is found as whole words only
        for title, work in after[inst].items():
            if checkable(title) and f" {title} " in text:
                leaks.append({"kind": "prompt", "instance_id": inst, "step": step, "key": key, "work": work})
    return {"leaks": len(leaks), "examples": leaks[:MAX_EXAMPLES], "accesses_checked": accesses,
            "works_checked": works, "prompts_checked": prompts, "titles_checked": titles,
            "titles_unchecked": unchecked}


def excluded_counts(records: Iterable[Record]) -> dict[str, dict[str, int]]:
    """Source -> kept / excluded / undated works summed over the ``cutoff`` records."""
    out: dict[str, dict[str, int]] = {}
    for step, _, _, data in records:
        if step == CUTOFF_STEP and not data.get("data"):
            row = out.setdefault(str(data.get("source")), dict.fromkeys(COUNT_KEYS, 0))
            for k in COUNT_KEYS:
                row[k] += int(data.get(k) or 0)
    return {s: out[s] for s in sorted(out)}


def model_rows(models: Mapping[str, str], cutoffs: Sequence[dt.date | None],
               overrides: Mapping[str, str] | None) -> tuple[list[dict[str, Any]], list[str]]:
    """One row per role: its model's training cutoff and how many instances' cutoffs precede it;
    and the warnings ("the model may have seen the target", with n)."""
    rows, warnings = [], []
    dated = [c for c in cutoffs if c is not None]
    for role, model in sorted(models.items()):
        tc = training_cutoff(model, role_value(dict(overrides) if overrides else None, role))
        before = sum(1 for c in dated if tc.cutoff is not None and c < tc.cutoff)
        rows.append({"role": role, "model": model,
                     "training_cutoff": tc.cutoff.isoformat() if tc.cutoff else "unknown",
                     "stated": tc.stated, "source": tc.source, "note": tc.note,
                     "instances_before": before if tc.cutoff is not None else None,
                     "instances_dated": len(dated)})
        if before:
            warnings.append(f"{role} {model}: trained on data to {tc.cutoff} ({tc.stated or tc.source}), "
                            f"after the cutoff of {before}/{len(dated)} instance(s): the model may have seen "
                            "their targets")
    return rows, warnings


def leakage_block(records: Sequence[Record], prompt_of: PromptOf, literature: LiteratureAccess, *,
                  run_cutoff: dt.date | None, models: Mapping[str, str], ids: Iterable[str] | None = None,
                  overrides: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``results["leakage"]`` of one run.

    Args:
        records: the run's records (``(step, instance_id, key, data)``).
        prompt_of: prompt hash -> rendered messages (None when unknown).
        literature: the benchmark's declaration.
        run_cutoff: ``--cutoff`` (None when not given).
        models: role -> model string of the run.
        ids: the selected item ids (their records only; None: every record).
        overrides: ``--model-cutoff`` values, role -> date or ``unknown``.

    Returns:
        ``{"run_cutoff", "access" ("literature" | "none"), "note", "sources", "instances"
        {"with_cutoff", "without_cutoff", "earliest", "latest"}, "excluded" {source: counts},
        "items_excluded", "check" (:func:`leakage_check`), "models" (:func:`model_rows`),
        "warnings", "line"}``.
    """
    chosen = None if ids is None else set(ids)
    dropped = {inst for step, inst, _, data in records if step == CUTOFF_STEP and data.get("item_excluded")}
    mine = [r for r in records if chosen is None or r[1] in chosen or r[1] in dropped]
    cutoffs = instance_cutoffs([r for r in mine if r[1] not in dropped], literature)
    if chosen is not None:
        for inst in chosen:
            cutoffs.setdefault(inst, run_cutoff)
    dated = sorted(c for c in cutoffs.values() if c is not None)
    check = leakage_check(mine, prompt_of, literature, cutoffs)
    rows, warnings = model_rows(models, list(cutoffs.values()), overrides)
    excluded = excluded_counts(mine)
    if check["leaks"]:
        warnings.insert(0, f"{check['leaks']} work(s) dated after their instance's cutoff reached a prompt "
                           "or a search (see leakage.check.examples)")
    access = "literature" if literature.has_access else "none"
    n_out = sum(r["excluded"] for r in excluded.values())
    n_undated = sum(r["undated"] for r in excluded.values())
    n_works = sum(r["kept"] + r["excluded"] for r in excluded.values())  # an undated work is in one of them
    if dated and access == "literature" and n_works and 2 * n_undated > n_works:  # most works undated
        warnings.append(f"{n_undated} of {n_works} work(s) seen are undated: the cutoff could not be checked "
                        "for them (a work needs a publication_date, or a year other than the cutoff's)")
    if not dated:
        line = (f"knowledge cutoff: none ({len(cutoffs)} instance(s), none with a cutoff; --cutoff sets one)"
                + ("" if access == "literature" else "; no literature access"))
    else:
        line = (f"knowledge cutoff: {len(dated)}/{len(cutoffs)} instance(s) dated ({dated[0]} to {dated[-1]})"
                + (f"; {n_out} work(s) excluded, {n_undated} undated, {check['leaks']} leak(s) found in "
                   f"{check['prompts_checked']} prompt(s) and {check['accesses_checked']} access(es)"
                   if access == "literature" else "; no literature access: nothing to filter")
                + (f"; {len(dropped)} item(s) left out" if dropped else ""))
    return {"run_cutoff": run_cutoff.isoformat() if run_cutoff else None, "access": access,
            "note": literature.note, "sources": dict(literature.sources),
            "instances": {"with_cutoff": len(dated), "without_cutoff": len(cutoffs) - len(dated),
                          "earliest": dated[0].isoformat() if dated else None,
                          "latest": dated[-1].isoformat() if dated else None},
            "excluded": excluded, "items_excluded": len(dropped), "check": check, "models": rows,
            "warnings": warnings, "line": line}


def _benchmark(name: Any) -> type[Benchmark]:
    try:
        return get_benchmark(str(name))
    except UserError:  # a class run without registering it: nothing declared
        return Benchmark


@register_enricher
def leakage_enricher(ctx: RunContext, results: dict[str, Any]) -> None:
    """Add ``results["leakage"]`` (:func:`leakage_block`) from the run's records and prompts."""
    bench = _benchmark(results.get("benchmark"))
    settings = results.get("settings") or {}
    results["leakage"] = leakage_block(
        ctx.store.all_records(), ctx.store.prompt, getattr(bench, "literature", NO_LITERATURE),
        run_cutoff=getattr(ctx.config, "cutoff", None), models=settings.get("models") or {},
        ids=(results.get("selection") or {}).get("ids"), overrides=ctx.options.model_cutoff)


def check_run(run_dir: str | Path, overrides: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The leakage block of a saved run directory (``ideaharness check leakage RUN_DIR``), read
    without a lock: records, prompts, ``config.json`` (the cutoff) and ``results.json`` (the models
    and the selection), the benchmark's declaration from the registry.

    Raises:
        UserError: not a run directory (no ``config.json``), or an unreadable one.
    """
    from ideaharness.jsonl import scan_jsonl
    from ideaharness.runs.store import CONFIG_FILE, RECORDS_DIR, RESULTS_FILE, read_prompts

    root = Path(run_dir)
    try:
        config = json.loads((root / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{root}: not a run directory ({CONFIG_FILE}: {exc})") from None
    try:
        results = json.loads((root / RESULTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        results = {}
    last: dict[tuple[str, str, str], dict[str, Any]] = {}  # a unit's last line is its record
    for path in sorted((root / RECORDS_DIR).glob("*.jsonl")):
        for _, value in scan_jsonl(path).rows:
            if isinstance(value, dict) and "step" in value:
                unit = (str(value["step"]), str(value.get("instance_id", "")), str(value.get("key", "")))
                last[unit] = value.get("data") or {}
    records: list[Record] = [(*unit, data) for unit, data in last.items()]
    prompts = read_prompts(root)
    name = config.get("benchmark") or results.get("benchmark")
    bench = _benchmark(name)
    return leakage_block(records, prompts.get, getattr(bench, "literature", NO_LITERATURE),
                         run_cutoff=_date(config.get("cutoff")),
                         models=(results.get("settings") or {}).get("models") or {},
                         ids=(results.get("selection") or {}).get("ids"), overrides=overrides)


def leakage_table(results: Mapping[str, Any]) -> Table | None:
    """The "Knowledge cutoff and leakage" table: one row per source (kept / excluded / undated),
    then the models' training cutoffs; the line, the check and the warnings as its note."""
    block = results.get("leakage")
    if not isinstance(block, dict):
        return None
    rows: list[list[Any]] = [[source, row.get("kept"), row.get("excluded"), row.get("undated"),
                              (block.get("sources") or {}).get(source, "")]
                             for source, row in (block.get("excluded") or {}).items()]
    for m in block.get("models") or []:
        rows.append([f"model: {m['role']}", None, m.get("instances_before"), None,
                     f"{m['model']}: training cutoff {m['training_cutoff']} ({m.get('stated') or ''} "
                     f"{m.get('source') or ''})".replace("( ", "(")])
    check = block.get("check") or {}
    notes = [str(block.get("line") or ""), str(block.get("note") or ""),
             f"checked: {check.get('prompts_checked', 0)} prompt(s), {check.get('accesses_checked', 0)} "
             f"access record(s), {check.get('titles_checked', 0)} title(s) dated after a cutoff "
             f"({check.get('titles_unchecked', 0)} too short to look for); leaks: {check.get('leaks', 0)}",
             *[f"⚠ {w}" for w in block.get("warnings") or []]]
    return Table(title="Knowledge cutoff and leakage",
                 columns=["source / model", "kept", "excluded (model: instances before its cutoff)",
                          "undated", "what"], rows=rows, note="\n".join(n for n in notes if n.strip()))


def leakage_lines(results: Mapping[str, Any]) -> list[str]:
    """What the console prints of the leakage block: its line, then each warning as ``"⚠ …"``."""
    block = results.get("leakage")
    if not isinstance(block, dict):
        return []
    return [str(block.get("line") or ""), *[f"⚠ {w}" for w in block.get("warnings") or []]]
