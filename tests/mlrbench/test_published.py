"""The bundled slice of published MLR-Bench ideas and reviews, and scoring a published model's
ideas with this run's judges (``--ideas published:<model>``) beside the published judges."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from statistics import fmean

import pytest

from ideaharness.benchmarks.mlrbench import bundled_tasks
from ideaharness.benchmarks.mlrbench.parsers import DIMENSIONS, parse_review
from ideaharness.benchmarks.mlrbench.published import (
    PUBLISHED_JUDGES,
    PUBLISHED_MODELS,
    ideas_path,
    published_reviews,
)
from ideaharness.cli import main
from ideaharness.errors import UserError
from ideaharness.systems.converters import read_idea_rows
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.mlrbench.replies import respond

FIXTURES = Path(__file__).parent / "fixtures"
FIRST_FIVE = ["iclr2023_bands", "iclr2023_dg", "iclr2023_ml4materials", "iclr2023_mlgh", "iclr2023_mrl"]


def test_six_models_ideas_for_the_first_five_tasks() -> None:
    ids = [t.id for t in bundled_tasks()]
    assert ids[:5] == FIRST_FIVE
    for model in PUBLISHED_MODELS:
        rows = read_idea_rows(ideas_path(f"published:{model}"))  # the ideas: system reads them so
        assert [r["instance_id"] for r in rows] == FIRST_FIVE
        assert all(r["model"] == model and len(r["idea"].split()) > 50 for r in rows)
    with pytest.raises(UserError, match="no published ideas of 'gpt-5'"):
        ideas_path("published:gpt-5")


def test_sixty_published_reviews_on_the_scale_and_matching_the_raw_files() -> None:
    rows = published_reviews()
    assert len(rows) == 60
    assert Counter((r["task_id"], r["model"], r["judge"]) for r in rows).most_common(1)[0][1] == 1
    assert {r["judge"] for r in rows} == set(PUBLISHED_JUDGES) and {r["model"] for r in rows} == set(
        PUBLISHED_MODELS)
    assert all(set(r["scores"]) == set(DIMENSIONS["idea"]) and all(1 <= v <= 10 for v in r["scores"].values())
               for r in rows)
    raw = json.loads((FIXTURES / "published_review_idea_claude_ministral.json").read_text())
    row = next(r for r in rows if (r["task_id"], r["model"], r["judge"]) == (
        "iclr2023_bands", "ministral-8b", "claude-3-7-sonnet-20250219"))
    assert row["scores"] == parse_review(json.dumps(raw), "idea")
    assert row["scores"]["overall"] == raw["OverallAssessment"]["score"] == 7


def test_published_ideas_scored_beside_the_published_judges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAICompatServer(lambda body: respond(body["messages"])) as server:
        with pytest.raises(SystemExit) as exc:
            main(["run", "mlrbench", "--ideas", "published:ministral-8b", "--stage", "idea", "--judge",
                  "openai/j", "--base-url", server.base_url, "--no-progress", "--bootstrap-resamples", "50",
                  "--out", str(tmp_path / "run")])
            raise SystemExit(0)
        assert exc.value.code == 0, capsys.readouterr().err
        assert len(server.requests) == 5
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["system"] == "published:ministral-8b" and sorted(results["per_task"]) == FIRST_FIVE
    ours = {t: results["per_task"][t]["idea"]["scores"] for t in FIRST_FIVE}
    for judge in PUBLISHED_JUDGES:
        block = results["published_judges"][judge]
        theirs = {r["task_id"]: r["scores"] for r in published_reviews()
                  if r["model"] == "ministral-8b" and r["judge"] == judge}
        assert block["tasks"] == 5
        for d in DIMENSIONS["idea"]:
            assert block["published"][d] == pytest.approx(fmean(theirs[t][d] for t in FIRST_FIVE))
            assert block["mean_abs_diff"][d] == pytest.approx(fmean(abs(ours[t][d] - theirs[t][d])
                                                                    for t in FIRST_FIVE))
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert "benchmarks/mlrbench/data/published/ideas/ministral-8b.jsonl" in json.dumps(config["input_sha256"])
    assert "Published judge claude-3-7-sonnet-20250219" in (tmp_path / "run" / "report.html").read_text()


def test_published_ideas_have_no_proposals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "mlrbench", "--ideas", "published:deepseek-r1", "--judge", "openai/j",
              "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert exc.value.code == 1 and "--stage idea" in err and "Traceback" not in err
