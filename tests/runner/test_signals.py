"""SIGTERM is handled like Ctrl-C (a real subprocess against a slow loopback server): exit 143,
the records kept, results.json and report.html written; the same command then completes. And help
fits 80 columns for every command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ideaharness.cli import main
from ideaharness.runner.registry import benchmarks
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.runner.test_extension import SRC, echo, write_distribution


def test_sigterm_mid_run_exits_143_keeps_records_writes_the_report_and_resumes(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_distribution(site)
    out = tmp_path / "run"
    records = out / "records" / "echo.jsonl"
    environ = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{site}",
               "IDEAHARNESS_CACHE_DIR": str(tmp_path / "c")}
    environ.pop("OPENAI_API_KEY", None)
    with OpenAICompatServer(echo, latency_s=0.4) as server:
        args = [sys.executable, "-m", "ideaharness.cli", "run", "toyep", "--generator", "openai/slow",
                "--base-url", server.base_url, "--items", "30", "--max-concurrency", "1", "--no-progress",
                "--out", str(out)]
        proc = subprocess.Popen(args, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (records.exists()
                                                   and len(records.read_text().splitlines()) >= 3):
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 143, err
        assert "terminated (SIGTERM)" in err and "Traceback" not in err
        kept = len(records.read_text().splitlines())
        assert 3 <= kept < 30
        results = json.loads((out / "results.json").read_text())
        assert results["status"] == "partial" and results["ended"] == "terminated (SIGTERM)"
        assert results["echoed"] == kept
        assert "terminated (SIGTERM)" in (out / "report.html").read_text()
        before = len(server.requests)
        done = subprocess.run(args, env=environ, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert json.loads((out / "results.json").read_text())["echoed"] == 30
        assert len(server.requests) - before <= 30 - kept + 1  # at most the call in flight is repeated


@pytest.mark.parametrize("command", [["run", name] for name in sorted(benchmarks())] + [["score-idea"], []])
def test_help_fits_80_columns_without_cut_flags_or_defaults(
    command: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as exc:
        main([*command, "--help"])
        raise SystemExit(0)
    assert not exc.value.code
    text = capsys.readouterr().out
    assert "…" not in text and "--help" in text
    assert max(len(line) for line in text.splitlines()) <= 80
    if command and command[0] == "run":
        for flag in ("--limit", "--shard", "--price", "--max-attempts", "--base-url", "--judge-base-url",
                     "--timeout", "--max-retries", "--force", "--config"):
            assert flag in text
