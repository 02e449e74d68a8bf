"""Adversarial values of the HindSight templates, for tests/prompts/test_templates.py (which
collects every ``tests/<package>/template_specs.py``)."""

from __future__ import annotations

from typing import Any

SPECS: dict[str, Any] = {
    # cutoff and number are the run's own values (a date, a count), not text from papers or models
    "hindsight_generate": lambda u: {"topic": u(), "cutoff": "2022-11-30", "literature": [u(), u()],
                                     "number": 1},
    "hindsight_match": lambda u: {"first": u(), "second": u(), "first_kind": "research idea",
                                  "second_kind": "published paper"},
    "hindsight_review": lambda u: {"topic": u(), "idea": u()},
}
