"""Round trip: a run against a loopback OpenAI-compatible server -> records and prompts.jsonl ->
the export's ``prompt`` column and the viewer's drill-down (a real headless chromium) show exactly
the messages the server received, every message escaped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ideaharness.analysis import load_run
from ideaharness.analysis.export import export_run, read_export
from ideaharness.llm.judge import prompt_hash
from ideaharness.results import parse_results
from ideaharness.runs.store import PROMPTS_FILE, prompt_text, read_prompts
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import exit_status, offline_env
from tests.liveideabench.registry_fixtures import reply as liveideabench_reply
from tests.report.browser import console_errors, find_browser, start_browser

BROWSER = find_browser()
MARKUP = "</script><img src=x onerror=\"window.pwned=1\"> & <b>bold</b>"


def reply(body: dict[str, Any]) -> str:
    """LiveIdeaBench's scripted replies; each generated idea carries markup, so the critique
    prompts (which quote the idea) do too."""
    text = liveideabench_reply(body)
    if not text.startswith("Idea on "):
        return text
    head, _, tail = text.partition(": ")
    return f"{head}: {MARKUP} {tail}"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """A LiveIdeaBench run (two keywords, a panel of two judges) and the request bodies received."""
    tmp = tmp_path_factory.mktemp("drill")
    out = tmp / "run"
    with offline_env(tmp / "cache"), OpenAICompatServer(reply) as srv:
        code = exit_status(["run", "liveideabench", "--keyword", "meteorology", "--keyword", "stars",
                            "--generator", "openai/gen", "--judge", "openai/judge-a", "--judge",
                            "openai/judge-b", "--judges-per-idea", "2", "--base-url", srv.base_url,
                            "--max-retries", "0", "--no-progress", "--out", str(out)])
        bodies = [r.body for r in srv.requests]
    assert code in (0, 3), code  # 3: flexibility needs 5 keywords
    return out, bodies


def test_every_request_is_kept_once_under_its_prompt_hash(run: tuple[Path, list[dict[str, Any]]]) -> None:
    out, bodies = run
    kept = read_prompts(out)
    sent = {prompt_hash(b["messages"]): b["messages"] for b in bodies}
    assert kept == sent  # every prompt sent, exactly as sent, and nothing else
    lines = (out / PROMPTS_FILE).read_text().splitlines()
    judged = load_run(out).judgments
    assert len(lines) == len(kept) == judged["prompt_hash"].nunique()
    assert len(lines) < len(judged)  # the panel's judges share one prompt per idea


def test_the_export_prompt_column_holds_the_messages_sent(run: tuple[Path, list[dict[str, Any]]],
                                                          tmp_path: Path) -> None:
    out, _ = run
    kept = read_prompts(out)
    for fmt in ("jsonl", "parquet"):
        _, judgments, _ = export_run(out, fmt, tmp_path / fmt)
        frame = read_export(judgments)
        assert len(frame) and frame["prompt"].notna().all()
        for h, text in zip(frame["prompt_hash"], frame["prompt"], strict=True):
            assert text == prompt_text(kept[h])
        assert frame["prompt"].str.contains(MARKUP, regex=False).any()


def test_the_report_embeds_each_prompt_once_escaped(run: tuple[Path, list[dict[str, Any]]]) -> None:
    out, _ = run
    html = (out / "report.html").read_text()
    embedded = html.split('<script type="application/json" id="ih-prompts">', 1)[1].split("</script>", 1)[0]
    assert "<" not in embedded and ">" not in embedded and "&" not in embedded
    prompts = json.loads(embedded)
    assert prompts == {h: [[m["role"], m["content"]] for m in ms] for h, ms in read_prompts(out).items()}


@pytest.mark.skipif(isinstance(BROWSER, str), reason=str(BROWSER))
def test_browser_drill_down_shows_every_message_of_every_judgment(
        run: tuple[Path, list[dict[str, Any]]]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    out, _ = run
    data = load_run(out)
    kept = read_prompts(out)
    driver = start_browser()
    try:
        driver.get((out / "report.html").resolve().as_uri())
        WebDriverWait(driver, 10).until(lambda d: d.execute_script("return window.ihJudgmentsReady"))
        rows = driver.find_elements(By.CSS_SELECTOR, "#ih-inst-table tr.ih-row")
        assert rows
        checked = 0
        for i in range(len(rows)):
            row = driver.find_elements(By.CSS_SELECTOR, "#ih-inst-table tr.ih-row")[i]
            instance = row.find_elements(By.TAG_NAME, "td")[1].text
            row.click()
            steps = driver.execute_script(
                "return Array.from(document.querySelectorAll('#ih-drill details.ih-step')).map(d => ["
                "  d.querySelector('summary').textContent,"
                "  Array.from(d.querySelectorAll('.ih-message')).map(m => ["
                "    m.querySelector('.ih-role') ? m.querySelector('.ih-role').textContent : null,"
                "    m.querySelector('.ih-prompt').textContent])])"
            )
            mine = data.judgments[data.judgments["instance_id"] == instance]
            assert len(steps) == len(mine)
            for (_, shown), h in zip(steps, mine["prompt_hash"], strict=True):
                assert shown == [[m["role"], m["content"]] for m in kept[h]]
                checked += 1
        assert checked == len(data.judgments)
        assert driver.execute_script("return window.pwned") is None  # the markup stayed text
        injected = driver.execute_script("return document.querySelectorAll('#ih-drill img, #ih-drill b')"
                                         ".length")
        assert injected == 0
        assert "not kept by this run" not in driver.find_element(By.ID, "ih-drill").text
        assert console_errors(driver) == []
    finally:
        driver.quit()


def test_the_run_results_read_typed_and_flatten_back(run: tuple[Path, list[dict[str, Any]]]) -> None:
    out, _ = run
    results = json.loads((out / "results.json").read_text())
    typed = parse_results(results)
    assert typed.benchmark == "liveideabench" and typed.selection is not None
    assert typed.selection.selected == 2
    assert typed.reliability is not None and typed.reliability.metrics
    assert typed.to_json() == results
