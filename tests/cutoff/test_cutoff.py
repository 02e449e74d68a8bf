"""The cutoff primitive (src/ideaharness/cutoff.py): verdicts, the stricter cutoff, the ledger."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ideaharness.cutoff import (
    CutoffLedger,
    before_cutoff,
    effective_cutoff,
    parse_cutoff,
    verdict,
)
from ideaharness.schema import Paper, Reference

CUT = dt.date(2023, 10, 3)


def _paper(pid: str, date: dt.date | None = None, year: int | None = None) -> Paper:
    return Paper(id=pid, title=pid, publication_date=date, year=year)


@pytest.mark.parametrize(("date", "year", "expected"), [
    (dt.date(2023, 10, 3), None, "before"),      # the cutoff day itself is visible
    (dt.date(2023, 10, 4), None, "after"),
    (dt.date(2023, 10, 4), 2022, "after"),       # the day wins over a contradicting year
    (dt.date(2020, 1, 1), 2024, "before"),
    (None, 2024, "after"),
    (None, 2022, "before"),
    (None, 2023, "undated"),                     # the cutoff's own year cannot be placed
    (None, None, "undated"),
])
def test_verdict(date: dt.date | None, year: int | None, expected: str) -> None:
    assert verdict(_paper("p", date, year), CUT) == expected


dates = st.dates(min_value=dt.date(1950, 1, 1), max_value=dt.date(2100, 12, 31))


@given(date=st.none() | dates, year=st.none() | st.integers(1950, 2100), cutoff=dates)
def test_verdict_agrees_with_the_ordering_of_days(date: dt.date | None, year: int | None,
                                                  cutoff: dt.date) -> None:
    """"after" only when every day the paper could carry is later than the cutoff; "before" only
    when every such day is on or before it."""
    v = verdict(_paper("p", date, year), cutoff)
    if date is not None:
        assert v == ("after" if date > cutoff else "before")
    elif year is None:
        assert v == "undated"
    else:
        first, last = dt.date(year, 1, 1), dt.date(year, 12, 31)
        assert (v == "after") == (first > cutoff)
        assert (v == "before") == (last <= cutoff or year < cutoff.year)


@pytest.mark.parametrize(("inst", "run", "expected"), [
    (None, None, None),
    (dt.date(2024, 1, 1), None, dt.date(2024, 1, 1)),
    (None, dt.date(2022, 5, 1), dt.date(2022, 5, 1)),
    (dt.date(2024, 1, 1), dt.date(2022, 5, 1), dt.date(2022, 5, 1)),
    (dt.date(2021, 1, 1), dt.date(2022, 5, 1), dt.date(2021, 1, 1)),
])
def test_effective_cutoff_is_the_stricter(inst: dt.date | None, run: dt.date | None,
                                          expected: dt.date | None) -> None:
    assert effective_cutoff(inst, run) == expected


def test_parse_cutoff_names_the_option() -> None:
    assert parse_cutoff(" 2024-02-29 ") == dt.date(2024, 2, 29)
    with pytest.raises(ValueError, match=r"--cutoff: '2024-13-01' is not a date \(expected YYYY-MM-DD\)"):
        parse_cutoff("2024-13-01")


def test_before_cutoff_drops_later_works_and_counts_per_source() -> None:
    refs = [Reference(id="old", title="old", year=2019),
            Reference(id="new", title="new", publication_date=dt.date(2024, 1, 2)),
            Reference(id="same-year", title="same-year", year=2023),
            Reference(id="none", title="none")]
    ledger = CutoffLedger()
    kept = before_cutoff(refs, CUT, source="references", ledger=ledger)
    assert [r.id for r in kept] == ["old", "same-year", "none"]
    assert all(isinstance(r, Reference) for r in kept)
    dropped = before_cutoff(refs, CUT, source="s2_search", ledger=ledger, undated="drop")
    assert [r.id for r in dropped] == ["old"]
    assert ledger.as_dict() == {"references": {"kept": 3, "excluded": 1, "undated": 2},
                                "s2_search": {"kept": 1, "excluded": 3, "undated": 2}}
    assert ledger.excluded("references") == 1
    assert ledger.excluded() == 4
    assert ledger.excluded("corpus") == 0


def test_no_cutoff_keeps_everything_and_still_records_the_access() -> None:
    ledger = CutoffLedger()
    papers = [_paper("a", dt.date(2030, 1, 1)), _paper("b")]
    assert before_cutoff(papers, None, source="corpus", ledger=ledger) == papers
    before_cutoff([], CUT, source="pool", ledger=ledger)
    assert ledger.as_dict() == {"corpus": {"kept": 2, "excluded": 0, "undated": 0},
                                "pool": {"kept": 0, "excluded": 0, "undated": 0}}


def test_ledgers_merge_and_round_trip() -> None:
    a, b = CutoffLedger(), CutoffLedger()
    a.record("references", ["before", "after"])
    b.record("references", ["after", "undated"])
    b.record("corpus", ["before"])
    a.merge(b)
    assert a.as_dict() == {"corpus": {"kept": 1, "excluded": 0, "undated": 0},
                           "references": {"kept": 2, "excluded": 2, "undated": 1}}
    assert CutoffLedger.from_dict(a.as_dict()).as_dict() == a.as_dict()


@given(st.lists(st.tuples(st.none() | dates, st.none() | st.integers(1950, 2100)), max_size=30), dates,
       st.sampled_from(["keep", "drop"]))
def test_counts_add_up_to_the_works_seen(rows: list[tuple[dt.date | None, int | None]], cutoff: dt.date,
                                         undated: str) -> None:
    papers = [_paper(str(i), d, y) for i, (d, y) in enumerate(rows)]
    ledger = CutoffLedger()
    kept = before_cutoff(papers, cutoff, source="s", ledger=ledger, undated=undated)  # type: ignore[arg-type]
    row = ledger.as_dict()["s"]
    assert row["kept"] == len(kept)
    assert row["kept"] + row["excluded"] == len(papers)
    assert all(verdict(p, cutoff) != "after" for p in kept)
