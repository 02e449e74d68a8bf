"""IMCQ placement: the ground truth's letter balanced over the questions asked (issue 32, item 5).

A seeded draw per question left the letters uneven (on 18 papers a judge that always answers the
last option scored 0.44 on motivation against 0.25). Here, on the bundled TOMATO-Chem data (about
50 questions per component, a scripted ideas file and scripted decomposer, :mod:`.test_aiib_option_form`):
judges that always answer the first or the last letter score S_M within the binomial 95% interval
of 0.25; every letter is the answer of ⌊m/4⌋ or ⌈m/4⌉ of the m questions; a system that fails on
one paper (no row in its ideas file) moves no other paper's ground truth; a resumed run keeps every
position, and so does one whose questions were recorded before placements were.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ideaharness.data.tomato import load_tomato_chem
from tests.aiideabench.test_aiib_option_form import _chance_interval, _questions, _run

COMPONENTS = ("motivation", "experiment_plan")


def _answers(run: Path) -> dict[tuple[str, str], str]:
    """(instance id, component) -> the ground truth's letter of every question asked in ``run``."""
    out = {}
    for line in (run / "records/imcq_question.jsonl").open(encoding="utf-8"):
        rec = json.loads(line)
        if "question" in rec["data"]:
            out[rec["instance_id"], rec["key"]] = rec["data"]["question"]["answer"]
    return out


def _write_ideas(path: Path, skip: str | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({
        "instance_id": inst.id,
        "motivation": f"Idea {j} motivation: current devices are brittle under everyday strain.",
        "experiment_plan": f"Step 1: build variant {j}.\nStep 2: test it."}) + "\n"
        for inst in load_tomato_chem() if inst.id != skip for j in range(2)), encoding="utf-8")


async def test_first_and_last_position_judges_score_at_chance(tmp_path: Path) -> None:
    for letter in ("A", "D"):
        res = await _run(tmp_path, letter, lambda options, letter=letter: letter)  # type: ignore[misc]
        questions = _questions(tmp_path / letter)
        for comp in COMPONENTS:
            m = len(questions[comp])
            assert m >= 24, comp
            counts = Counter(q["answer"] for q in questions[comp])
            assert set(counts) == set("ABCD") and max(counts.values()) - min(counts.values()) <= 1, (
                comp, counts)
            lo, hi = _chance_interval(m)
            block = res["imcq"][comp]
            assert block["n"] == m, (comp, block)
            assert lo <= block["mean"] <= hi, f"always-{letter} judge: {comp} {block['mean']} (n {m})"
            assert block["mean"] == counts[letter] / m  # every idea of a question gets the same letter


async def test_a_failure_on_one_paper_moves_no_other_ground_truth_and_a_resume_keeps_them(
        tmp_path: Path) -> None:
    judge = lambda options: "B"  # noqa: E731
    (tmp_path / "full").mkdir()
    await _run(tmp_path / "full", "run", judge)
    full = _answers(tmp_path / "full/run")
    failed = sorted({i for i, _ in full})[3]
    _write_ideas(tmp_path / "part/ideas.jsonl", skip=failed)
    await _run(tmp_path / "part", "run", judge)
    part = _answers(tmp_path / "part/run")
    assert not any(i == failed for i, _ in part)
    assert part == {k: v for k, v in full.items() if k[0] != failed}
    placed = [json.loads(x) for x in (tmp_path / "part/run/records/imcq_placement.jsonl").open()]
    assert any(r["instance_id"] == failed for r in placed)  # kept its place in the balance

    # a resumed run asks nothing again and keeps every letter
    records = tmp_path / "full/run/records"
    before = (records / "imcq_question.jsonl").read_text()
    await _run(tmp_path / "full", "run", judge)
    assert (records / "imcq_question.jsonl").read_text() == before

    # questions recorded before placements were (an earlier version) keep their letters
    (records / "imcq_placement.jsonl").unlink()
    (records / "imcq_options.jsonl").unlink()
    await _run(tmp_path / "full", "run", judge)
    assert (records / "imcq_question.jsonl").read_text() == before
    assert not (records / "imcq_options.jsonl").exists()
    assert _answers(tmp_path / "full/run") == full
