"""Adversarial values of the ligbench templates, for tests/prompts/test_templates.py (which
collects every ``tests/<package>/template_specs.py``)."""

from __future__ import annotations

from typing import Any

SPECS: dict[str, Any] = {
    "ligbench_formalize": lambda u: {"idea_text": u()},
    "ligbench_generate": lambda u: {"topic": u()},
    "ligbench_initial_score": lambda u: {"idea": u(), "calibration": [
        {"title": u(), "analysis": u(), "rating": 3.0, "contribution": 2.5, "soundness": 4.0}
        for _ in range(2)]},
}
