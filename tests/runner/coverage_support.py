"""Issue 32, item 1's shape, small: two MLR-Bench systems that write the same idea for every task;
system D answers something unparsable on exactly the tasks the judge scores low. Both run through
the CLI with ``scripted/`` rule files (generator and judge), so the runs are real runs on disk."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from ideaharness.benchmarks.mlrbench import select_tasks
from tests.cli_support import run_cli
from tests.mlrbench.replies import IDEA, review

TASKS = ["iclr2023_bands", "iclr2023_dg", "iclr2023_ml4materials", "iclr2023_mlgh", "iclr2023_mrl",
         "iclr2023_nf"]
LOW = TASKS[1::2]
"""The tasks the judge scores low (2 of 10) and system D fails on; the others score 8."""
LOW_SCORE, HIGH_SCORE = 2, 8
UNPARSABLE = "No."
"""D's answer on the low tasks: under MLR-Bench's 30-word minimum for an idea (a parse failure)."""


@dataclass(frozen=True)
class Pair:
    """The two runs: directories, exit statuses and console text (stdout + stderr)."""

    d: Path
    e: Path
    d_code: int
    e_code: int
    d_text: str
    e_text: str


def _heading(task: str) -> str:
    text = next(t.text for t in select_tasks([task]))
    return text.strip().splitlines()[0].lstrip("#").strip()


def _rules(path: Path, rules: list[dict[str, str]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rules), encoding="utf-8")
    return f"scripted/{path}"  # an absolute path: scripted//tmp/...


def mlrbench_pair(root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Pair:
    """Run E (the idea for every task) and D (the same idea, :data:`UNPARSABLE` on :data:`LOW`)
    with one judge; ``--stage idea``."""
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(root / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    idea = IDEA.format(topic="machine learning")
    judge = _rules(root / "judge.jsonl", [
        *({"match": f"You review research ideas.*{re.escape(_heading(t))}",
           "reply": review("idea", LOW_SCORE)} for t in LOW),
        {"match": "You review research ideas", "reply": review("idea", HIGH_SCORE)}])
    d_gen = _rules(root / "system-d.jsonl", [
        *({"match": re.escape(_heading(t)), "reply": UNPARSABLE} for t in LOW), {"reply": idea}])
    e_gen = _rules(root / "system-e.jsonl", [{"reply": idea}])
    out = {}
    for name, generator in (("e", e_gen), ("d", d_gen)):
        args = ["run", "mlrbench", *[a for t in TASKS for a in ("--task", t)], "--stage", "idea",
                "--generator", generator, "--judge", judge, "--no-progress", "--bootstrap-resamples", "100",
                "--out", str(root / name)]
        code, stdout, err = run_cli(args, capsys)
        out[name] = (code, stdout + err)
    return Pair(d=root / "d", e=root / "e", d_code=out["d"][0], e_code=out["e"][0], d_text=out["d"][1],
                e_text=out["e"][1])
