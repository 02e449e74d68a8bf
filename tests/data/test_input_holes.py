"""Issue 33, items 3, 4 and 8: an empty, mistyped or huge settings file; a non-UTF-8 byte named by
file, line and byte by every reader; vague messages for a folder given as data, an empty port, an
empty idea. Every refusal is one line, exit status 1, no traceback, no run folder."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ideaharness.errors import DataError, UserError
from ideaharness.jsonl import iter_jsonl
from ideaharness.runner.arguments import MAX_CONFIG_BYTES, did_you_mean, load_config_file, resolve
from ideaharness.runner.registry import benchmarks
from ideaharness.textio import decode_utf8, read_text, utf8_error_position
from tests.data.test_ideabench_csv import REFS, TARGETS, write_refs, write_rows
from tests.data.test_malformed_inputs import cli, env, one_error_line

__all__ = ["env"]  # the fixture, used by name

FIXTURES = Path(__file__).parents[1]
INSTANCE = {"id": "x1", "dataset": "d", "target": {"id": "p1", "title": "A paper", "abstract": "Text."}}
URL = "http://127.0.0.1:9/v1"
MODELS = ["--generator", "openai/g", "--judge", "openai/j", "--base-url", URL, "--no-progress"]


def corrupt_line_2(data: bytes, at: int = 3, bad: bytes = b"\xff") -> tuple[bytes, int]:
    """``data`` with ``bad`` inserted at byte ``at`` of its second line; also the byte's offset."""
    first = data.index(b"\n") + 1
    offset = first + at
    return data[:offset] + bad + data[offset:], offset


def expected(line: int, byte: int, offset: int) -> str:
    return f"line {line}, byte {byte} of the line (byte {offset} of the file): not UTF-8 text"


# -- the position: property tests -----------------------------------------------------------------


@given(data=st.binary(max_size=200), where=st.floats(0, 1))
def test_the_position_of_a_byte_is_its_line_and_column(data: bytes, where: float) -> None:
    offset = int(where * len(data))
    line, byte = utf8_error_position(data, offset)
    before = data[:offset].split(b"\n")
    assert (line, byte) == (len(before), len(before[-1]) + 1)


def test_an_offset_outside_the_data_is_refused() -> None:
    with pytest.raises(ValueError, match="outside"):
        utf8_error_position(b"ab", 3)


LINES = st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r,\""),
                         max_size=12), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=LINES, row=st.integers(0, 5), at=st.integers(0, 40), bom=st.booleans(),
       bad=st.sampled_from([b"\xff", b"\xc3(", b"\xe2\x82", b"\x80"]))
def test_every_base_reader_names_the_line_and_byte(tmp_path: Path, lines: list[str], row: int, at: int,
                                                   bom: bool, bad: bytes) -> None:
    """read_text (whole files), the JSON Lines stream (also .gz), the CSV reader: one position."""
    from ideaharness.data.ideabench_csv import _read_csv

    row = min(row, len(lines) - 1)
    texts = [json.dumps(text, ensure_ascii=False) for text in lines]
    at = min(at, len(texts[row]))  # a character boundary: the bad bytes never split a character
    encoded = [text.encode() for text in texts]
    encoded[row] = texts[row][:at].encode() + bad + texts[row][at:].encode()
    start = (3 if bom else 0) + sum(len(e) + 1 for e in encoded[:row])
    data = (b"\xef\xbb\xbf" if bom else b"") + b"\n".join(encoded) + b"\n"
    offset = start + len(texts[row][:at].encode())
    line, byte = utf8_error_position(data, offset)
    assert line == row + 1
    want = expected(row + 1, byte, offset)
    for name, content in (("f.jsonl", data), ("f.jsonl.gz", gzip.compress(data))):
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(DataError) as jsonl_error:
            list(iter_jsonl(path))
        assert want in str(jsonl_error.value), (name, str(jsonl_error.value))
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    with pytest.raises(DataError) as whole:
        read_text(path)
    assert want in str(whole.value)
    with pytest.raises(DataError) as decoded:
        decode_utf8(data, path)
    assert str(decoded.value) == str(whole.value)
    csv_file = tmp_path / "f.csv"
    csv_file.write_bytes(data.replace(b"\n", b"\r\n"))  # Excel's line ends: the "\r" is in the line
    with pytest.raises(DataError) as in_csv:
        _read_csv(csv_file, [])
    csv_offset = offset + row  # one "\r" more before each earlier line end
    assert f"line {row + 1} (row {row + 1}), byte {byte} of the line (byte {csv_offset} of the file)" \
        in str(in_csv.value)


def test_a_csv_row_over_several_lines_names_line_and_row(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(b'a,b\n"one\ntwo",x\nthree,f\xffour\n')
    from ideaharness.data.ideabench_csv import _read_csv

    with pytest.raises(DataError, match=r"line 4 \(row 3\), byte 8 of the line \(byte 23 of the file\)"):
        _read_csv(path, [])


# -- every data reader ----------------------------------------------------------------------------


def _instances(tmp: Path) -> Path:
    path = tmp / "instances.jsonl"
    text = json.dumps(INSTANCE) + "\n" + json.dumps({**INSTANCE, "id": "x2"}) + "\n"
    path.write_bytes(corrupt_line_2(text.encode())[0])
    return path


def _csv_folder(tmp: Path) -> Path:
    folder = tmp / "ideabench"
    folder.mkdir()
    write_rows(folder / "target_papers.csv", TARGETS)
    refs = write_refs(folder / "raw_references.csv", REFS)
    refs.write_bytes(corrupt_line_2(refs.read_bytes())[0])
    return folder


def _target_paper_data(tmp: Path) -> Path:
    path = tmp / "target_paper_data.json"
    path.write_bytes(corrupt_line_2((FIXTURES / "aiideabench" / "fixtures" / "target_paper_data.json")
                                    .read_bytes(), at=1)[0])
    return path


def _topics(tmp: Path) -> Path:
    from ideaharness.benchmarks.hindsight.topics import sample_path

    path = tmp / "topics.jsonl"
    path.write_bytes(corrupt_line_2(gzip.decompress(sample_path().read_bytes()), at=20)[0])
    return path


def _corpus(tmp: Path) -> Path:
    path = tmp / "corpus.jsonl"
    path.write_bytes(corrupt_line_2((FIXTURES / "ligbench" / "fixtures" / "pairiq_mini.jsonl").read_bytes(),
                                    at=10, bad=b"\xc3(")[0])
    return path


def _release(tmp: Path) -> Path:
    folder = tmp / "release"
    folder.mkdir()
    source = FIXTURES / "researchbench" / "fixtures" / "release" / "ranking.jsonl"
    (folder / "ranking.jsonl").write_bytes(corrupt_line_2(source.read_bytes())[0])
    return folder


def _topics_txt(tmp: Path) -> Path:
    path = tmp / "topics.txt"
    path.write_bytes(b"graph learning\nprotein \xfffolding\n")
    return path


PAIRIQ = str(FIXTURES / "ligbench" / "fixtures" / "pairiq_mini.jsonl")
DATA_CASES: dict[str, list[tuple[str, Callable[[Path], Path], list[str]]]] = {
    "ideabench": [("--data", _instances, []), ("--data", _csv_folder, [])],
    "aiideabench": [("--data", _target_paper_data, []), ("--data", _instances, [])],
    "researchbench": [("--data", _release, []), ("--data", _instances, [])],
    "hindsight": [("--data", _topics, [])],
    "ligbench": [("--corpus", _corpus, []), ("--topics", _topics_txt, ["--corpus", PAIRIQ])],
    "ligbench-judge": [("--corpus", _corpus, ["--judge", "openai/j", "--base-url", URL, "--no-progress"])],
}
"""Per benchmark: the flags naming a data file of the user's, a writer of such a file with a bad
byte on line 2, and other arguments the run needs."""
NO_DATA_FILE = {"liveideabench": "keywords are given as flags or bundled",
                "mlrbench": "tasks are bundled and named by --task"}
"""Benchmarks that read no data file of the user's (their --config and --ideas are checked below)."""


def _data_cases() -> list[tuple[str, int]]:
    cases = [(name, i) for name in sorted(benchmarks()) if name not in NO_DATA_FILE
             for i in range(len(DATA_CASES.get(name, [None])))]  # type: ignore[list-item]
    return cases or [("(empty registry)", 0)]


def test_every_benchmark_is_covered() -> None:
    names = set(benchmarks())
    assert names, "the benchmark registry is empty"
    assert names == set(DATA_CASES) | set(NO_DATA_FILE), names ^ (set(DATA_CASES) | set(NO_DATA_FILE))


@pytest.mark.parametrize(("name", "case"), _data_cases())
def test_a_bad_byte_on_line_2_of_every_data_file_names_line_2(name: str, case: int, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str],
                                                              env: None) -> None:
    assert name in DATA_CASES, f"{name}: no data-file case (add one, or list it in NO_DATA_FILE)"
    flag, write, extra = DATA_CASES[name][case]
    path = write(tmp_path)
    out = tmp_path / "run"
    models = [] if "--judge" in extra else MODELS
    code, err = cli(["run", name, flag, str(path), *extra, *models, "--out", str(out)], capsys)
    line = one_error_line(err)
    assert code == 1 and "line 2" in line and "byte" in line and "not UTF-8 text" in line, line
    assert "line 2 (row 2)" in line if path.is_dir() and name == "ideabench" else True
    assert not out.exists()


def test_every_reader_function_names_line_2(tmp_path: Path) -> None:
    """The readers behind the flags above and the rest: ScholarIdeas plans and rubrics, MLR-Bench
    task files, PAIR-IQ corpora, HindSight corpora, ideas files (plain and .gz)."""
    from ideaharness.benchmarks.mlrbench.tasks import read_task
    from ideaharness.data.corpus import load_corpus_file
    from ideaharness.data.pairiq import load_pairiq
    from ideaharness.data.scholarideas import load_plan
    from ideaharness.systems.converters import read_idea_rows

    plan = tmp_path / "cs_1"
    plan.mkdir()
    (plan / "cs_1.txt").write_bytes(b"# A plan\n## Problem \xff\n")
    rubric_plan = tmp_path / "cs_2"
    rubric_plan.mkdir()
    (rubric_plan / "cs_2.txt").write_text("# T\n\n## Problem\nThe open problem here.\n\n"
                                          "## Method\nA method that works.\n\n"
                                          "## Experiment Design\nTwo experiments to run.\n")
    (rubric_plan / "cs_2.jsonl").write_bytes(b'\n{"\xff": 2}\n')  # line 1 blank
    task = tmp_path / "task.md"
    task.write_bytes(b"# Task\nSome \xfftext\n")
    ideas = tmp_path / "ideas.jsonl"
    ideas.write_bytes(b'{"instance_id": "a", "text": "x"}\n{"instance_id": "\xff"}\n')
    ideas_gz = tmp_path / "ideas.jsonl.gz"
    ideas_gz.write_bytes(gzip.compress(ideas.read_bytes()))
    corpus = _corpus(tmp_path)
    readers: list[tuple[Callable[[], Any], Path]] = [
        (lambda: load_plan(plan), plan / "cs_1.txt"),
        (lambda: load_plan(rubric_plan), rubric_plan / "cs_2.jsonl"),
        (lambda: read_task(task), task),
        (lambda: load_pairiq(corpus), corpus),
        (lambda: load_corpus_file(corpus), corpus),
        (lambda: read_idea_rows(ideas), ideas),
        (lambda: read_idea_rows(ideas_gz), ideas_gz),
    ]
    for read, path in readers:
        with pytest.raises(DataError) as exc:
            read()
        assert str(exc.value).startswith(f"{path}: line 2, byte "), str(exc.value)
        assert "not UTF-8 text" in str(exc.value)


# -- settings files (item 3, item 8) --------------------------------------------------------------


def _names() -> list[str]:
    return sorted(benchmarks()) or ["(empty registry)"]


@pytest.mark.parametrize("name", _names())
@pytest.mark.parametrize(("file", "content", "detail"), [
    ("empty.yaml", b"", "no settings in the file (it is empty)"),
    ("comments.yaml", b"# nothing yet\n\n", "no settings in the file (it is empty)"),
    ("empty.json", b"{}", "no settings in the file (it is empty)"),
    ("bad.yaml", b"limit: 2\nn_ideas: \xff3\n",
     "line 2, byte 10 of the line (byte 18 of the file): not UTF-8"),
])
def test_a_settings_file_without_settings_or_utf8_is_refused(
        name: str, file: str, content: bytes, detail: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], env: None) -> None:
    assert name in benchmarks(), "the benchmark registry is empty"
    config = tmp_path / file
    config.write_bytes(content)
    out = tmp_path / "run"
    code, err = cli(["run", name, "--config", str(config), "--out", str(out), "--no-progress"], capsys)
    line = one_error_line(err)
    assert code == 1 and f"{config}: {detail}" in line, line
    assert not out.exists()


@pytest.mark.parametrize("name", _names())
def test_a_mistyped_setting_gets_did_you_mean(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              env: None) -> None:
    bench = benchmarks()[name]
    config = tmp_path / "typo.yaml"
    config.write_text("max_concurency: 2\n")
    with pytest.raises(UserError, match=r"unknown argument\(s\) max_concurency for .*; did you mean "
                                        r"'max_concurrency'\?"):
        resolve(bench, config=config)
    out = tmp_path / "run"
    code, err = cli(["run", name, "--config", str(config), "--out", str(out), "--no-progress"], capsys)
    assert code == 1 and "did you mean 'max_concurrency'?" in one_error_line(err)
    assert not out.exists()


def test_did_you_mean_names_each_key_and_stays_quiet_when_nothing_is_close() -> None:
    known = ["n_ideas", "judge", "generator"]
    assert did_you_mean(["n-idea"], known) == "; did you mean 'n_ideas'?"
    assert did_you_mean(["n_idea", "juge"], known) == \
        "; did you mean 'n_ideas' (for 'n_idea'), 'judge' (for 'juge')?"
    assert did_you_mean(["temperature_of_the_moon"], known) == ""


def test_a_config_file_over_the_size_limit_is_refused_before_it_is_parsed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], env: None) -> None:
    config = tmp_path / "big.yaml"
    config.write_text("data: " + "x" * (50 * 1024 * 1024) + "\n")  # one 50 MB line
    started = time.perf_counter()
    with pytest.raises(DataError, match=r"52,428,807 bytes, over the 1 MiB a settings file may have"):
        load_config_file(config)
    assert time.perf_counter() - started < 1.0
    out = tmp_path / "run"
    code, err = cli(["run", "ideabench", "--config", str(config), "--out", str(out)], capsys)
    assert code == 1 and "over the 1 MiB" in one_error_line(err) and not out.exists()
    at_limit = tmp_path / "at_limit.yaml"
    at_limit.write_text("data: " + "x" * (MAX_CONFIG_BYTES - len("data: \n")) + "\n")
    assert at_limit.stat().st_size == MAX_CONFIG_BYTES
    assert load_config_file(at_limit)["data"].startswith("xxx")  # the limit itself is read


# -- item 8: folders, empty port, empty idea ------------------------------------------------------


def test_a_folder_given_to_ai_idea_bench_names_its_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          env: None) -> None:
    folder = tmp_path / "downloads"
    folder.mkdir()
    (folder / "notes.txt").write_text("nothing here")
    out = tmp_path / "run"
    code, err = cli(["run", "aiideabench", "--data", str(folder), *MODELS, "--out", str(out)], capsys)
    line = one_error_line(err)
    assert code == 1 and str(folder) in line and "target_paper_data.json" in line and "IdeaBench" not in line
    assert not out.exists()
    code, err = cli(["run", "aiideabench", "--data", str(tmp_path / "absent"), *MODELS, "--out", str(out)],
                    capsys)
    line = one_error_line(err)
    assert code == 1 and "no such file" in line and "target_paper_data.json" in line and not out.exists()


def test_a_folder_holding_target_paper_data_is_read(tmp_path: Path) -> None:
    from ideaharness.benchmarks.aiideabench.run import data_spec, load_aiideabench_instances

    shutil_copy = (FIXTURES / "aiideabench" / "fixtures" / "target_paper_data.json").read_bytes()
    (tmp_path / "target_paper_data.json").write_bytes(shutil_copy)
    assert data_spec(str(tmp_path)) == str(tmp_path / "target_paper_data.json")
    bench = benchmarks()["aiideabench"]
    config = bench.config_class.model_validate({"data": str(tmp_path)})
    assert len(load_aiideabench_instances(config)) == len(json.loads(shutil_copy))  # type: ignore[arg-type]


def test_a_folder_given_to_hindsight_says_it_is_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         env: None) -> None:
    out = tmp_path / "run"
    code, err = cli(["run", "hindsight", "--data", str(tmp_path), *MODELS, "--out", str(out)], capsys)
    line = one_error_line(err)
    assert code == 1 and "is a folder with no topics.jsonl" in line and "no such file" not in line
    assert not out.exists()


def test_data_validate_reads_an_ideabench_csv_folder_with_the_runs_loader(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], env: None) -> None:
    folder = tmp_path / "ib"
    folder.mkdir()
    write_rows(folder / "target_papers.csv", TARGETS)
    code, err = cli(["data", "validate", str(folder)], capsys)  # the references CSV is missing
    line = one_error_line(err)
    assert code == 1 and "expected IdeaBench CSVs" in line and "instances.jsonl" not in line
    write_refs(folder / "raw_references.csv", REFS)
    code, _ = cli(["data", "validate", str(folder)], capsys)
    assert code == 0 and "instances 2" in cli.out  # type: ignore[attr-defined]


@pytest.mark.parametrize("url", ["http://127.0.0.1:/v1", "https://api.example.org:/v1", "http://h:0/v1"])
def test_an_empty_or_zero_port_is_refused(url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          env: None) -> None:
    out = tmp_path / "run"
    code, err = cli(["run", "liveideabench", "--keyword", "catalysis", "--generator", "openai/g", "--judge",
                     "openai/j", "--base-url", url, "--no-progress", "--out", str(out)], capsys)
    line = one_error_line(err)
    assert code == 1 and "--base-url" in line and "port" in line and not out.exists()


@pytest.mark.parametrize("idea", ["", "   "])
def test_an_empty_idea_argument_says_so(idea: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, err = cli(["score-idea", idea, "--corpus", PAIRIQ, "--judge", "openai/j"], capsys)
    line = one_error_line(err)
    assert code == 1 and "the IDEA argument is empty" in line and ".txt" not in line
    assert not any(tmp_path.iterdir())
