"""Adversarial values of the LiveIdeaBench templates, for tests/prompts/test_templates.py (which
collects every ``tests/<package>/template_specs.py``)."""

from __future__ import annotations

from typing import Any

SPECS: dict[str, Any] = {
    # parity=False: the default prompt, whose keyword is delimited data; the --parity prompt is the
    # published single user message with the keyword inline (tests/liveideabench/test_parity.py)
    "liveideabench_idea": lambda u: {"keyword": u(), "protocol": "v2", "fallback": True, "parity": False},
    "liveideabench_critique": lambda u: {"idea": u(), "protocol": "v2"},
    "liveideabench_fluency": lambda u: {"keyword": u(), "first": u(), "second": u(), "protocol": "v2"},
}
