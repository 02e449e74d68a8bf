"""Benchmarks without literature access still honour the cutoff where the text they show is dated:
MLR-Bench leaves out a workshop call of a conference after ``--cutoff`` (its text never reaches a
prompt; counted as an excluded item); a call of the cutoff's own year cannot be placed and is kept,
counted undated. Scripted models (no LLM)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

import ideaharness
from ideaharness.benchmarks.mlrbench.tasks import CALLS_SOURCE, select_tasks, tasks_before
from ideaharness.errors import UserError
from ideaharness.llm.scripted import ScriptedModel
from tests.cutoff.support import cutoff_records, prompt_texts
from tests.mlrbench.replies import respond

TASKS = ["iclr2023_bands", "iclr2024_agi", "iclr2025_agenticai"]


def test_calls_dated_after_the_cutoff_are_left_out(tmp_path: Path) -> None:
    out = tmp_path / "run"
    gen = ScriptedModel(respond, model="scripted/gen")
    models = {"generator": gen, "judge:scripted/j": ScriptedModel(respond, model="scripted/j")}
    res = ideaharness.run("mlrbench", generator="scripted/gen", judge="scripted/j", task=TASKS, out=out,
                          progress=False, bootstrap_resamples=20, cutoff="2024-06-30", models=models)
    assert res["selection"]["ids"] == ["iclr2023_bands", "iclr2024_agi"]
    later = select_tasks(["iclr2025_agenticai"])[0]
    distinctive = [line for line in later.text.splitlines() if len(line.split()) > 12][0]
    assert not any(distinctive in t for t in prompt_texts(out))
    assert not any(distinctive in m[-1]["content"] for m, _ in gen.calls)
    leakage = res["leakage"]
    assert leakage["access"] == "none" and "no literature access" in leakage["line"]
    assert leakage["items_excluded"] == 1
    assert leakage["excluded"][CALLS_SOURCE] == {"kept": 2, "excluded": 1, "undated": 1}
    rows = {r["instance_id"]: r["data"] for r in cutoff_records(out)}
    assert rows["iclr2025_agenticai"]["item_excluded"] is True
    assert rows["iclr2024_agi"]["undated"] == 1  # 2024: the cutoff's own year


def test_a_cutoff_before_every_call_is_refused_with_one_line(tmp_path: Path) -> None:
    models = {"generator": ScriptedModel(respond), "judge:scripted/j": ScriptedModel(respond)}
    with pytest.raises(UserError, match=r"every one of the 1 tasks is dated after the cutoff"):
        ideaharness.run("mlrbench", generator="scripted/gen", judge="scripted/j", task=["iclr2024_agi"],
                        out=tmp_path / "run", progress=False, cutoff="2022-01-01", models=models)


def test_tasks_before_without_a_cutoff_keeps_all_and_records_nothing() -> None:
    tasks = select_tasks(TASKS)
    assert tasks_before(tasks, None) == (tasks, [])
    kept, entries = tasks_before(tasks, dt.date(2023, 12, 31))
    assert [t.id for t in kept] == ["iclr2023_bands"] and len(entries) == 3
