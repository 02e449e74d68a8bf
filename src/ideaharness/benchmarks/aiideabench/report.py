"""Aggregation of an AI Idea Bench run: results.json, the paper's Table 1 / Table 2 layout, report.html.

Per-instance values follow the paper: IMCQ S_M = 1 if any idea picks the ground truth (Eq. 2); I2I
and I2T = the maximum rating over the instance's ideas (Eq. 3-4); NA and FA = the mean over the
instance's ideas. Means over instances carry percentile-bootstrap 95% intervals. A judgment that
never parsed is counted, and the instance it belongs to has no IMCQ/I2I/I2T value for that
metric (``instances_undetermined``): the best of its ideas is unknown, and the best of the others
would be a lower bound, not a score.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ideaharness.benchmarks.aiideabench import judges as J
from ideaharness.benchmarks.aiideabench.blinding import generation_topic
from ideaharness.benchmarks.aiideabench.config import BENCHMARK_VERSION
from ideaharness.benchmarks.aiideabench.imcq import imcq_block
from ideaharness.metrics.duplicates import DUPLICATE_COLUMNS, duplicate_note, duplicate_report, duplicate_row
from ideaharness.metrics.stats import bootstrap_ci, bootstrap_settings, summarize
from ideaharness.metrics.surface import surface_rows
from ideaharness.report.html import Section, Table
from ideaharness.schema import Instance
from ideaharness.systems.spec import is_system, split_ideas_spec, system_kind

if TYPE_CHECKING:
    from ideaharness.benchmarks.aiideabench.run import AIIdeaBench

LIT_KEYS = ("motivation/novelty", "motivation/novelty_bounded", "experiment_plan/novelty", "feasibility")


def _metric(values: list[float], failures: int, boot: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {**summarize(values), "ci95_mean": bootstrap_ci(values, **boot), "parse_failures": failures,
            **extra}


def _judgments(bench: AIIdeaBench, step: str, inst: Instance, prefix: str = "") -> list[dict[str, Any]]:
    return [d["judgment"] | {"_extra": d} for i, k, d in bench.store.records(step)
            if i == inst.id and k.startswith(prefix)]


def aggregate(
    bench: AIIdeaBench, instances: list[Instance], competition: dict[str, Any] | None
) -> dict[str, Any]:
    """The results dict (also written to results.json)."""
    cfg = bench.config
    boot = {"n_resamples": cfg.bootstrap_resamples, "seed": cfg.seed}
    ideas = {i.id: bench.ideas(i) for i in instances}
    gen_fail = sum(1 for _, _, d in bench.store.records("generate") if not d["judgment"]["parse_ok"])
    decomp = [bench.store.get("decompose", i.id) for i in instances]
    results: dict[str, Any] = {
        "benchmark": "aiideabench",
        "benchmark_version": BENCHMARK_VERSION,
        "bootstrap": bootstrap_settings(cfg.bootstrap_resamples, cfg.seed),
        "system": cfg.system_label,
        "generator": None if is_system(cfg.generator_role) else cfg.generator_role,
        "system_kind": system_kind(cfg.generator_role),
        "ideas_file": split_ideas_spec(cfg.generator_role)[0] if bench.answered is not None else None,
        "judge": cfg.judge,
        "seed": cfg.seed,
        "data": cfg.data,
        "instances": len(instances),
        "instances_with_ideas": sum(1 for v in ideas.values() if v),
        "instances_not_in_ideas_file": sum(1 for i in instances if bench.unanswered(i)),
        "ideas": sum(len(v or []) for v in ideas.values()),
        "generation_parse_failures": gen_fail,
        "duplicates": duplicate_report([idea.text for idea in v] for v in ideas.values() if v),
        "decomposition_parse_failures": sum(1 for d in decomp if d and not d["judgment"]["parse_ok"]),
        "instances_without_ground_truth": sum(1 for i in instances if bench.ground_truth(i) is None),
        "topic": _topics(bench, instances),
        "rating_scale": list(J.RATING_SCALE),
        "imcq": {}, "i2i": {}, "i2t": {},
    }
    for comp in J.COMPONENTS:
        block = imcq_block(bench, instances, comp)
        hits = block.pop("hits")
        results["imcq"][comp] = _metric(hits, block.pop("parse_failures"), boot, **block)
        for step in ("i2i", "i2t"):
            best, fails, undetermined = [], 0, 0
            for inst in instances:
                prefix = f"{comp}/" if step == "i2i" else ""
                js = _judgments(bench, step, inst, prefix)
                failed = sum(1 for j in js if not j["parse_ok"])
                fails += failed
                if failed:  # the best of the instance's ideas is unknown: not the best of the rest
                    undetermined += 1
                elif js:
                    best.append(float(max(j["parsed"] if step == "i2i" else j["parsed"][comp] for j in js)))
            results[step][comp] = _metric(best, fails, boot, instances_undetermined=undetermined)
    results["novelty"] = _literature_novelty(bench, instances, boot)
    results["feasibility"] = _literature_feasibility(bench, instances, boot)
    results["competition"] = competition
    if competition:
        results["competition_literature"] = _other_literature(competition)
    results["errors"] = bench.steps.error_count
    results["corrupt_record_lines"] = bench.store.corrupt_lines
    results.update(bench.steps.outcome())
    return results


def _skipped(bench: AIIdeaBench, step: str) -> dict[str, Any]:
    """Why a literature metric was skipped: the unreachable host, or the units that failed."""
    units = [u for u in bench.steps.failures.values() if u.step == step and u.status == "skipped"]
    reason = bench.gate.reason or (f"{len(units)} idea(s) skipped: {units[0].error}" if units else None)
    return {"skipped": reason, "skipped_units": len(units)}
def _topics(bench: AIIdeaBench, instances: list[Instance]) -> dict[str, Any]:
    """Which topic generators saw: ``shown_to_generators`` ("anonymised" unless parity), the source
    per instance (anonymised / dataset / missing) and instances not generated for lack of a topic."""
    sources = Counter(generation_topic(bench, i)[1] for i in instances)
    generated = {i for i, _, d in bench.store.records("ideas") if d.get("source") in ("generator", "system")}
    return {
        "shown_to_generators": "published" if bench.config.parity else "anonymised",
        "sources": dict(sorted(sources.items())),
        "generation_skipped_no_topic": sum(
            1 for i in instances
            if generation_topic(bench, i)[0] is None and i.id not in generated and not bench.unanswered(i)),
    }


def _literature_novelty(
    bench: AIIdeaBench, instances: list[Instance], boot: dict[str, Any]
) -> dict[str, Any]:
    if "novelty" not in bench.config.metrics:
        return {"skipped": "not requested"}
    out: dict[str, Any] = _skipped(bench, "novelty")
    kw_fail = sum(1 for _, _, d in bench.store.records("keywords") if not d["judgment"]["parse_ok"])
    for comp in J.COMPONENTS:
        for key in ("novelty", "novelty_bounded"):
            per_inst = []
            for inst in instances:
                vals = [d[comp][key] for i, _, d in bench.store.records("novelty")
                        if i == inst.id and d[comp][key] is not None]
                if vals:
                    per_inst.append(sum(vals) / len(vals))
            out[f"{comp}/{key}"] = _metric(per_inst, kw_fail, boot)
    return out


def _literature_feasibility(
    bench: AIIdeaBench, instances: list[Instance], boot: dict[str, Any]
) -> dict[str, Any]:
    if "feasibility" not in bench.config.metrics:
        return {"skipped": "not requested"}
    fails = sum(1 for _, _, d in bench.store.records("concepts") if not d["judgment"]["parse_ok"])
    per_inst, papers, notes = [], 0, []
    for inst in instances:
        recs = [d for i, _, d in bench.store.records("feasibility") if i == inst.id]
        papers += sum(d["n_papers"] for d in recs)
        notes += [n for d in recs for n in d.get("notes") or []]
        vals = [d["feasibility"] for d in recs if d["feasibility"] is not None]
        if vals:
            per_inst.append(sum(vals) / len(vals))
    return {**_skipped(bench, "feasibility"), "lambda": bench.config.influence_lambda,
            "latest_year": bench.config.latest_year, "papers": papers, "citation_notes": notes,
            **_metric(per_inst, fails, boot)}


def _other_literature(competition: dict[str, Any]) -> dict[str, Any]:
    """NA/FA means of the compared systems, read from their own results.json when present."""
    out: dict[str, Any] = {}
    for name, run_dir in (competition.get("run_dirs") or {}).items():
        other = load_results(Path(run_dir))
        if not other:
            continue
        nov, fea = other.get("novelty") or {}, other.get("feasibility") or {}
        out[name] = {
            "motivation/novelty": _mean(nov.get("motivation/novelty")),
            "motivation/novelty_bounded": _mean(nov.get("motivation/novelty_bounded")),
            "experiment_plan/novelty": _mean(nov.get("experiment_plan/novelty")),
            "feasibility": fea.get("mean"),
        }
    return out


def _mean(block: dict[str, Any] | None) -> Any:
    return None if not block else block.get("mean")


def results_tables(results: dict[str, Any]) -> list[Table]:
    """Table 1 (I2T, I2I, IMCQ per component), Table 2 (competition, NA, FA) and a details table."""
    comps = J.COMPONENTS
    t1_cols = ["system", "I2T motivation", "I2T plan", "I2I motivation", "I2I plan", "IMCQ motivation",
               "IMCQ plan", "instances", "parse failures"]
    # an I2T judgment rates both components, so its failures are counted once
    failures = sum(results[m][c]["parse_failures"] for m in ("imcq", "i2i") for c in comps)
    failures += results["i2t"]["motivation"]["parse_failures"]
    row = [results["system"], *[_mean(results[m][c]) for m in ("i2t", "i2i", "imcq") for c in comps],
           results["instances_with_ideas"], failures]
    chance = [results["imcq"][c].get("chance") for c in comps]
    chance_text = "; ".join(f"{c.replace('_', ' ')} {v:.4f}" for c, v in zip(comps, chance, strict=True)
                            if v is not None) or "no question answered"
    guess = [results["imcq"][c].get("chance_independent_guesser") for c in comps]
    guess_text = "; ".join(f"{c.replace('_', ' ')} {v:.4f}" for c, v in zip(comps, guess, strict=True)
                           if v is not None) or "no question answered"
    tables = [Table(
        title="AI Idea Bench 2025 (Table 1 layout)", columns=t1_cols, rows=[row],
        note=f"judge {results['judge']}; I2T/I2I: mean over instances of the best idea's rating on "
             f"{results['rating_scale'][0]}-{results['rating_scale'][1]} (published code's scale; the paper "
             "writes [0,5]); IMCQ: share of instances where any idea picked the ground truth among 4 "
             "options; chance, the score of a judge that ignores the options' content (picking by a "
             f"rule of form, the same for every idea): {chance_text}; a guesser drawing anew for each "
             f"of n ideas scores 1 - (1 - 1/4)^n ({guess_text}), not the reference for a form-only judge.",
    )]
    comp = results.get("competition")
    nov, fea = results["novelty"], results["feasibility"]
    t2_cols = ["system", "points", "points 95% CI", "rank", "BT rating", "BT 95% CI", "NA motivation",
               "NA bounded",
               "NA plan", "FA"]
    t2_rows = []
    systems = comp["systems"] if comp else [results["system"]]
    for name in systems:
        bt = (comp or {}).get("bradley_terry", {}).get(name)
        if name == results["system"]:
            lit = {k: _mean(nov.get(k)) for k in LIT_KEYS[:3]} | {"feasibility": fea.get("mean")}
        else:
            lit = (results.get("competition_literature") or {}).get(name, {})
        t2_rows.append([
            name, comp["points"][name] if comp else None,
            (comp.get("points_ci") or {}).get(name) if comp else None,
            comp["rank"][name] if comp else None,
            bt["rating"] if bt else None, [bt["lower"], bt["upper"]] if bt else None,
            *[lit.get(k) for k in LIT_KEYS],
        ])
    notes = []
    if comp:
        notes.append(f"Swiss tournament, {comp['rounds']} rounds per topic over {comp['topics']} topics, "
                     f"{comp['win_points']:g} points per win, {comp['loss_points']:g} per loss; "
                     f"{'each pair judged in both orders' if comp['both_orders'] else 'one order (parity)'}; "
                     f"{comp['inconsistent_pairs']} inconsistent pair(s) counted as "
                     f"{comp['inconsistent_counts_as']}; {comp['parse_failures']} judgment parse failure(s); "
                     f"BT anchored at 1000 for {comp['bradley_terry_anchor']}; intervals of points and BT: "
                     "percentile bootstrap over topics.")
        if comp.get("bradley_terry_note"):
            notes.append(comp["bradley_terry_note"])
    else:
        notes.append("no competition: give --compare RUN_DIR with runs of other systems on the same data")
    for label, block in (("NA", nov), ("FA", fea)):
        if block.get("skipped"):
            notes.append(f"{label} skipped: {block['skipped']}")
    if fea.get("citation_notes"):
        notes.append(f"FA: citations counted as far as Semantic Scholar serves them for "
                     f"{len(fea['citation_notes'])} paper(s) ({fea['citation_notes'][0]})")
    tables.append(Table(title="AI Idea Bench 2025 (Table 2 layout)", columns=t2_cols, rows=t2_rows,
                        note="; ".join(notes)))
    detail = []
    for m in ("imcq", "i2i", "i2t"):
        for c in comps:
            b = results[m][c]
            detail.append([f"{m.upper()} {c}", b["n"], b["mean"], b["ci95_mean"], b["parse_failures"],
                           b.get("instances_undetermined")])
    for key, b in nov.items():
        if isinstance(b, dict):
            detail.append([f"NA {key}", b["n"], b["mean"], b["ci95_mean"], b["parse_failures"], None])
    if "n" in fea:
        detail.append(["FA", fea["n"], fea["mean"], fea["ci95_mean"], fea["parse_failures"], None])
    blind_rows = []
    for c in comps:
        b = results["imcq"][c].get("blinding")
        if b:
            before = b["surface_published"] if b["options"] == "decomposed" else None
            blind_rows += surface_rows(f"IMCQ {c.replace('_', ' ')}", b["surface"], before)
    if blind_rows:
        tables.append(Table(
            title="Blinding check: ground-truth option vs distractor options in IMCQ",
            columns=["question", "surface feature", "ground truth", "distractors", "separation",
                     "separation (published options)"], rows=blind_rows,
            note="Share of options with the feature (words: mean count) and how well the feature alone tells "
                 "the ground truth from the distractors (balanced accuracy, 0.5 = not at all, 1 = always). "
                 "Distractors are decomposed by the ground truth's step (parity: the papers' own texts). "
                 f"Generators saw the {results['topic']['shown_to_generators']} topic."))
    if results.get("duplicates"):
        tables.append(Table(title="Duplicate ideas among the n per instance",
                            columns=["system", *DUPLICATE_COLUMNS],
                            rows=[[results["system"], *duplicate_row(results["duplicates"])]],
                            note=duplicate_note()))
    tables.append(Table(title="Details with bootstrap 95% intervals over instances",
                        columns=["metric", "instances", "mean", "95% CI", "parse failures",
                                 "undetermined"], rows=detail,
                        note=f"{results['ideas']} ideas on {results['instances_with_ideas']} of "
                             f"{results['instances']} instances; generation parse failures "
                             f"{results['generation_parse_failures']}; decomposition parse failures "
                             f"{results['decomposition_parse_failures']}; undetermined = instances left "
                             "out because a judgment of one of their ideas never parsed."))
    return tables


def example_sections(bench: AIIdeaBench, instances: list[Instance], limit: int = 3) -> list[Section]:
    items = []
    for inst in instances[:limit]:
        ideas = bench.ideas(inst)
        gt = bench.ground_truth(inst)
        if not ideas:
            continue
        topic, source = generation_topic(bench, inst)
        body = f"Topic shown to generators ({source}):\n{topic or '(none)'}\n\n"
        if topic != inst.topic:
            body += f"Dataset topic:\n{inst.topic}\n\n"
        if gt:
            body += (f"Ground-truth motivation:\n{gt['motivation']}\n\n"
                     f"Ground-truth plan:\n{gt['experiment_plan']}\n\n")
        body += "\n\n".join(f"Idea {k + 1}:\n{idea.text}" for k, idea in enumerate(ideas))
        items.append((f"{inst.id}: {inst.target.title}", body))
    return [Section(title="Examples", items=items)] if items else []


def load_results(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / "results.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
