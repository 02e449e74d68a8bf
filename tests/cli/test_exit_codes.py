"""Exit statuses of every ``run`` command (0 complete, 1 usage/input error, 3 partial run), the
failed units named in results.json, ``--timeout``/``--max-retries``, models validated only when a
run uses them, and keys that never leave the process -- all against a real loopback endpoint."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ideaharness
from ideaharness.testing.openai_server import OpenAICompatServer, Reply
from tests.cli_support import run_cli

FIX = Path(__file__).parents[1] / "aiideabench" / "fixtures"
DATA = str(FIX / "target_paper_data.json")
IDEAS = str(FIX / "ai_scientist_ideas.json")
SECRET = "sk-" + "proj-ECHOED-0123456789abcdefXYZ"  # a fake key, assembled so scanners skip it


def i2t_reply(body: dict[str, Any]) -> str:
    user = body["messages"][-1]["content"]
    assert "how well the motivation" in user, user[:200]
    return json.dumps({"motivation_alignment": 4, "experiment_plan_alignment": 3, "comments": "fine"})


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer(i2t_reply) as srv:
        yield srv


def aiib_args(url: str, out: Path, *extra: str) -> list[str]:
    # --ideas with an openai/ judge at --base-url: the (unused) default local generator is not checked;
    # the file answers the first two instances, one idea each (--limit 2 --n-ideas 1: another
    # instance or a second idea would be a missing answer, a failed unit, exit 3)
    return ["run", "aiideabench", "--data", DATA, "--ideas", IDEAS, "--limit", "2", "--n-ideas", "1",
            "--judge", "openai/judge", "--base-url", url, "--metric", "i2t", "--out", str(out), "--no-cache",
            *extra]


def test_ideas_with_an_openai_judge_at_a_base_url_runs(
    server: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(aiib_args(server.base_url, tmp_path / "run"), capsys)
    assert code == 0, err
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["status"] == "complete" and results["failed_units"] == []
    assert results["i2t"]["motivation"]["n"] == 2 and len(server.requests) == 2


def test_exit_codes_0_1_3_and_failed_units_named(
    server: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    # 1: a usage error (a flag that does not exist) and an input error (a missing file)
    assert run_cli([*aiib_args(server.base_url, out), "--bogus"], capsys)[0] == 1
    code, _, err = run_cli(["run", "aiideabench", "--ideas", str(tmp_path / "nope.json"), "--out", str(out)],
                           capsys)
    assert code == 1 and "nope.json" in err and "Traceback" not in err
    # 3: the endpoint fails one call for good (no retries allowed) -> that unit is listed, the rest done
    server.script = [Reply(503, {"error": {"message": "overloaded"}})]
    code, _, err = run_cli(aiib_args(server.base_url, out, "--max-retries", "0"), capsys)
    assert code == 3 and "partial run" in err and "Traceback" not in err
    results = json.loads((out / "results.json").read_text())
    assert results["status"] == "partial"
    [unit] = results["failed_units"]
    assert unit["step"] == "i2t" and unit["status"] == "failed" and "HTTP 503" in unit["error"]
    assert unit["instance_id"] in {"aiib-0", "aiib-1"} and results["i2t"]["motivation"]["n"] == 1
    # 0: the same command again retries only the failed unit and completes
    before = len(server.requests)
    code, _, err = run_cli(aiib_args(server.base_url, out, "--max-retries", "0"), capsys)
    assert code == 0, err
    assert len(server.requests) == before + 1
    assert json.loads((out / "results.json").read_text())["status"] == "complete"


def test_hanging_endpoint_is_bounded_by_timeout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with OpenAICompatServer(i2t_reply, latency_s=6.0) as srv:
        args = aiib_args(srv.base_url, tmp_path / "run", "--timeout", "1", "--max-retries", "1")
        code, _, err = run_cli(args, capsys)
        attempts = len(srv.requests)
    assert code == 3 and "Traceback" not in err
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert [u["step"] for u in results["failed_units"]] == ["i2t", "i2t"]
    for unit in results["failed_units"]:
        assert "timed out after 1 s" in unit["error"] and "2 attempts" in unit["error"]
    assert attempts == 4  # two units, each 1 attempt + 1 retry


def test_key_echoed_by_the_server_is_written_nowhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    other = "sk-" + "live-NOT-IN-ENV-9876543210abcdef"  # a key the process does not know: still redacted
    echo = {"error": {"message": f"Incorrect API key provided: {SECRET} (also tried {other})"}}
    with OpenAICompatServer(i2t_reply, script=[Reply(500, echo)] * 3) as srv:  # one unit fails twice
        args = aiib_args(srv.base_url, tmp_path / "run", "--max-retries", "1")
        code, stdout, stderr = run_cli(args, capsys)
    files = [p for p in (tmp_path / "run").rglob("*") if p.is_file()]
    blobs = [stdout, stderr] + [p.read_text(errors="replace") for p in files]
    assert any("Incorrect API key provided" in b for b in blobs)  # the error itself is reported ...
    for blob in blobs:  # ... but never the keys
        assert SECRET not in blob and other not in blob
        assert "ECHOED-0123" not in blob and "NOT-IN-ENV" not in blob
    assert code == 3


def test_python_api_returns_status_and_failed_units(server: OpenAICompatServer, tmp_path: Path) -> None:
    server.script = [Reply(500, {"error": {"message": "down"}})]
    results = ideaharness.run("aiideabench", data=DATA, ideas=IDEAS, limit=2, n_ideas=1, judge="openai/judge",
                              base_url=server.base_url, metrics=["i2t"], out=tmp_path / "api",
                              use_cache=False, max_retries=0, timeout=5, progress=False)
    assert results["status"] == "partial" and len(results["failed_units"]) == 1
    assert results["failed_units"][0]["step"] == "i2t"


def test_score_idea_and_ligbench_judge_exit_3_when_their_units_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    corpus = tmp_path / "corpus" / "pairiq_mini.jsonl"
    corpus.parent.mkdir()
    shutil.copy(Path(__file__).parents[1] / "ligbench" / "fixtures" / "pairiq_mini.jsonl", corpus)
    down = {"error": {"message": "down"}}
    with OpenAICompatServer(script=[Reply(503, down)] * 50) as srv:
        code, _, err = run_cli(["score-idea", "Use logic rules to explain graph neural networks.", "--corpus",
                                str(corpus), "--judge", "openai/judge", "--base-url", srv.base_url,
                                "--no-cache", "--max-retries", "0", "--out", str(tmp_path / "idea")], capsys)
        assert code == 3 and "not scored (llm_error; ligbench/formalize: " in err and "HTTP 503" in err
        code, _, err = run_cli(["run", "ligbench-judge", "--corpus", str(corpus), "--judge", "openai/judge",
                                "--base-url", srv.base_url, "--no-cache", "--max-retries", "0",
                                "--pairs", "2", "--min-gap", "0", "--out", str(tmp_path / "acc")], capsys)
    assert code == 3 and "partial run" in err
    results = json.loads((tmp_path / "acc" / "results.json").read_text())
    assert results["status"] == "partial"
    assert {u["step"] for u in results["failed_units"]} == {"ligbench/judge_pair"}
    assert all(d["n_failed"] == 0 for d in results["dimensions"].values())  # not counted as parse failures


def test_researchbench_ranking_with_given_negatives_never_checks_the_generator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.researchbench.test_rb_run import RELEASE

    def rank(body: dict[str, Any]) -> str:
        from tests.blinding_support import is_rewrite, scripted_rewrite

        user = body["messages"][-1]["content"]
        if is_rewrite(user):  # the gold rewritten into the negatives' form (blinding)
            return scripted_rewrite(user)
        return "**Analysis**: a.\n**Selection of research hypothesis candidate**: candidate 1"

    with OpenAICompatServer(rank) as srv:
        code, _, err = run_cli(["run", "researchbench", "--task", "ranking", "--ranking-negatives", "given",
                                "--data", str(RELEASE), "--generator", "local/no-such-model", "--judge",
                                "openai/judge", "--base-url", srv.base_url, "--no-cache",
                                "--out", str(tmp_path / "rb")], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "rb" / "results.json").read_text())["ranking"]["overall"]["n_pairs"] == 30


def test_a_dead_endpoint_stops_the_run_early_with_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAICompatServer(i2t_reply) as srv:
        url = srv.base_url  # closed once the block ends: every connection is refused
    args = aiib_args(url, tmp_path / "run", "--max-retries", "0")
    args[args.index("i2t")] = "i2i"
    code, _, err = run_cli([*args, "--metric", "i2t"], capsys)
    assert code == 3 and "5 model calls in a row failed" in err and "cannot connect" in err
    assert "Traceback" not in err
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["status"] == "partial" and len(results["failed_units"]) >= 5


def test_full_disk_in_the_response_cache_ends_the_run_with_one_line_not_a_failed_unit(
    server: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cache insert inside ``LLM.chat`` hits a full disk: a StorageError (a UserError) must pass
    the step runner's "unexpected error = this unit's failure" handling and stop the run (exit 1,
    one line naming the cache file), and the same command resumes once space is freed."""
    from ideaharness.llm import cache as llm_cache
    from tests.runs.test_store import _FullDatabase

    real_aput = llm_cache.ResponseCache.aput

    async def aput_on_a_full_disk(self: Any, *args: Any, **kwargs: Any) -> None:  # what LLM.chat awaits
        self._conn = _FullDatabase(getattr(self._conn, "conn", self._conn))  # the writer's connection
        await real_aput(self, *args, **kwargs)

    out = tmp_path / "run"
    args = [a for a in aiib_args(server.base_url, out) if a != "--no-cache"]
    with monkeypatch.context() as patch:
        patch.setattr(llm_cache.ResponseCache, "aput", aput_on_a_full_disk)
        code, _, err = run_cli(args, capsys)
    assert code == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err
    assert "llm-cache.sqlite: no space left on the device" in lines[0] and "partial run" not in err
    results = json.loads((out / "results.json").read_text())
    assert results["failed_units"] == []  # a full disk is not a unit's failure
    code, _, err = run_cli(args, capsys)  # space freed: the same command completes
    assert code == 0, err
    results = json.loads((out / "results.json").read_text())
    assert results["status"] == "complete" and results["i2t"]["motivation"]["n"] == 2


# ----------------------------------------------------------------------------- nothing scored (3, 13)

GARBAGE = "I am not sure."


def first_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.strip())


def report_banner(run_dir: Path) -> str:
    import re

    html = (run_dir / "report.html").read_text()
    match = re.search(r"<body>\s*<p class=\"run-banner\"[^>]*>(.*?)</p>", html, re.DOTALL)
    assert match, "the report does not open with the banner"
    return match.group(1)


def assert_not_computed(code: int, out: str, err: str, run_dir: Path, *needles: str) -> dict[str, Any]:
    """Exit 3; the first console line and the report's banner name the metrics and why."""
    assert code == 3, err
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "partial" and results["not_computed"] is not None
    line = results["not_computed"]["line"]
    assert first_line(out) == line and line.startswith("NOT COMPUTED: ")
    assert report_banner(run_dir) == line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") \
        .replace('"', "&#34;").replace("'", "&#39;")
    for needle in needles:
        assert needle in line, line
    assert "NOT COMPUTED" in err and "Traceback" not in err
    return results


def test_aiideabench_with_every_decomposition_unparsed_is_partial_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    with OpenAICompatServer(lambda body: GARBAGE) as srv:
        code, stdout, err = run_cli(["run", "aiideabench", "--data", "tomato-chem", "--limit", "2",
                                     "--metric", "imcq", "--n-ideas", "1", "--generator", "openai/gen",
                                     "--judge", "openai/judge", "--base-url", srv.base_url,
                                     "--max-attempts", "1",
                                     "--no-progress", "--out", str(out)], capsys)
    results = assert_not_computed(code, stdout, err, out, "aiideabench.imcq",
                                  "decompose: 2/2 judgments unparsed")
    assert results["failed_units"] == []  # nothing failed: nothing could be scored
    assert {u["step"] for u in results["unparsed_units"]} >= {"decompose"}
    assert all(u["error"] for u in results["unparsed_units"])


def test_researchbench_retrieval_with_every_window_unparsed_is_partial_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.researchbench.test_rb_run import RELEASE

    out = tmp_path / "rb"
    with OpenAICompatServer(lambda body: GARBAGE) as srv:
        code, stdout, err = run_cli(["run", "researchbench", "--task", "retrieval", "--data", str(RELEASE),
                                     "--generator", "openai/judge", "--judge", "openai/judge",
                                     "--base-url", srv.base_url, "--max-attempts", "1",
                                     "--out", str(out)], capsys)  # progress on: bars on a terminal only
    assert "0:00:" not in stdout and "0:00:" not in err
    results = assert_not_computed(code, stdout, err, out, "researchbench.hit_ratio", "judgments unparsed")
    windows = [u for u in results["unparsed_units"] if "screen" in u["step"]]
    assert windows and all(u["error"] for u in windows)


def test_researchbench_ranking_with_no_gold_rewritten_is_partial_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.blinding_support import is_rewrite
    from tests.researchbench.test_rb_run import RELEASE

    def rank(body: dict[str, Any]) -> str:
        if is_rewrite(body["messages"][-1]["content"]):
            return GARBAGE  # no gold hypothesis is rewritten into the negatives' form
        return "**Analysis**: a.\n**Selection of research hypothesis candidate**: candidate 1"

    out = tmp_path / "rb"
    with OpenAICompatServer(rank) as srv:
        code, stdout, err = run_cli(["run", "researchbench", "--task", "ranking", "--ranking-negatives",
                                     "given", "--data", str(RELEASE), "--generator", "openai/judge",
                                     "--judge", "openai/judge", "--base-url", srv.base_url,
                                     "--max-attempts", "1",
                                     "--no-progress", "--out", str(out)], capsys)
    results = assert_not_computed(code, stdout, err, out, "researchbench.directional_accuracy",
                                  "rewrite: 2/2 judgments unparsed")
    assert results["ranking"]["overall"]["directional_accuracy"] is None


# ----------------------------------------------------------------------------- parse failures re-asked (4)

def test_score_idea_whose_formalisation_does_not_parse_is_reasked_by_a_rerun(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No ``--out``: each run records into a fresh temporary folder and the failed reply is cached;
    "run the same command again to retry" must still be true, and the parse error is shown."""
    import shutil

    from tests.ligbench.test_cli import _scripted_judge

    corpus = tmp_path / "corpus" / "pairiq_mini.jsonl"
    corpus.parent.mkdir()
    shutil.copy(Path(__file__).parents[1] / "ligbench" / "fixtures" / "pairiq_mini.jsonl", corpus)
    state = {"good": False}

    def reply(body: dict[str, Any]) -> str:
        if not state["good"] and "Restate the research idea" in body["messages"][-1]["content"]:
            return GARBAGE
        return _scripted_judge(body["messages"])

    args = ["score-idea", "Use logic rules to explain graph neural networks.", "--corpus", str(corpus),
            "--judge", "openai/judge", "--max-retries", "0", "--max-attempts", "2"]
    with OpenAICompatServer(reply) as srv:
        args += ["--base-url", srv.base_url]
        code, stdout, err = run_cli([*args, "--json"], capsys)
        assert code == 3 and "Traceback" not in err
        assert len(srv.requests) == 2
        shown = json.loads(stdout)
        [unit] = shown["failed_units"]
        assert unit["status"] == "unparsed" and unit["step"] == "ligbench/formalize" and unit["error"]
        assert unit["error"] in err and "reply did not parse" in err  # the parse error, where it is reported
        assert "run the same command again to retry" in err
        # the same command again: the cached failure is replayed, then new samples are asked
        code, stdout, err = run_cli(args, capsys)
        assert code == 3 and len(srv.requests) == 4
        assert "replies that did not parse" in stdout and unit["error"].split(":")[-1].strip() in stdout
        # and once the endpoint answers well, the same command scores the idea
        state["good"] = True
        before = len(srv.requests)
        code, stdout, err = run_cli([*args, "--json"], capsys)
        assert code == 0, err
        assert len(srv.requests) > before
        assert json.loads(stdout)["status"] == "scored"


# ----------------------------------------------------------------------------- cost per role (6)

def test_price_per_role_and_a_resume_prices_every_recorded_token(
    server: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = [a for a in aiib_args(server.base_url, out) if a != "--no-cache"]
    code, _, err = run_cli(args, capsys)  # no price: no cost
    assert code == 0, err
    results = json.loads((out / "results.json").read_text())
    tokens = results["llm_stats"]["judge"]
    assert results["cost_usd"] is None and tokens["prompt_tokens"] > 0 and tokens["completion_tokens"] > 0
    # a resume given --price: no call is made, yet every recorded token is priced
    code, _, err = run_cli([*args, "--price", "judge=3,15"], capsys)
    assert code == 0, err
    results = json.loads((out / "results.json").read_text())
    assert results["llm_stats_this_process"]["judge"]["calls"] == 0
    expected = (tokens["prompt_tokens"] * 3 + tokens["completion_tokens"] * 15) / 1e6
    assert results["cost_usd"] == pytest.approx(expected)
    assert results["llm_stats"]["judge"]["cost_usd"] == pytest.approx(expected)
    assert results["settings"]["execution"]["price"] == {"judge": [3.0, 15.0]}
    assert f"{expected:.6f}" in (out / "report.html").read_text()
    # the bare form prices every role
    code, _, err = run_cli([*args, "--price", "1,2"], capsys)
    assert code == 0, err
    bare = json.loads((out / "results.json").read_text())["cost_usd"]
    assert bare == pytest.approx((tokens["prompt_tokens"] * 1 + tokens["completion_tokens"] * 2) / 1e6)
    # a role the run does not have, a malformed or negative price: one line, exit 1
    for bad, message in ((["--price", "rewriter=1,2"], "this run has no rewriter role"),
                         (["--price", "judge=1"], "expected IN,OUT"),
                         (["--price", "judge=-1,2"], "cannot be negative"),
                         (["--price", "1,2", "--price", "3,4"], "priced twice")):
        code, _, err = run_cli([*args, *bad], capsys)
        assert code == 1 and message in err and "Traceback" not in err, err


def test_roles_are_priced_apart_and_the_bare_price_covers_every_role() -> None:
    from ideaharness.runner.models import build_models
    from ideaharness.runner.options import ExecutionOptions

    url = "http://127.0.0.1:9/v1"  # never called: the clients are only built
    roles = {"generator": "openai/same", "judge": "openai/same", "judge:openai/other": "openai/other"}
    options = ExecutionOptions(base_url=url, no_cache=True,
                               price=["generator=0.15,0.6", "judge=3,15", "0.5,1"])
    models = build_models(roles, options)
    assert models["generator"].price_per_mtok == (0.15, 0.6)
    assert models["judge"].price_per_mtok == (3.0, 15.0)
    assert models["judge:openai/other"].price_per_mtok == (3.0, 15.0)  # its kind's price
    assert models["generator"] is not models["judge"]  # one model, two prices: two clients
    bare = build_models(roles, ExecutionOptions(base_url=url, no_cache=True, price="0.5,1"))
    assert {m.price_per_mtok for m in bare.values()} == {(0.5, 1.0)} and bare["generator"] is bare["judge"]
    assert ExecutionOptions(price=(1, 2)).price == {"*": (1.0, 2.0)}  # the Python form of IN,OUT
    assert ExecutionOptions(price={"judge": "3,15"}).price_for("judge:x") == (3.0, 15.0)
    assert ExecutionOptions(price={"judge": "3,15"}).price_for("generator") is None
