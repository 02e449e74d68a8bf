"""Every ``ideaharness`` example in the README's shell blocks runs as written (issue 18, item 8).

The README is read, its ``bash`` blocks are split into commands (``\\`` continuations joined,
comments dropped), and each ``ideaharness ...`` command is run through the real CLI, in README
order, in one working folder, so that a later example reads what an earlier one wrote (the
competition reads both AI Idea Bench runs, ``data validate`` the built dataset). What is changed,
and only that (:func:`adapted`):

* every model the example names (``local/...``, ``openai/...``) is served by one loopback
  OpenAI-compatible server (``src/ideaharness/testing/openai_server.py``) through ``--base-url``, and
  every Semantic Scholar / OpenReview request of ``data build`` by the Semantic Scholar emulator
  over recorded real records (``ideaharness.testing.s2_emulator``; it holds computer-science
  papers of 2023, so ``data build ideabench`` asks for those) or an OpenReview replay (the login
  the README says comes from the environment is set there);
* ``--limit N`` becomes ``--limit 1`` (added to every ``run``) so the suite stays small;
* the placeholder inputs (``path/to/...``, ``my_system_ideas.json``, ``plan.md``, ``titles.txt``)
  are created at the paths the README names, from the test fixtures.

A model the example does not name is not served: the embedded model's weights folder is empty,
so an example that silently falls back to the local 1.5B fails here. An example fails the test
when it exits 1 (usage or input error) or with a traceback; 0 and 3 (a partial run: the server's
replies are not the judge's answers) pass. ``make`` lines are the set-up commands, not examples of
the CLI, and are the only lines not run (the test checks that there are no others).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ideaharness.cli import main
from ideaharness.systems import is_system
from ideaharness.testing.openai_server import OpenAICompatServer

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
TESTS = ROOT / "tests"
MODEL = re.compile(r"^(local|openai)/(.+)$")
SET_UP = {"make demo", "make test"}
_MOTIVATION = ("Thermocells convert low-grade heat into electricity, but their voltage decays because "
               "ions cross the separator; a selective layer that blocks the redox couple could keep it.")
_PLAN = ("1. Cast layered graphene oxide membranes of three thicknesses.\n2. Measure the Seebeck "
         "coefficient and power density of each cell for one hundred hours.\n3. Compare the decay with "
         "a Nafion separator under the same temperature gradient.")
IDEA_REPLY = {"title": "Ion-selective separators for thermocells",
              "topic": "Separators that keep the voltage of thermocells stable",
              "motivation": _MOTIVATION, "experiment_plan": _PLAN, "idea": _MOTIVATION,
              "experiment_steps": _PLAN}


def readme_commands(text: str) -> list[list[str]]:
    """The commands of the README's ``bash`` blocks, each as shell words (comments dropped)."""
    commands = []
    for block in re.findall(r"```(?:bash|sh|shell)\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(words)
    return commands


def test_the_readme_has_examples_of_every_command_group() -> None:
    commands = readme_commands(README.read_text(encoding="utf-8"))
    examples = [c for c in commands if "ideaharness" in c]
    others = {" ".join(c) for c in commands if "ideaharness" not in c}
    assert others == SET_UP, "a shell line that is neither set-up nor an ideaharness example"
    groups = {tuple(c[c.index("ideaharness") + 1:][:2]) for c in examples}
    assert len(examples) >= 15 and ("run", "liveideabench") in groups and ("data", "validate") in groups


def adapted(words: list[str], llm_url: str, s2_url: str,
            openreview_url: str) -> tuple[list[str], dict[str, str]]:
    """The CLI arguments of one README example (see the module docstring) and its environment
    assignments (``OPENAI_API_KEY=...``)."""
    env: dict[str, str] = {}
    while words and re.match(r"^[A-Z_]+=", words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    assert words[0] == "ideaharness", words
    args = words[1:]
    out: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--limit":
            out += ["--limit", "1"]
            i += 2
            continue
        match = MODEL.match(word)
        out.append(f"openai/{match.group(2)}" if match else word)
        i += 1
    names_model = any(MODEL.match(w) for w in args)
    if names_model and "--base-url" not in out:
        out += ["--base-url", llm_url]
    if out[:1] == ["run"] and "--limit" not in out:
        out += ["--limit", "1"]
    if out[:1] == ["run"]:
        out += ["--no-progress", "--max-retries", "0", "--max-attempts", "1"]
    if out[:2] == ["run", "aiideabench"]:  # literature novelty and feasibility search Semantic Scholar
        out += ["--scholar-base-url", s2_url]
    if out[:2] == ["run", "hindsight"] and "--search" in out:  # key-phrase searches of the window
        out += ["--scholar-base-url", s2_url]
    if out[:2] == ["data", "build"] and "--base-url" not in out:
        out += ["--base-url", openreview_url if out[2] == "pairiq" else s2_url]
    if out[:3] == ["data", "build", "ideabench"]:  # what the emulator's recorded papers are
        out = [w if w != "2024" else "2023" for w in out]
        out += ["--venue", "arXiv.org", "--field-of-study", "Computer Science", "--max-targets", "6",
                "--min-reference-citations", "1"]
    return out, env


def _placeholders(root: Path) -> None:
    """The README's placeholder inputs, at the paths it names, from the test fixtures."""
    from tests.data.test_ideabench_csv import REFS, TARGETS, write_refs, write_rows

    csvs = root / "path/to/ideabench_csvs"
    csvs.mkdir(parents=True)
    write_rows(csvs / "target_papers.csv", TARGETS)
    write_refs(csvs / "raw_references.csv", REFS)
    shutil.copytree(TESTS / "researchbench/fixtures/release", root / "path/to/release_dir")
    (root / "path/to/pairiq").mkdir(parents=True)
    shutil.copy(TESTS / "ligbench/fixtures/pairiq_mini.jsonl", root / "path/to/pairiq/pairiq_mini.jsonl")
    (root / "plan.md").write_text(
        "# Sparse retrieval for long-context models\n\nWe propose to cache retrieved passages per layer "
        "and test whether perplexity on long documents improves over dense attention baselines.\n")
    from ideaharness.data.tomato import load_tomato_chem

    first = load_tomato_chem()[0].id
    (root / "my_system_ideas.json").write_text(json.dumps({first: [{  # --n-ideas (2) ideas
        "Name": f"ion_sieving_{k}", "Title": f"Ion-selective membranes by layered sieving, variant {k}",
        "Motivation": "Thermocells lose voltage to ion crossover; a selective layer could keep it.",
        "Experiment": "1. Cast layered membranes.\n2. Measure the Seebeck coefficient.\n"
                      "3. Compare with Nafion."} for k in (1, 2)]}))
    (root / "titles.txt").write_text("Computing Machinery and Intelligence\n")
    shutil.copytree(ROOT / "examples", root / "examples")  # the example system of `cmd:` runs


@pytest.fixture
def servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str, str]]:
    from ideaharness.testing.s2_emulator import corpus_from_recordings
    from ideaharness.testing.scholarly_replay import ReplayServer
    from tests.shared_data import RAW

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("IDEAHARNESS_MODELS_DIR", str(tmp_path / "no-models"))  # no implicit local model
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "S2_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    _placeholders(tmp_path)
    emulator = corpus_from_recordings(RAW, seed=0, bulk_page_size=50)

    def reply(body: dict[str, Any]) -> str:
        # one JSON object for every prompt: a well-formed idea (AI Idea Bench decomposition, digest
        # and generation read it), no verdict (every judgment is a parse failure: counted, never a
        # score), so each example runs to its end with the real parsers
        return json.dumps(IDEA_REPLY)

    with OpenAICompatServer(reply) as llm, ReplayServer() as s2, ReplayServer() as openreview:
        emulator.mount(s2)
        _mount_openreview(openreview, "ICLR.cc/2024/Conference")
        monkeypatch.setenv("OPENREVIEW_USERNAME", "reader")  # "OpenReview login from env"
        monkeypatch.setenv("OPENREVIEW_PASSWORD", "secret-of-the-test")
        yield llm.base_url, s2.base_url, openreview.base_url


def _mount_openreview(server: Any, venue: str) -> None:
    """An OpenReview API v2 replay: login, and one venue's submissions with reviews and decisions
    in the API's shape (as tests/scholarly/test_builders.py)."""
    server.add_json("POST", "/login", {"token": "T"},
                    body={"id": "reader", "password": "secret-of-the-test"})
    notes = []
    for i, (ratings, decision) in enumerate((([6, 8], "Accept (poster)"), ([3, 1], "Reject")), start=1):
        replies: list[dict[str, Any]] = [
            {"id": f"r{i}{k}", "invitations": [f"{venue}/Submission{i}/-/Official_Review"],
             "content": {"rating": {"value": f"{r}: text"}, "soundness": {"value": "3 good"},
                         "contribution": {"value": 2}}}
            for k, r in enumerate(ratings)]
        replies.append({"id": f"d{i}", "invitations": [f"{venue}/Submission{i}/-/Decision"],
                        "content": {"decision": {"value": decision}}})
        notes.append({"id": f"n{i}", "number": i, "details": {"replies": replies},
                      "content": {"title": {"value": f"Paper {i}"}, "abstract": {"value": "An abstract."},
                                  "keywords": {"value": ["graphs"]}}})
    server.add_json("GET", "/notes", {"notes": notes, "count": len(notes)},
                    query={"invitation": f"{venue}/-/Submission", "details": "replies", "offset": 0,
                           "limit": 1000})


def test_every_readme_example_runs_as_written(servers: tuple[str, str, str], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    examples = [c for c in readme_commands(README.read_text(encoding="utf-8")) if "ideaharness" in c]
    assert examples
    failures = []
    for words in examples:
        args, env = adapted(list(words), *servers)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        with pytest.raises(SystemExit) as exc:
            main(args)
            raise SystemExit(0)
        for key in env:
            monkeypatch.delenv(key)
        captured = capsys.readouterr()
        code = int(exc.value.code or 0)
        if code not in (0, 3) or "Traceback" in captured.err:
            failures.append(f"{shlex.join(words)}\n    -> exit {code}: {captured.err.strip()[-400:]}")
            continue
        out = _out_dir(args)
        if out is not None and (out / "results.json").is_file():
            used = json.loads((out / "results.json").read_text())["settings"]["models"].values()
            named = {w for w in args if w.startswith("openai/")}
            used = [m for m in used if not is_system(m)]  # a system is named by its spec, not a model
            if set(used) - named:
                failures.append(f"{shlex.join(words)}\n    -> uses models it does not name: "
                                f"{sorted(set(used) - named)}")
    assert not failures, "README examples that fail as written:\n" + "\n".join(failures)


def _out_dir(args: list[str]) -> Path | None:
    if "--out" in args and args[:1] == ["run"]:
        return Path(args[args.index("--out") + 1])
    return None


def test_every_readme_table_row_is_whole() -> None:
    """A table row broken by a blank line or a stray newline is a row of its own with the wrong
    number of cells (the exit-status table's 143 row was)."""
    lines = README.read_text(encoding="utf-8").splitlines()
    tables: list[list[str]] = []
    for i, line in enumerate(lines):
        if line.startswith("|") and (i == 0 or not lines[i - 1].startswith("|")):
            tables.append([])
        if line.startswith("|"):
            tables[-1].append(line)
        elif tables and lines[i - 1].startswith("|") and line.strip() and not line.startswith("#"):
            pytest.fail(f"README line {i + 1} continues a table row outside the table: {line[:60]!r}")
    assert len(tables) >= 2
    for table in tables:
        width = table[0].count("|")
        assert all(row.rstrip().endswith("|") and row.count("|") - row.count("\\|") == width
                   for row in table), table[0]
    statuses = [row.split("|")[1].strip() for table in tables if "| status |" in table[0]
                for row in table[2:]]
    assert statuses == ["0", "1", "3", "4", "130", "143"]


def test_the_benchmarks_are_counted_and_named_alike_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    names = ("IdeaBench", "AI Idea Bench 2025", "ResearchBench", "LigBench", "LiveIdeaBench")
    with pytest.raises(SystemExit):
        main(["--help"])
        raise SystemExit(0)
    help_text = " ".join(capsys.readouterr().out.split())
    texts = {"README.md": README.read_text(encoding="utf-8"), "--help": help_text,
             "pyproject.toml": (ROOT / "pyproject.toml").read_text(encoding="utf-8")}
    texts.update({f"docs/{p.name}": p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")})
    for where, text in texts.items():
        stale = re.search(r"\b(four|4) benchmarks\b|\ball four\b", text, flags=re.I)
        assert stale is None, f"{where}: {stale.group(0) if stale else ''}"
    for where in ("README.md", "--help", "pyproject.toml"):
        assert all(name in texts[where] for name in names), where
