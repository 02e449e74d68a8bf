"""The per-instance viewer in report.html: escaping, content, and a real headless chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ideaharness.analysis import load_run
from ideaharness.report.viewer import render_viewer, script_json, viewer_payload
from tests.analysis.saved_runs import HOSTILE
from tests.report.browser import console_errors, find_browser, start_browser

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_embedded_json_reads_back_and_cannot_close_the_script(value: object) -> None:
    text = str(script_json(value))
    assert json.loads(text) == value
    assert not any(c in text for c in "<>&\u2028\u2029")


def test_report_embeds_every_judgment_once_and_escaped(runs: dict[str, Path]) -> None:
    html = (runs["aiideabench"] / "report.html").read_text()
    assert html.count('id="ih-data"') == 1 and 'id="ih-inst-table"' in html
    assert "</script><script>window.pwned" not in html and "<b>bold</b>" not in html
    data = json.loads(html.split('<script type="application/json" id="ih-data">')[1].split("</script>")[0])
    judgments = json.loads(
        html.split('<script type="application/json" id="ih-judgments">')[1].split("</script>")[0]
    )
    run = load_run(runs["aiideabench"])
    assert len(judgments["rows"]) == len(run.judgments) and html.count('id="ih-judgments"') == 1
    assert sum(r[4] for r in data["instances"]["rows"]) == 4  # parse failures per instance
    assert "src=" not in html.replace('src="data:', "")  # nothing loaded from outside the file


@pytest.mark.parametrize("name", ["ideabench_a", "researchbench_a", "ligbench"])
def test_every_benchmark_report_has_the_viewer(runs: dict[str, Path], name: str) -> None:
    if not (runs[name] / "report.html").exists():
        pytest.skip("ScholarIdeas data not present: no LigBench run")
    html = (runs[name] / "report.html").read_text()
    assert 'id="ih-data"' in html and "Judge reliability" in html and "per-instance viewer not" not in html


def test_render_viewer_from_dataframes_with_a_reliability_block(runs: dict[str, Path]) -> None:
    run = load_run(runs["ideabench_a"])
    page = render_viewer((run.scores, run.judgments), title="from frames")
    assert "<title>from frames</title>" in page and 'id="ih-judg-table"' in page
    run.results["reliability"] = {
        "insight/novelty": {
            "parse_failure_rate": 0.0,
            "top_answer_share": 0.95,
            "warnings": ["<judge> answers A 95% of the time"],
        }
    }
    page = render_viewer(run)
    assert "warning: &lt;judge&gt; answers A 95% of the time" in page and "top_answer_share" in page
    assert viewer_payload(run)["instances"]["columns"][:2] == ["system", "instance_id"]


BROWSER = find_browser()


@pytest.mark.skipif(isinstance(BROWSER, str), reason=str(BROWSER))
def test_browser_filters_parse_failures_and_shows_the_raw_reply(runs: dict[str, Path]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = start_browser()
    try:
        driver.get((runs["aiideabench"] / "report.html").resolve().as_uri())
        assert driver.execute_script("return typeof window.ihReady") == "number"
        WebDriverWait(driver, 10).until(lambda d: d.execute_script("return window.ihJudgmentsReady"))
        rows = driver.find_elements(By.CSS_SELECTOR, "#ih-inst-table tr.ih-row")
        assert len(rows) == 2
        driver.find_element(By.ID, "ih-inst-parsefail").click()
        rows = driver.find_elements(By.CSS_SELECTOR, "#ih-inst-table tr.ih-row")
        assert [r.find_elements(By.TAG_NAME, "td")[1].text for r in rows] == ["aiib-1"]
        rows[0].click()
        drill = driver.find_element(By.ID, "ih-drill")
        assert drill.is_displayed() and "PARSE FAILURE" in drill.text
        raw = driver.execute_script(
            "return Array.from(document.querySelectorAll('#ih-drill .ih-bad .ih-raw'))"
            ".map(e => e.textContent)"
        )
        assert raw and set(raw) == {HOSTILE}
        assert driver.execute_script("return window.pwned") is None  # the reply stayed text
        driver.find_element(By.ID, "ih-judg-parsefail").click()
        assert "rows 1–4 of 4" in driver.find_element(By.CSS_SELECTOR, "#ih-judg-table .ih-info").text
        search = driver.find_element(By.ID, "ih-judg-search")
        search.send_keys("STRONG")
        assert "no rows match" in driver.find_element(By.CSS_SELECTOR, "#ih-judg-table .ih-info").text
        assert console_errors(driver) == []
    finally:
        driver.quit()
