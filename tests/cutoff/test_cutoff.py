"""The cutoff primitive (src/ideaharness/cutoff.py): verdicts, the stricter cutoff, the ledger."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ideaharness.cutoff import (
    CUTOFF_STEP,
    DATA_KEY,
    NO_LITERATURE,
    CutoffLedger,
    DatedWork,
    LiteratureAccess,
    apply_to_instances,
    before_cutoff,
    effective_cutoff,
    filter_access,
    parse_cutoff,
    verdict,
    window_verdict,
    within_window,
    work_summary,
)
from ideaharness.schema import Instance, Paper, Reference

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
    with pytest.raises(ValueError, match=r"^--cutoff: '2024-13-01' is not a calendar day: expected YYYY-MM"):
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


# ----------------------------------------------------------------------------- windows and records



@given(date=st.none() | dates, year=st.none() | st.integers(1950, 2100), start=dates,
       span=st.integers(0, 4000))
def test_a_window_keeps_exactly_the_works_it_can_place_inside(date: dt.date | None, year: int | None,
                                                              start: dt.date, span: int) -> None:
    end = min(start + dt.timedelta(days=span), dt.date(2100, 12, 31))
    v = window_verdict(_paper("p", date, year), start, end)
    if date is not None:
        assert v == ("before" if start <= date <= end else "after")
    elif year is None:
        assert v == "undated"
    elif year < start.year or year > end.year:
        assert v == "after"
    elif start.year < year < end.year:
        assert v == "before"


def test_a_future_window_and_its_counts() -> None:
    """(T, T + 30 months] as HindSight reads it: start T + 1 day, end T + 30 months."""
    t = dt.date(2023, 10, 3)
    papers = [_paper("on-T", t), _paper("next-day", t + dt.timedelta(days=1)),
              _paper("in", dt.date(2025, 1, 1)), _paper("past-end", dt.date(2026, 5, 1)),
              _paper("year-2023", year=2023), _paper("year-2024", year=2024)]
    ledger = CutoffLedger()
    kept = within_window(papers, t + dt.timedelta(days=1), dt.date(2026, 4, 3), source="future",
                         ledger=ledger)
    assert [p.id for p in kept] == ["next-day", "in", "year-2023", "year-2024"]
    assert ledger.as_dict()["future"] == {"kept": 4, "excluded": 2, "undated": 1}
    assert [w["id"] for w in ledger.excluded_works["future"]] == ["on-T", "past-end"]


def test_filter_access_records_what_the_access_received() -> None:
    refs = [Reference(id="a", title="Old", year=2019),
            Reference(id="b", title="New", publication_date=CUT + dt.timedelta(days=1))]
    kept, record = filter_access(refs, CUT, source="references")
    assert [r.id for r in kept] == ["a"]
    assert record == {"source": "references", "cutoff": "2023-10-03", "window": [None, "2023-10-03"],
                      "kept": 1, "excluded": 1, "undated": 0,
                      "kept_works": [{"id": "a", "title": "Old", "publication_date": None, "year": 2019}],
                      "excluded_works": [{"id": "b", "title": "New", "publication_date": "2023-10-04",
                                          "year": None}]}
    assert DatedWork.of(record["excluded_works"][0]).publication_date == dt.date(2023, 10, 4)
    assert DatedWork.of({"id": "x", "publication_date": "not a date", "year": "2020"}) == DatedWork(
        id="x", title="", publication_date=None, year=None)
    assert work_summary(refs[0]) == record["kept_works"][0]


def test_instances_get_the_stricter_cutoff_and_a_data_record() -> None:
    target = Paper(id="t", title="Target", publication_date=dt.date(2024, 5, 1))
    refs = [Reference(id="a", title="A", year=2020), Reference(id="b", title="B", year=2024)]
    insts = [Instance(id="own", dataset="d", target=target, references=refs,
                      knowledge_cutoff=dt.date(2022, 1, 1)),
             Instance(id="none", dataset="d", target=target, references=refs)]
    out, entries = apply_to_instances(insts, dt.date(2023, 6, 30), "references")
    assert [i.knowledge_cutoff for i in out] == [dt.date(2022, 1, 1), dt.date(2023, 6, 30)]
    assert [[r.id for r in i.references] for i in out] == [["a"], ["a"]]
    assert [r.id for r in insts[0].references] == ["a", "b"]  # the inputs are not changed
    keys = [(iid, key) for iid, key, _ in entries]
    assert keys == [("own", DATA_KEY), ("own", "references"), ("none", DATA_KEY), ("none", "references")]
    data = entries[0][2]
    assert data["data"] is True and [w["id"] for w in data["works"]] == ["a", "b", "t"]
    assert entries[1][2]["target"]["id"] == "t"
    unfiltered, entries = apply_to_instances(insts, None, None)
    assert [len(i.references) for i in unfiltered] == [2, 2] and [k for _, k, _ in entries] == [DATA_KEY] * 2
    assert unfiltered[1].knowledge_cutoff is None


def test_literature_access_declares_steps_and_access() -> None:
    access = LiteratureAccess(sources={"references": "shown"}, prompt_steps=("generate/", "digest"))
    assert access.has_access and not NO_LITERATURE.has_access
    assert access.shows("generate/low") and access.shows("digest") and not access.shows("digest/x")
    assert not access.shows("generated") and not access.shows("rank/low/novelty")


def test_the_cutoff_records_of_a_run_are_one_group_written_once(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Two records per instance before the run starts: one write and one fsync for all of them (not
    one per record), each written once, kept by a resume."""
    import asyncio

    from ideaharness.runner.options import ExecutionOptions
    from ideaharness.runner.run import record_cutoff_entries
    from ideaharness.runs import store as store_module
    from ideaharness.runs.store import RunStore

    instances = [Instance(id=f"i{n}", dataset="t", target=Paper(id=f"t{n}", title="Target", year=2024),
                          references=[Reference(id=f"r{n}", title="Earlier", year=2020)]) for n in range(40)]
    kept, entries = apply_to_instances(instances, dt.date(2023, 1, 1), "references")
    writes: list[int] = []
    real = store_module._append_files
    monkeypatch.setattr(store_module, "_append_files", lambda files: writes.append(len(files)) or real(files))
    with RunStore(tmp_path / "run", {"t": 1}) as store:
        asyncio.run(record_cutoff_entries(store, entries, kept[:30], ExecutionOptions()))
        assert writes == [1]  # one file, one group
        assert len(store.records(CUTOFF_STEP)) == 60
    with RunStore(tmp_path / "run", {"t": 1}) as store:  # a resume finds them: nothing written again
        asyncio.run(record_cutoff_entries(store, entries, kept, ExecutionOptions()))
        assert len(store.records(CUTOFF_STEP)) == 80 and writes == [1, 1]
