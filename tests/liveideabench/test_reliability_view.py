"""The reliability view of a fluency judgment uses the fluency metric's map (issue 32, item 9):
the reliability table's modal answer is on the headline's scale (v2: 10/7/4/1), not on the v1
raw scale (10/6.67/3.33/0) while the headline uses v2."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ideaharness
from ideaharness.benchmarks.liveideabench.metrics import FLUENCY_VALUES, fluency_value
from ideaharness.llm.scripted import ScriptedModel

KEYWORDS = ["meteorology", "periodic table"]


def _judge(messages: list[dict[str, str]]) -> str:
    user = messages[-1]["content"]
    if "ONLY ANSWER A/B/C/D" in user:
        return "B"
    return 'Fine.\n```json\n{"originality": 8, "feasibility": 6, "clarity": 7}\n```'


def _generator(messages: list[dict[str, str]]) -> str:
    keyword = re.search(r"<keyword>\n(.*?)\n</keyword>", messages[-1]["content"], re.S).group(1)  # type: ignore[union-attr]
    return f"Idea on {keyword}: measure how {keyword} data improves forecasts using sparse sensor networks."


@pytest.mark.parametrize("protocol", ["v2", "v1"])
def test_fluency_modal_answer_is_the_metric_value(tmp_path: Path, protocol: str) -> None:
    judge = ScriptedModel(_judge, model="scripted/judge-a")
    results = ideaharness.run(
        "liveideabench", generator="scripted/gen", judge=["scripted/judge-a"], keyword=KEYWORDS,
        judges_per_idea=1, fluency_judges=1, protocol=protocol, out=tmp_path / "run", progress=False,
        models={"generator": ScriptedModel(_generator, model="scripted/gen"),
                "judge:scripted/judge-a": judge},
        bootstrap_resamples=50)
    value = fluency_value("B", protocol)
    assert value == FLUENCY_VALUES[protocol]["B"] and (value == 7.0) == (protocol == "v2")
    assert results["scores"]["fluency"]["value"] == pytest.approx(value)  # the headline's map
    fluency = results["reliability"]["metrics"]["fluency"]["judges"]["scripted/judge-a"]
    assert fluency["modal_answer"] == str(value) and fluency["modal_share"] == 1.0
    assert fluency["parsed"] >= 2 * len(KEYWORDS)  # one pair per keyword, both orders (+ re-asks)
