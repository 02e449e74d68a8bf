"""IdeaBench results carry the duplicate count among the n ideas and show the p80 intervals."""

from __future__ import annotations

from pathlib import Path

import ideaharness
from ideaharness.llm.scripted import ScriptedModel
from tests.ideabench.conftest import ideabench_responder


def test_repeated_ideas_are_counted_and_p80_intervals_are_shown(tmp_path: Path) -> None:
    # the scripted ideas differ in one word of 15 ("Idea 0 ...", "Idea 1 ..."): near duplicates
    model = ScriptedModel(ideabench_responder())
    res = ideaharness.run("ideabench", generator=model, judge=model, limit=3, out=tmp_path / "near",
                          progress=False, bootstrap_resamples=100)
    dup = res["scenarios"]["low"]["duplicates"]
    n = res["n"]
    assert dup["ideas"] == 3 * n and dup["exact_duplicates"] == 0
    assert dup["near_duplicates"] == 3 * (n - 1) and dup["instances_with_duplicates"] == 3
    report = (tmp_path / "near" / "report.html").read_text()
    assert "Duplicate ideas among the n per instance" in report
    assert "95% CI of p80" in report
    # 3 instances: below the headline's 5, so the details table shows the reason, not an interval
    # (issue 32, item 7: one rule for every interval a user sees)
    similarity = res["scenarios"]["low"]["similarity"]
    assert similarity["ci95p80"] is None and similarity["ci95_mean"] is None
    assert similarity["ci95p80_why"] == similarity["ci95_mean_why"] == "n too small for an interval (n < 5)"
    assert "n too small for an interval (n &lt; 5)" in report

    repeated = "One idea, repeated: dope the hydrogel with a salt and measure its thermopower."
    same = ScriptedModel(ideabench_responder(ideas_text=repeated),
                         model="scripted/repeats")  # not the cached replies of the first run
    res = ideaharness.run("ideabench", generator=same, judge=same, limit=2, out=tmp_path / "exact",
                          progress=False, bootstrap_resamples=100)
    dup = res["scenarios"]["low"]["duplicates"]
    assert dup["exact_duplicates"] == 2 * (n - 1) and dup["distinct"] == 2


def test_the_details_table_shows_the_headlines_intervals(tmp_path: Path) -> None:
    """From 5 instances on, each interval of the details table is the one the headline reports for
    the same quantity (mean, p80, Insight Score: the registered spec's interval, issue 32 item 7)."""
    model = ScriptedModel(ideabench_responder())
    res = ideaharness.run("ideabench", generator=model, judge=model, limit=6, out=tmp_path / "six",
                          progress=False, bootstrap_resamples=200)
    headline = {(m["metric"], m["group"]): m for m in res["metrics"]}
    block = res["scenarios"]["low"]
    pairs = [(block["overlap"]["ci95_mean"], ("ideabench.overlap", "low")),
             (block["overlap"]["ci95p80"], ("ideabench.overlap_p80", "low")),
             (block["similarity"]["ci95_mean"], ("ideabench.bertscore_f1", "low")),
             (block["similarity"]["ci95p80"], ("ideabench.bertscore_f1_p80", "low"))]
    pairs += [(v["ci95"], ("ideabench.insight_score", f"low/{name}")) for name, v in block["insight"].items()]
    checked = 0
    for ci, key in pairs:
        assert headline[key]["n"] >= 5, key
        assert ci is not None and headline[key]["ci"] is not None, key
        assert tuple(ci) == tuple(headline[key]["ci"]), key
        checked += 1
    assert checked >= 5
