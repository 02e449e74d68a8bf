"""LiveIdeaBench tables, notes and examples for the console and the report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ideaharness.benchmarks.liveideabench.parsers import DIMENSIONS
from ideaharness.report.html import Section, Table

if TYPE_CHECKING:
    from ideaharness.benchmarks.liveideabench.keywords import Keyword
    from ideaharness.benchmarks.liveideabench.run import LiveIdeaBench


def leaderboard_columns(protocol: str) -> list[str]:
    """The published leaderboard columns (v1 ``results/LiveIdeaBench-202411.csv``; v2 adds Clarity)."""
    dims = ["Fluency", "Feasibility", "Originality"] + (["Clarity"] if protocol == "v2" else [])
    return [*dims, "Flexibility", "Average"]


def results_tables(results: dict[str, Any]) -> list[Table]:
    """Leaderboard row with intervals, judging counts, per-judge means, per-category means."""
    s, protocol = results["scores"], results["protocol"]
    names = [c.lower() for c in leaderboard_columns(protocol)]
    rows = [[results["generator"], *[s[n]["value"] for n in names]],
            ["95% CI", *[s[n]["ci95"] for n in names]], ["n keywords", *[s[n]["n"] for n in names]]]
    mode = "published means over judgment rows (--parity)" if results["parity"] else \
        "per idea, per keyword, over keywords"
    tables = [Table(title=f"LiveIdeaBench leaderboard ({protocol})", columns=["Model",
                    *leaderboard_columns(protocol)], rows=rows,
                    note=f"scores 0-10; {mode}; intervals: percentile bootstrap over keywords")]
    c = results["counts"]
    tables.append(Table(title="Ideas and judgments", columns=["quantity", "count"], rows=[
        [k.replace("_", " "), c.get(k, 0)] for k in (
            "ideas_attempted", "ideas", "idea_parse_failures", "fallback_used", "over_100_words",
            "excluded_by_length", "critiques", "critique_parse_failures", "fluency_judgments",
            "fluency_parse_failures", "fluency_order_disagreements",
            *(["fluency_pairs_outside_pool"] if results["parity"] else []))]))
    dims = list(DIMENSIONS[protocol])
    tables.append(Table(title="Per judge", columns=["judge", "judgments", "parse failures", *dims], rows=[
        [j, v["judgments"], v["parse_failures"], *[v[d] for d in dims]]
        for j, v in results["per_judge"].items()]))
    if results["per_category"]:
        tables.append(Table(title="Per category (mean of the keyword means)", columns=["category", "keywords",
                            "mean"], rows=[[k, v["keywords"], v["mean"]]
                                           for k, v in results["per_category"].items()],
                            note="upstream categories (automatic, often wrong); not part of any metric"))
    return tables


def result_notes(results: dict[str, Any]) -> list[str]:
    """Judges left out as the generator's family, parse failures (never scored), fallbacks, long
    ideas, the --parity fluency caveat and a flexibility that needs more keywords."""
    c, notes = results["counts"], []
    exclusion = results.get("judge_exclusion") or {}
    if exclusion.get("excluded"):
        how = "exact name, as published (--parity)" if exclusion["rule"] == "exact name" else \
            f"family {exclusion['generator_family']!r}"
        notes.append(f"judge(s) left out as the generator's own model ({how}): "
                     + ", ".join(exclusion["excluded"]))
    if exclusion.get("rule") == "system":
        notes.append(f"the generator is a system ({exclusion['generator']}): no judge is left out as its own "
                     "model (the models it uses are unknown to the run; give judges of other families)")
    for what, key in (("idea", "idea_parse_failures"), ("critique", "critique_parse_failures"),
                      ("fluency", "fluency_parse_failures")):
        if c.get(key):
            notes.append(f"{c[key]} {what} repl(ies) never parsed after retries: counted, never scored")
    if c.get("fallback_used"):
        notes.append(f"{c['fallback_used']} idea(s) came from the v2 fallback prompt after an unusable reply "
                     "(not comparable with the published rejection rates: docs/liveideabench.md)")
    if results["parity"]:
        notes.append("--parity: fluency calls have no 5-second cut (the published hash.py skipped the pairs "
                     "whose drawn judge was slower), so panels with slow judges are not expected to match "
                     "the published fluency")
    if c.get("over_100_words"):
        notes.append(f"{c['over_100_words']} of {c.get('ideas', 0)} ideas exceed the prompt's 100 words")
    if results["scores"]["flexibility"]["value"] is None:
        notes.append("flexibility needs at least 5 keywords with every dimension scored")
    return notes


def example_sections(bench: LiveIdeaBench, items: Sequence[Keyword], limit: int = 3) -> list[Section]:
    """The ideas of the first keywords with their critiques and fluency replies (raw text)."""
    out: list[tuple[str, str]] = []
    for kw in list(items)[:limit]:
        parts = []
        for k in range(bench.config.ideas_per_keyword):
            idea = bench.idea(kw.id, k)
            if idea is None:
                continue
            parts.append(f"Idea {k + 1}{' (fallback prompt)' if idea['fallback'] else ''}:\n{idea['idea']}")
            for judge in bench.critique_judges(kw.id, k):
                rec = bench.store.get("critique", kw.id, f"{k}/{judge}")
                if rec:
                    parts.append(f"Critique by {judge} (parsed: {rec['judgment']['parsed']}):\n"
                                 f"{rec['judgment']['raw_text']}")
        for p, _ in enumerate(bench.pairs()):
            for judge, order in bench.fluency_design(kw.id, p):
                rec = bench.store.get("fluency", kw.id, f"{p}/{judge}/{order}")
                if rec:
                    parts.append(f"Fluency pair {p + 1} ({order}) by {judge} (grade: "
                                 f"{rec['judgment']['parsed']}):\n{rec['judgment']['raw_text']}")
        if parts:
            out.append((f"{kw.id} ({kw.category or 'custom keyword'})", "\n\n".join(parts)))
    return [Section(title="Examples", items=out)] if out else []
