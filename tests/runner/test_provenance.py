"""What produced a judgment, in parts: the parser fingerprint (comments, docstrings and line numbers
never change it; code does, also code it reaches through partials, bound methods, closures and
helpers), template hashes, the store's open-time comparison and the step runner's per-unit one
(a Ray worker's buffer leaves a changed unit to the driver)."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ideaharness import prompts
from ideaharness.errors import UserError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.runner import provenance as pv
from ideaharness.runner.steps import STALE_ON_WORKER, StepRunner
from ideaharness.runs.ray_runner import RecordBuffer
from ideaharness.runs.store import PRODUCED_BY_KEY, RunStore

SRC = Path(__file__).parents[2] / "src"
MODULE = "ideaharness_provenance_probe"  # an in-scope name: the parser's own top-level package


def load(source: str, name: str = MODULE) -> types.ModuleType:
    """``source`` as the module ``name`` (replacing any earlier one), its file name fixed."""
    module = types.ModuleType(name)
    module.__file__ = f"/nonexistent/{name}.py"
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    sys.modules[name] = module
    pv._VERSIONS.clear()  # a module replaced in this process: as when a run opens
    return module


def version_of(source: str, attr: str = "parse", name: str = MODULE) -> str:
    return pv.parser_version(getattr(load(source, name), attr))


PARSER = '''
import re

_GRADE = re.compile(r"\\b([A-D])\\b")
LETTERS = ("A", "B", "C", "D")


def _clean(text):
    return text.strip().upper()


def parse(text):
    found = _GRADE.search(_clean(text))
    if found is None or found.group(1) not in LETTERS:
        raise ValueError("no grade")
    return found.group(1)
'''

noise = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters='\\"'),
                max_size=40)


def decorate(source: str, comment: str, doc: str, blank: int) -> str:
    """``source`` with a comment on every function line, a docstring in every function and
    ``blank`` blank lines before each ``def`` (its line numbers move)."""
    out = []
    for line in source.splitlines():
        if line.startswith("def "):
            out.extend([""] * blank)
            out.append(line + f"  # {comment}")
            out.append(f'    """{doc or "x"}"""')
        elif line.startswith("    "):
            out.append(line + f"  # {comment}")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


@settings(max_examples=40, deadline=None)
@given(comment=noise, doc=noise, blank=st.integers(min_value=0, max_value=5))
def test_comments_docstrings_and_line_numbers_never_change_the_version(comment: str, doc: str,
                                                                       blank: int) -> None:
    assert version_of(decorate(PARSER, comment, doc, blank)) == version_of(PARSER)


CODE_EDITS = [
    ("text.strip().upper()", "text.strip().lower()"),  # a helper the parser calls
    ("[A-D]", "[A-E]"),  # a global regular expression
    ('"no grade"', '"no grade found"'),  # a constant
    ('("A", "B", "C", "D")', '("A", "B", "C")'),  # a global tuple
    ("is None or", "is None and"),  # an operator
    ("found.group(1)\n", "found.group(0)\n"),  # an argument
]


@pytest.mark.parametrize(("old", "new"), CODE_EDITS)
def test_a_code_edit_changes_the_version(old: str, new: str) -> None:
    assert old in PARSER
    assert version_of(PARSER.replace(old, new)) != version_of(PARSER)


@settings(max_examples=25, deadline=None)
@given(doc=noise, constant=st.integers(min_value=0, max_value=10**6))
def test_a_nested_function_keeps_its_version_under_docstrings_and_changes_with_its_constants(
        doc: str, constant: int) -> None:
    source = 'def parse(text):\n    def inner(t):\n        """{doc}"""\n        return t + "{c}"\n    return inner(text)\n'  # noqa: E501
    base = version_of(source.format(doc="d", c=0))
    assert version_of(source.format(doc=doc or "d", c=0)) == base
    assert (version_of(source.format(doc="d", c=constant)) == base) == (constant == 0)


def test_partials_closures_and_rebuilt_lambdas_share_a_version_whatever_data_they_hold() -> None:
    module = load('''
def parse_choice(text, n):
    return int(text) % n

def make(n):
    return lambda text: parse_choice(text, n)
''')
    # data a partial or a closure holds (a unit's option count) is not code
    assert pv.parser_version(functools.partial(module.parse_choice, n=3)) == pv.parser_version(
        functools.partial(module.parse_choice, n=7))
    assert pv.parser_version(module.make(3)) == pv.parser_version(module.make(7))
    assert pv.parser_name(functools.partial(module.parse_choice, n=3)) == f"{MODULE}.parse_choice"
    # the memo: a lambda rebuilt per call is walked once
    pv._VERSIONS.clear()
    for n in range(50):
        pv.parser_version(module.make(n))
    assert len(pv._VERSIONS) == 1
    # the function a closure calls is followed
    before = pv.parser_version(module.make(3))
    changed = load('''
def parse_choice(text, n):
    return int(text) // n

def make(n):
    return lambda text: parse_choice(text, n)
''')
    assert pv.parser_version(changed.make(3)) != before


def test_bound_methods_follow_the_methods_and_callable_attributes_of_self() -> None:
    source = '''
class Contract:
    def __init__(self, to_parsed):
        self.to_parsed = to_parsed
        self.version = 1

    def parse(self, text, task=None):
        return self.to_parsed(self.clean(text))

    def clean(self, text):
        return text.strip()

def upper(text):
    return text.upper()

def lower(text):
    return text.lower()
'''
    module = load(source)
    up = pv.parser_version(functools.partial(module.Contract(module.upper).parse, task=None))
    down = pv.parser_version(functools.partial(module.Contract(module.lower).parse, task=None))
    assert up != down  # the callable attribute the method calls is part of the version
    assert pv.parser_name(module.Contract(module.upper).parse) == f"{MODULE}.Contract.parse"
    contract = module.Contract(module.upper)
    contract.version = 2  # data on self: not code
    assert pv.parser_version(contract.parse) == pv.parser_version(module.Contract(module.upper).parse)
    edited = load(source.replace("return text.strip()", "return text.strip(' ')"))
    assert pv.parser_version(edited.Contract(edited.upper).parse) != pv.parser_version(
        module.Contract(module.upper).parse)  # a method named by the code (self.clean)


def test_pydantic_validators_and_nested_models_are_followed() -> None:
    source = '''
from pydantic import BaseModel, field_validator

class Inner(BaseModel):
    score: int

class Verdict(BaseModel):
    inner: Inner
    label: str

    @field_validator("label")
    @classmethod
    def _label(cls, value):
        return value.strip()

def parse(text):
    return Verdict.model_validate_json(text)
'''
    base = version_of(source)
    assert version_of(source.replace("value.strip()", "value.lower()")) != base
    assert version_of(source.replace("score: int", "score: float")) != base


def test_code_outside_the_parsers_packages_is_not_followed() -> None:
    source = 'import json\n\ndef parse(text):\n    return json.loads(text)\n'
    first = version_of(source, name="thirdparty_a")
    assert version_of(source, name="thirdparty_a") == first
    # a caches-like mutable global (lower case) is not part of the version; an UPPER_CASE table is
    cached = 'CACHE_TABLE = {"a": 1}\n_seen = {}\n\ndef parse(text):\n    _seen[text] = 1\n    return CACHE_TABLE[text]\n'  # noqa: E501
    base = version_of(cached)
    assert version_of(cached.replace("_seen = {}", "_seen = {'x': 2}")) == base
    assert version_of(cached.replace('{"a": 1}', '{"a": 2}')) != base


def test_the_version_does_not_depend_on_string_hashing() -> None:
    script = ("import sys, types\n"
              "from ideaharness.runner import provenance as pv\n"
              f"m = types.ModuleType({MODULE!r}); sys.modules[{MODULE!r}] = m\n"
              "exec('GRADES = {\"A\", \"B\", \"C\"}\\n"
              "def parse(t):\\n    return t in {\"x\", \"y\", \"z\"} or t in GRADES\\n', m.__dict__)\n"
              "print(pv.parser_version(m.parse))\n")
    seen = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(SRC)}
        seen.add(subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                                check=True).stdout.strip())
    assert len(seen) == 1


def test_every_benchmark_parser_gets_a_version_quickly() -> None:
    import time

    from ideaharness.benchmarks.aiideabench import run as aiib
    from ideaharness.systems.contract import get_contract

    contract = get_contract("aiideabench")
    pv.parser_version(functools.partial(contract.parse, task=None))
    start = time.perf_counter()
    for _ in range(1000):
        pv.parser_version(functools.partial(contract.parse, task=None))
        pv.parser_version(aiib.parse_idea)
    assert (time.perf_counter() - start) / 2000 < 1e-3  # memoised: well under a millisecond a call


# ----------------------------------------------------------------------------- templates


def test_template_hashes_are_of_the_text_that_renders_and_follow_includes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "tplpkg" / "prompts"
    folder.mkdir(parents=True)
    (tmp_path / "tplpkg" / "__init__.py").write_text("")
    (folder / "tplpkg_part.j2").write_text("the part")
    (folder / "tplpkg_main.j2").write_text("### user\nHello {% include 'tplpkg_part.j2' %}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(prompts, "_ADDED_PACKAGES", [*prompts._ADDED_PACKAGES, "tplpkg"])
    prompts.reload_templates()
    first = prompts.template_sha256("tplpkg_main")
    text = (folder / "tplpkg_main.j2").read_text()
    assert first != hashlib.sha256(text.encode()).hexdigest()  # the included part is in it
    assert prompts.render("tplpkg_main")[0]["content"] == "Hello the part"
    (folder / "tplpkg_part.j2").write_text("the other part")
    assert prompts.template_sha256("tplpkg_main") == first  # read once per process ...
    assert prompts.render("tplpkg_main")[0]["content"] == "Hello the part"  # ... as rendered
    prompts.reload_templates()  # ... until a run opens
    assert prompts.template_sha256("tplpkg_main") != first
    assert prompts.render("tplpkg_main")[0]["content"] == "Hello the other part"
    assert prompts.template_sha256("no_such_template") is None
    assert "tplpkg_main" in prompts.package_templates(["tplpkg"]) and prompts.package_templates([""]) == []
    prompts.reload_templates()


# ----------------------------------------------------------------------------- store and steps


def parse_word(text: str) -> str:
    return text.strip()


def record_with(produced: dict[str, Any]) -> dict[str, Any]:
    return {"judgment": {"parse_ok": True, "parsed": "x", "prompt_hash": "0" * 16}, "produced_by": produced}


def test_recorded_changes_name_what_changed_and_ignore_old_records() -> None:
    now = pv.produced_by(None, parse_word)
    assert pv.recorded_changes({"judgment": {}}, now) == []  # recorded before produced_by
    assert pv.recorded_changes(record_with(now), now) == []
    other = {**now, "parser_version": "f" * 16}
    assert pv.recorded_changes(record_with(other), now) == [f"parser {now['parser']} changed"]
    renamed = {**now, "template": "x_step", "template_sha256": "a" * 64}
    assert pv.recorded_changes(record_with(renamed), now) == ["template x_step is now None"]
    assert now["parser_by_name"] is True and pv.resolve_parser(now["parser"]) is parse_word
    assert pv.resolve_parser("a.b.<locals>.<lambda>") is None and pv.resolve_parser("no.such.thing") is None


class Stub:
    """A provenance whose templates and parser look-ups the test sets."""

    def __init__(self, templates: dict[str, str], rejudge: bool = False,
                 versions: dict[str, str] | None = None) -> None:
        self.templates = templates
        self.rejudge = rejudge
        self.versions = versions or {}
        self.seen: list[Any] = []

    def changes(self, recorded: Any, seen: Any) -> list[str]:
        self.seen = sorted(seen)
        changed = sorted(k for k, v in (recorded or {}).items() if self.templates.get(k) not in (None, v))
        changed += sorted(f"{s[0]}: {s[3]}" for s in seen if s[5] and self.versions.get(s[3]) not in (None, s[4]))  # noqa: E501
        return [f"changed: {', '.join(changed)}"] if changed else []


def test_the_store_records_templates_compares_them_at_open_and_counts_what_produced_records(
        tmp_path: Path) -> None:
    produced = {"template": "t_a", "template_sha256": "1" * 64, "parser": "m.parse", "parser_version": "v1",
                "parser_by_name": True}
    with RunStore(tmp_path / "run", {"x": 1}, provenance=Stub({"t_a": "1" * 64})) as store:
        store.put("s", "i1", record_with(produced))
        store.put("s", "i2", {"not": "a judgment"})
        # a crash between a replace and its compaction leaves two lines of one unit
        store.replace("s", "i1", record_with({**produced, "parser_version": "v2"}))
        store._superseded.clear()  # (as if the process died before compacting)
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config[PRODUCED_BY_KEY] == {"templates": {"t_a": "1" * 64}}
    stub = Stub({"t_a": "1" * 64}, versions={"m.parse": "v2"})
    with RunStore(tmp_path / "run", {"x": 1}, provenance=stub):
        pass
    assert stub.seen == [("s", "t_a", "1" * 64, "m.parse", "v2", True)]  # the replaced line is not counted
    with pytest.raises(UserError) as refused:
        RunStore(tmp_path / "run", {"x": 1}, provenance=Stub({"t_a": "2" * 64}))
    assert "changed: t_a" in str(refused.value) and "--rejudge-changed" in str(refused.value)
    assert "\n" not in str(refused.value)
    with RunStore(tmp_path / "run", {"x": 1}, provenance=Stub({"t_a": "2" * 64}, rejudge=True)) as store:
        assert store.rejudged_before and store.has("s", "i1")
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config[PRODUCED_BY_KEY] == {"templates": {"t_a": "2" * 64}, "rejudged": True}
    # a store opened without provenance (a tool reading the run) keeps the block as it is
    with RunStore(tmp_path / "run", {"x": 1}):
        pass
    assert json.loads((tmp_path / "run" / "config.json").read_text())[PRODUCED_BY_KEY]["rejudged"] is True
    with RunStore(tmp_path / "run", {"x": 1}, provenance=Stub({"t_a": "3" * 64}), force=True) as store:
        assert not store.has("s", "i1") and not store.rejudged_before
    assert len(list((tmp_path / "run" / "superseded").iterdir())) == 1


async def test_a_ray_workers_buffer_leaves_a_changed_unit_to_the_driver() -> None:
    old = {**pv.produced_by(None, parse_word), "parser_version": "0" * 16}
    buffer = RecordBuffer([("s", "i1", "", record_with(old))])
    steps = StepRunner(buffer, progress=False)
    model = ScriptedModel(["new"])
    assert await steps.judge_step("s", "i1", "", model, [{"role": "user", "content": "q"}], parse_word) is None  # noqa: E501
    [failed] = steps.failures.values()
    assert failed.error.startswith(STALE_ON_WORKER) and "changed" in failed.error
    assert not buffer.added  # nothing recorded on the worker


async def test_judge_step_refuses_or_rejudges_a_unit_recorded_with_another_parser(tmp_path: Path) -> None:
    old = {**pv.produced_by(None, parse_word), "parser_version": "0" * 16}
    messages = [{"role": "user", "content": "q"}]
    with RunStore(tmp_path / "run", {"x": 1}) as store:
        store.put("s", "i1", record_with(old))
    with RunStore(tmp_path / "run", {"x": 1}, provenance=Stub({})) as store:
        with pytest.raises(UserError, match=r"s i1 was recorded with another prompt or parser \(parser .*parse_word changed\)"):  # noqa: E501
            await StepRunner(store, progress=False).judge_step("s", "i1", "", ScriptedModel(["a"]), messages,
                                                                parse_word)
    with RunStore(tmp_path / "run", {"x": 1}, provenance=Stub({}, rejudge=True)) as store:
        steps = StepRunner(store, progress=False)
        record = await steps.judge_step("s", "i1", "", ScriptedModel([" new "]), messages, parse_word)
        assert record is not None and record["judgment"]["parsed"] == "new"
        assert record["rejudged_from"] == old and record["produced_by"]["parser_version"] != old["parser_version"]  # noqa: E501
        assert store.rejudged == {"s": 1}
        # met again in the same run: recorded now, not re-judged twice
        again = await steps.judge_step("s", "i1", "", ScriptedModel(["other"]), messages, parse_word)
        assert again == record and store.rejudged == {"s": 1}
        block = store.rejudged_block()
        assert block is not None and block["units"] == 1 and "1 unit(s) re-judged" in block["line"]
        await store.drain()


def test_comparing_runs_ignores_the_stores_produced_by_block() -> None:
    from ideaharness.analysis.compare import result_settings, settings_mismatch

    def lookup(name: str) -> None:
        return None

    old = {"benchmark": "ideabench", "seed": 0}  # recorded before produced_by
    new = {**old, PRODUCED_BY_KEY: {"templates": {"t": "1" * 64}, "rejudged": True}}
    assert PRODUCED_BY_KEY not in result_settings(new, lookup=lookup)
    assert settings_mismatch([old, new], lookup=lookup) == []
