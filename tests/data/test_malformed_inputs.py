"""The last malformed inputs (issue 18, item 19): each is one line naming the file, row and field,
exit status 1, no traceback, nothing run — through the real CLI and the real readers; plus
property tests (hypothesis) over the readers: whatever the bytes, a reader returns values or
raises DataError, never anything else."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ideaharness.cli import main
from ideaharness.data.registry import load_instances, load_instances_jsonl
from ideaharness.data.validate import validate_dataset
from ideaharness.errors import DataError, UserError
from ideaharness.jsonl import MAX_DEPTH, iter_jsonl, load_json, parse_json_document, repair_torn_tail
from ideaharness.runner.arguments import load_config_file, resolve
from ideaharness.runner.registry import benchmarks
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.data.test_ideabench_csv import REFS, TARGETS, write_refs, write_rows

INSTANCE = {"id": "x1", "dataset": "d", "target": {"id": "p1", "title": "A paper", "abstract": "Text."}}


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Exit status and stderr of ``ideaharness ARGS`` (stdout kept in ``cli.out``); never a
    traceback."""
    with pytest.raises(SystemExit) as exc:
        main(args)
        raise SystemExit(0)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    cli.out = captured.out  # type: ignore[attr-defined]
    return int(exc.value.code or 0), captured.err


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


# -- JSON values Python's decoder refuses for reasons other than syntax ------------------------


def test_an_integer_of_4301_digits_names_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        env: None) -> None:
    data = tmp_path / "instances.jsonl"
    data.write_text(json.dumps(INSTANCE) + "\n" + '{"id": "x2", "n": ' + "7" * 4301 + "}\n")
    with pytest.raises(DataError, match=r"line 2: not valid JSON \(an integer with more than 4300 digits"):
        load_instances_jsonl(data)
    report = validate_dataset(data)
    assert not report.ok and report.errors[0].where == "line 2" and "4300 digits" in report.errors[0].message
    code, _ = cli(["data", "validate", str(data)], capsys)
    shown = cli.out  # type: ignore[attr-defined]
    assert code == 1 and "error: line 2: not JSON (an integer with more than 4300 digits at column 19)" \
        in shown
    code, err = cli(["run", "ideabench", "--data", str(data), "--generator", "openai/g", "--judge",
                     "openai/j", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "run"),
                     "--no-progress"], capsys)
    line = one_error_line(err)
    assert code == 1 and str(data) in line and "line 2" in line and "4300 digits" in line


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 990, 100_000])
def test_an_array_nested_deeply_is_one_line(tmp_path: Path, depth: int, capsys: pytest.CaptureFixture[str],
                                             env: None) -> None:
    nested = "[" * depth + "]" * depth
    data = tmp_path / "instances.jsonl"
    data.write_text(json.dumps(INSTANCE) + "\n" + '{"id": "x2", "extra": ' + nested + "}\n")
    too_deep = rf"line 2: not valid JSON \(arrays/objects nested more than {MAX_DEPTH}"
    with pytest.raises(DataError, match=too_deep):
        load_instances_jsonl(data)
    document = tmp_path / "target_paper_data.json"
    document.write_text(nested)
    with pytest.raises(DataError, match="nested more than"):
        load_json(document)
    config = tmp_path / "run.json"
    config.write_text('{"seed": ' + nested + "}")
    with pytest.raises(DataError, match=rf"{config}: line 1: not valid JSON \(arrays/objects nested"):
        load_config_file(config)
    code, _ = cli(["data", "validate", str(data)], capsys)
    assert code == 1 and "error: line 2: not JSON (arrays/objects nested more than" in cli.out  # type: ignore[attr-defined]


def test_nesting_at_the_limit_still_loads(tmp_path: Path) -> None:
    deep = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json_document(deep, tmp_path / "x.json") is not None
    data = tmp_path / "instances.jsonl"
    data.write_text(json.dumps({**INSTANCE, "extra": {"deep": json.loads("[" * (MAX_DEPTH - 2) +
                                                                         "]" * (MAX_DEPTH - 2))}}) + "\n")
    assert load_instances_jsonl(data)[0].id == "x1"


def test_a_yaml_integer_of_4301_digits_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("seed: " + "7" * 4301 + "\n")
    too_long = rf"^{config}: not valid YAML: an integer with more than 4300 digits$"
    with pytest.raises(DataError, match=too_long):
        load_config_file(config)


def test_a_key_given_twice_in_a_data_object_is_refused(tmp_path: Path) -> None:
    """JSON leaves a repeated key's value undefined (Python keeps the last one silently)."""
    data = tmp_path / "instances.jsonl"
    data.write_text('{"id": "a", "id": "b", "dataset": "d", "target": {"id": "p", "title": "t"}}\n')
    with pytest.raises(DataError, match=r"line 1: not valid JSON \(key 'id' given twice in one object"):
        load_instances_jsonl(data)
    assert [e.kind for e in validate_dataset(data).errors] == ["not-json"]
    document = tmp_path / "target_paper_data.json"
    document.write_text('[{"title": "x", "abstract": {"text": 1, "text": 2}}]')
    with pytest.raises(DataError, match="key 'text' given twice"):
        load_json(document)


@pytest.mark.parametrize("line", ["[1, 2]", '"an instance"', "7", "null"])
def test_an_instance_line_that_is_no_object_says_so(tmp_path: Path, line: str) -> None:
    data = tmp_path / "instances.jsonl"
    data.write_text(json.dumps(INSTANCE) + "\n" + line + "\n")
    with pytest.raises(DataError, match=r"line 2: expected a JSON object \(an instance\), got "):
        load_instances_jsonl(data)
    assert [(e.where, e.kind) for e in validate_dataset(data).errors] == [("line 2", "invalid-instance")]


# -- run directories ---------------------------------------------------------------------------


def test_a_records_file_that_is_a_directory_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        env: None) -> None:
    with OpenAICompatServer(lambda body: "I am not sure.") as server:
        args = ["run", "liveideabench", "--keyword", "catalysis", "--generator", "openai/gen", "--judge",
                "openai/judge", "--base-url", server.base_url, "--max-attempts", "1", "--max-retries", "0",
                "--no-progress", "--out", str(tmp_path / "run")]
        code, err = cli(args, capsys)
        assert code in (0, 3), err
        records = sorted((tmp_path / "run" / "records").glob("*.jsonl"))
        assert records
        step = records[0]
        step.rename(step.with_name("moved-aside"))
        step.mkdir()
        calls = len(server.requests)
        code, err = cli(args, capsys)
        line = one_error_line(err)
        assert code == 1 and str(step) in line and "is a directory" in line
        assert len(server.requests) == calls  # refused before any model call
    with pytest.raises(DataError, match="is a directory"):
        repair_torn_tail(step, step.with_suffix(".torn"))


# -- instances and ideas that load but cannot be run ---------------------------------------------


@pytest.mark.parametrize("blank", ["", "   "])
def test_an_instance_with_an_empty_id_is_refused(tmp_path: Path, blank: str) -> None:
    data = tmp_path / "instances.jsonl"
    data.write_text(json.dumps(INSTANCE) + "\n" + json.dumps({**INSTANCE, "id": blank}) + "\n")
    with pytest.raises(DataError, match=r"line 2, field 'id': .*empty"):
        load_instances_jsonl(data)
    report = validate_dataset(data)
    assert [(e.kind, e.where) for e in report.errors] == [("invalid-instance", "line 2, field 'id'")]


@pytest.mark.parametrize("content", ["", "\n\n", "[]", "{}"])
def test_an_empty_external_ideas_file_is_refused(tmp_path: Path, content: str,
                                                 capsys: pytest.CaptureFixture[str], env: None) -> None:
    ideas = tmp_path / ("ideas.json" if content in ("[]", "{}") else "ideas.jsonl")
    ideas.write_text(content)
    code, err = cli(["run", "aiideabench", "--ideas", str(ideas), "--judge", "openai/j", "--base-url",
                     "http://127.0.0.1:9/v1", "--metric", "i2t", "--no-progress", "--out",
                     str(tmp_path / "run")], capsys)
    line = one_error_line(err)
    assert code == 1 and str(ideas) in line and "no ideas" in line


def test_a_header_only_ideabench_csv_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    env: None) -> None:
    write_rows(tmp_path / "target_papers.csv", TARGETS[:1])  # the header row only
    write_refs(tmp_path / "raw_references.csv", REFS)
    with pytest.raises(DataError, match=r"target_papers.csv: no target papers: a header row and no data"):
        load_instances(str(tmp_path))
    code, err = cli(["run", "ideabench", "--data", str(tmp_path), "--generator", "openai/g", "--judge",
                     "openai/j", "--base-url", "http://127.0.0.1:9/v1", "--no-progress", "--out",
                     str(tmp_path / "run")], capsys)
    line = one_error_line(err)
    assert code == 1 and str(tmp_path / "target_papers.csv") in line
    write_rows(tmp_path / "target_papers.csv", TARGETS)
    write_refs(tmp_path / "raw_references.csv", [])
    with pytest.raises(DataError, match=r"raw_references.csv: no references"):
        load_instances(str(tmp_path))
    report = validate_dataset(tmp_path)
    assert not report.ok and "raw_references.csv" in report.errors[0].where


@pytest.mark.parametrize("name", ["papers.jsonl", "retrieve.jsonl", "generation.jsonl", "ranking.jsonl"])
def test_an_empty_release_file_names_the_file(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("\n")
    report = validate_dataset(tmp_path)
    assert not report.ok and report.errors[0].where.endswith(name) and "no rows" in report.errors[0].message


# -- settings files ------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "text", "keys"), [
    ("run.yaml", "seed: 1\nseed: 2\n", "seed"),
    ("run.yaml", "n-ideas: 3\nn_ideas: 5\n", "n-ideas"),
    ("run.yml", "{n_ideas: 3, n-ideas: 5}\n", "n_ideas"),
    ("run.yaml", "progress: true\nno-progress: true\n", "no[-_]progress"),
    ("run.yaml", "no-cache: true\nuse_cache: true\n", "use_cache"),
    ("run.yaml", "timeout: 5\ntimeout_s: 9\n", "timeout_s"),
    ("run.json", '{"n-ideas": 3, "n_ideas": 5}', "n_ideas"),
    ("run.json", '{"seed": 1, "seed": 1}', "seed"),
])
def test_a_settings_file_naming_one_setting_twice_is_refused(tmp_path: Path, name: str, text: str,
                                                             keys: str) -> None:
    config = tmp_path / name
    config.write_text(text)
    with pytest.raises(DataError, match=rf"^{config}: .*{keys}.*"):
        resolve(benchmarks()["ideabench"], config=config)


@pytest.mark.parametrize("text", [
    "clamp: each-step\nscoring:\n  elo:\n    clamp: output\n",           # flat and nested
    "scoring:\n  elo:\n    clamp: output\n    clamp: each-step\n",          # twice, nested
    "scoring:\n  elo: {clamp: output}\n  elo: {clamp: each-step}\n",       # a nested mapping twice
])
def test_a_nested_setting_given_twice_is_refused(tmp_path: Path, text: str) -> None:
    config = tmp_path / "lig.yaml"
    config.write_text(text)
    with pytest.raises(DataError, match=rf"^{config}: .*(twice|same setting)"):
        resolve(benchmarks()["ligbench"], config=config)


@pytest.mark.parametrize("text", [
    "seed: 1\nindicator: &a [*a]\n",                                          # a value containing itself
    "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(                      # "billion laughs"
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10)),
])
def test_a_settings_file_with_an_alias_is_refused_not_expanded(tmp_path: Path, text: str) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(text)
    with pytest.raises(DataError, match=rf"^{config}: line 2: an alias \(\*name\) is not read"):
        resolve(benchmarks()["ideabench"], config=config)


def test_a_judge_and_its_panel_field_are_one_setting(tmp_path: Path) -> None:
    config = tmp_path / "live.yaml"
    config.write_text("judge: openai/a\njudges: [openai/b]\n")
    with pytest.raises(DataError, match="'judge' and 'judges'|'judges' and 'judge'"):
        resolve(benchmarks()["liveideabench"], config=config)


def test_distinct_settings_still_load(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("n-ideas: 4\nno-progress: true\nseed: 3\n")
    args = resolve(benchmarks()["ideabench"], config=config, seed=5)  # a flag overrides the file
    assert args.config.n_ideas == 4 and args.config.seed == 5 and args.options.progress is False


@pytest.mark.parametrize(("name", "text"), [
    ("run.yaml", "timeout: .nan\n"),
    ("run.yaml", "consistency-sample: .NaN\n"),
    ("run.yaml", "judge-temperature: .inf\n"),
    ("run.json", '{"timeout": NaN}'),
    ("run.json", '{"rpm": -Infinity}'),
])
def test_a_nan_from_a_settings_file_names_the_file(tmp_path: Path, name: str, text: str,
                                                   capsys: pytest.CaptureFixture[str], env: None) -> None:
    config = tmp_path / name
    config.write_text(text)
    with pytest.raises(DataError, match=rf"^{config}: key '.+': .* not a finite number"):
        resolve(benchmarks()["ideabench"], config=config)
    code, err = cli(["run", "ideabench", "--config", str(config), "--generator", "openai/g", "--judge",
                     "openai/j", "--out", str(tmp_path / "run")], capsys)
    assert code == 1 and str(config) in one_error_line(err)


def test_a_bad_value_from_a_settings_file_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("max-concurrency: 0\n")
    with pytest.raises(DataError, match=rf"^{config}: key 'max_concurrency' \(0\): .*greater than or equal"):
        resolve(benchmarks()["ideabench"], config=config)
    with pytest.raises(Exception) as exc:  # the same value as a flag is the flag's error, not the file's
        resolve(benchmarks()["ideabench"], max_concurrency=0)
    assert not isinstance(exc.value, DataError)


# -- endpoints -----------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["not-a-url", "localhost:8000", "ftp://host/v1", "http://", "http://h:99999"])
def test_a_base_url_that_is_no_url_is_refused_up_front(tmp_path: Path, url: str,
                                                       capsys: pytest.CaptureFixture[str], env: None) -> None:
    for flag in ("--base-url", "--judge-base-url"):
        code, err = cli(["run", "liveideabench", "--keyword", "catalysis", "--generator", "openai/gen",
                         "--judge", "openai/judge", flag, url, "--no-progress", "--out",
                         str(tmp_path / "run")], capsys)
        line = one_error_line(err)
        assert code == 1 and flag in line and "not an http(s) URL" in line
        assert not (tmp_path / "run").exists()  # refused before the run directory exists


@pytest.mark.parametrize("builder", ["ideabench", "aiideabench", "pairiq"])
def test_data_build_refuses_a_base_url_that_is_no_url(tmp_path: Path, builder: str,
                                                      capsys: pytest.CaptureFixture[str], env: None) -> None:
    target = ["--target", "Some title"] if builder == "aiideabench" else []
    code, err = cli(["data", "build", builder, "--out", str(tmp_path / "built"), *target, "--base-url",
                     "not-a-url"], capsys)
    line = one_error_line(err)
    assert code == 1 and "not-a-url" in line and "not an http(s) URL" in line
    assert not (tmp_path / "built").exists()


def test_a_real_url_is_accepted() -> None:
    args = resolve(benchmarks()["ideabench"], base_url="http://127.0.0.1:8000/v1",
                   judge_base_url="https://api.example.org/v1")
    assert args.options.base_url == "http://127.0.0.1:8000/v1"


# -- the whole kind: property tests over the readers --------------------------------------------

JSON_TEXT = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
).map(lambda v: json.dumps(v, allow_nan=True))
NOISE = st.sampled_from(["[" * 3000, "]", "{", '"\\ud83d"', "9" * 4400, "NaN", "\x00", "\ufeff", "\u2028",
                         "\r", '{"id": ""}', "-", "1e999999", '"\\u00"'])
LINE = st.lists(JSON_TEXT | NOISE | st.text(max_size=30), min_size=0, max_size=4).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINE, max_size=5))
def test_jsonl_readers_raise_only_data_errors(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "any.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    for read in (lambda: list(iter_jsonl(path)), lambda: load_instances_jsonl(path),
                 lambda: load_json(path)):
        try:
            read()
        except DataError:
            pass
    report = validate_dataset(path)
    assert report.issues or report.counts["instances"] > 0


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=LINE, suffix=st.sampled_from([".yaml", ".json"]))
def test_settings_readers_raise_only_user_errors(tmp_path: Path, text: str, suffix: str) -> None:
    config = tmp_path / f"any{suffix}"
    config.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        loaded: Any = load_config_file(config)
    except UserError:
        return
    assert isinstance(loaded, dict)
    assert all(not (isinstance(v, float) and not math.isfinite(v)) for v in loaded.values())


CSV_CELL = st.text(max_size=12) | st.sampled_from(['"', '""', "\n", "\r\n", ",", "9" * 4400, "[1,", "{'a': 1",
                                                  "True", "nan", "\ufeff", "\x00"])
CSV_TEXT = st.lists(st.lists(CSV_CELL, max_size=6).map(",".join), max_size=5).map("\n".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=CSV_TEXT, header=st.booleans())
def test_ideabench_csv_readers_raise_only_data_errors(tmp_path: Path, body: str, header: bool) -> None:
    from ideaharness.data.ideabench_csv import REFERENCE_COLUMNS, TARGET_COLUMNS, load_ideabench

    targets, refs = tmp_path / "target_papers.csv", tmp_path / "raw_references.csv"
    targets.write_text((",".join(TARGET_COLUMNS) + "\n" if header else "") + body, encoding="utf-8",
                       errors="surrogatepass")
    refs.write_text(",".join(REFERENCE_COLUMNS) + "\n" + body, encoding="utf-8", errors="surrogatepass")
    try:
        load_ideabench(targets, refs)
    except DataError:
        pass
    validate_dataset(tmp_path)  # never raises: every problem is an issue


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINE, max_size=4), name=st.sampled_from(
    ["papers.jsonl", "retrieve.jsonl", "generation.jsonl", "ranking.jsonl", "corpus.jsonl", "corpus.json",
     "ideas.jsonl", "ideas.json", "pairiq.jsonl"]))
def test_every_other_json_reader_raises_only_data_errors(tmp_path: Path, lines: list[str], name: str) -> None:
    from ideaharness.data.corpus import load_corpus_file
    from ideaharness.data.pairiq import load_pairiq
    from ideaharness.data.researchbench_jsonl import load_release_dir
    from ideaharness.generation.external import load_external_ideas

    path = tmp_path / name
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    read = {"corpus": load_corpus_file, "ideas": load_external_ideas, "pairiq": load_pairiq}.get(
        name.split(".")[0], lambda p: load_release_dir(p.parent))
    try:
        read(path)
    except DataError:
        pass
