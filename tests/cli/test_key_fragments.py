"""Issue 33, item 6: an endpoint that quotes back part of the API key (its last 20 characters, a
prefix without ``sk-``) in its error body: the fragment reaches neither results.json, report.html,
the records, the logs, the cache nor the console -- end to end against a loopback endpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from ideaharness.testing.openai_server import OpenAICompatServer, Reply
from tests.cli.test_exit_codes import aiib_args, i2t_reply
from tests.cli_support import run_cli

KEY = "sk-" + "proj-Fr4gM3nt-Q7f3K9x2Lm4Np8Rs6Tv1Wy5Zb0Cd"  # a fake key, assembled so scanners skip it


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))


def test_echoed_key_fragments_are_written_nowhere(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suffix, prefix = KEY[-20:], KEY[3:17]  # "...the key ending in <20 chars>"; a prefix without "sk-"
    echo = {"error": {"message": f"Incorrect API key provided: ...{suffix}. Key id {prefix}; "
                                 f"tail {KEY[-8:]} (see your dashboard)"}}
    with OpenAICompatServer(i2t_reply, script=[Reply(500, echo)] * 2) as srv:  # one unit fails for good
        code, stdout, stderr = run_cli(aiib_args(srv.base_url, tmp_path / "run", "--max-retries", "0"),
                                       capsys)
        sent = {k.lower(): v for k, v in srv.requests[0].headers.items()}["authorization"]
    assert sent.endswith(suffix)  # the server did see the key it quotes
    assert code == 3, stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    names = {p.relative_to(tmp_path / "run").parts[0] for p in files if (tmp_path / "run") in p.parents}
    assert {"results.json", "report.html", "records"} <= names, names
    blobs = {"stdout": stdout, "stderr": stderr, **{str(p): p.read_text(errors="replace") for p in files}}
    assert any("Incorrect API key provided" in b and "see your dashboard" in b for b in blobs.values())
    results = blobs[str(tmp_path / "run" / "results.json")]
    assert "[REDACTED]" in results and "see your dashboard" in results  # failed_units[].error, redacted
    assert "Incorrect API key provided" in stdout + stderr
    for where, blob in blobs.items():  # no run of 8 characters of the key anywhere
        for i in range(len(KEY) - 7):
            assert KEY[i:i + 8] not in blob, (where, KEY[i:i + 8])
