"""``--keyword`` with ``--category`` (issue 18, item 8): the README's ``--keyword "periodic table"
--category Physics`` ran nothing ("no keywords to run": the keyword is bundled under Chemistry and
the two flags intersected). A keyword outside the categories given is now an error naming it and
its category; a keyword inside them, or either flag alone, selects as before."""

from __future__ import annotations

import pytest

from ideaharness.benchmarks.liveideabench.keywords import bundled_keywords, select_keywords
from ideaharness.errors import UserError


def test_a_keyword_outside_the_category_is_an_error_naming_it() -> None:
    with pytest.raises(UserError, match=r"--keyword 'periodic table' is in category 'Chemistry', not in "
                                        r"--category Physics"):
        select_keywords(["periodic table"], ["Physics"])


def test_a_custom_keyword_with_a_category_is_an_error() -> None:
    with pytest.raises(UserError, match=r"--keyword 'zeolite membranes' is not a bundled keyword"):
        select_keywords(["zeolite membranes"], ["Physics"])


def test_a_keyword_inside_its_category_and_each_flag_alone_select() -> None:
    assert [k.id for k in select_keywords(["periodic table"], ["Chemistry", "Physics"])] == ["periodic table"]
    custom = select_keywords(["periodic table", "zeolite membranes"], [])
    expected = [("periodic table", "Chemistry"), ("zeolite membranes", None)]
    assert [(k.id, k.category) for k in custom] == expected
    physics = select_keywords([], ["Physics"])
    assert physics and all(k.category == "Physics" for k in physics)
    assert len(physics) == sum(1 for k in bundled_keywords() if k.category == "Physics")


def test_an_unknown_category_lists_the_known_ones() -> None:
    with pytest.raises(UserError, match=r"--category 'Alchemy': not a LiveIdeaBench category; choose "
                                        r"from .*Physics"):
        select_keywords([], ["Alchemy"])
