"""The "System" panel of report.html and the viewer (issue 20, item 5): which system a run
evaluates and how its ideas were produced (kind, spec, file, answers asked / missing / extra), and
the drill-down of a step a system answered: the task JSON as its prompt, its answer, its stderr.
Markup in the system's name, spec and stderr stays text (autoescape, textContent), checked in the
page source and in a real headless chromium."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import markupsafe
import pytest

from ideaharness.analysis.load import load_run
from ideaharness.report.html import write_report
from ideaharness.report.viewer import render_viewer, system_views
from tests.analysis.system_runs import as_system, mark_system_step
from tests.report.browser import console_errors, find_browser, start_browser

BROWSER = find_browser()
MARKUP = '</script><img src=x onerror="window.pwned=1"> & <b>bold</b>'
NAME = f"Agent {MARKUP}"
STDERR = f"retrieved 3 papers\nwarning: {MARKUP}\n"
SPEC = "cmd:python agent.py --tag '<b>x</b>'"
INSTANCE = "tomato-chem/1"


@pytest.fixture(scope="module")
def system_run(runs: dict[str, Path],
               tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """An IdeaBench run of a ``cmd:`` system named with markup, no answer for two instances, one
    generation step answered as a system task with markup on stderr; report.html written again."""
    out = as_system(runs["ideabench_b"], tmp_path_factory.mktemp("panel") / "run", spec=SPEC, kind="command",
                    system=NAME, missing=("tomato-chem/4", "tomato-chem/5"))
    task = mark_system_step(out, "generate/low", INSTANCE, spec=SPEC, stderr=STDERR,
                            task_extra={"inputs": {"domain": f"chemistry {MARKUP}", "n_ideas": 3}})
    write_report(out / "report.html", title="IdeaBench", config={}, tables=[])
    return out, task


def _panel(html: str) -> str:
    return html.split('<section class="ih-system-panel" id="ih-system">', 1)[1].split("</section>", 1)[0]


def test_report_and_viewer_show_the_system_panel_escaped(system_run: tuple[Path, dict[str, Any]]) -> None:
    out, _ = system_run
    for page in ((out / "report.html").read_text(), render_viewer(out)):
        assert page.count('id="ih-system"') == 1  # once: report.html's own, not the viewer's too
        panel = _panel(page)
        escaped = str(markupsafe.escape(NAME))
        assert escaped.startswith("Agent &lt;/script&gt;&lt;img src=x onerror=&#34;") and escaped in panel
        assert "<b>" not in panel and "<img" not in panel
        assert "command" in panel and "cmd:python agent.py --tag &#39;&lt;b&gt;x&lt;/b&gt;&#39;" in panel
        assert "2: tomato-chem/4, tomato-chem/5" in panel and "<td class=\"ih-system-asked\">6</td>" in panel
    (view,) = system_views(load_run(out))
    assert view["recorded"] and view["systems"][0]["kind_label"] == "command"


def test_a_model_run_names_its_model_and_an_ideas_run_its_file(runs: dict[str, Path], tmp_path: Path) -> None:
    (view,) = system_views(load_run(runs["ideabench_a"]))
    assert view["recorded"] and view["systems"][0]["answers"]["asked"] == 6  # the runner's idea_sources
    assert [(s["system"], s["kind_label"], s["spec"]) for s in view["systems"]] == [
        ("gen-strong", "model", "gen-strong")]
    old = as_system(runs["ideabench_a"], tmp_path / "old", spec="gen-strong", kind="model", block=False)
    (view,) = system_views(load_run(old))
    assert not view["recorded"]  # a run saved before the idea_sources block: derived from its config
    assert [(s["system"], s["kind_label"], s["spec"]) for s in view["systems"]] == [
        ("gen-strong", "model", "gen-strong")]
    ideas = as_system(runs["ideabench_a"], tmp_path / "ideas",
                      spec="ideas:/data/ai-scientist.json#format=aiscientist", kind="ideas-file",
                      extra=("tomato-chem/77",))
    panel = _panel(render_viewer(ideas))
    for text in ("ai-scientist", "ideas file", "/data/ai-scientist.json", "aiscientist", "1: tomato-chem/77"):
        assert text in panel, text


@pytest.mark.skipif(isinstance(BROWSER, str), reason=str(BROWSER))
def test_browser_panel_and_system_step_drill_down(system_run: tuple[Path, dict[str, Any]]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    out, task = system_run
    driver = start_browser()
    try:
        driver.get((out / "report.html").resolve().as_uri())
        WebDriverWait(driver, 10).until(lambda d: d.execute_script("return window.ihJudgmentsReady"))
        panel = driver.find_element(By.ID, "ih-system")
        assert panel.find_element(By.CSS_SELECTOR, ".ih-system-name").text == NAME
        assert panel.find_element(By.CSS_SELECTOR, ".ih-system-kind").text == "command"
        assert panel.find_element(By.CSS_SELECTOR, ".ih-system-spec").text == SPEC
        missing = panel.find_element(By.CSS_SELECTOR, ".ih-system-missing").text
        assert missing == "2: tomato-chem/4, tomato-chem/5"
        rows = driver.find_elements(By.CSS_SELECTOR, "#ih-inst-table tr.ih-row")
        row = next(r for r in rows if r.find_elements(By.TAG_NAME, "td")[1].text == INSTANCE)
        assert row.find_elements(By.TAG_NAME, "td")[0].text.startswith(NAME[:55])  # cut at 60 characters
        row.click()
        steps = driver.find_elements(By.CSS_SELECTOR, "#ih-drill details.ih-step")
        (system_step,) = [d for d in steps if "ih-system-step" in d.get_attribute("class")]
        shown = driver.execute_script(
            "var d = arguments[0]; return [Array.from(d.querySelectorAll('h4')).map(h => h.textContent),"
            " d.querySelector('.ih-task').textContent, d.querySelector('.ih-stderr').textContent,"
            " d.querySelectorAll('.ih-role').length]", system_step)
        headings, task_text, stderr, roles = shown
        assert headings == ["Answer (the JSON the system returned)", "stderr",
                            "Task (the JSON sent to the system)"]
        assert json.loads(task_text) == task and task_text == json.dumps(task, indent=2, sort_keys=True,
                                                                    ensure_ascii=False)
        assert stderr == STDERR and roles == 0
        others = [d for d in steps if d is not system_step]
        assert others and all(not d.find_elements(By.CSS_SELECTOR, ".ih-stderr") for d in others)
        assert driver.execute_script("return window.pwned") is None  # the markup stayed text
        injected = driver.execute_script(
            "return document.querySelectorAll('#ih-system img, #ih-system b, #ih-drill img, #ih-drill b,"
            " #ih-inst-table img, #ih-inst-table b').length")
        assert injected == 0
        assert console_errors(driver) == []
    finally:
        driver.quit()
