"""IdeaBench: the target's position is balanced over the instances actually ranked (issue 32,
item 4), and a rewrite that failed its check is final (item 9, the demo's re-ask).

Item 4's shape: 12 instances, the rewrite check drops 9 (or 8) targets. Balanced over all 12, the
3 survivors sat where an always-"A > B > C > D" judge scored Insight 0.889; balanced over the
survivors, the 4 of the 8-drop case take each position once (that judge then scores exactly 0.5,
as does "D > C > B > A"), and the 3 of the 9-drop case three different positions (a score in
[1/3, 2/3], the closest to 0.5 three ranks on {0, 1/3, 2/3, 1} can be balanced).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import ideaharness
from ideaharness.benchmarks.ideabench.blinding import balanced_fill
from ideaharness.llm.errors import LLMError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.reliability.sampling import balanced_positions
from tests.blinding_support import is_rewrite, reference_of
from tests.ideabench.conftest import ideabench_responder

LABELS = re.compile(r"exactly once \(([A-Z, ]+)\)")


def _records(out: Path, step: str) -> dict[str, dict[str, Any]]:
    path = out / "records" / f"{step.replace('/', '_')}.jsonl"
    return {json.loads(x)["instance_id"]: json.loads(x)["data"] for x in path.read_text().splitlines()}


def positional(keep: int, order: str = "forward", outage_from: int | None = None) -> Any:
    """IdeaBench replies: the rewrite of only the first ``keep`` targets (in the order they are
    asked) passes its check, the others keep the published opening; every ranking is the labels
    in order (``forward``: A > B > C > D) or reversed. ``outage_from``: the rewrite call of the
    targets asked from this one on fails (an outage: not recorded)."""
    base = ideabench_responder()
    seen: list[str] = []

    def respond(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if is_rewrite(user):
            reference = reference_of(user)
            if reference not in seen:
                seen.append(reference)
            if outage_from is not None and seen.index(reference) >= outage_from:
                raise LLMError("scripted outage")
            if seen.index(reference) >= keep:
                return json.dumps({"idea": "The hypothesis is that catalysts help " * 8})
            return base(messages)
        if "Rank the following" in user:
            labels = LABELS.search(user).group(1).split(", ")  # type: ignore[union-attr]
            return json.dumps({"ranking": labels if order == "forward" else labels[::-1], "rationale": "x"})
        return base(messages)

    return respond


def _run(out: Path, respond: Any, limit: int = 12, **kw: Any) -> dict[str, Any]:
    model = ScriptedModel(respond)
    return ideaharness.run("ideabench", generator=model, judge=model, limit=limit, out=out, max_attempts=1,
                           consistency_sample=0.0, progress=False, **kw)


@pytest.mark.parametrize("order", ["forward", "reverse"])
def test_with_8_of_12_targets_dropped_a_positional_judge_scores_exactly_one_half(
        tmp_path: Path, order: str) -> None:
    res = _run(tmp_path / "r", positional(4, order))
    low = res["scenarios"]["low"]
    assert (low["blinding"]["rewrite"]["rewritten"], low["blinding"]["rewrite"]["failed"]) == (4, 8)
    insight = low["insight"]["novelty"]
    assert insight["m"] == 4 and insight["insight_score"] == pytest.approx(0.5)
    placed = _records(tmp_path / "r", "placement/low")
    assert sorted(p["position"] for p in placed.values()) == [0, 1, 2, 3]  # the survivors only
    ranks = _records(tmp_path / "r", "rank/low/novelty")
    assert set(ranks) == set(placed)
    for iid, rank in ranks.items():
        assert rank["judgment"]["positions"].index("target") == placed[iid]["position"]


def test_with_9_of_12_targets_dropped_the_3_survivors_take_3_positions(tmp_path: Path) -> None:
    res = _run(tmp_path / "r", positional(3))
    insight = res["scenarios"]["low"]["insight"]["novelty"]
    assert insight["m"] == 3
    assert 1 / 3 - 1e-9 <= insight["insight_score"] <= 2 / 3 + 1e-9  # was 0.889 balanced over all 12
    positions = [p["position"] for p in _records(tmp_path / "r", "placement/low").values()]
    assert len(positions) == 3 and len(set(positions)) == 3


def test_a_resumed_run_keeps_every_position_and_fills_the_least_used(tmp_path: Path) -> None:
    out = tmp_path / "r"
    # run 1: the rewrite call of 3 of 8 targets fails (not recorded): 5 instances placed and ranked
    first = _run(out, positional(8, outage_from=5), limit=8)
    assert first["status"] == "partial"
    before = {i: p["position"] for i, p in _records(out, "placement/low").items()}
    assert len(before) == 5 and sorted(Counter(before.values()).values()) == [1, 1, 1, 2]
    # run 2 (resume): the 3 join; the 5 keep their positions, the 3 fill the least used ones
    second = _run(out, positional(8), limit=8)
    assert second["scenarios"]["low"]["insight"]["novelty"]["m"] == 8
    after = {i: p["position"] for i, p in _records(out, "placement/low").items()}
    assert len(after) == 8 and all(after[i] == p for i, p in before.items())
    assert Counter(after.values()) == {0: 2, 1: 2, 2: 2, 3: 2}
    assert second["scenarios"]["low"]["insight"]["novelty"]["insight_score"] == pytest.approx(0.5)


def test_balanced_fill_evens_out_the_used_positions_and_matches_balanced_positions_when_fresh() -> None:
    ids = [f"i{j}" for j in range(11)]
    assert balanced_fill(ids, 4, 7, {}) == balanced_positions(ids, 4, 7)
    filled = balanced_fill(ids[:5], 4, 7, {0: 3, 1: 1})
    counts = Counter({0: 3, 1: 1})
    counts.update(filled.values())
    assert sorted(counts[p] for p in range(4)) == [2, 2, 2, 3]  # 9 placements as even as 3 at 0 allows
    assert balanced_fill(ids[:5], 4, 7, {0: 3, 1: 1}) == filled  # deterministic
    assert balanced_fill(list(reversed(ids[:5])), 4, 7, {0: 3, 1: 1}) == filled  # order-free
    with pytest.raises(ValueError):
        balanced_fill(ids, 4, 7, {4: 1})


def test_a_rewrite_that_fails_its_check_is_final_and_said_once(tmp_path: Path) -> None:
    """Item 9: the demo re-asked its one failing rewrite on every run. A rewriter that always
    fails: the first run asks each target's rewrite once (max_attempts samples), the second none."""
    rewrites: list[str] = []
    base = ideabench_responder()

    def respond(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if is_rewrite(user):
            rewrites.append(user)
            return json.dumps({"idea": "The hypothesis is that catalysts help " * 8})
        return base(messages)

    out = tmp_path / "r"
    for run, asked in ((1, 2), (2, 2)):
        model = ScriptedModel(respond)
        res = ideaharness.run("ideabench", generator=model, judge=model, limit=2, out=out, max_attempts=1,
                              progress=False)
        assert len(rewrites) == asked, run  # the second run makes no rewrite call
        rewrite = res["scenarios"]["low"]["blinding"]["rewrite"]
        assert (rewrite["rewritten"], rewrite["failed"], rewrite["final"]) == (0, 2, True)
        dropped = [n for n in res["notes"] if "the rewrite check dropped 2 of 2" in n]
        assert len(dropped) == 1 and "final, not re-asked by a later run" in dropped[0]
        assert "opens like a paper's summary" in dropped[0]  # why
        units = [u for u in res["unparsed_units"] if u["step"] == "rewrite/low"]
        assert len(units) == 2 and all(u["final"] for u in units)
        unparsed = [n for n in res["notes"] if "rewrite/low" in n and "did not parse" in n]
        assert len(unparsed) == 1
        assert "asked in 1 round(s) of samples, not re-asked by a later run" in unparsed[0]
        assert "re-asks" not in unparsed[0]
        records = _records(out, "rewrite/low")
        assert all(r["on_failure"].startswith("final") and "parse_rounds" not in r for r in records.values())
