"""Runs whose judge is a reasoning model (issue 21, done-when 2): a LiveIdeaBench and an IdeaBench
run with an ``openai/`` judge on a loopback server that reasons before it answers, the reasoning
counted against ``max_tokens`` / ``max_completion_tokens`` (cut with finish reason "length"),
complete with no parse failure under the default reasoning budget; with ``--reasoning-budget 0``
the cut replies are parse failures counted as truncated reasoning. The ideas come from an
``--ideas`` file: no generating model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ideaharness.cli import main
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.ideabench.conftest import ideabench_responder
from tests.ideabench.test_systems import answers as ideabench_answers
from tests.liveideabench.registry_fixtures import reply as liveideabench_reply
from tests.liveideabench.test_systems import KEYWORDS
from tests.liveideabench.test_systems import answers as liveideabench_answers

REASONING_WORDS = 300
"""Words (one token each) the judge reasons before every answer: more than the answer caps, less
than a cap with the default reasoning budget added."""
LONG_REASONING_WORDS = 5000
"""Reasoning longer than any cap a run without a reasoning budget reaches (each truncation doubles it)."""


class ReasoningServer(OpenAICompatServer):
    """A loopback server answering like a reasoning model: :data:`REASONING_WORDS` words of
    reasoning (``message.reasoning_content``) before the answer, both counted against the request's
    ``max_completion_tokens`` or ``max_tokens`` (one token a word); a reply over the cap is cut,
    with an empty answer when the reasoning alone fills it, finish reason "length"."""

    words = REASONING_WORDS

    def _completion(self, body: dict[str, Any], text: str) -> dict[str, Any]:
        completion = super()._completion(body, text)
        cap = body.get("max_completion_tokens", body.get("max_tokens"))
        thought = [f"step{i}" for i in range(self.words)]
        answer = text.split(" ")
        cut = cap is not None and len(thought) + len(answer) > cap
        if cut:
            thought = thought[:cap]
            answer = answer[: max(0, cap - self.words)]
        message = {"role": "assistant", "content": " ".join(answer), "reasoning_content": " ".join(thought)}
        finish = "length" if cut else "stop"
        completion["choices"] = [{"index": 0, "finish_reason": finish, "message": message}]
        spent = len(thought) + len([w for w in answer if w])
        completion["usage"] = {**completion["usage"], "completion_tokens": spent,
                               "total_tokens": completion["usage"]["prompt_tokens"] + spent,
                               "completion_tokens_details": {"reasoning_tokens": len(thought)}}
        return completion


def _judgments(out: Path) -> list[dict[str, Any]]:
    found = []
    for path in (out / "records").glob("*.jsonl"):
        for line in path.read_text().splitlines():
            judgment = json.loads(line).get("data", {}).get("judgment")
            if judgment is not None and judgment.get("judge_model", "").startswith("openai/"):
                found.append(judgment)
    return found


def _run(argv: list[str]) -> int:
    """The exit status of ``ideaharness ARGV`` (0 when ``main`` returns)."""
    try:
        code = main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return int(code or 0)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))


def _liveideabench(tmp_path: Path, out: Path, *extra: str, words: int = REASONING_WORDS) -> int:
    with ReasoningServer(liveideabench_reply) as server:
        server.words = words
        return _run(["run", "liveideabench", *[a for kw in KEYWORDS for a in ("--keyword", kw)],
                     "--ideas", str(liveideabench_answers(tmp_path)), "--judge", "openai/judge",
                     "--judge-base-url", server.base_url, "--no-progress", "--bootstrap-resamples", "50",
                     "--out", str(out), *extra])


def _ideabench(tmp_path: Path, out: Path, *extra: str, words: int = REASONING_WORDS) -> int:
    respond = ideabench_responder()
    with ReasoningServer(lambda body: respond(body["messages"])) as server:
        server.words = words
        return _run(["run", "ideabench", "--data", "tomato-chem", "--limit", "2",
                     "--ideas", str(ideabench_answers(tmp_path)), "--judge", "openai/judge",
                     "--judge-base-url", server.base_url, "--no-progress", "--bootstrap-resamples", "50",
                     "--out", str(out), *extra])


@pytest.mark.parametrize("bench", [_liveideabench, _ideabench], ids=["liveideabench", "ideabench"])
def test_a_reasoning_judge_run_completes_without_parse_failures(tmp_path: Path, bench: Any) -> None:
    out = tmp_path / "run"
    assert bench(tmp_path, out) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["status"] == "complete"
    assert not results.get("unparsed_units")
    judged = _judgments(out)
    assert judged and all(j["parse_ok"] and not j["truncated_reasoning"] for j in judged)
    assert all(j["reasoning"] and j["reasoning"].startswith("step0") for j in judged)
    assert all(j["usage"].get("reasoning_tokens") == REASONING_WORDS * j["attempts"] for j in judged)


@pytest.mark.parametrize("bench", [_liveideabench, _ideabench], ids=["liveideabench", "ideabench"])
def test_without_a_reasoning_budget_cut_replies_count_as_truncated_reasoning(tmp_path: Path,
                                                                              bench: Any) -> None:
    out = tmp_path / "run"
    bench(tmp_path, out, "--reasoning-budget", "0", words=LONG_REASONING_WORDS)
    judged = _judgments(out)
    truncated = [j for j in judged if j["truncated_reasoning"]]
    assert truncated, "an answer cap below the reasoning is cut"
    assert all(not j["parse_ok"] and j["parsed"] is None for j in truncated)
    assert all("ran out of tokens while reasoning" in e for j in truncated for e in j["errors"])
    results = json.loads((out / "results.json").read_text())
    assert results.get("unparsed_units")
    assert "truncated_reasoning" in json.dumps(results.get("reliability", {}))
