"""The row readers every contract's ``from_row`` shares (``field_text``, ``first_text``,
``joined_text``): property tests over converted rows of any JSON shape."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ideaharness.systems.contract import field_text, first_text, joined_text

KEYS = st.sampled_from(["idea", "text", "title", "method", "motivation"])
SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
VALUES = SCALARS | st.lists(SCALARS, max_size=4)
ROWS = st.dictionaries(KEYS, VALUES, max_size=5)


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_field_text_is_none_or_a_stripped_non_blank_text(value: Any) -> None:
    text = field_text(value)
    assert text is None or (text and text == text.strip())
    if isinstance(value, str):
        assert text == (value.strip() or None)
    if isinstance(value, list):
        kept = [str(v) for v in value if str(v).strip()]
        assert (text is None) == (not kept or not "\n".join(kept).strip())
        for item in kept:
            assert item.strip() in (text or "")


@settings(max_examples=200, deadline=None)
@given(ROWS, st.lists(KEYS, max_size=4))
def test_first_text_is_the_first_non_blank_key(row: dict[str, Any], keys: list[str]) -> None:
    texts = [field_text(row.get(key)) for key in keys]
    first = first_text(row, *keys)
    if first is None:
        assert not any(texts)
    else:
        at = texts.index(first)
        assert not any(texts[:at])


@settings(max_examples=200, deadline=None)
@given(ROWS, st.lists(KEYS, max_size=4), st.sampled_from(["\n\n", " "]))
def test_joined_text_joins_the_non_blank_keys_in_order(row: dict[str, Any], keys: list[str],
                                                       sep: str) -> None:
    joined = joined_text(row, *keys, sep=sep)
    parts = [text for key in keys if (text := field_text(row.get(key)))]
    assert joined == sep.join(parts)
    assert (joined == "") == (not parts)


def test_a_list_value_keeps_its_non_blank_items_one_a_line() -> None:
    assert field_text(["  a ", "", " ", "b"]) == "a \nb"
    assert field_text([]) is None and field_text("  ") is None and field_text(None) is None
    assert field_text(0) == "0"
