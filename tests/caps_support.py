"""What the reply-cap tests share: run a registered benchmark for real against two loopback
OpenAI-compatible servers (its ``tests/<package>/registry_fixtures.py`` data and replies) and read
back, per recorded step, the reply caps the servers received; and check a benchmark's
``PUBLISHED_CAPS`` cite their source."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from ideaharness.benchmarks._caps import PublishedCap
from ideaharness.cli import main
from ideaharness.llm.client import DEFAULT_REASONING_BUDGET
from ideaharness.llm.judge import prompt_hash
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.runner.registry_support import fixture_for

BUDGET = DEFAULT_REASONING_BUDGET
"""The reasoning budget an ``openai/`` role gets by default, added to every answer cap."""
NOT_SENT = "not sent"
"""What :func:`sent_caps` records for a request that carried no token cap."""
SOURCE = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{7,40}:[\w./-]+\.py:\d+")
"""``owner/repo@commit:path.py:line`` at the start of a published cap's ``source``."""


def cap_of(body: Mapping[str, Any]) -> int | str:
    """The token cap of one chat-completions request body (``max_tokens`` or
    ``max_completion_tokens``), :data:`NOT_SENT` when it has neither (a key sent as null is
    reported as such: that is not "no cap").

    Raises:
        AssertionError: the body carries both.
    """
    keys = [k for k in ("max_tokens", "max_completion_tokens") if k in body]
    assert len(keys) <= 1, f"a request carries both {keys}"
    if not keys:
        return NOT_SENT
    value = body[keys[0]]
    return f"{keys[0]}: null" if value is None else int(value)  # null is sent, not "no cap"


def run_benchmark(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  *args: str) -> tuple[Path, list[dict[str, Any]]]:
    """Run benchmark ``name`` on its registry fixture's data, generator ``openai/gen`` and judge
    ``openai/judge`` on two loopback servers answering with the fixture's replies; ``args`` are
    further CLI flags. Returns the run directory and every request body both servers received.

    Raises:
        AssertionError: the run ended with another exit code than 0 or 3.
    """
    fixture = fixture_for(name)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    with OpenAICompatServer(fixture.reply) as gen, OpenAICompatServer(fixture.reply) as judge:
        from ideaharness.runner.registry import benchmarks

        fields = benchmarks()[name].config_class.model_fields
        roles = (["--generator", "openai/gen", "--base-url", gen.base_url, "--judge-base-url", judge.base_url]
                 if "generator" in fields or "generators" in fields else ["--base-url", judge.base_url])
        argv = ["run", name, *fixture.data_args(tmp_path), *roles, "--judge", "openai/judge", "--limit", "1",
                "--max-retries", "0", "--no-progress", "--out", str(out), *args]
        with pytest.raises(SystemExit) as exc:
            main(argv)
            raise SystemExit(0)
        bodies = [r.body for r in [*gen.requests, *judge.requests]]
    assert exc.value.code in (0, 3, None), f"exit {exc.value.code}: {' '.join(argv)}"
    return out, bodies


def sent_caps(out: Path, bodies: Sequence[Mapping[str, Any]]) -> dict[str, set[int | str]]:
    """Recorded step -> the caps of the requests whose prompt that step recorded (by prompt hash;
    a consistency re-ask counts for its step); a request no record names is under ``"?"``."""
    steps: dict[str, set[str]] = defaultdict(set)
    for path in sorted((out / "records").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            judgment = (rec.get("data") or {}).get("judgment") if isinstance(rec.get("data"), dict) else None
            if isinstance(judgment, dict) and judgment.get("prompt_hash"):
                steps[str(judgment["prompt_hash"])].add(rec["step"])
    caps: dict[str, set[int | str]] = defaultdict(set)
    for body in bodies:
        for step in steps.get(prompt_hash(body["messages"]), {"?"}):
            caps[step].add(cap_of(body))
    return dict(caps)


def assert_cited(published: Mapping[str, PublishedCap]) -> None:
    """Every known published cap names ``owner/repo@commit:path.py:line``; every unknown one says
    why (and carries no value)."""
    assert published
    for kind, cap in published.items():
        if cap.known:
            assert SOURCE.match(cap.source), f"{kind}: {cap.source!r} cites no owner/repo@commit:path:line"
        else:
            assert cap.tokens is None and cap.source, f"{kind}: an unknown cap states why and has no value"
