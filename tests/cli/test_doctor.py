"""``ideaharness doctor``: one line per check, exit 1 when a required check fails; the real
installed runtime and the real 0.5B model, a real loopback endpoint."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ideaharness.llm.local import LOCAL_MODELS
from ideaharness.testing.openai_server import OpenAICompatServer

MODEL = "qwen2.5-coder-0.5b"


def doctor(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ideaharness.cli", "doctor", *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONIOENCODING": "utf-8", **env})


def lines(proc: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """check name -> its line, for every check line (the last line is the summary)."""
    out = {}
    for line in proc.stdout.splitlines()[:-1]:
        mark, _, rest = line.partition(" ")
        assert mark in ("✔", "✘", "–"), line
        out[rest.partition(": ")[0]] = line
    return out


@pytest.mark.model
def test_a_working_installation_passes_and_names_the_runtime_build() -> None:
    with OpenAICompatServer(lambda body: "ok") as server:
        proc = doctor("--model", MODEL, "--base-url", server.base_url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    checks = lines(proc)
    assert proc.stdout.splitlines()[-1] == "all required checks passed"
    for name in ("python", "packages", "cpu", "embedded runtime", "models folder", "cache folder",
                 f"local/{MODEL} weights", f"local/{MODEL} generation", f"endpoint {server.base_url}"):
        assert checks[name].startswith("✔"), checks
    assert "no AMX path" in checks["embedded runtime"] and "AVX2" in checks["embedded runtime"]
    assert "in a child process" in checks[f"local/{MODEL} generation"]
    assert "test-model" in checks[f"endpoint {server.base_url}"]
    assert "Traceback" not in proc.stderr


def test_missing_or_corrupt_weights_and_dead_endpoints_fail_with_the_fix(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    proc = doctor("--model", MODEL, "--base-url", "http://127.0.0.1:9/v1", "--base-url", "not-a-url",
                  IDEAHARNESS_MODELS_DIR=str(empty))
    assert proc.returncode == 1, proc.stdout
    checks = lines(proc)
    assert checks[f"local/{MODEL} weights"].startswith("✘")
    assert f"run `ideaharness models fetch {MODEL}`" in checks[f"local/{MODEL} weights"]
    assert f"local/{MODEL} generation" not in checks  # nothing to run
    assert checks["endpoint http://127.0.0.1:9/v1"].startswith("✘")
    assert checks["endpoint not-a-url"].startswith("✘")
    assert proc.stdout.splitlines()[-1] == "3 required check(s) failed" and "Traceback" not in proc.stderr

    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    with open(corrupt / LOCAL_MODELS[MODEL].filename, "wb") as f:  # the right size, sparse zeros
        f.truncate(LOCAL_MODELS[MODEL].size_bytes)
    proc = doctor("--model", MODEL, IDEAHARNESS_MODELS_DIR=str(corrupt))
    assert proc.returncode == 1
    weights = lines(proc)[f"local/{MODEL} weights"]
    assert weights.startswith("✘") and f"expected {LOCAL_MODELS[MODEL].sha256}" in weights

    proc = doctor("--model", "bogus")
    assert proc.returncode == 1 and proc.stderr.startswith("error: --model 'bogus': not a bundled model")
