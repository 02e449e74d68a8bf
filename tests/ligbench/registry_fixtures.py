"""LigBench's (and its judge-accuracy task's) data and scripted replies for the
registry-parametrised tests (tests/runner)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from tests.ligbench.test_cli import _scripted_judge
from tests.runner.registry_support import RegistryFixture

PAIRIQ = Path(__file__).parent / "fixtures" / "pairiq_mini.jsonl"
PLAN = ("## Problem\nGraph network predictions are hard to explain.\n## Method\nA new method that "
        "extracts logic rules over concepts.\n## Experiment Design\nBenchmarks against GNNExplainer on "
        "three datasets.")


def reply(body: dict[str, Any]) -> str:
    """A plan for a generation prompt; formalisations, initial scores and comparisons otherwise."""
    user = body["messages"][-1]["content"]
    if user.startswith("Propose one new research idea"):
        return PLAN
    return _scripted_judge(body["messages"])


def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus" / "pairiq_mini.jsonl"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PAIRIQ, path)
    return path


def ligbench_args(tmp_path: Path) -> list[str]:
    topics = tmp_path / "topics.txt"
    topics.write_text("Graph neural networks\nSparse attention\nProtein folding\n")
    return ["--corpus", str(corpus(tmp_path)), "--topics", str(topics)]


def judge_args(tmp_path: Path) -> list[str]:
    return ["--corpus", str(corpus(tmp_path)), "--pairs", "4", "--min-gap", "0"]


FIXTURES = {
    "ligbench": RegistryFixture(data_args=ligbench_args, reply=reply, reask_steps=("ligbench/compare",)),
    "ligbench-judge": RegistryFixture(data_args=judge_args, reply=reply,
                                      reask_steps=("ligbench/judge_pair",)),
}
