"""Judge reliability from judgment views: scripted judges of known behaviour, property tests."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ideaharness.metrics.reliability import (
    JudgmentView,
    consistency,
    panel_aggregate,
    panel_agreement,
    position_bias,
    reliability_blocks,
)
from ideaharness.metrics.reliability.panel import human_agreement


def pair_views(verdict, n_pairs: int = 12, judge: str = "j", metric: str = "cmp") -> list[JudgmentView]:
    """Every pair (a_i, b_i) judged in both orders; ``verdict(first, second) -> 1.0 / 0.5 / 0.0``."""
    views = []
    for i in range(n_pairs):
        a, b = (
            f"{'a' if i % 2 else 'z'}-good{i}",
            f"m-bad{i}",
        )  # the better item sorts first in half the pairs
        for order, shown in (("ab", (a, b)), ("ba", (b, a))):
            views.append(
                JudgmentView(
                    metric=metric,
                    instance_id=f"i{i}",
                    key=order,
                    judge_model=judge,
                    kind="pairwise",
                    value=verdict(*shown),
                    parse_ok=True,
                    positions=shown,
                    group="pair",
                )
            )
    return views


def always_a(first: str, second: str) -> float:
    return 1.0


def content(first: str, second: str) -> float:
    return 1.0 if "-good" in first else 0.0


def test_always_a_judge_is_flagged_degenerate() -> None:
    block = reliability_blocks(pair_views(always_a))["cmp"]
    jr = block.judges["j"]
    assert jr.modal_answer == "first" and jr.modal_share == 1.0 and jr.constant
    assert jr.consistency is not None and jr.consistency.agreement == 0.0  # flips with position
    assert {w.rule for w in block.warnings} == {"constant_judge", "position_bias"}
    assert "preferred the item shown first in all 24 parsed judgments" in block.warnings[0].message
    assert "follow positions, not content" in block.warnings[0].message
    assert jr.position is not None and jr.position.position == "first" and jr.position.p_value < 1e-6


def test_always_equal_judge_is_constant_not_perfectly_consistent() -> None:
    """Item 9: an always-"equal" LigBench judge was "perfectly consistent (1.00, ok)"."""
    for n_pairs in (2, 12):  # also below min_judgments: constant answers say nothing at any n
        jr = reliability_blocks(pair_views(lambda a, b: 0.5, n_pairs=n_pairs))["cmp"].judges["j"]
        assert jr.tie_rate == 1.0 and jr.modal_answer == "tie" and jr.constant
        assert jr.consistency is not None and jr.consistency.agreement == 1.0
        assert not jr.consistency.informative and jr.consistency.chance == 1.0
        assert [w.rule for w in jr.warnings] == ["constant_judge"]  # not ok, and not "follows positions"
        assert 'answered "equal" in all' in jr.warnings[0].message
        assert "not informative" in jr.warnings[0].message and "positions" not in jr.warnings[0].message


def test_constant_rating_judge_gets_its_own_verdict_not_chance() -> None:
    """Item 9: a judge that always gives the same rating has chance agreement 1.0; it must not read
    as "no more consistent than chance ... follows positions"."""
    views = [
        JudgmentView(
            metric="r",
            instance_id=f"i{i}",
            key=k,
            judge_model="j",
            kind="rating",
            value=7.0,
            parse_ok=True,
            positions=p,
            group="",
        )
        for i in range(6)
        for k, p in (("", ("c1", "c2")), ("#reask", ("c2", "c1")))
    ]
    jr = reliability_blocks(views)["r"].judges["j"]
    assert jr.consistency is not None and jr.consistency.chance == 1.0 and not jr.consistency.informative
    assert [w.rule for w in jr.warnings] == ["constant_judge"]
    assert "gave the rating 7.0 in all 12 parsed judgments" in jr.warnings[0].message
    from ideaharness.metrics.reliability import reliability_rows, reliability_section

    section = {
        "metrics": {"r": reliability_blocks(views)["r"].model_dump(mode="json")},
        "warnings": [],
        "human_ceiling": None,
    }
    [row] = reliability_rows(section)
    assert row[5].startswith("not informative: constant judge") and row[-1] == "constant_judge"
    assert reliability_section([], adapters={}, human_ceiling=None)["metrics"] == {}


def test_pairwise_chance_counts_ties_and_side_shares() -> None:
    # a judge that ties 80 % of the time at random and otherwise picks a side at random:
    # chance = 0.8^2 + 2 * 0.1 * 0.1 = 0.66, not the 0.5 of a side-picking judge
    import itertools

    answers = itertools.cycle([0.5, 0.5, 0.5, 0.5, 1.0, 0.5, 0.5, 0.5, 0.5, 0.0])
    views = pair_views(lambda a, b: next(answers), n_pairs=10)
    cons = consistency(views)
    assert cons is not None and cons.informative
    assert cons.chance == pytest.approx(0.8**2 + 2 * 0.1 * 0.1)


def test_content_following_judge_is_consistent_and_unflagged() -> None:
    jr = reliability_blocks(pair_views(content))["cmp"].judges["j"]
    assert jr.consistency is not None and jr.consistency.agreement == 1.0 and jr.consistency.n_pairs == 12
    assert jr.modal_share == 0.5 and jr.tie_rate == 0.0 and not jr.constant
    assert jr.position is not None and jr.position.tests[0].mean == 0.5 and jr.position.p_value == 1.0
    assert jr.warnings == []


def test_parse_failures_and_retries_are_counted_not_scored() -> None:
    views = pair_views(content, n_pairs=3)
    views[0] = JudgmentView(
        metric="cmp",
        instance_id="i0",
        key="ab",
        judge_model="j",
        kind="pairwise",
        value=None,
        parse_ok=False,
        attempts=3,
        positions=("z-good0", "m-bad0"),
        group="pair",
    )
    views[1] = JudgmentView(**{**views[1].__dict__, "attempts": 2})
    jr = reliability_blocks(views)["cmp"].judges["j"]
    assert (jr.judgments, jr.parse_failures, jr.retries, jr.extra_calls) == (6, 1, 2, 3)
    assert jr.parse_failure_rate == pytest.approx(1 / 6) and jr.retry_rate == pytest.approx(2 / 6)
    assert jr.consistency is not None and jr.consistency.n_pairs == 2  # the failed order has no partner


def test_a_failed_parse_cannot_carry_a_value() -> None:
    with pytest.raises(ValueError, match="parse failure"):
        JudgmentView(
            metric="m", instance_id="i", key="", judge_model="j", kind="rating", value=3, parse_ok=False
        )


def ranking(
    items: tuple[str, ...], order: list[int], shown_key: str, judge_fn, group: str = "g"
) -> JudgmentView:
    shown = tuple(items[p] for p in order)
    return JudgmentView(
        metric="rank",
        instance_id="i",
        key=shown_key,
        judge_model="j",
        kind="ranking",
        value=judge_fn(shown),
        parse_ok=True,
        positions=shown,
        group=group,
    )


def test_ranking_reask_kendall_tau() -> None:
    items = ("w", "x", "y", "z")
    by_content = lambda shown: tuple(sorted(shown))  # noqa: E731
    by_position = lambda shown: tuple(shown)  # noqa: E731
    for fn, expected in ((by_content, 1.0), (by_position, -1.0)):
        views = [ranking(items, [0, 1, 2, 3], "", fn), ranking(items, [3, 2, 1, 0], "#reask", fn)]
        cons = consistency(views)
        assert (
            cons is not None and cons.measure == "kendall_tau_b" and cons.agreement == pytest.approx(expected)
        )
    pos = position_bias([ranking(items, [0, 1, 2, 3], str(k), by_position, group=str(k)) for k in range(5)])
    assert pos is not None and pos.position == "first" and pos.favours == "favours"
    assert pos.tests[0].mean == 1.0 and pos.tests[0].p_value == pytest.approx(2 * 0.25**5)


def test_rating_reask_exact_and_within_one() -> None:
    views = [
        JudgmentView(
            metric="r",
            instance_id=f"i{i}",
            key=k,
            judge_model="j",
            kind="rating",
            value=v,
            parse_ok=True,
            positions=p,
            group="",
        )
        for i, (a, b) in enumerate([(3, 3), (4, 5), (2, 5)])
        for k, v, p in (("", a, ("c1", "c2")), ("#reask", b, ("c2", "c1")))
    ]
    cons = consistency(views)
    assert (
        cons is not None
        and cons.agreement == pytest.approx(1 / 3)
        and cons.within_one == pytest.approx(2 / 3)
    )
    assert cons.chance == pytest.approx(sum((c / 6) ** 2 for c in (2, 1, 1, 2)))


def test_panel_alpha_and_majority() -> None:
    same = pair_views(content, judge="a") + pair_views(content, judge="b")
    agreement = panel_agreement(same)
    assert agreement is not None and agreement.alpha == pytest.approx(1.0) and agreement.level == "ordinal"
    mixed = pair_views(content, judge="a") + pair_views(content, judge="b") + pair_views(always_a, judge="c")
    verdicts = panel_aggregate(mixed)
    assert verdicts["i0|pair"] == "z-good0"  # 4 of 6 answers, the position-judge outvoted
    assert panel_agreement(mixed).alpha < 1.0
    choice = [
        JudgmentView(
            metric="q",
            instance_id=f"i{i}",
            key="",
            judge_model=j,
            kind="choice",
            value=(v,),
            parse_ok=True,
            positions=("x", "y", "z"),
        )
        for i in range(6)
        for j, v in (("a", i % 3), ("b", i % 3), ("c", 0))
    ]
    nominal = panel_agreement(choice)
    assert nominal is not None and nominal.level == "nominal" and -1.0 <= nominal.alpha < 1.0


def test_agreement_with_human_labels() -> None:
    views = pair_views(content, n_pairs=4)
    labels = {f"i{i}|pair": f"{'a' if i % 2 else 'z'}-good{i}" for i in range(4)}
    assert human_agreement(views, labels).value == 1.0
    block = reliability_blocks(pair_views(always_a, n_pairs=4), human_labels={"cmp": labels})["cmp"]
    # per pair: "always the first" answers both orders differently, a tie, wrong on every pair (per
    # judgment it looked right half of the time); n counts the 4 pairs, too few for an interval
    human = block.judges["j"].human
    assert (human.value, human.n, human.interval) == (0.0, 4, None)
    assert human.interval_why == "n too small for an interval (n < 5)"


def test_self_preference_flag() -> None:
    v = JudgmentView(
        metric="m",
        instance_id="i",
        key="",
        judge_model="qwen",
        kind="rating",
        value=4.0,
        parse_ok=True,
        generator_model="qwen",
    )
    jr = reliability_blocks([v])["m"].judges["qwen"]
    assert jr.self_preference and jr.self_judged == 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([1.0, 0.5, 0.0]),
            st.sampled_from([1.0, 0.5, 0.0]),
            st.booleans(),
            st.integers(1, 3),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_block_figures_stay_in_range(rows) -> None:
    views = []
    for i, (v1, v2, ok, attempts) in enumerate(rows):
        for key, shown, v in (("ab", ("a", "b"), v1), ("ba", ("b", "a"), v2)):
            views.append(
                JudgmentView(
                    metric="m",
                    instance_id=f"i{i}",
                    key=key,
                    judge_model="j",
                    kind="pairwise",
                    value=v if ok else None,
                    parse_ok=ok,
                    attempts=attempts,
                    positions=shown,
                    group="g",
                )
            )
    jr = reliability_blocks(views)["m"].judges["j"]
    assert jr.judgments == 2 * len(rows) and jr.parsed + jr.parse_failures == jr.judgments
    for rate in (jr.parse_failure_rate, jr.retry_rate, jr.tie_rate, jr.modal_share):
        assert rate is None or 0.0 <= rate <= 1.0
    assert jr.consistency is not None and jr.consistency.n_pairs == sum(ok for *_, ok, _ in rows)
    if jr.consistency.agreement is not None:
        assert 0.0 <= jr.consistency.agreement <= 1.0
    if jr.position is not None and jr.position.p_value is not None:
        assert 0.0 <= jr.position.p_value <= jr.position.p_adjusted <= 1.0
        assert not math.isnan(jr.position.p_value)
