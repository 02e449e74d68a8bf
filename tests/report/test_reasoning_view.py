"""A reasoning judge's replies in the report: a LiveIdeaBench run against a loopback
OpenAI-compatible server whose judge thinks in ``<think>`` tags (with markup in its reasoning) and,
for one keyword's fluency pair, runs out of tokens while reasoning. The export keeps answer,
reasoning and the truncation flag apart; the reliability table counts the truncated replies; the
viewer (a real headless chromium) shows the answer, the reasoning in a collapsed block as text, and
the raw reply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ideaharness.analysis import load_run
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import exit_status, offline_env
from tests.liveideabench.registry_fixtures import reply as liveideabench_reply
from tests.report.browser import console_errors, find_browser, start_browser

BROWSER = find_browser()
MARKUP = "</script><img src=x onerror=\"window.pwned=1\"> & <b>bold</b>"
REASONING = f"The two ideas share a method {MARKUP}, so they are similar."
ENDLESS = "Let me compare the ideas step by step, first the methods, then the data"


def reply(body: dict[str, Any]) -> str:
    """Ideas plain; critiques and fluency grades after a think block; the fluency pair of "stars"
    never leaves its think block (the reply is cut while reasoning)."""
    text = liveideabench_reply(body)
    user = body["messages"][-1]["content"]
    if "ONLY ANSWER A/B/C/D" in user:
        if "stars" in user:
            return f"<think>{ENDLESS}"
        return f"<think>{REASONING}</think>\nC"
    if text.startswith("Idea on "):
        return text
    return f"<think>{REASONING}</think>\n{text}"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("reasoning")
    out = tmp / "run"
    with offline_env(tmp / "cache"), OpenAICompatServer(reply) as srv:
        code = exit_status(["run", "liveideabench", "--keyword", "meteorology", "--keyword", "stars",
                            "--generator", "openai/gen", "--judge", "openai/judge", "--base-url",
                            srv.base_url, "--max-retries", "0", "--max-attempts", "1", "--no-progress",
                            "--out", str(out)])
    assert code in (0, 3), code  # 3: a fluency pair is missing, flexibility
    return out


def test_the_export_keeps_answer_reasoning_and_truncation_apart(run: Path) -> None:
    j = load_run(run).judgments
    critiques = j[j["step"] == "critique"]
    assert len(critiques) and critiques["parse_ok"].all()
    assert (critiques["reasoning"] == REASONING).all()
    assert all(r.startswith(f"<think>{REASONING}</think>") for r in critiques["raw_reply"])
    assert all("<think>" not in a and a.startswith("Brief analysis.") for a in critiques["answer"])
    fluency = j[(j["step"] == "fluency") & ~j["key"].str.endswith("#reask")]  # not the consistency re-ask
    good = fluency[fluency["instance_id"] == "meteorology"]
    assert len(good) == 2 and good["parse_ok"].all() and (good["answer"] == "C").all()
    assert not good["truncated_reasoning"].any()
    cut = fluency[fluency["instance_id"] == "stars"]
    assert len(cut) == 2 and not cut["parse_ok"].any() and cut["truncated_reasoning"].all()
    assert (cut["answer"] == "").all() and (cut["reasoning"] == ENDLESS).all()
    ideas = j[j["step"] == "idea"]
    assert ideas["reasoning"].isna().all() and ideas["answer"].isna().all()  # no reasoning: raw only


def test_the_reliability_block_and_table_count_truncated_reasoning(run: Path) -> None:
    results = json.loads((run / "results.json").read_text())
    fluency = results["reliability"]["metrics"]["fluency"]["judges"]["openai/judge"]
    assert fluency["parse_failures"] == 2 and fluency["truncated_reasoning"] == 2
    assert fluency["truncated_reasoning_rate"] == pytest.approx(2 / fluency["judgments"])
    assert "truncated_reasoning" in [w["rule"] for w in fluency["warnings"]]
    critiques = [m["judges"]["openai/judge"] for name, m in results["reliability"]["metrics"].items()
                 if name.startswith("critique[")]
    assert critiques and all(c["truncated_reasoning"] == 0 for c in critiques)
    n = fluency["judgments"]  # both orders of two pairs, and the consistency re-ask
    report = (run / "report.html").read_text()
    assert "truncated reasoning" in report and f"2 ({2 / n:.0%})" in report
    assert f"ran out of tokens while reasoning in 2 of {n} judgments" in report


def test_the_embedded_judgments_stay_escaped(run: Path) -> None:
    html = (run / "report.html").read_text()
    embedded = html.split('<script type="application/json" id="ih-judgments">', 1)[1].split("</script>", 1)[0]
    assert "<" not in embedded and ">" not in embedded and "&" not in embedded
    rows = json.loads(embedded)
    assert any(REASONING in row for row in rows["rows"])


@pytest.mark.skipif(isinstance(BROWSER, str), reason=str(BROWSER))
def test_browser_shows_reasoning_collapsed_apart_from_the_answer(run: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = start_browser()
    try:
        driver.get((run / "report.html").resolve().as_uri())
        WebDriverWait(driver, 10).until(lambda d: d.execute_script("return window.ihJudgmentsReady"))
        seen: dict[str, list[dict[str, Any]]] = {}
        for i in range(len(driver.find_elements(By.CSS_SELECTOR, "#ih-inst-table tr.ih-row"))):
            row = driver.find_elements(By.CSS_SELECTOR, "#ih-inst-table tr.ih-row")[i]
            instance = row.find_elements(By.TAG_NAME, "td")[1].text
            row.click()
            seen[instance] = driver.execute_script(
                "return Array.from(document.querySelectorAll('#ih-drill details.ih-step')).map(d => {"
                "  const r = d.querySelector('details.ih-reasoning');"
                "  const a = d.querySelector('pre.ih-answer');"
                "  const raw = d.querySelector('details.ih-raw-reply pre.ih-raw');"
                "  return {summary: d.querySelector('summary').textContent,"
                "    answer: a ? a.textContent : null,"
                "    reasoning: r ? r.querySelector('pre').textContent : null,"
                "    reasoning_open: r ? r.open : null,"
                "    reasoning_summary: r ? r.querySelector('summary').textContent : null,"
                "    raw: raw ? raw.textContent : null,"
                "    plain_raw: d.querySelector(':scope > pre.ih-raw') ? "
                "      d.querySelector(':scope > pre.ih-raw').textContent : null};})")
        steps = [s for shown in seen.values() for s in shown]
        graded = [s for s in steps if s["answer"] == "C"]
        assert len(graded) >= 2  # both orders of the parsed pair (and its re-ask)
        for s in graded:
            assert s["reasoning"] == REASONING and s["reasoning_open"] is False  # collapsed, as text
            assert s["raw"] == f"<think>{REASONING}</think>\nC"
        cut = [s for s in steps if "ran out of tokens while reasoning" in s["summary"]]
        assert len(cut) == 2
        for s in cut:
            assert s["answer"].startswith("(empty") and s["reasoning"] == ENDLESS
            assert "ran out of tokens before an answer" in s["reasoning_summary"]
        ideas = [s for s in steps if s["reasoning"] is None]
        assert ideas and all(s["plain_raw"] and s["plain_raw"].startswith("Idea on ") for s in ideas)
        assert driver.execute_script("return window.pwned") is None  # the markup stayed text
        assert driver.execute_script("return document.querySelectorAll('#ih-drill img, #ih-drill b')"
                                     ".length") == 0
        assert console_errors(driver) == []
    finally:
        driver.quit()
