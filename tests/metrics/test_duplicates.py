"""Duplicate and near-duplicate ideas among the n per instance (metrics.duplicates)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ideaharness.metrics.duplicates import count_duplicates, duplicate_report, jaccard, normalise


def test_exact_near_and_distinct_are_told_apart() -> None:
    ideas = [
        "Dope the hydrogel with GdmCl to raise its thermopower.",
        "dope the  hydrogel with gdmcl, to raise its THERMOPOWER!",  # exact after normalisation
        "Dope the hydrogel with GdmCl to raise its thermopower at 25 C.",  # 9/12 words -> 0.75: distinct
        "Dope the hydrogel with GdmCl to strongly raise its thermopower.",  # 9/10 -> near
        "Measure the Seebeck coefficient of a freeze-cast gel.",
    ]
    counts = count_duplicates(ideas)
    assert counts["exact_duplicates"] == 1 and counts["near_duplicates"] == 1 and counts["distinct"] == 3
    assert counts["pairs"] == [[1, 0, "exact", 1.0], [3, 0, "near", 0.9]]
    assert count_duplicates(ideas, threshold=0.7)["near_duplicates"] == 2
    with pytest.raises(ValueError):
        count_duplicates(ideas, threshold=0.0)


def test_report_sums_over_instances_and_never_across_them() -> None:
    same = "A salt raises the thermopower of the gel."
    report = duplicate_report([[same, same, same], [same], ["other idea entirely", same]])
    assert report["ideas"] == 6 and report["exact_duplicates"] == 2 and report["near_duplicates"] == 0
    assert report["instances_with_duplicates"] == 1 and report["duplicate_share"] == pytest.approx(2 / 6)
    assert report["threshold"] == 0.8 and "Jaccard" in report["method"]
    assert duplicate_report([])["duplicate_share"] is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=8))
def test_counts_add_up_and_a_repeated_list_is_all_duplicates(texts: list[str]) -> None:
    counts = count_duplicates(texts)
    assert counts["exact_duplicates"] + counts["near_duplicates"] + counts["distinct"] == len(texts)
    doubled = count_duplicates(texts + texts)
    assert doubled["distinct"] <= max(len(texts), 0) and doubled["distinct"] == counts["distinct"]
    assert all(0.0 <= jaccard(frozenset(normalise(a).split()), frozenset(normalise(b).split())) <= 1.0
               for a in texts for b in texts)
