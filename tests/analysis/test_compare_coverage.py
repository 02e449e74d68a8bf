"""Issue 32, items 1, 4 and 9 (compare): systems are ranked on the instances all of them were
scored on, each beside its own value and its coverage, a system whose coverage is lower marked;
p-values below 0.001 print as ``<0.001``; IdeaBench's paper statistic (p80) has its row."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from ideaharness.analysis.compare import COVERAGE_GAP, compare_runs
from ideaharness.analysis.load import JUDGMENT_COLUMNS, SCORE_COLUMNS, RunData
from ideaharness.report.compare import comparison_tables, format_p_value
from ideaharness.report.viewer import render_compare
from tests.analysis.saved_runs import results_of
from tests.cli_support import run_cli
from tests.runner.coverage_support import HIGH_SCORE, LOW, LOW_SCORE, TASKS, mlrbench_pair


def test_a_system_failing_on_the_hard_tasks_ranks_equal_on_the_shared_ones_and_is_marked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 1: D (unparsable on the 3 low-scored tasks) was ranked first on its 3 easy tasks
    (8.0) above E (5.0 over 6), with ``missing 0``. Now both are ranked on the 3 shared tasks,
    equal; D's own value over its own tasks is beside it; D's coverage (3/6) is marked; the
    systems table counts its 3 unparsed generations as missing."""
    pair = mlrbench_pair(tmp_path, capsys, monkeypatch)
    result = compare_runs([pair.d, pair.e], n_resamples=200)
    systems = {s["run_id"]: s for s in result["systems"]}
    d, e = systems["d"], systems["e"]
    assert d["missing"] == len(LOW) and e["missing"] == 0
    assert d["coverage"]["rate"] == pytest.approx(0.5) and e["coverage"]["rate"] == 1.0
    assert d["coverage_differs"] and not e["coverage_differs"]
    assert result["method"]["coverage_gap"] == COVERAGE_GAP
    block = result["metrics"]["mlrbench.idea_overall"]
    assert block["ranked_on"] == "shared" and block["n_shared_all"] == len(TASKS) - len(LOW)
    board = {row["system"]: row for row in block["leaderboard"]}
    rd, re_ = board[d["label"]], board[e["label"]]
    assert rd["mean"] == re_["mean"] == HIGH_SCORE and rd["n"] == re_["n"] == len(TASKS) - len(LOW)
    assert rd["own_mean"] == HIGH_SCORE and rd["own_n"] == len(TASKS) - len(LOW)
    assert re_["own_mean"] == pytest.approx((HIGH_SCORE * 3 + LOW_SCORE * 3) / 6)
    assert re_["own_n"] == len(TASKS)
    assert rd["coverage_differs"] and rd["coverage"] == pytest.approx(0.5)
    (paired,) = block["paired"]
    assert paired["mean_diff"] == 0.0 and paired["n_shared"] == 3

    tables = comparison_tables(result)
    systems_table = tables[0]
    assert "coverage" in systems_table.columns and systems_table.note is not None
    assert f"! {d['label']}: coverage 3/6 (0.500)" in systems_table.note
    overall = next(t for t in tables if t.title.startswith("mlrbench.idea_overall"))
    row = next(r for r in overall.rows if r[1] == d["label"])
    assert row[overall.columns.index("coverage")] == "0.500 !"
    assert row[overall.columns.index("own value")] == HIGH_SCORE
    page = render_compare(result)
    assert "3/6 (0.500) !" in page and "own value" in page

    code, stdout, _ = run_cli(["compare", str(pair.d), str(pair.e), "--resamples", "100"], capsys)
    assert code == 0 and "0.500 !" in stdout and "every system was scored on" in stdout
    code, stdout, _ = run_cli(["compare", str(pair.d), str(pair.e), "--resamples", "100", "--json"], capsys)
    shown = json.loads(stdout)
    assert {s["run_id"]: s["coverage_differs"] for s in shown["systems"]} == {"d": True, "e": False}


def _run(system: str, values: dict[str, float]) -> RunData:
    rows = [{"benchmark": "ideabench", "run_id": system, "system": system, "instance_id": k, "pair_key": k,
             "metric": "m/clear", "group": "", "value": v, "weight": 1.0, "reason": None}
            for k, v in values.items()]
    return RunData(path=Path(system), run_id=system, benchmark="ideabench", system=system,
                   config={"benchmark": "ideabench"}, results={},
                   scores=pd.DataFrame(rows, columns=SCORE_COLUMNS),
                   judgments=pd.DataFrame([], columns=JUDGMENT_COLUMNS))


def test_p_values_below_0001_print_as_less_than_0001() -> None:
    """Item 9: 12 shared instances, every difference +1: exact p = 2/2^12 (0.0005) printed
    ``0.000`` on the console and in the HTML page; now ``<0.001``."""
    ids = [f"i{k:02d}" for k in range(12)]
    result = compare_runs([_run("a", dict.fromkeys(ids, 1.0)), _run("b", dict.fromkeys(ids, 0.0))],
                          n_resamples=200)
    (pair,) = result["metrics"]["m/clear"]["paired"]
    assert pair["p_value"] == pytest.approx(2 / 2**12) and pair["significant"]
    table = comparison_tables(result)[1]
    row = table.rows[1]
    assert row[table.columns.index("p")] == "<0.001" and row[table.columns.index("p (Holm)")] == "<0.001"
    page = render_compare(result)
    assert "<td>&lt;0.001</td><td>&lt;0.001</td>" in page  # p and p (Holm) of the pair a - b
    assert format_p_value(0.25) == "0.250" and format_p_value(0.001) == "0.001"
    assert format_p_value(None) is None


def test_ideabench_p80_rows_match_the_papers_statistic(runs: dict[str, Path]) -> None:
    """Item 9: compare ranked IdeaBench by the mean only; the paper (and the run's first console
    table) report p80. Now a p80 row per scenario, equal to the run's own p80."""
    result = compare_runs([runs["ideabench_a"], runs["ideabench_b"]], n_resamples=200)
    for metric, block_key in (("ideabench.overlap_p80[low]", "overlap"),
                              ("ideabench.bertscore_f1_p80[low]", "similarity")):
        block = result["metrics"][metric]
        assert "p80" in block["statistic"]
        board = {row["system"]: row for row in block["leaderboard"]}
        for run, label in ((runs["ideabench_a"], "gen-strong"), (runs["ideabench_b"], "gen-weak")):
            own = results_of(run)["scenarios"]["low"][block_key]["p80"]
            assert board[label]["own_mean"] == pytest.approx(own), (metric, label)
            headline = {(m["metric"], m["group"]): m for m in results_of(run)["metrics"]}
            assert headline[(metric.split("[")[0], "low")]["value"] == pytest.approx(own)


def test_systems_scored_on_other_units_by_design_form_their_own_group() -> None:
    """A reference system whose units no generated system shares (LigBench's ScholarIdeas plans)
    does not empty the shared set: the generated systems are ranked on the units both were scored
    on, the reference on its own."""
    ids = [f"i{k}" for k in range(6)]
    a = _run("a", dict.fromkeys(ids, 1.0))
    b = _run("b", {k: 0.0 if k != "i5" else 5.0 for k in ids if k != "i3"})
    ref = _run("ref", {"r0": 2.0, "r1": 4.0})
    result = compare_runs([a, b, ref], n_resamples=100)
    block = result["metrics"]["m/clear"]
    board = {row["system"]: row for row in block["leaderboard"]}
    assert (board["a"]["n"], board["a"]["own_n"], board["a"]["ranked_on"]) == (5, 6, "shared")
    assert board["b"]["n"] == 5 and board["b"]["mean"] == pytest.approx(1.0)
    assert (board["ref"]["n"], board["ref"]["mean"], board["ref"]["ranked_on"]) == (2, 3.0, "own")
    assert block["ranked_on"] == "shared" and block["n_shared_all"] == 5
