"""A generation whose reply did not parse is re-asked by the next run while parse rounds are left,
and stays listed with its error once they are spent (fresh-user finding: IdeaBench and AI Idea
Bench returned early on the cached unit, so a re-run made no call and forgot the failure)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ideaharness.runner.steps import MAX_PARSE_ROUNDS
from tests.cli_support import run_cli


@pytest.mark.parametrize("name", ["ideabench"])  # AI Idea Bench's echo decomposition fails first
def test_an_unparsed_generation_is_reasked_by_each_rerun_until_its_rounds_are_spent(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["run", name, "--limit", "1", "--generator", "scripted/echo", "--judge", "scripted/echo",
            "--max-attempts", "1", "--no-progress", "--out", str(out)]
    listed: list[list[tuple[str, int, bool]]] = []
    for _ in range(3):
        code, _, _ = run_cli(args, capsys)
        assert code == 3
        results = json.loads((out / "results.json").read_text())
        listed.append(sorted((u["step"], u["rounds"], u["final"]) for u in results["unparsed_units"]
                             if u["step"].startswith("generate")))
    # the first run spends the rounds (each round's fresh reply is the same echo); every later run
    # makes no new call for it but still lists it, final, with its rounds
    assert listed[0] and all(final and rounds == MAX_PARSE_ROUNDS for _, rounds, final in listed[0])
    assert listed[1] == listed[2] == listed[0]
