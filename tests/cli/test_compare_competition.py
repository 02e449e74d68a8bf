"""``compare --judge`` calls the competition hook of the runs' benchmark
(``Benchmark.cross_run_competition``); the generic compare command holds no benchmark's code.
The comparison itself is stubbed here (its own tests are in tests/analysis/); AI Idea Bench's
real competition: tests/aiideabench/test_tournament.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ideaharness.analysis import compare as compare_module
from ideaharness.cli import main
from ideaharness.errors import EXIT_USER_ERROR
from ideaharness.runner import registry
from ideaharness.runner.protocol import Benchmark, Competition
from ideaharness.tables import Table


def _stub_comparison(benchmark: str) -> dict[str, Any]:
    return {"benchmark": benchmark, "systems": [], "reliability": {}, "settings_mismatch": [],
            "method": {}, "metrics": {}}


def test_judge_is_refused_in_one_line_for_a_benchmark_without_a_competition(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(compare_module, "compare_runs", lambda runs, **kw: _stub_comparison("ideabench"))
    assert registry.get_benchmark("ideabench").cross_run_competition is None
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--judge", "scripted/echo"])
    assert exit_info.value.code == EXIT_USER_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: --judge: ideabench declares no competition between runs "
                   "(a benchmark's Benchmark.cross_run_competition hook; AI Idea Bench has one)"]


def test_judge_calls_the_hook_of_the_runs_benchmark_with_the_cli_settings(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    calls: list[dict[str, Any]] = []

    def play(run_dirs: list[Path], **kwargs: Any) -> dict[str, Any]:
        calls.append({"run_dirs": run_dirs, **kwargs})
        return {"status": "complete", "failed_units": [], "tournament_dir": str(tmp_path / "t"),
                "winner": "b"}

    class Toy(Benchmark):
        name = "toy-competition"
        cross_run_competition = Competition(
            play=play,
            table=lambda r: Table(title="Toy competition", columns=["winner"], rows=[[r["winner"]]]),
        )

    real = registry.get_benchmark
    monkeypatch.setattr(registry, "get_benchmark", lambda name: Toy if name == Toy.name else real(name))
    monkeypatch.setattr(compare_module, "compare_runs", lambda runs, **kw: _stub_comparison(Toy.name))
    runs = [tmp_path / "a", tmp_path / "b"]
    main(["compare", *map(str, runs), "--judge", "scripted/echo", "--resamples", "300", "--json"])
    assert len(calls) == 1
    call = calls[0]
    assert call["run_dirs"] == runs and call["judge"] == "scripted/echo" and call["n_resamples"] == 300
    assert call["tournament_dir"] is None and call["allow_mismatch"] is False
    assert json.loads(capsys.readouterr().out)["tournament"]["winner"] == "b"
    main(["compare", *map(str, runs), "--judge", "scripted/echo"])
    table = capsys.readouterr().out
    assert "Toy" in table and "winner" in table and "│ b " in table
