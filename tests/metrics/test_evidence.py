"""The evidence verdict of a headline value (metrics.evidence): each rule, worst wins, direction."""

from __future__ import annotations

from typing import Any

import pytest

from ideaharness.metrics.aggregate import MIN_INTERVAL_N
from ideaharness.metrics.evidence import (
    COVERAGE_MIN,
    COVERAGE_WEAK,
    WEAK_N,
    ReliabilityFlag,
    coverage_entries,
    declared_targets,
    evidence_block,
    evidence_lines,
    evidence_of,
    headline_verdict,
    qualifying_notes,
    reliability_flags,
    reliability_targets,
    worst,
)


def headline(metric: str = "bench.acc", value: float | None = 0.8,
             ci: tuple[float, float] | None = (0.7, 0.9), n: int | None = 40, group: str = "",
             system: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"metric": metric, "group": group, "system": system, "value": value, "ci": ci, "n": n, **extra}


def form(best_value: float, metric: str = "bench.acc", group: str = "", step: str = "judge_step",
         system: str | None = None) -> dict[str, Any]:
    return {"metric": metric, "group": group, "system": system, "step": step, "n": 40, "chance": 0.5,
            "baselines": {"shortest": best_value, "first": 0.5}, "best": "shortest", "best_value": best_value}


def judge_block(rule: str, **jr: Any) -> dict[str, Any]:
    base = {"judgments": 40, "parsed": 40, "modal_answer": "7", "modal_share": 1.0,
            "consistency": {"agreement": 0.5, "chance": 0.6, "n_pairs": 12},
            "position": {"favours": "favours", "position": "first", "p_adjusted": 0.001, "n_judgments": 40},
            "warnings": [{"rule": rule, "judge_model": "j", "message": "..."}]}
    return {"judges": {"j": {**base, **jr}}}


def test_clean_headline_is_evidence() -> None:
    full = {"system": "s", "asked": 40, "answered": 40, "failed": [], "rate": 1.0}
    v = headline_verdict(headline(), higher_is_better=True, coverage=[full])
    assert v.verdict == "evidence" and v.reasons == []


@pytest.mark.parametrize(("n", "ci", "verdict", "says"), [
    (MIN_INTERVAL_N - 1, None, "not evidence", "n too small"),
    (2, (0.1, 0.9), "not evidence", "n too small"),
    (40, None, "not evidence", "no 95% interval"),
    (WEAK_N - 1, (0.6, 0.95), "weak", f"n {WEAK_N - 1} < {WEAK_N}"),
    (WEAK_N, (0.6, 0.95), "evidence", None),
])
def test_n_and_interval(n: int, ci: tuple[float, float] | None, verdict: str, says: str | None) -> None:
    v = headline_verdict(headline(n=n, ci=ci), higher_is_better=True)
    assert v.verdict == verdict
    if says:
        assert any(says in r for r in v.reasons), v.reasons
        assert any(str(n) in r for r in v.reasons)


def test_not_computed_is_not_evidence_with_its_why() -> None:
    v = headline_verdict(headline(value=None, ci=None, n=0, why="decompose: 5/5 judgments unparsed"))
    assert v.verdict == "not evidence"
    assert "not computed (n 0): decompose: 5/5 judgments unparsed" in v.reasons


def test_interval_reason_carries_ci_why() -> None:
    v = headline_verdict(headline(ci=None, n=30, ci_why="every unit has the same value"))
    assert v.verdict == "not evidence" and "every unit has the same value" in v.reasons[0]


@pytest.mark.parametrize(("answered", "verdict"), [(40, "evidence"), (39, "evidence"), (37, "weak"),
                                                   (33, "weak"), (31, "not evidence"), (15, "not evidence")])
def test_coverage_rule(answered: int, verdict: str) -> None:
    rate = answered / 40
    entry = {"role": "generator", "system": "sysD", "asked": 40, "answered": answered,
             "failed": [f"t{i}" for i in range(40 - answered)], "rate": rate}
    v = headline_verdict(headline(), higher_is_better=True, coverage=[entry])
    assert v.verdict == verdict
    assert (rate >= COVERAGE_WEAK) == (verdict == "evidence")
    assert (rate < COVERAGE_MIN) == (verdict == "not evidence")
    if verdict != "evidence":
        assert f"coverage {answered}/40 ({rate:.0%}) for sysD" in v.reasons[0]


def test_coverage_of_a_named_system_uses_its_own_entry() -> None:
    cov = [{"role": "system:a", "system": "a", "asked": 10, "answered": 10, "failed": [], "rate": 1.0},
           {"role": "system:b", "system": "b", "asked": 10, "answered": 3, "failed": list("1234567"),
            "rate": 0.3}]
    assert headline_verdict(headline(system="a"), coverage=cov).verdict == "evidence"
    assert headline_verdict(headline(system="b"), coverage=cov).verdict == "not evidence"
    assert headline_verdict(headline(system=None), coverage=cov).verdict == "not evidence"


def test_coverage_fallbacks() -> None:
    sources = {"idea_sources": [{"role": "generator", "system": "m", "kind": "model", "spec": "m",
                                 "answers": {"asked": 24, "missing": [f"t{i}" for i in range(10)],
                                             "failed": [f"t{i}" for i in range(5, 15)]}}]}
    (entry,) = coverage_entries(sources) or []
    assert (entry["asked"], entry["answered"], entry["rate"]) == (24, 9, 9 / 24)
    old = {"selection": {"selected": 4, "available": 4, "ids": ["a", "b", "c", "d"]},
           "failed_units": [{"step": "g", "instance_id": "a", "error": "x"},
                            {"step": "j", "instance_id": "a", "error": "y"}]}
    (entry,) = coverage_entries(old) or []
    assert (entry["answered"], entry["failed"]) == (3, ["a"])
    assert coverage_entries({}) is None
    v = headline_verdict(headline(), coverage=None)
    assert v.verdict == "evidence" and v.reasons[0].startswith("coverage unknown")


@pytest.mark.parametrize(("best", "verdict"), [(0.85, "not evidence"), (0.8, "not evidence"),
                                               (0.75, "weak"), (0.6, "evidence")])
def test_form_baseline_higher_is_better(best: float, verdict: str) -> None:
    v = headline_verdict(headline(value=0.8, ci=(0.7, 0.9)), higher_is_better=True,
                         form_baselines=[form(best)])
    assert v.verdict == verdict
    if verdict != "evidence":
        assert "'shortest' on judge_step reaches" in v.reasons[0] and f"{best:.3g}" in v.reasons[0]


@pytest.mark.parametrize(("best", "verdict"), [(1.5, "not evidence"), (2.5, "weak"), (4.0, "evidence")])
def test_form_baseline_lower_is_better(best: float, verdict: str) -> None:
    """A rank (1 = best): the value must be below the form-only baseline."""
    v = headline_verdict(headline(metric="bench.rank", value=2.0, ci=(1.6, 2.8)), higher_is_better=False,
                         form_baselines=[form(best, metric="bench.rank")])
    assert v.verdict == verdict


def test_form_baseline_of_another_headline_is_ignored() -> None:
    forms = [form(0.95, group="other"), form(0.95, metric="bench.other")]
    assert headline_verdict(headline(), higher_is_better=True, form_baselines=forms).verdict == "evidence"


def test_form_baseline_with_unknown_direction_is_weak() -> None:
    v = headline_verdict(headline(), higher_is_better=None, form_baselines=[form(0.5)])
    assert v.verdict == "weak" and "direction is unknown" in v.reasons[0]


@pytest.mark.parametrize(("rule", "verdict", "says"), [
    ("constant_judge", "not evidence", "constant judge: j gave 7 in all 40 parsed judgments of critique[x]"),
    ("position_bias", "weak", "position bias: j on critique[x] favours first (adjusted p 0.001, n 40)"),
    ("consistency_at_chance", "weak",
     "consistency at chance: j on critique[x] agrees with itself 0.5 vs chance 0.6"),
    ("one_answer", "weak", "near-constant judge"),
    ("truncated_reasoning", "evidence", None),
])
def test_reliability_flags(rule: str, verdict: str, says: str | None) -> None:
    results = {"benchmark": "bench", "metrics": [headline(metric="bench.x")],
               "reliability": {"metrics": {"critique[x]": judge_block(rule)}}}
    (v,) = evidence_block(results, {"bench.x": True})["verdicts"]
    assert v["verdict"] == verdict
    if says:
        assert any(r.startswith(says) for r in v["reasons"]), v["reasons"]


def test_worst_wins_and_reasons_are_ordered() -> None:
    flag = ReliabilityFlag("position_bias", "m", "j", "position bias: j")
    cov = [{"system": "s", "asked": 40, "answered": 20, "failed": [], "rate": 0.5}]
    v = headline_verdict(headline(n=7, ci=(0.5, 0.9)), higher_is_better=True, coverage=cov, flags=[flag])
    assert v.verdict == "not evidence"
    assert v.reasons[0].startswith("coverage 20/40") and len(v.reasons) == 3
    assert worst([]) == "evidence" and worst(["weak", "evidence"]) == "weak"
    assert worst(["weak", "not evidence", "evidence"]) == "not evidence"
    with pytest.raises(ValueError, match="verdict 'bad'"):
        worst(["bad"])  # type: ignore[list-item]


def test_reliability_targets_by_name_link_inputs_and_fallback() -> None:
    heads = [headline(metric="lib.originality"), headline(metric="lib.fluency"),
             headline(metric="lib.average"), headline(metric="lib.flexibility"),
             headline(metric="mlr.idea_novelty"), headline(metric="mlr.proposal_novelty")]
    t = reliability_targets(["critique[originality]", "fluency", "review/idea[novelty]", "other_step"], heads,
                            benchmark="lib", inputs={"lib.average": ["lib.originality", "lib.fluency"]})
    # a headline no judged metric names (3, 5) takes every judged metric's flags
    assert t["critique[originality]"] == [0, 2, 3, 5]
    assert t["fluency"] == [1, 2, 3, 5]
    assert t["review/idea[novelty]"] == [3, 4, 5]
    assert t["other_step"] == [3, 5]
    rb = [headline(metric="rb.directional_accuracy"), headline(metric="rb.hit_ratio")]
    linked = reliability_targets(["rank_pair", "screen_window"], rb,
                                 links=[("rank_pair", "rb.directional_accuracy"),
                                        ("screen_window", "rb.hit_ratio")])
    assert linked == {"rank_pair": [0], "screen_window": [1]}
    assert reliability_targets(["rank_pair"], rb, links=[("rank_pair", "rb.directional_accuracy")]) == {
        "rank_pair": [0, 1]}  # hit_ratio is named by no judged metric: it takes every flag


def test_declared_targets_follow_judged_by_with_the_group_filled() -> None:
    heads = [headline(metric="aiib.imcq", group="motivation"), headline(metric="aiib.imcq", group="plan"),
             headline(metric="aiib.i2i", group="motivation"), headline(metric="ib.bertscore")]
    judged = ["imcq[motivation]", "imcq[plan]", "i2i[motivation]", "i2i[plan]"]
    t = declared_targets(judged, heads, {"aiib.imcq": ["imcq[{group}]"], "aiib.i2i": ["i2i[{group}]"],
                                         "ib.bertscore": []})
    assert t == {"imcq[motivation]": [0], "imcq[plan]": [1], "i2i[motivation]": [2], "i2i[plan]": []}
    # a headline whose metric is not in the mapping is left to the guess
    assert declared_targets(judged, heads, {}) == {r: [] for r in judged}


def test_block_places_flags_by_declaration_and_guesses_only_for_undeclared_metrics() -> None:
    section = {"metrics": {"rank/low": judge_block("constant_judge"), "i2i[m]": judge_block("position_bias")}}
    results = {"benchmark": "ib", "reliability": section,
               "metrics": [headline(metric="ib.insight_score", group="low"),
                           headline(metric="ib.bertscore_f1"), headline(metric="ib.unregistered")]}
    block = evidence_block(results, judged_by={"ib.insight_score": ("rank/{group}",), "ib.bertscore_f1": (),
                                               "ib.unregistered": None})
    insight, bert, other = block["verdicts"]
    assert insight["verdict"] == "not evidence"
    judge = ("constant judge", "position bias")
    assert [r for r in insight["reasons"] if r.startswith(judge)] == [
        "constant judge: j gave 7 in all 40 parsed judgments of rank/low"]
    assert bert["verdict"] == "evidence" and not [r for r in bert["reasons"] if r.startswith(judge)]
    # undeclared (None): the guess — no judged metric names it, so it takes every flag
    assert other["verdict"] == "not evidence"
    assert len([r for r in other["reasons"] if r.startswith(judge)]) == 2
    assert block["judged_by"] == {"ib.bertscore_f1": [], "ib.insight_score": ["rank/{group}"]}
    # without declarations (a run written before them) the BERTScore takes both flags too
    guessed = evidence_block(results)
    assert guessed["judged_by"] == {} and guessed["verdicts"][1]["verdict"] == "not evidence"
    # evidence_of recomputes with the declarations given (compare passes the registered ones)
    assert evidence_of(results, judged_by={"ib.insight_score": ("rank/{group}",), "ib.bertscore_f1": (),
                                           "ib.unregistered": None}) == block


def test_flags_read_from_a_reliability_section() -> None:
    section = {"metrics": {"fluency": judge_block("constant_judge"), "critique[a]": {"judges": {}}}}
    (flag,) = reliability_flags({"reliability": section})
    assert (flag.rule, flag.metric, flag.judge) == ("constant_judge", "fluency", "j")
    assert flag.verdict == "not evidence"
    assert reliability_flags({}) == []


def test_block_thresholds_lines_and_recompute() -> None:
    results = {"benchmark": "bench", "metrics": [headline(), headline(metric="bench.small", n=3, ci=None)]}
    block = evidence_block(results, {"bench.acc": True})
    assert block["thresholds"]["weak_n"] == WEAK_N and block["thresholds"]["min_interval_n"] == MIN_INTERVAL_N
    assert [v["verdict"] for v in block["verdicts"]] == ["evidence", "not evidence"]
    lines = evidence_lines(block)
    assert lines == ["NOT EVIDENCE: bench.small: n too small: n 3 < 5, no valid 95% interval"]
    assert evidence_lines(evidence_block({"metrics": [headline()]}))[0].startswith("evidence: all 1 headline")
    assert evidence_of({**results, "evidence": block}) == block
    assert evidence_of(results, {"bench.acc": True}) == block


def test_qualifying_notes_one_line_each_without_repeats() -> None:
    notes = {"notes": ["the comparison\nis not blind", "NOT COMPUTED: x", "the comparison is not blind"]}
    assert qualifying_notes(notes, already=["NOT COMPUTED: x"]) == ["the comparison is not blind"]
