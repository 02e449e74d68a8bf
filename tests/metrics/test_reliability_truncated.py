"""Replies that ran out of tokens while reasoning (``Judgment.truncated_reasoning``) in the
reliability block: counted apart among the parse failures, per judge and metric, warned about,
and shown in the reliability table only when a judge had one."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ideaharness.metrics.reliability import (
    JudgmentView,
    reliability_blocks,
    reliability_columns,
    reliability_rows,
    reliability_section,
)
from ideaharness.metrics.reliability.adapters import judgment_view
from ideaharness.schema import Judgment


def record(text: str, *, parse_ok: bool, parsed: Any = None, truncated: bool = False,
           reasoning: str | None = None, judge: str = "openai/r1") -> dict[str, Any]:
    """A record as the run store keeps it: a dumped :class:`Judgment`."""
    j = Judgment(judge_model=judge, prompt_hash="h", raw_text=text, parsed=parsed, parse_ok=parse_ok,
                 answer="" if truncated else None, reasoning=reasoning, truncated_reasoning=truncated,
                 errors=[] if parse_ok else ["attempt 1: the reply ran out of tokens while reasoning"])
    return {"judgment": j.model_dump(mode="json")}


def rate(step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]) -> list[JudgmentView]:
    return [judgment_view(step, iid, key, data, "rating", data["judgment"]["parsed"], generators=gens)]


ADAPTERS = {"grade": rate}


def records(parsed: int, truncated: int, unreadable: int, judge: str = "openai/r1"):  # type: ignore[no-untyped-def]
    out = []
    for i in range(parsed):
        out.append(("grade", f"p{i}", "", record(f"<think>ok</think>{i % 3 + 1}", parse_ok=True,
                                                  parsed=float(i % 3 + 1), reasoning="ok", judge=judge)))
    for i in range(truncated):
        out.append(("grade", f"t{i}", "", record("<think>and then", parse_ok=False, truncated=True,
                                                  reasoning="and then", judge=judge)))
    for i in range(unreadable):
        out.append(("grade", f"u{i}", "", record("no idea", parse_ok=False, judge=judge)))
    return out


@given(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6))
def test_truncated_replies_are_counted_apart_among_parse_failures(parsed: int, truncated: int,
                                                                  unreadable: int) -> None:
    if parsed + truncated + unreadable == 0:
        return
    section = reliability_section(records(parsed, truncated, unreadable), adapters=ADAPTERS)
    jr = section["metrics"]["grade"]["judges"]["openai/r1"]
    n = parsed + truncated + unreadable
    assert jr["judgments"] == n and jr["parse_failures"] == truncated + unreadable
    assert jr["truncated_reasoning"] == truncated
    assert jr["truncated_reasoning_rate"] == pytest.approx(truncated / n)
    rules = [w["rule"] for w in jr["warnings"]]
    assert ("truncated_reasoning" in rules) == (truncated > 0)
    assert ("truncated reasoning" in reliability_columns(section)) == (truncated > 0)


def test_the_table_shows_the_count_and_share_and_the_warning_says_what_to_do() -> None:
    recs = records(2, 1, 1) + records(4, 0, 0, judge="openai/gpt")
    section = reliability_section(recs, adapters=ADAPTERS)
    columns = reliability_columns(section)
    at = columns.index("truncated reasoning")
    assert columns[at - 1] == "parse failures"
    rows = {row[1]: row for row in reliability_rows(section)}
    assert rows["openai/r1"][at] == "1 (25%)" and rows["openai/r1"][at - 1] == "50%"
    assert rows["openai/gpt"][at] == "0"
    [message] = [w for w in section["warnings"] if "tokens" in w]
    assert message.startswith("grade: judge openai/r1 ran out of tokens while reasoning in 1 of 4 judgments")
    assert "--reasoning-budget" in message


def test_a_block_recorded_before_the_count_shows_a_dash() -> None:
    section = reliability_section(records(2, 1, 0), adapters=ADAPTERS)
    for jr in section["metrics"]["grade"]["judges"].values():
        del jr["truncated_reasoning"], jr["truncated_reasoning_rate"]
    section["metrics"]["grade"]["judges"]["openai/other"] = {
        **section["metrics"]["grade"]["judges"]["openai/r1"], "truncated_reasoning": 2}
    columns = reliability_columns(section)
    rows = {row[1]: row for row in reliability_rows(section)}
    assert rows["openai/r1"][columns.index("truncated reasoning")] == "—"


def test_a_parsed_view_cannot_be_truncated_and_a_parsed_record_never_counts() -> None:
    with pytest.raises(ValueError, match="truncated_reasoning"):
        JudgmentView(metric="m", instance_id="i", key="", judge_model="j", kind="rating", value=1.0,
                     parse_ok=True, truncated_reasoning=True)
    data = record("<think>x</think>3", parse_ok=True, parsed=3.0, reasoning="x")
    data["judgment"]["truncated_reasoning"] = True  # an earlier attempt's flag: the last one parsed
    [view] = rate("grade", "i", "", data, {})
    assert view.truncated_reasoning is False
    blocks = reliability_blocks([view])
    assert blocks["grade"].judges["openai/r1"].truncated_reasoning == 0
