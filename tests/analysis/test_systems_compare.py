"""compare of idea-generation systems: a system from an ideas file, one from a ``cmd:`` program
and a raw model, on the same benchmark and data (issue 20, item 5). The system's name and kind
come from results.json's ``idea_sources`` block (never from the generator model string an ``--ideas``
run keeps), runs that differ only in how their ideas were produced are comparable, a system that
missed instances is compared on the paired instances only, and the same name twice is told apart
or refused in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ideaharness.analysis.compare import compare_runs, settings_mismatch
from ideaharness.analysis.export import export_run, read_export
from ideaharness.analysis.load import load_run
from ideaharness.analysis.systems import run_systems, spec_kind, spec_name
from ideaharness.cli import main
from ideaharness.errors import UserError
from ideaharness.report.compare import comparison_tables
from ideaharness.report.viewer import render_compare
from tests.analysis.system_runs import DEFAULT_MODEL, as_system, mark_system_step

NOVELTY = "ideabench.insight_score[low/novelty]"
MISSING = ("tomato-chem/4", "tomato-chem/5")


@pytest.fixture(scope="module")
def three(runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three systems on the same six IdeaBench instances: ``my-agent`` (an ideas file, no answer for
    two instances, one extra), ``agent.py`` (a ``cmd:`` program, the weak generator's ideas) and
    ``gen-strong`` (a raw model)."""
    root = tmp_path_factory.mktemp("systems")
    return {
        "ideas": as_system(runs["ideabench_a"], root / "ideas", spec="ideas:/data/my-agent.jsonl",
                           kind="ideas-file", missing=MISSING, extra=("tomato-chem/99",)),
        "cmd": as_system(runs["ideabench_b"], root / "cmd",
                         spec="cmd:python examples/agent.py --deterministic", kind="command"),
        "model": as_system(runs["ideabench_a"], root / "model", spec="gen-strong", kind="model"),
    }


def test_three_kinds_of_system_are_ranked_side_by_side(three: dict[str, Path]) -> None:
    result = compare_runs([three["ideas"], three["cmd"], three["model"]], n_resamples=200)
    assert result["settings_mismatch"] == []  # generator, ideas file and system name are the compared thing
    systems = {s["label"]: s for s in result["systems"]}
    assert list(systems) == ["my-agent", "agent.py", "gen-strong"]  # never the --ideas run's DEFAULT_MODEL
    assert [systems[n]["kind_label"] for n in systems] == ["ideas file", "command", "model"]
    assert systems["my-agent"]["spec"] == "ideas:/data/my-agent.jsonl"
    assert systems["my-agent"]["ideas_file"] == "/data/my-agent.jsonl"
    assert systems["my-agent"]["answers"] == {"asked": 6, "missing": list(MISSING), "failed": list(MISSING),
                                              "extra_instances": ["tomato-chem/99"]}
    assert (systems["my-agent"]["missing"], systems["my-agent"]["extra"]) == (2, 1)
    assert (systems["agent.py"]["missing"], systems["gen-strong"]["missing"]) == (0, 0)
    assert systems["my-agent"]["instances_scored"] == 4 and systems["gen-strong"]["instances_scored"] == 6
    board = {b["system"]: b for b in result["metrics"][NOVELTY]["leaderboard"]}
    # the missing instances are not zeros: my-agent keeps a perfect score over its 4 instances
    assert board["my-agent"]["n"] == 4 and board["my-agent"]["mean"] == 1.0
    # every system ranked on the 4 instances all were scored on, its own n beside (issue 32, item 4)
    assert board["gen-strong"]["n"] == 4 and board["gen-strong"]["own_n"] == 6
    assert board["agent.py"]["mean"] == 0.0
    pairs = {(p["a"], p["b"]): p for p in result["metrics"][NOVELTY]["paired"]}
    by_set = {frozenset(k): v for k, v in pairs.items()}
    assert by_set[frozenset({"my-agent", "gen-strong"})]["n_shared"] == 4  # paired instances only
    assert by_set[frozenset({"my-agent", "gen-strong"})]["mean_diff"] == 0.0
    assert by_set[frozenset({"my-agent", "agent.py"})]["n_shared"] == 4
    assert by_set[frozenset({"agent.py", "gen-strong"})]["n_shared"] == 6


def test_console_json_and_html_name_each_system_and_its_kind(
    three: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = compare_runs([three["ideas"], three["cmd"], three["model"]], n_resamples=200)
    first = comparison_tables(result)[0]
    assert first.columns[:7] == ["system", "kind", "spec", "run", "instances scored", "missing", "extra"]
    rows = {r[0]: r for r in first.rows}
    assert rows["my-agent"][1:3] == ["ideas file", "ideas:/data/my-agent.jsonl"]
    assert rows["my-agent"][4:7] == [4, 2, 1] and rows["agent.py"][1] == "command"
    assert rows["gen-strong"][1] == "model"
    assert first.note is not None and "my-agent (ideas file) gave no answer for 2 instance(s)" in first.note
    assert "tomato-chem/4, tomato-chem/5" in first.note
    page = render_compare(result)
    for text in ("<td>ideas file</td>", "<td>command</td>", "<td>model</td>",
                 "ideas:/data/my-agent.jsonl", "cmd:python examples/agent.py --deterministic",
                 "gave no answer for 2 instance(s)", "tomato-chem/99"):
        assert text in page, text
    main(["compare", str(three["ideas"]), str(three["cmd"]), str(three["model"]), "--json",
          "--resamples", "100"])
    data = json.loads(capsys.readouterr().out)
    kinds = {s["label"]: (s["kind"], s["kind_label"], s["missing"]) for s in data["systems"]}
    assert kinds == {"my-agent": ("ideas-file", "ideas file", 2), "agent.py": ("command", "command", 0),
                     "gen-strong": ("model", "model", 0)}


def test_system_name_is_never_the_generator_model_of_an_ideas_run(three: dict[str, Path],
                                                                  tmp_path: Path) -> None:
    run = load_run(three["ideas"])
    assert run.config["generator"] == DEFAULT_MODEL and run.system == "my-agent"
    assert set(run.scores["system"]) == {"my-agent"} and set(run.scores["system_kind"]) == {"ideas-file"}
    # a run saved before the idea_sources block: the name is derived from the config, kind from the spec
    old = as_system(three["model"], tmp_path / "old", spec="ideas:/x/their-ideas.jsonl", kind="ideas-file",
                    block=False)
    loaded = load_run(old)
    assert loaded.system == "their-ideas" and loaded.systems[0].kind == "ideas-file"
    assert not loaded.systems[0].recorded and loaded.systems[0].asked is None
    named = as_system(three["model"], tmp_path / "named", spec="cmd:python /opt/a/agent.py --flag",
                      kind="command", system="Agent v2", block=False)
    assert load_run(named).system == "Agent v2"
    result = compare_runs([old, named], n_resamples=100)
    assert [(s["label"], s["kind_label"], s["missing"]) for s in result["systems"]] == [
        ("their-ideas", "ideas file", None), ("Agent v2", "command", None)]  # None: not recorded


@pytest.mark.parametrize(("spec", "kind", "name"), [
    ("ideas:runs/my-ideas.jsonl#format=aiscientist", "ideas-file", "my-ideas"),
    ("cmd:python examples/idea_agent/agent.py --deterministic", "command", "agent.py"),
    ("cmd:/usr/local/bin/my-agent --fast", "command", "my-agent"),
    ("cmd:bash run.sh", "command", "run.sh"),
    ("http://127.0.0.1:8080/ideas", "http", "127.0.0.1:8080/ideas"),
    ("https://agents.example.org/v1/ideas/", "http", "agents.example.org/v1/ideas"),
    ("http://user:token@127.0.0.1:9000/ideas", "http", "127.0.0.1:9000/ideas"),  # no credentials in a name
    ("openai/gpt-4o-mini", "model", "openai/gpt-4o-mini"),
])
def test_kind_and_default_name_of_a_spec(spec: str, kind: str, name: str) -> None:
    assert spec_kind(spec) == kind and spec_name(spec) == name
    (info,) = run_systems({"generator": spec}, {})
    assert (info.kind, info.system, info.spec) == (kind, name, spec)


def test_only_how_ideas_were_produced_may_differ() -> None:
    model = {"benchmark": "ideabench", "generator": "openai/gpt-4o", "seed": 0, "judge": "j"}
    ideas = {**model, "generator": DEFAULT_MODEL, "ideas": "a.jsonl", "ideas_format": "aiscientist",
             "system": "mine", "input_sha256": {"--ideas": {"a.jsonl": "h"}}}
    command = {**model, "generator": "cmd:python agent.py", "system": "agent"}
    given = {**model, "generator": "ideas:b.jsonl", "input_sha256": {"--generator": {"b.jsonl": "h2"}}}
    assert settings_mismatch([model, ideas, command, given]) == []
    assert settings_mismatch([model, {**ideas, "judge": "other"}]) == ["judge"]


def test_the_same_system_name_twice_is_told_apart_or_refused(
        runs: dict[str, Path], three: dict[str, Path], tmp_path: Path) -> None:
    ideas = as_system(runs["ideabench_a"], tmp_path / "a" / "run", spec="ideas:agent.jsonl",
                      kind="ideas-file", system="agent")
    command = as_system(runs["ideabench_b"], tmp_path / "b" / "run", spec="cmd:python agent.py",
                        kind="command", system="agent")
    again = as_system(runs["ideabench_b"], tmp_path / "c", spec="cmd:python agent.py", kind="command",
                      system="agent")
    # same name, different kinds: the kind tells them apart; the runs' equal names by their paths
    result = compare_runs([ideas, command], n_resamples=100)
    assert [s["label"] for s in result["systems"]] == ["agent (ideas file)", "agent (command)"]
    assert len({s["run_id"] for s in result["systems"]}) == 2
    # same name and kind: the run tells them apart
    result = compare_runs([command, again], n_resamples=100)
    assert [s["label"] for s in result["systems"]] == ["agent (run)", "agent (c)"]
    with pytest.raises(UserError, match=r"^compare: .*run is given twice; give each run directory once$"):
        compare_runs([ideas, tmp_path / "a" / ".." / "a" / "run"])


def test_export_names_the_system_and_its_kind_per_score(three: dict[str, Path], tmp_path: Path) -> None:
    for fmt in ("csv", "parquet"):
        scores, judgments, _ = export_run(three["cmd"], fmt, tmp_path / fmt)
        frame = read_export(scores)
        assert list(frame.columns[2:4]) == ["system", "system_kind"]
        assert set(frame["system"]) == {"agent.py"} and set(frame["system_kind"]) == {"command"}
        table = read_export(judgments)
        assert {"system_task", "stderr"} <= set(table.columns)
        assert not table["system_task"].astype(bool).any()  # the records are the model's
    marked = tmp_path / "marked"
    shutil.copytree(three["cmd"], marked)
    mark_system_step(marked, "generate/low", "tomato-chem/1", spec="cmd:python examples/agent.py",
                     stderr="retrieved 3 papers")
    table = load_run(marked).judgments.set_index(["step", "instance_id"])
    assert table.loc[("generate/low", "tomato-chem/1"), "system_task"]
    assert table.loc[("generate/low", "tomato-chem/1"), "stderr"] == "retrieved 3 papers"
    assert table["system_task"].sum() == 1
