"""Malformed AI Idea Bench inputs: one line naming file, row/line and field, never a traceback or a
flag that does not exist."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from ideaharness.cli import main
from ideaharness.data.aiideabench import load_target_paper_data
from ideaharness.errors import DataError
from ideaharness.generation.external import load_external_ideas

FIX = Path(__file__).parent / "fixtures"
DATA: list[dict[str, Any]] = json.loads((FIX / "target_paper_data.json").read_text())


def _write(tmp_path: Path, data: Any, name: str = "target_paper_data.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _broken(change: Any) -> list[dict[str, Any]]:
    data = copy.deepcopy(DATA)
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d[1]["summary"].update(split_topic="long document"),
            "row 1, field 'summary.split_topic': expected a list, got str",
        ),
        (
            lambda d: d[1]["summary"].update(split_topic=["long document"]),
            r"row 1, field 'summary.split_topic\[0\]': expected an object, got str",
        ),
        (
            lambda d: d[0]["summary"]["split_topic"][0].update(rank="first"),
            r"row 0, field 'summary.split_topic\[0\].rank': expected an integer, got 'first'",
        ),
        (
            lambda d: d[2].update(find_cite=["a paper"]),
            "row 2, field 'find_cite': expected an object, got list",
        ),
        (
            lambda d: d[2].update(find_cite={"top_references": {"title": "x"}}),
            "row 2, field 'find_cite.top_references': expected a list, got dict",
        ),
        (
            lambda d: d[0]["find_cite"]["top_references"][1].update(abstract=["not", "text"]),
            r"row 0, field 'find_cite.top_references\[1\].abstract': expected text, got list",
        ),
        (
            lambda d: d[1]["summary"].update(revised_topic=["a", "list"]),
            "row 1, field 'summary.revised_topic': expected text, got list",
        ),
        (lambda d: d[2].update(index=d[0]["index"]), "row 2, field 'index': 0 already used in row 0"),
        (lambda d: d[2].update(index=str(d[1]["index"])), "row 2, field 'index': '1' already used in row 1"),
    ],
)
def test_malformed_records_name_row_and_field(tmp_path: Path, change: Any, message: str) -> None:
    path = _write(tmp_path, _broken(change))
    with pytest.raises(DataError, match=message):
        load_target_paper_data(path)


def test_numeric_text_ranks_sort_as_numbers(tmp_path: Path) -> None:
    def mixed(d: list[dict[str, Any]]) -> None:
        d[0]["summary"]["split_topic"] = [{"rank": "10", "keyword": "late"}, {"rank": 2, "keyword": "early"}]

    (first, *_) = load_target_paper_data(_write(tmp_path, _broken(mixed)))
    assert first.extra["keywords"] == ["early", "late"]


def test_cli_names_the_file_field_not_a_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, _broken(lambda d: d[1]["summary"].update(revised_topic=7)))
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "run",
                "aiideabench",
                "--data",
                str(path),
                "--judge",
                "openai/x",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--out",
                str(tmp_path / "run"),
            ]
        )
    assert exc.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}: row 1, field 'summary.revised_topic'") and "\n" not in err
    assert "--research-question" not in err


def test_external_ideas_with_unknown_or_empty_instance_id(tmp_path: Path) -> None:
    known = {"aiib-0", "aiib-1"}
    good = {"motivation": "Why attention is slow here", "experiment_plan": "Run the sparse variant"}
    path = tmp_path / "ideas.jsonl"
    path.write_text(
        "\n".join(json.dumps(r) for r in [{"instance_id": "aiib-0", **good}, {"instance_id": "0", **good}])
        + "\n"
    )
    with pytest.raises(
        DataError,
        match=r"ideas\.jsonl: line 2, field 'instance_id': unknown instance id '0' "
        r"\(ids look like 'aiib-0'\)",
    ):
        load_external_ideas(path, instance_ids=known)
    path.write_text(json.dumps({"instance_id": "  ", **good}) + "\n")
    with pytest.raises(DataError, match="line 1, field 'instance_id': missing or empty"):
        load_external_ideas(path, instance_ids=known)
    path.write_text(json.dumps({"instance_id": "aiib-1", "model": {"name": "x"}, **good}) + "\n")
    with pytest.raises(DataError, match="line 1, field 'model': expected text, got"):
        load_external_ideas(path)
    as_json = tmp_path / "ideas.json"
    as_json.write_text(json.dumps({"aiib-0": [good], "aiib-9": [good]}))
    with pytest.raises(DataError, match=r"key 'aiib-9', idea 1, field 'instance_id': unknown instance id"):
        load_external_ideas(as_json, instance_ids=known)


def test_run_refuses_an_ideas_file_for_no_instance_of_the_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ideas = tmp_path / "mysys.jsonl"
    ideas.write_text(
        json.dumps({"instance_id": "tomato-chem/999", "motivation": "Why attention is slow here",
                    "experiment_plan": "Run the sparse variant"})
    )
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "run",
                "aiideabench",
                "--ideas",
                str(ideas),
                "--judge",
                "openai/x",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--limit",
                "1",
                "--out",
                str(tmp_path / "run"),
            ]
        )
    assert exc.value.code == 1
    err = capsys.readouterr().err
    # an instance the data lacks is an extra (reported, ignored); none of the data's answered is refused
    assert "mysys.jsonl: no idea for any of the 51 instance(s) of --data tomato-chem" in err
    assert "ids look like 'tomato-chem/" in err
    assert not (tmp_path / "run").exists()  # refused before anything was written
