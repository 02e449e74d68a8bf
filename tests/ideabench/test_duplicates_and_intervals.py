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
    ci = res["scenarios"]["low"]["similarity"]["ci95p80"]
    assert ci is not None and f"[{ci[0]:.3f}, {ci[1]:.3f}]" in report

    repeated = "One idea, repeated: dope the hydrogel with a salt and measure its thermopower."
    same = ScriptedModel(ideabench_responder(ideas_text=repeated),
                         model="scripted/repeats")  # not the cached replies of the first run
    res = ideaharness.run("ideabench", generator=same, judge=same, limit=2, out=tmp_path / "exact",
                          progress=False, bootstrap_resamples=100)
    dup = res["scenarios"]["low"]["duplicates"]
    assert dup["exact_duplicates"] == 2 * (n - 1) and dup["distinct"] == 2
