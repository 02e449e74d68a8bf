"""The one JSON Lines reader: only "\\n" ends a line, lone surrogates never crash, torn tails repaired."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from ideaharness.data.corpus import load_corpus_file
from ideaharness.data.pairiq import load_pairiq
from ideaharness.data.registry import load_instances_jsonl
from ideaharness.errors import DataError, DataWarning
from ideaharness.generation.external import load_external_ideas
from ideaharness.jsonl import dumps_line, iter_jsonl, iter_jsonl_models, repair_torn_tail, scan_jsonl
from ideaharness.schema import Instance, Paper
from ideaharness.textio import replace_surrogates_in

FIXTURES = Path(__file__).parents[1]
LINE_BREAKS_OTHER_THAN_LF = "\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e"

# ---------------------------------------------------------------- regression: U+2028 in every reader


def _jsonl(path: Path, rows: list[dict]) -> Path:
    """Rows as a JSONL file the way most tools write it: non-ASCII text raw (ensure_ascii=False)."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_external_ideas_with_u2028_in_a_string(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "ideas.jsonl",
        [
            {
                "instance_id": "aiib-0",
                "motivation": "Line one\u2028line two and three",
                "experiment_plan": "Step 1 first\x85Step 2 second",
            },
        ],
    )
    ideas = load_external_ideas(path)
    assert ideas["aiib-0"][0].motivation == "Line one\u2028line two and three"
    assert ideas["aiib-0"][0].experiment_plan == "Step 1 first\x85Step 2 second"


def test_paper_corpus_with_u2028_in_a_string(tmp_path: Path) -> None:
    papers = [Paper(id="p1", title="A\u2028title", abstract="x\u2029y"), Paper(id="p2", title="B")]
    path = _jsonl(tmp_path / "corpus.jsonl", [p.model_dump(mode="json") for p in papers])
    assert load_corpus_file(path) == papers


def test_pairiq_with_u2028_in_a_string(tmp_path: Path) -> None:
    record = json.loads((FIXTURES / "ligbench" / "fixtures" / "pairiq_mini.jsonl").read_text().split("\n")[0])
    record["abstract"] = "First sentence.\u2028Second sentence."
    path = _jsonl(tmp_path / "pairiq.jsonl", [record])
    (loaded,) = load_pairiq(path)
    assert loaded.abstract == "First sentence.\u2028Second sentence."


def test_instances_jsonl_with_bom_and_crlf(tmp_path: Path) -> None:
    inst = Instance(id="x/1", dataset="x", target=Paper(id="1", title="T\u2028U"))
    path = tmp_path / "i.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + inst.model_dump_json().encode() + b"\r\n\r\n")
    assert load_instances_jsonl(path) == [inst]


def test_invalid_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "i.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2,}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"i\.jsonl: line 3: not valid JSON \(.* at column 9\)"):
        list(iter_jsonl(path))


def test_lone_surrogate_is_replaced_and_named(tmp_path: Path) -> None:
    path = tmp_path / "i.jsonl"
    path.write_text('{"id": 1}\n{"target": {"abstract": "smile \\ud83d here"}}\n', encoding="utf-8")
    with pytest.warns(
        DataWarning, match=r"i\.jsonl: line 2, field 'target\.abstract': a lone UTF-16 surrogate"
    ):
        rows = list(iter_jsonl(path))
    assert rows[1] == (2, {"target": {"abstract": "smile \ufffd here"}})


# ---------------------------------------------------------------- properties

_SPECIAL = st.sampled_from(
    [*LINE_BREAKS_OTHER_THAN_LF, "\r", "\t", "\ud83d", "\ude00", "\ufeff", '"', "\\", "\n"]
)
_TEXT = st.lists(st.characters(exclude_categories=()) | _SPECIAL, max_size=12).map("".join)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _as_written_by_others(value: object) -> str:
    """One JSON line with non-ASCII text raw; only lone surrogates (not UTF-8) escaped."""
    text = json.dumps(value, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    values=st.lists(_JSON, max_size=6),
    endings=st.lists(st.sampled_from(["\n", "\r\n", "\n\n", "\n \t\n"]), min_size=6, max_size=6),
)
def test_reader_equals_json_loads_per_lf_line(tmp_path: Path, values: list, endings: list[str]) -> None:
    """For any JSONL file with arbitrary Unicode in its strings, the reader returns json.loads of each
    "\\n"-separated non-blank line (lone surrogates replaced by U+FFFD, per the package's rule)."""
    text = "".join(_as_written_by_others(v) + end for v, end in zip(values, endings, strict=False))
    path = tmp_path / "p.jsonl"
    path.write_bytes(text.encode("utf-8"))
    expected = [
        replace_surrogates_in(json.loads(line))[0] for line in text.split("\n") if line.strip(" \t\r")
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        got = [v for _, v in iter_jsonl(path)]
    assert got == expected
    assert [v for _, v in scan_jsonl(path).rows] == [
        json.loads(line) for line in text.split("\n") if line.strip(" \t\r")
    ]


@settings(max_examples=150, deadline=None)
@given(value=_JSON)
def test_dumps_line_is_one_utf8_line_that_reads_back_exactly(value: object) -> None:
    line = dumps_line(value)
    assert "\n" not in line and "\r" not in line
    line.encode("utf-8")  # never a lone surrogate in the output
    # what the standard (ASCII) encoding gives back: the value itself, except that JSON reads a high
    # surrogate followed by a low one as the character they encode
    assert json.loads(line) == json.loads(json.dumps(value))
    assert not any(c in line for c in "\u2028\u2029\x85")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(_JSON, max_size=5), torn=_JSON, data=st.data())
def test_torn_tail_repair_keeps_exactly_the_complete_lines(
    tmp_path: Path, values: list, torn: object, data: st.DataObject
) -> None:
    complete = "".join(dumps_line(v) + "\n" for v in values).encode("utf-8")
    partial = dumps_line(torn).encode("utf-8")
    cut = data.draw(st.integers(min_value=0, max_value=len(partial)))
    path, aside = tmp_path / "r.jsonl", tmp_path / "r.torn"
    path.write_bytes(complete + partial[:cut])
    aside.unlink(missing_ok=True)
    assert repair_torn_tail(path, aside) is (cut > 0)
    assert path.read_bytes() == complete
    assert [v for _, v in scan_jsonl(path).rows] == json.loads(json.dumps(values))
    assert (aside.exists() and len(aside.read_bytes().split(b"\n")) == 2) is (cut > 0)


def test_an_unterminated_string_reads_once_at(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": "a"}\n{"id": "b\n')
    message = r"line 2: not valid JSON \(Unterminated string starting at column 8\)"
    with pytest.raises(DataError, match=message):
        list(iter_jsonl(path))


class _Row(BaseModel):
    name: str
    score: int = Field(ge=0, le=10)


_ROW = st.fixed_dictionaries({"name": st.text(max_size=20), "score": st.integers(0, 10)})
_BAD = st.one_of(
    st.fixed_dictionaries({"name": st.text(max_size=5), "score": st.integers(11, 99)})
    .map(lambda r: (r, "score")),
    st.fixed_dictionaries({"score": st.integers(0, 10)}).map(lambda r: (r, "name")),
    st.lists(st.integers(), max_size=3).map(lambda r: (r, None)),
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_ROW, max_size=6), bad=st.none() | _BAD, blank=st.booleans())
def test_typed_rows_read_back_or_name_the_first_bad_line_and_field(
    tmp_path: Path, rows: list[dict[str, object]], bad: tuple[object, str | None] | None, blank: bool
) -> None:
    """Every valid line comes back as the model (line numbers count blank lines); the first bad
    line is one error naming its line and, for a model error, the field."""
    lines = [json.dumps(r) for r in rows]
    if blank:
        lines.insert(0, "")
    if bad is not None:
        lines.append(json.dumps(bad[0]))
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if bad is None:
        got = list(iter_jsonl_models(path, _Row))
        assert [row.model_dump() for _, row in got] == rows
        assert [n for n, _ in got] == [i + 1 + blank for i in range(len(rows))]
        return
    field = bad[1]
    where = (f"line {len(lines)}, field '{field}'" if field
             else f"line {len(lines)}: expected a JSON object, got list")
    with pytest.raises(DataError, match=re.escape(where)):
        list(iter_jsonl_models(path, _Row))
