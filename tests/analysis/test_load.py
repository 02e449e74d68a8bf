"""load_run and export: the per-instance scores of real runs re-aggregate to results.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ideaharness
from ideaharness.analysis import JUDGMENT_COLUMNS, SCORE_COLUMNS, load_run
from ideaharness.analysis.export import export_run, read_export
from ideaharness.analysis.load import judgment_row
from ideaharness.cli import main
from ideaharness.errors import DataWarning, UserError
from ideaharness.runs.scores import SCORES_FILE
from tests.analysis.saved_runs import HOSTILE, reaggregated, results_of

BENCHMARK_RUNS = ["ideabench_a", "researchbench_a", "aiideabench", "ligbench"]


@pytest.mark.parametrize("name", BENCHMARK_RUNS)
def test_scores_reaggregate_to_results_json(runs: dict[str, Path], name: str) -> None:
    if not (runs[name] / "results.json").exists():
        pytest.skip("ScholarIdeas data not present: no LigBench run")
    run = ideaharness.load_run(runs[name])
    results = results_of(runs[name])
    assert list(run.scores.columns) == SCORE_COLUMNS and list(run.judgments.columns) == JUDGMENT_COLUMNS
    assert len(run.scores) > 0 and run.benchmark == results["benchmark"]
    assert reaggregated(run, results) >= 4
    # every judgment of the records is a row, with its raw reply and parse status
    lines = sum(
        1
        for p in (runs[name] / "records").glob("*.jsonl")
        for line in p.read_text().splitlines()
        if '"judgment"' in line
    )
    assert len(run.judgments) == lines
    assert set(run.judgments["parse_status"]) <= {"ok", "parse_failure"}


def test_parse_failures_are_rows_without_a_parsed_value(runs: dict[str, Path]) -> None:
    run = load_run(runs["aiideabench"])
    bad = run.judgments[~run.judgments["parse_ok"]]
    assert len(bad) >= 2 and set(bad["raw_reply"]) == {HOSTILE}
    assert bad["parsed"].isna().all() and (bad["attempts"] == 2).all()
    # an (instance, component) whose IMCQ judgments all failed has no IMCQ score (never a 0); one
    # with a parsed judgment has one
    picks = run.judgments[run.judgments["step"] == "imcq"].assign(
        component=lambda f: f["key"].str.split("/").str[0])
    parsed = picks.groupby(["instance_id", "component"])["parse_ok"].any()
    imcq = run.scores[(run.scores["metric"] == "aiideabench.imcq") & run.scores["value"].notna()]
    scored = {(r.instance_id, r.group) for r in imcq.itertuples()}
    assert (~parsed).any(), "the saved run has no IMCQ question whose judgments all failed"
    assert scored == {key for key, ok in parsed.items() if ok}


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_export_round_trips(runs: dict[str, Path], tmp_path: Path, fmt: str) -> None:
    run = load_run(runs["researchbench_a"])
    scores_path, judgments_path, _ = export_run(run, fmt, tmp_path / fmt)
    scores = read_export(scores_path)
    pd.testing.assert_frame_equal(scores[["value", "weight"]].astype(float), run.scores[["value", "weight"]])
    assert list(scores["metric"]) == list(run.scores["metric"])
    judgments = read_export(judgments_path)
    assert len(judgments) == len(run.judgments)
    assert list(judgments["raw_reply"]) == list(run.judgments["raw_reply"])
    assert list(judgments["parse_ok"].astype(bool)) == list(run.judgments["parse_ok"])


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_evidence_says_why_an_interval_is_missing(runs: dict[str, Path], tmp_path: Path,
                                                         fmt: str) -> None:
    """Each exported headline row with no interval carries the run's reason (``ci_why``), equal to
    results.json's; a row with an interval has none (issue 32, item 7)."""
    import json

    from ideaharness.analysis.export import EVIDENCE_EXPORT_COLUMNS

    assert "ci_why" in EVIDENCE_EXPORT_COLUMNS
    withheld = 0
    for name in ("aiideabench", "ideabench_a", "researchbench_a"):
        results = json.loads((runs[name] / "results.json").read_text())
        want = {(m["metric"], m.get("group") or "", m.get("system")): m.get("ci_why")
                for m in results["metrics"]}
        *_, evidence_path = export_run(load_run(runs[name]), fmt, tmp_path / name)
        frame = read_export(evidence_path)
        assert list(frame.columns) == EVIDENCE_EXPORT_COLUMNS and len(frame)
        for row in frame.to_dict("records"):
            why = row["ci_why"] if isinstance(row["ci_why"], str) else None
            has_ci = row["ci_low"] is not None and row["ci_low"] == row["ci_low"]
            key = (row["metric"], row["group"] if isinstance(row["group"], str) else "",
                   row["system"] if isinstance(row["system"], str) else None)
            assert why == (None if has_ci else want.get(key)), row
            withheld += why is not None
    assert withheld, "no exported headline row had its interval withheld: the test checks nothing"


def test_export_cli(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["export", str(runs["ideabench_a"]), "--format", "csv", "--out", str(tmp_path / "x")])
    printed = capsys.readouterr().out.split()
    assert [Path(p).name for p in printed] == ["scores.csv", "judgments.csv", "evidence.csv"]
    with pytest.raises(SystemExit) as exc:
        main(["export", str(tmp_path / "missing")])
    assert exc.value.code == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a run directory" in err and "missing" in err
    with pytest.raises(SystemExit):
        main(["export", str(runs["ideabench_a"]), "--format", "xlsx"])
    assert "--format xlsx" in capsys.readouterr().err


def test_not_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a run directory"):
        load_run(tmp_path)
    (tmp_path / "config.json").write_text("{broken")
    with pytest.raises(UserError, match="config.json: not readable JSON"):
        load_run(tmp_path)


def test_unreadable_record_lines_are_skipped_and_counted(runs: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(runs["ideabench_a"], copy)
    with (copy / "records" / "overlap_low.jsonl").open("a") as f:
        f.write('{"step": "overlap/low", "instance_id": "x", "ke\n["not a record"]\n')
    with pytest.warns(DataWarning, match="2 unreadable record line"):  # said, not silently dropped
        run = load_run(copy)
    assert run.corrupt_lines == 2
    assert len(run.judgments) == len(load_run(runs["ideabench_a"]).judgments)


_judgment = st.fixed_dictionaries(
    {
        "judge_model": st.text(max_size=20),
        "prompt_hash": st.text(max_size=16),
        "raw_text": st.text(),
        "parsed": st.none() | st.integers() | st.lists(st.text(max_size=5), max_size=4) | st.text(),
        "parse_ok": st.booleans(),
        "attempts": st.integers(1, 5),
        "errors": st.lists(st.text(max_size=10), max_size=3),
        "positions": st.none() | st.lists(st.text(max_size=8), max_size=4),
        "usage": st.fixed_dictionaries(
            {"prompt_tokens": st.integers(0, 10**6), "completion_tokens": st.integers(0, 10**6)}
        ),
    }
)


@settings(deadline=None)  # a correctness property: a loaded machine must not fail it on time
@given(_judgment, st.text(max_size=30))
def test_judgment_row_keeps_every_field(judgment: dict, step: str) -> None:
    row = judgment_row(step, "inst", "k", {"judgment": judgment}, benchmark="b", run_id="r", system="s")
    assert row is not None and set(row) == set(JUDGMENT_COLUMNS)
    assert row["raw_reply"] == judgment["raw_text"] and row["parse_ok"] is judgment["parse_ok"]
    assert row["parse_status"] == ("ok" if judgment["parse_ok"] else "parse_failure")
    if judgment["parse_ok"]:
        parsed = judgment["parsed"]
        if isinstance(parsed, str) or parsed is None:
            assert row["parsed"] == parsed
        else:
            assert json.loads(row["parsed"]) == parsed
    else:
        assert row["parsed"] is None  # a failed parse never carries a value
    assert row["tokens_in"] == judgment["usage"]["prompt_tokens"]
    assert judgment_row(step, "i", "", {"f1": [0.1]}, benchmark="b", run_id="r", system="s") is None


def test_a_consistency_reask_is_never_a_score_row(runs: dict[str, Path], tmp_path: Path) -> None:
    """A re-ask that disagrees with the original (the target ranked first instead of last) changes
    no score row: every (instance, metric) has one row and the rows re-aggregate to results.json."""
    run_dir = tmp_path / "run"
    shutil.copytree(runs["ideabench_a"], run_dir)
    (run_dir / SCORES_FILE).unlink()  # as a run saved before scores.jsonl: scored again from its records
    changed = 0
    for path in (run_dir / "records").glob("rank_*.jsonl"):
        lines = []
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["key"].endswith("#reask"):
                judgment = record["data"]["judgment"]
                target = record["data"]["target_label"]
                judgment["parsed"] = [target, *(label for label in judgment["parsed"] if label != target)]
                changed += 1
            lines.append(json.dumps(record))
        path.write_text("\n".join(lines) + "\n")
    assert changed >= 1, "the saved IdeaBench run has no re-ask to check"
    run = load_run(run_dir)
    results = results_of(run_dir)
    assert not run.scores.duplicated(["system", "instance_id", "metric", "group"]).any()
    assert reaggregated(run, results) >= 4


def test_a_unit_recorded_twice_is_one_judgment_and_one_score(runs: dict[str, Path], tmp_path: Path) -> None:
    """A replaced record (``RunStore.replace``: the new line appended, the old one dropped at the
    next compaction) read before compaction: the last line counts, once."""
    run_dir = tmp_path / "run"
    shutil.copytree(runs["ideabench_a"], run_dir)
    (run_dir / SCORES_FILE).unlink()  # as a run saved before scores.jsonl: scored again from its records
    path = run_dir / "records" / "overlap_low.jsonl"
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    replaced = json.loads(lines[0])
    replaced["data"]["judgment"]["parsed"] = {"rating": 2}
    replaced["data"]["judgment"]["raw_text"] = "I'd give this a 2."
    path.write_text("\n".join([*lines, json.dumps(replaced)]) + "\n")
    before, after = load_run(runs["ideabench_a"]), load_run(run_dir)
    assert len(after.judgments) == len(before.judgments)
    def overlap(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[(frame["metric"] == "ideabench.overlap") & (frame["group"] == "low")]

    rows = overlap(after.scores)
    assert len(rows) == len(overlap(before.scores))
    assert rows.loc[rows["instance_id"] == first["instance_id"], "value"].tolist() == [2.0]
    assert "I'd give this a 2." in set(after.judgments["raw_reply"])


def test_records_outside_the_runs_selection_are_not_scores(runs: dict[str, Path], tmp_path: Path) -> None:
    """A run resumed with a smaller --limit keeps the records of instances its results.json no longer
    covers (``selection.ids``): those are not score rows, so rows still re-aggregate to results.json."""
    run_dir = tmp_path / "run"
    shutil.copytree(runs["ideabench_a"], run_dir)
    (run_dir / SCORES_FILE).unlink()  # as a run saved before scores.jsonl: scored again from its records
    results = results_of(run_dir)
    ids = results["selection"]["ids"]
    assert len(ids) == 6 and set(load_run(run_dir).scores["instance_id"]) == set(ids)
    results["selection"]["ids"] = ids[:2]  # as if the last pass selected two instances
    (run_dir / "results.json").write_text(json.dumps(results))
    assert set(load_run(run_dir).scores["instance_id"]) == set(ids[:2])
