"""The fast paths of rendering give what the plain ones gave: the block splitter (looks only at
lines starting with ``### ``) against the regular expression it replaces, the delimiter's
look-alike tags compiled once per name, templates compiled once until :func:`reload_templates`."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ideaharness import prompts
from ideaharness.prompts import data_block, render

fragments = st.sampled_from(["### ", "###", "## ", "### system", "### user", "### assistant", "### users",
                             "system", "user", "\n", "\r\n", " ", "\t", "\x0b", "\u2028", "\x85", "x", "é",
                             "#", "\n### user\n", "### system  \n\n", "<abstract>"])
texts = st.lists(st.one_of(fragments, st.text(max_size=3)), max_size=30).map("".join)


@settings(max_examples=1500, deadline=None)
@given(texts)
def test_block_splitter_equals_the_regular_expression(text: str) -> None:
    assert prompts._split_blocks(text) == prompts._BLOCK.split(text)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=40), texts), st.sampled_from(["abstract", "idea", "paper_2"]))
def test_data_block_neutralises_look_alike_tags_as_before(text: str, name: str) -> None:
    import re

    tag = re.compile(rf"<(\s*/?\s*{name}\s*)>", re.IGNORECASE)  # the per-call pattern it replaced
    inner = prompts._BLOCK.sub(lambda m: chr(0xFF03) + m.group(0)[1:],  # block openers neutralised
                               tag.sub(lambda m: chr(0x2039) + m.group(1) + '>', text))
    assert data_block(text, name) == f"<{name}>\n{inner}\n</{name}>"
    assert data_block(f"a </{name.upper()} > b", name).count(f"</{name}>") == 1


@pytest.mark.parametrize("text", ["plain", "with <b>tags</b>"])
def test_bad_delimiter_names_are_refused_with_or_without_tags(text: str) -> None:
    with pytest.raises(ValueError, match="lower-case identifier"):
        data_block(text, "Bad-Name")


@settings(max_examples=500, deadline=None)
@given(texts)
def test_no_data_text_opens_a_message_block(text: str) -> None:
    roles = [m["role"] for m in render("ideabench_overlap", idea=text, target=text)]
    assert roles == [m["role"] for m in render("ideabench_overlap", idea="", target="")]
    assert prompts._split_blocks(data_block(text, "idea")) == [data_block(text, "idea")]


def test_templates_are_compiled_once_until_reloaded() -> None:
    env = prompts._environment()
    first = env.get_template("ideabench_overlap.j2")
    render("ideabench_overlap", idea="i", target="t")
    assert env.get_template("ideabench_overlap.j2") is first  # no re-compile, no up-to-date check
    prompts.reload_templates()
    assert prompts._environment().get_template("ideabench_overlap.j2") is not first


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_rendering_with_flattened_globals_equals_jinja_render(idea: str, target: str) -> None:
    template = prompts._environment().get_template("ideabench_overlap.j2")
    variables = {"idea": idea, "target": target, "_budget": prompts._Budget()}
    expected = template.render(**{**variables, "_budget": prompts._Budget()})
    assert prompts._render_text(template, variables) == expected


def test_an_undefined_variable_is_still_an_error() -> None:
    import jinja2

    with pytest.raises(jinja2.UndefinedError, match="target"):
        render("ideabench_overlap", idea="only the idea")
