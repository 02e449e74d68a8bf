"""The evidence verdict of every headline on every surface (issue 32, the verdict and item 6): a real
LiveIdeaBench run through the CLI, its models served by loopback OpenAI-compatible servers.

* a constant critic (the same ratings and the same fluency grade for every idea): every headline is
  *not evidence*, because of the reliability block's constant-judge flag; the console says so, per
  headline, after the judge-reliability table and before the report path;
* a critic whose ratings follow the ideas' content: every headline is *evidence* (or *weak* with
  its reasons), and the console says so in one summary line.

In both runs results.json, the console, report.html, the viewer's payload, the export's evidence
table and ``compare`` (also for a copy of the run written before the evidence block existed)
carry the same verdict for each headline.
"""

from __future__ import annotations

import html
import io
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from ideaharness.analysis.compare import compare_runs
from ideaharness.analysis.export import export_run, read_export
from ideaharness.analysis.load import metric_key
from ideaharness.metrics.evidence import headline_key
from ideaharness.report.compare import comparison_tables
from ideaharness.report.console import print_tables
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli

KEYWORDS = 10


def _idea(body: dict[str, Any]) -> str | None:
    user = body["messages"][-1]["content"]
    keyword = re.search(r"<keyword>\n(.*?)\n</keyword>", user, re.S)
    if keyword and "ONLY ANSWER A/B/C/D" not in user and "Idea on" not in user:
        word = keyword.group(1)
        return f"Idea on {word}: measure how {word} data improves forecasts with sparse sensors."
    return None


def constant_critic(body: dict[str, Any]) -> str:
    """The same ratings for every idea and the same fluency grade for every pair."""
    idea = _idea(body)
    if idea is not None:
        return idea
    if "ONLY ANSWER A/B/C/D" in body["messages"][-1]["content"]:
        return "B"
    return 'Fine.\n```json\n{"originality": 7, "feasibility": 7, "clarity": 7}\n```'


def content_critic(body: dict[str, Any]) -> str:
    """Ratings that follow the idea's keyword, a fluency grade that follows the two ideas' texts."""
    idea = _idea(body)
    if idea is not None:
        return idea
    user = body["messages"][-1]["content"]
    if "ONLY ANSWER A/B/C/D" in user:
        return "ABCD"[sum(map(ord, user)) % 4]
    found = re.search(r"Idea on ([^:]+):", user)
    k = sum(map(ord, found.group(1))) if found else 0
    scores = {"originality": 1 + k % 10, "feasibility": 1 + (k // 3) % 10, "clarity": 1 + (k // 7) % 10}
    return f"Brief analysis.\n```json\n{json.dumps(scores)}\n```"


def _run(reply: Callable[[dict[str, Any]], str], out: Path,
         capsys: pytest.CaptureFixture[str]) -> tuple[int, str, dict[str, Any]]:
    with OpenAICompatServer(reply) as gen, OpenAICompatServer(reply) as judge:
        code, stdout, err = run_cli(
            ["run", "liveideabench", "--limit", str(KEYWORDS), "--generator", "openai/gen", "--judge",
             "openai/judge", "--base-url", gen.base_url, "--judge-base-url", judge.base_url,
             "--judges-per-idea", "1", "--fluency-judges", "1", "--bootstrap-resamples", "200",
             "--timeout", "20", "--no-progress", "--out", str(out)], capsys)
    assert code in (0, 3), err
    return code, stdout, json.loads((out / "results.json").read_text(encoding="utf-8"))


def _label(metric: str, group: str, system: str | None) -> str:
    where = "/".join(g for g in (system, group) if g)
    return f"{metric} ({where})" if where else metric


def _check_surfaces(out: Path, stdout: str, results: dict[str, Any], tmp_path: Path) -> dict[tuple, str]:
    """Every surface carries results.json's verdict of every headline; returns them."""
    block = results["evidence"]
    assert block["thresholds"]["weak_n"] == 10 and block["thresholds"]["min_interval_n"] == 5
    verdicts = {headline_key(v): v for v in block["verdicts"]}
    assert set(verdicts) == {headline_key(m) for m in results["metrics"]}, "one verdict per headline"
    assert verdicts, "the run has no headline to judge"

    # console: after the reliability table, before the report path; one line per headline not evidence
    reliability_at, report_at = stdout.index("Judge reliability"), stdout.index("report: ")
    bad = {k: v for k, v in verdicts.items() if v["verdict"] != "evidence"}
    for key, v in bad.items():
        line = next((ln for ln in stdout.splitlines()
                     if ln.startswith(f"{v['verdict'].upper()}: {_label(*key)}: ")), None)
        assert line is not None, f"{key}: no console line for its verdict"
        assert reliability_at < stdout.index(line) < report_at
        assert v["reasons"] and v["reasons"][0] in line
    if not bad:
        summary = f"evidence: all {len(verdicts)} headline value(s) pass"
        assert summary in stdout and reliability_at < stdout.index(summary) < report_at
    for note in results["notes"]:
        assert " ".join(note.split()) in stdout, f"note not on the console: {note}"

    # report.html: the evidence table near the top, one row per headline with its verdict
    report = (out / "report.html").read_text(encoding="utf-8")
    start = report.index('<section id="evidence">')
    evidence_html = report[start:report.index("</section>", start)]
    assert report.index('<section id="evidence">') < report.index("Judge reliability")
    for key, v in verdicts.items():
        rows = [r for r in re.findall(r"<tr class=\"verdict-[^\"]+\">(.*?)</tr>", evidence_html, re.S)
                if f"<td>{key[0]}</td>" in r]
        assert rows and all(f"<td>{v['verdict']}</td>" in r for r in rows), f"{key}: report.html"
        for reason in v["reasons"]:
            assert html.escape(reason, quote=True) in evidence_html or reason in html.unescape(evidence_html)

    # the viewer's payload
    payload = json.loads(re.search(r'<script type="application/json" id="ih-data">(.*?)</script>', report,
                                   re.S).group(1))  # type: ignore[union-attr]
    cols = payload["evidence"]["columns"]
    shown = {(r[cols.index("metric")], r[cols.index("group")], r[cols.index("system")]): r
             for r in payload["evidence"]["rows"]}
    expected = {k: v["verdict"] for k, v in verdicts.items()}
    assert {k: r[cols.index("verdict")] for k, r in shown.items()} == expected
    assert all(shown[k][cols.index("reasons")] == v["reasons"] for k, v in verdicts.items())

    # export: evidence.<ext> in every format
    for fmt in ("csv", "jsonl", "parquet"):
        paths = export_run(out, fmt, tmp_path / f"export-{fmt}")
        assert [p.name for p in paths] == [f"scores.{fmt}", f"judgments.{fmt}", f"evidence.{fmt}"]
        frame = read_export(paths[2])
        got = {(r.metric, "" if not isinstance(r.group, str) else r.group): (r.verdict, json.loads(r.reasons))
               for r in frame.itertuples()}
        assert got == {k[:2]: (v["verdict"], v["reasons"]) for k, v in verdicts.items()}, fmt

    # compare: each system's own run verdict beside its leaderboard row, also for an old run
    old = tmp_path / "old-run"
    shutil.copytree(out, old)
    stale = json.loads((old / "results.json").read_text(encoding="utf-8"))
    del stale["evidence"]
    (old / "results.json").write_text(json.dumps(stale), encoding="utf-8")
    comparison = compare_runs([out, old], n_resamples=50)
    for (metric, group, _), v in verdicts.items():
        board = comparison["metrics"][metric_key(metric, group)]["leaderboard"]
        assert len(board) == 2
        assert all(b["evidence"] == {"verdict": v["verdict"], "reasons": v["reasons"]} for b in board), metric
    buffer = io.StringIO()
    print_tables(comparison_tables(comparison), Console(file=buffer, width=600, color_system=None))
    text = buffer.getvalue()
    assert "run verdict" in text and all(v["verdict"] in text for v in verdicts.values())
    return {k: v["verdict"] for k, v in verdicts.items()}


def test_constant_critic_is_not_evidence_on_every_surface(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "constant"
    _, stdout, results = _run(constant_critic, out, capsys)
    verdicts = _check_surfaces(out, stdout, results, tmp_path)
    assert set(verdicts.values()) == {"not evidence"}, verdicts
    for v in results["evidence"]["verdicts"]:
        assert any(r.startswith("constant judge: ") for r in v["reasons"]), v
    by_metric = {v["metric"]: v for v in results["evidence"]["verdicts"]}
    originality = by_metric["liveideabench.originality"]
    assert any("critique[originality]" in r for r in originality["reasons"])
    assert "NOT EVIDENCE: liveideabench.originality: constant judge: " in stdout


def test_content_critic_is_evidence_on_every_surface(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "content"
    _, stdout, results = _run(content_critic, out, capsys)
    verdicts = _check_surfaces(out, stdout, results, tmp_path)
    assert set(verdicts.values()) <= {"evidence", "weak"}, results["evidence"]
    assert verdicts[("liveideabench.originality", "", None)] == "evidence", results["evidence"]
    for v in results["evidence"]["verdicts"]:
        said = [r for r in v["reasons"] if not r.startswith("coverage unknown")]
        assert (v["verdict"] == "evidence") == (not said)
        assert not any(r.startswith("constant judge") for r in v["reasons"])


def test_console_order_verdicts_then_notes_before_the_status_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 6: every note that qualifies a headline is printed, one line each, after the verdicts
    and before the report path and the partial-run line; a line printed elsewhere (the NOT
    COMPUTED banner) is not repeated."""
    from ideaharness.errors import PartialRunError
    from ideaharness.runner.run import finish_run

    line = "NOT COMPUTED: bench.b -- decompose: 5/5 judgments unparsed"
    missing = {"metrics": [], "why": ["x"], "line": line}
    results = {
        "benchmark": "bench", "status": "partial", "failed_units": [], "not_computed": missing,
        "metrics": [{"metric": "bench.a", "group": "", "value": 0.9, "ci": [0.8, 1.0], "n": 3},
                    {"metric": "bench.b", "group": "", "value": None, "ci": None, "n": 0}],
        "notes": [line, "the rewrite check dropped 9 of 12 targets (75 %):\nthe Insight Score rests on the 3 "
                  "left", "the comparison is not blind"],
    }
    with pytest.raises(PartialRunError) as raised:
        finish_run(results, tmp_path)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["NOT EVIDENCE: bench.a: n too small: n 3 < 5, no valid 95% interval",
                         "NOT EVIDENCE: bench.b: not computed (n 0)"]
    assert lines[2:4] == ["note: the rewrite check dropped 9 of 12 targets (75 %): the Insight Score rests "
                          "on the 3 left", "note: the comparison is not blind"]
    assert lines[4].startswith("report: ") and len(lines) == 5
    assert "NOT COMPUTED: bench.b" in str(raised.value)


def test_a_system_failing_on_the_hard_tasks_is_not_evidence_in_its_run_and_in_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 1's shape (coverage_support.mlrbench_pair): D's unparsable ideas on the low-scored tasks
    make each of its headlines *not evidence* for coverage (3 of 6 tasks), on the console and in
    ``compare``; E, which answered every task, has no coverage reason."""
    from tests.runner.coverage_support import LOW, TASKS, mlrbench_pair

    pair = mlrbench_pair(tmp_path, capsys, monkeypatch)
    answered = len(TASKS) - len(LOW)
    said = f"coverage {answered}/{len(TASKS)} ({answered / len(TASKS):.0%})"
    d = json.loads((pair.d / "results.json").read_text(encoding="utf-8"))["evidence"]["verdicts"]
    e = json.loads((pair.e / "results.json").read_text(encoding="utf-8"))["evidence"]["verdicts"]
    assert d and e
    for v in d:
        assert v["verdict"] == "not evidence" and any(r.startswith(said) for r in v["reasons"]), v
        line = next(ln for ln in pair.d_text.splitlines()
                    if ln.startswith(f"NOT EVIDENCE: {_label(v['metric'], v['group'], v['system'])}: "))
        assert said in line
    assert not any(r.startswith("coverage") for v in e for r in v["reasons"]), e
    comparison = compare_runs([pair.d, pair.e], n_resamples=50)
    run_of = {s["label"]: s["run_dir"] for s in comparison["systems"]}
    for block in comparison["metrics"].values():
        for row in block["leaderboard"]:
            mine = Path(run_of[row["system"]]) == pair.d
            assert any(r.startswith(said) for r in row["evidence"]["reasons"]) == mine, row
            if mine:
                assert row["evidence"]["verdict"] == "not evidence", row
