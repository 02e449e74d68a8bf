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
    failures = int((~run.judgments["parse_ok"].astype(bool)).sum())
    assert failures > 0 and sum(r[4] for r in data["instances"]["rows"]) == failures  # per instance
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
    section = run.results["reliability"]
    section["warnings"] = ["<judge> answers A 95% of the time"]
    page = render_viewer(run)
    panel = page.split("<h2>Judge reliability</h2>")[1].split("<h2>")[0]
    assert "warning: &lt;judge&gt; answers A 95% of the time" in panel
    assert '<table class="ih-table ih-reliability">' in panel and "<th>position bias (adj. p)</th>" in panel
    assert "{&#34;" not in panel and '{"' not in panel  # a table of figures, not raw JSON in a cell
    assert "human agreement" not in panel and "ceiling" not in panel  # no human labels in this run
    payload = viewer_payload(run)
    assert payload["instances"]["columns"][:2] == ["system", "instance_id"]
    assert payload["instances"]["labels"][:3] == ["system", "instance", "steps"]
    assert "parse error" in payload["judgments"]["labels"] and "shown" in payload["judgments"]["columns"]


def test_report_shows_the_reliability_block_once(runs: dict[str, Path]) -> None:
    """report.html holds one "Judge reliability" table (the report's), not a second panel."""
    html = (runs["ideabench_a"] / "report.html").read_text()
    assert html.count("Judge reliability") == 1 and "position bias (adj. p)" in html


def test_ranking_letters_map_to_the_ideas_shown(runs: dict[str, Path]) -> None:
    run = load_run(runs["ideabench_a"])
    judgments = viewer_payload(run)["judgments"]
    col = {c: i for i, c in enumerate(judgments["columns"])}
    ranks = [r for r in judgments["rows"] if str(r[col["step"]]).startswith("rank/")]
    assert ranks
    for row in ranks:
        shown = row[col["shown"]]
        assert [s[0] for s in shown] == list("ABCD")[: len(shown)]
        assert [s[1] for s in shown] == json.loads(row[col["positions"]])
        assert "target" in [s[1] for s in shown]
        texts = [s[2] for s in shown if s[1] != "target"]
        assert texts and all(isinstance(t, str) and t for t in texts)  # the generated ideas' texts
    others = [r for r in judgments["rows"] if not str(r[col["step"]]).startswith("rank/")]
    assert all(r[col["shown"]] is None for r in others)


def test_compare_html_renders_each_run_reliability_as_a_table(runs: dict[str, Path]) -> None:
    from ideaharness.analysis.compare import compare_runs
    from ideaharness.report.viewer import render_compare

    page = render_compare(compare_runs([runs["ideabench_a"], runs["ideabench_b"]], n_resamples=200))
    for run in ("ideabench_a", "ideabench_b"):
        part = page.split(f"<h2>Run {load_run(runs[run]).run_id}</h2>")[1].split("<h2>Per-instance")[0]
        part = part.split("<h2>Run ")[0]
        assert '<table class="ih-table ih-reliability">' in part and "<th>consistency</th>" in part
        assert "{&#34;" not in part and '{"' not in part


BROWSER = find_browser()


@pytest.mark.skipif(isinstance(BROWSER, str), reason=str(BROWSER))
def test_browser_filters_parse_failures_and_shows_the_raw_reply(runs: dict[str, Path]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    run = load_run(runs["aiideabench"])
    bad = run.judgments[~run.judgments["parse_ok"].astype(bool)]
    driver = start_browser()
    try:
        driver.get((runs["aiideabench"] / "report.html").resolve().as_uri())
        assert driver.execute_script("return typeof window.ihReady") == "number"
        WebDriverWait(driver, 10).until(lambda d: d.execute_script("return window.ihJudgmentsReady"))
        rows = driver.find_elements(By.CSS_SELECTOR, "#ih-inst-table tr.ih-row")
        assert len(rows) == 2
        driver.find_element(By.ID, "ih-inst-parsefail").click()
        rows = driver.find_elements(By.CSS_SELECTOR, "#ih-inst-table tr.ih-row")
        shown = [r.find_elements(By.TAG_NAME, "td")[1].text for r in rows]
        assert shown == sorted(set(bad["instance_id"]))
        rows[-1].click()
        drill = driver.find_element(By.ID, "ih-drill")
        assert drill.is_displayed() and "PARSE FAILURE" in drill.text
        raw = driver.execute_script(
            "return Array.from(document.querySelectorAll('#ih-drill .ih-bad .ih-raw'))"
            ".map(e => e.textContent)"
        )
        assert raw and set(raw) == {HOSTILE}
        assert driver.execute_script("return window.pwned") is None  # the reply stayed text
        driver.find_element(By.ID, "ih-judg-parsefail").click()
        n = len(bad)
        assert f"rows 1–{n} of {n}" in driver.find_element(By.CSS_SELECTOR, "#ih-judg-table .ih-info").text
        # the parse error is a column of the parse-failure filter, under a human label
        headers = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#ih-judg-table th")]
        assert "parse error" in headers and "parse_status" not in headers and "parse status" in headers
        col = headers.index("parse error")
        cells = [
            tr.find_elements(By.TAG_NAME, "td")[col].text
            for tr in driver.find_elements(By.CSS_SELECTOR, "#ih-judg-table tr.ih-row")
        ]
        assert len(cells) == n and all("no JSON object" in c for c in cells)
        search = driver.find_element(By.ID, "ih-judg-search")
        search.send_keys("STRONG")
        assert "no rows match" in driver.find_element(By.CSS_SELECTOR, "#ih-judg-table .ih-info").text
        assert console_errors(driver) == []
    finally:
        driver.quit()


# every word of every header (a break after a hyphen is a break between words) fits on one line
WORD_FITS = r"""
return Array.from(document.querySelectorAll(arguments[0])).map(function (th) {
  var style = getComputedStyle(th), words = th.textContent.split(/\s+|(?<=-)/).filter(Boolean);
  var inner = th.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  var widest = 0;
  words.forEach(function (w) {
    var probe = document.createElement("span");
    probe.style.whiteSpace = "nowrap";
    probe.textContent = w;
    th.appendChild(probe);
    widest = Math.max(widest, probe.getBoundingClientRect().width);
    th.removeChild(probe);
  });
  return [th.textContent, widest <= inner + 0.5];
});
"""


@pytest.mark.skipif(isinstance(BROWSER, str), reason=str(BROWSER))
@pytest.mark.parametrize("width", [700, 1280])
def test_browser_headers_never_break_inside_a_word_and_rankings_show_their_ideas(
    runs: dict[str, Path], width: int, tmp_path: Path
) -> None:
    """Item 10: "syste m", "judgm ents" were headers broken inside words; a ranking step showed
    ["D","A","B","C"] without saying which idea each letter was."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = start_browser(width=width)
    try:
        driver.get((runs["ideabench_a"] / "report.html").resolve().as_uri())
        WebDriverWait(driver, 10).until(lambda d: d.execute_script("return window.ihJudgmentsReady"))
        for table in ("#ih-inst-table th", "#ih-judg-table th"):
            fits = driver.execute_script(WORD_FITS, table)
            assert fits and all(ok for _, ok in fits), [t for t, ok in fits if not ok]
        headers = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#ih-inst-table th")]
        assert "instance" in headers and "parse failures" in headers and "instance_id" not in headers
        driver.find_elements(By.CSS_SELECTOR, "#ih-inst-table tr.ih-row")[0].click()
        steps = driver.execute_script(
            "return Array.from(document.querySelectorAll('#ih-drill details'))"
            ".filter(d => d.querySelector('summary').textContent.startsWith('rank/'))"
            ".map(d => { d.open = true; return d.innerText; })"
        )
        assert steps
        for text in steps:
            assert "items shown" in text and "A = " in text and "target (the reference idea)" in text
            assert " > " in text and "best first" in text  # letters mapped to items, in ranking order
        assert console_errors(driver) == []
        # the standalone viewer page carries the reliability panel: its headers too
        page = tmp_path / "viewer.html"
        page.write_text(render_viewer(runs["ideabench_a"]))
        driver.get(page.resolve().as_uri())
        fits = driver.execute_script(WORD_FITS, "table.ih-reliability th")
        assert fits and all(ok for _, ok in fits), [t for t, ok in fits if not ok]
    finally:
        driver.quit()
