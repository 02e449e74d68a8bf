"""The one reader of user-given dates (``--cutoff``, ``knowledge_cutoff``/``cutoff``,
``publication_date``): YYYY-MM-DD only, a one-line error naming the expected form otherwise."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from ideaharness.cutoff import parse_cutoff
from ideaharness.errors import DataError
from ideaharness.jsonl import validate_row
from ideaharness.runner.protocol import BenchmarkConfig
from ideaharness.schema import Instance, read_date


def _row(**fields: Any) -> dict[str, Any]:
    return {"id": "a", "dataset": "d", "target": {"id": "t", "title": "T"}, **fields}


@given(st.dates(min_value=dt.date(1000, 1, 1)))
def test_every_day_written_yyyy_mm_dd_reads_back_as_itself(day: dt.date) -> None:
    assert read_date(day.isoformat()) == day
    assert read_date(f"  {day.isoformat()}\n") == day
    assert read_date(day) == day
    assert parse_cutoff(day.isoformat()) == day


@given(st.integers())
def test_a_number_is_never_read_as_a_timestamp(number: int) -> None:
    with pytest.raises(ValueError, match="expected YYYY-MM-DD"):
        read_date(number)
    with pytest.raises(ValueError, match="expected YYYY-MM-DD"):
        read_date(str(number))


@given(st.text())
def test_any_other_text_is_refused_in_one_line_naming_the_form(text: str) -> None:
    try:
        day = read_date(text)
    except ValueError as exc:
        message = str(exc)
        assert "expected YYYY-MM-DD" in message and "\n" not in message
    else:
        assert day.isoformat() == text.strip()


@given(st.datetimes())
def test_a_time_of_day_is_refused(moment: dt.datetime) -> None:
    with pytest.raises(ValueError, match="time of day"):
        read_date(moment)
    with pytest.raises(ValueError, match="expected YYYY-MM-DD"):
        read_date(moment.isoformat())


@pytest.mark.parametrize(("value", "message"), [
    ("2024", "'2024' is a year, not a date: expected YYYY-MM-DD (e.g. 2024-12-31 for the end of 2024)"),
    (2024, "2024 is a year, not a date: expected YYYY-MM-DD (e.g. 2024-12-31 for the end of 2024)"),
    ("2024-01-01T00:00", "'2024-01-01T00:00' is not a date: expected YYYY-MM-DD"),
    ("20240101", "'20240101' is not a date: expected YYYY-MM-DD"),
    ("2024-01", "'2024-01' is not a date: expected YYYY-MM-DD"),
    ("2024-02-30", "'2024-02-30' is not a calendar day: expected YYYY-MM-DD"),
    (True, "True is not a date: expected YYYY-MM-DD"),
])
def test_instance_cutoff_errors_name_the_expected_form(value: Any, message: str) -> None:
    for name in ("knowledge_cutoff", "cutoff"):
        with pytest.raises(DataError) as info:
            validate_row(Instance, _row(**{name: value}), "in.jsonl", 2)
        assert str(info.value) == f"in.jsonl: line 2, field 'knowledge_cutoff': {message}"
    with pytest.raises(ValidationError, match="expected YYYY-MM-DD"):
        BenchmarkConfig(cutoff=value)
    with pytest.raises(ValueError, match="^--cutoff: .*expected YYYY-MM-DD"):
        parse_cutoff(str(value))


def test_a_year_alone_as_a_publication_date_says_where_a_year_goes() -> None:
    with pytest.raises(DataError) as info:
        validate_row(Instance, _row(references=[{"id": "r", "title": "R", "publication_date": "2024"}]),
                     "in.jsonl", 3)
    assert str(info.value) == ("in.jsonl: line 3, field 'references.0.publication_date': '2024' is a year, "
                               "not a date: expected YYYY-MM-DD (a year alone goes in 'year')")
    ok = validate_row(Instance, _row(references=[{"id": "r", "title": "R", "year": 2024,
                                                   "publication_date": "2024-03-01"}]), "in.jsonl", 3)
    assert ok.references[0].publication_date == dt.date(2024, 3, 1)


def test_cutoff_and_knowledge_cutoff_are_one_field() -> None:
    same = validate_row(Instance, _row(cutoff="2024-01-01", knowledge_cutoff="2024-01-01"), "in.jsonl", 1)
    assert same.knowledge_cutoff == dt.date(2024, 1, 1)
    alias = validate_row(Instance, _row(cutoff="2023-05-01"), "in.jsonl", 1)
    assert alias.knowledge_cutoff == dt.date(2023, 5, 1)
    with pytest.raises(DataError) as info:
        validate_row(Instance, _row(cutoff="2020-01-01", knowledge_cutoff="2024-01-01"), "in.jsonl", 4)
    assert str(info.value) == (
        "in.jsonl: line 4, field '(row)': 'cutoff' and 'knowledge_cutoff' are two names for one field (the "
        "knowledge cutoff) and this row gives different values ('2020-01-01', '2024-01-01'): give one")
    dumped = same.model_dump(mode="json")
    assert dumped["knowledge_cutoff"] == "2024-01-01" and "cutoff" not in dumped
    assert Instance.model_validate(dumped) == same


def test_every_other_cutoff_input_takes_the_same_reader(tmp_path: Path) -> None:
    """--model-cutoff and a ScholarIdeas plan's cutoff.txt refuse a year alone, naming the form."""
    import shutil

    from ideaharness.data.scholarideas import bundled_root, load_plan
    from ideaharness.runner.model_cutoffs import training_cutoff

    with pytest.raises(ValueError, match=r"^--model-cutoff: '2024' is a year, not a date: expected"):
        training_cutoff("openai/gpt-4o", "2024")
    assert training_cutoff("openai/gpt-4o", " 2024-06-01 ").cutoff == dt.date(2024, 6, 1)
    plan = tmp_path / "ai_1"
    shutil.copytree(bundled_root() / "ScholarIdeas" / "ai_1", plan)
    assert load_plan(plan).cutoff == dt.date(2024, 9, 24)
    (plan / "cutoff.txt").write_text("2024\n")
    with pytest.raises(DataError, match=r"cutoff.txt: row 1: '2024' is a year, not a date: expected"):
        load_plan(plan)
