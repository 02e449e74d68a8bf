"""compare: leaderboards with bootstrap CIs and paired differences from saved runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ideaharness.analysis.compare import compare_runs, settings_mismatch
from ideaharness.cli import main
from ideaharness.errors import UserError
from tests.analysis.saved_runs import results_of


def test_ideabench_leaderboard_and_paired_difference(runs: dict[str, Path]) -> None:
    result = compare_runs([runs["ideabench_b"], runs["ideabench_a"]], n_resamples=500)
    assert [s["label"] for s in result["systems"]] == ["gen-weak", "gen-strong"]
    novelty = result["metrics"]["insight/low/novelty"]
    # the strong generator's ideas always outrank the target (Insight 1), the weak one's never (0)
    board = {b["system"]: b for b in novelty["leaderboard"]}
    assert board["gen-strong"]["rank"] == 1 and board["gen-strong"]["mean"] == 1.0
    assert board["gen-weak"]["mean"] == 0.0 and board["gen-strong"]["n"] == 6
    assert (
        board["gen-strong"]["mean"]
        == results_of(runs["ideabench_a"])["scenarios"]["low"]["insight"]["novelty"]["insight_score"]
    )
    (pair,) = novelty["paired"]
    assert (pair["a"], pair["b"], pair["n_shared"]) == ("gen-strong", "gen-weak", 6)
    assert pair["mean_diff"] == 1.0 and pair["significant"] and pair["ci95"] == [1.0, 1.0]
    overlap = result["metrics"]["overlap/low"]["paired"][0]
    assert overlap["mean_diff"] == 0.0 and not overlap["significant"]  # the same rating for both


def test_researchbench_leaderboard_and_paired_difference(runs: dict[str, Path]) -> None:
    result = compare_runs([runs["researchbench_a"], runs["researchbench_b"]], n_resamples=500)
    score = result["metrics"]["composition/one_step/matched_score"]
    board = {b["system"]: b for b in score["leaderboard"]}
    assert board["gen-strong"]["mean"] == 4.0 and board["gen-weak"]["mean"] == 1.0
    assert board["gen-strong"]["ci95"] == [4.0, 4.0]
    reported = results_of(runs["researchbench_b"])["composition"]["overall"]["one_step"]["mean_matched_score"]
    assert board["gen-weak"]["mean"] == reported
    (pair,) = score["paired"]
    assert pair["mean_diff"] == 3.0 and pair["n_shared"] == 2 and pair["significant"]
    rank = result["metrics"]["ranking/rank_score"]["paired"][0]
    assert rank["mean_diff"] == 0.0 and not rank["significant"]  # the same judge, the same gold
    assert result["reliability"]["gen-strong"]["parse_failure_rate"] == 0.0
    # the run's degenerate-judge warnings (the reliability block's own list) reach the leaderboard
    for run, system in ((runs["researchbench_a"], "gen-strong"), (runs["researchbench_b"], "gen-weak")):
        warned = results_of(run)["reliability"]["warnings"]
        assert warned and result["reliability"][system]["reliability_warnings"] == warned


def test_differing_settings_are_refused_with_their_names(runs: dict[str, Path], tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(runs["ideabench_a"], other)
    config = json.loads((other / "config.json").read_text())
    config.update(seed=7, judge="another/judge")
    (other / "config.json").write_text(json.dumps(config))
    with pytest.raises(UserError, match=r"differ in settings that change results \(judge, seed\)"):
        compare_runs([runs["ideabench_b"], other])
    result = compare_runs([runs["ideabench_b"], other], allow_mismatch=True, n_resamples=200)
    assert result["settings_mismatch"] == ["judge", "seed"]
    with pytest.raises(UserError, match="different benchmarks"):
        compare_runs([runs["ideabench_a"], runs["researchbench_a"]])
    with pytest.raises(UserError, match="at least 2 systems"):
        compare_runs([runs["ideabench_a"]])


def test_system_settings_and_input_paths_may_differ() -> None:
    a = {"generator": "x", "seed": 0, "data": "/a/d.jsonl", "input_sha256": {"--data": {"/a/d.jsonl": "h1"}}}
    b = {"generator": "y", "seed": 0, "data": "/b/d.jsonl", "input_sha256": {"--data": {"/b/d.jsonl": "h1"}}}
    assert settings_mismatch([a, b]) == []
    c = {**b, "input_sha256": {"--data": {"/b/d.jsonl": "h2"}}}
    assert settings_mismatch([a, c]) == ["input_sha256[--data]"]


def test_compare_cli_table_json_and_html(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "cmp.html"
    main(
        [
            "compare",
            str(runs["ideabench_a"]),
            str(runs["ideabench_b"]),
            "--html",
            str(page),
            "--resamples",
            "200",
        ]
    )
    out = capsys.readouterr().out
    assert "insight/low/novelty" in out and "gen-strong" in out and "yes *" in out
    html = page.read_text()
    assert (
        "Per-instance differences" in html
        and 'id="ih-data"' in html
        and "http" not in html.split("<body>")[1]
    )
    main(["compare", str(runs["researchbench_a"]), str(runs["researchbench_b"]), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["benchmark"] == "researchbench" and data["method"]["unit"].startswith("instance")
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(runs["ideabench_a"]), str(runs["aiideabench"])])
    assert exc.value.code == 1 and "different benchmarks" in capsys.readouterr().err
