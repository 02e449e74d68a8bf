"""Position bias tested per judgment (issue 18 item 14): null calibration, power, exactness."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom, binomtest

from ideaharness.metrics.reliability import JudgmentView, position_bias, reliability_blocks
from ideaharness.metrics.reliability.position import (
    RESAMPLES,
    choice_position_test,
    holm,
    pairwise_position_test,
    ranking_position_test,
)

RUNS = 2000
ALPHA = 0.05


def _null_rate(test, draw, rng: np.random.Generator) -> float:
    """Share of RUNS simulated runs of a judge with no position preference flagged at ALPHA; each
    run has 24 to 64 judgments (sizes of the bundled benchmarks' runs: 51 TOMATO-Chem instances,
    48 LiveIdeaBench critiques ...)."""
    hits = 0
    for _ in range(RUNS):
        hits += test(draw(int(rng.choice([24, 32, 40, 48, 51, 64])))).significant(ALPHA)
    return hits / RUNS


def test_null_false_alarm_rate_is_near_alpha_for_pairs_rankings_and_choices() -> None:
    rng = np.random.default_rng(20261202)
    # a judge that ignores positions: pairs won at random (a tie now and then), rankings uniform
    # permutations of 4 ideas, one of 4 options chosen uniformly
    pairs = _null_rate(
        pairwise_position_test, lambda n: rng.choice([0.0, 1.0, 0.5], n, p=[0.45, 0.45, 0.1]), rng
    )
    rankings = _null_rate(ranking_position_test, lambda n: np.argsort(rng.random((n, 4)), axis=1) + 1, rng)
    choices = _null_rate(choice_position_test, lambda n: np.eye(4, dtype=bool)[rng.integers(0, 4, n)], rng)
    # the pooled Spearman test this replaces fired in 12-17 % / 8-10 % / 7.5-9 % of such runs
    for rate in (pairs, rankings, choices):
        assert 0.03 <= rate <= 0.07, (pairs, rankings, choices)


def test_exact_pairwise_size_never_exceeds_alpha() -> None:
    """The binomial test's exact size (no simulation) at run sizes from 6 to 200 judgments."""
    for n in (6, 10, 17, 24, 30, 48, 51, 64, 100, 200):
        p = pairwise_position_test([1.0] * n).p_value  # the smallest p of that size
        assert p is not None and p == pytest.approx(2 * 0.5**n)
        for k in range(n + 1):  # the exact binomial test's p-value, outcome by outcome
            got = pairwise_position_test([1.0] * k + [0.0] * (n - k)).p_value
            assert got == pytest.approx(binomtest(k, n, 0.5).pvalue, rel=1e-9)
        size = sum(
            binom.pmf(k, n, 0.5)
            for k in range(n + 1)
            if pairwise_position_test([1.0] * k + [0.0] * (n - k)).significant(ALPHA)
        )
        assert size <= ALPHA


def test_last_shown_idea_ranked_first_six_of_six_times_is_flagged() -> None:
    # the real 1.5B judge on IdeaBench: the idea shown last ranked first in 6 of 6 rankings of 4
    rng = np.random.default_rng(7)
    rows = []
    for _ in range(6):
        rest = rng.permutation([2, 3, 4])
        rows.append([*rest, 1])  # ranks of the items at shown positions 1..4
    result = ranking_position_test(rows)
    last = result.tests[3]
    assert last.label == "last" and last.mean == 1.0 and last.favoured
    assert last.p_value == pytest.approx(2 * 0.25**6)  # both tails of a rank sum of 6 (or 24)
    assert 0.25**6 == pytest.approx(0.00024, abs=1e-5)  # the probability the issue quotes
    assert result.significant(ALPHA) and result.position == "last" and result.favours == "favours"
    assert result.p_adjusted is not None and result.p_adjusted < 0.01


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_any_fixed_position_preference_is_detected(k: int) -> None:
    rng = np.random.default_rng(k)
    rows = []
    for _ in range(8):
        ranks = list(rng.permutation([2, 3, 4]))
        ranks.insert(k, 1)
        rows.append(ranks)
    result = ranking_position_test(rows)
    assert result.significant(ALPHA) and result.tests[k].favoured
    assert result.position == (
        "first" if k == 0 else "last" if k == 3 else f"{k + 1}{'nd' if k == 1 else 'rd'}"
    )


def test_choice_position_preference_and_multi_selection() -> None:
    always_c = np.eye(4, dtype=bool)[[2] * 10]
    result = choice_position_test(always_c)
    assert result.significant(ALPHA) and result.position == "3rd" and result.favours == "favours"
    assert result.tests[2].p_value == pytest.approx(binomtest(10, 10, 0.25).pvalue)
    # windows of different sizes, several chosen: a judge choosing the first two every time
    rows = [[True, True] + [False] * m for m in (3, 4, 5, 6, 7, 8)] * 2
    multi = choice_position_test(rows)
    assert multi.significant(ALPHA) and multi.position == "first"
    assert [t.label for t in multi.tests][-1] == "last"  # sizes differ: the last position is tested too


def test_balanced_content_judge_is_not_flagged() -> None:
    # a judge that always picks the gold item, gold placed on each of 4 positions equally often
    gold = np.eye(4, dtype=bool)[[i % 4 for i in range(40)]]
    assert not choice_position_test(gold).significant(ALPHA)
    assert not pairwise_position_test([1.0, 0.0] * 20).significant(ALPHA)


def test_views_are_tested_per_judgment_not_per_point() -> None:
    views = [
        JudgmentView(
            metric="cmp",
            instance_id=f"i{i}",
            key="",
            judge_model="j",
            kind="pairwise",
            value=1.0 if i < 14 else 0.0,
            parse_ok=True,
            positions=(f"a{i}", f"b{i}"),
        )
        for i in range(20)
    ]
    pos = position_bias(views)
    assert pos is not None and pos.n_judgments == 20 and pos.tests[0].observed == 14
    assert pos.p_value == pytest.approx(binomtest(14, 20, 0.5).pvalue)  # 0.115: not flagged
    assert not pos.significant(ALPHA)
    block = reliability_blocks(views)["cmp"].judges["j"]
    assert block.position == pos and not any(w.rule == "position_bias" for w in block.warnings)


def test_six_rankings_through_the_reliability_block_warn_with_the_exact_p() -> None:
    ideas = ("t", "x", "y", "z")
    views = []
    for i in range(6):
        shown = tuple(ideas[(i + j) % 4] for j in range(4))
        value = (shown[3], shown[0], shown[1], shown[2])  # the last-shown idea first
        views.append(
            JudgmentView(
                metric="rank/low/novelty",
                instance_id=f"p{i}",
                key="",
                judge_model="qwen1.5b",
                kind="ranking",
                value=value,
                parse_ok=True,
                positions=shown,
            )
        )
    jr = reliability_blocks(views)["rank/low/novelty"].judges["qwen1.5b"]
    [warning] = [w for w in jr.warnings if w.rule == "position_bias"]
    assert "favours the item shown last: mean rank 1.00" in warning.message
    assert "over 6 rankings" in warning.message and "exact p = 0.00049" in warning.message


def test_min_p_adjustment_is_seeded_and_recorded() -> None:
    rows = np.array([[1, 2, 3, 4]] * 5 + [[2, 1, 4, 3]] * 5)
    a, b = ranking_position_test(rows, seed=3), ranking_position_test(rows, seed=3)
    assert a == b and a.seed == 3 and a.resamples == RESAMPLES
    for t in a.tests:
        assert t.p_value <= t.p_adjusted <= 1.0


def test_holm_reference_adjustment() -> None:
    # Holm (1979): p = (0.01, 0.04, 0.03) -> (0.03, 0.06, 0.06)
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_ideabench_run_whose_judge_ranks_the_last_shown_idea_first_warns(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real 1.5B judge ranked the last-shown idea first in 6 of 6 IdeaBench rankings and the run
    showed no warning: the same behaviour, scripted, through a real run and its console output."""
    import json
    import re

    import ideaharness
    from ideaharness.llm.scripted import ScriptedModel
    from ideaharness.report.console import print_reliability
    from tests.ideabench.conftest import ideabench_responder

    base = ideabench_responder()

    def last_first(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if "Rank the following" in user:
            labels = re.search(r"exactly once \(([A-Z, ]+)\)", user).group(1).split(", ")
            return json.dumps({"ranking": [labels[-1], *labels[:-1]], "rationale": "the last one"})
        return base(messages)

    model = ScriptedModel(last_first)
    results = ideaharness.run(
        "ideabench",
        generator=model,
        judge=model,
        limit=6,
        out=tmp_path / "run",
        progress=False,
        use_cache=False,
        consistency_sample=0.0,
    )
    block = results["reliability"]["metrics"]["rank/low/novelty"]["judges"][model.model]
    assert block["position"]["n_judgments"] == 6 and block["position"]["position"] == "last"
    assert block["position"]["p_value"] == pytest.approx(2 * 0.25**6)
    print_reliability(results)
    printed = capsys.readouterr().out
    assert "rank/low/novelty: judge" in printed and "favours the item shown last" in printed
