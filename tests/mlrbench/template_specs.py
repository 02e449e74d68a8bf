"""Adversarial values of the MLR-Bench templates, for tests/prompts/test_templates.py (which
collects every ``tests/<package>/template_specs.py``)."""

from __future__ import annotations

from typing import Any

SPECS: dict[str, Any] = {
    "mlrbench_idea": lambda u: {"task": u()},
    "mlrbench_proposal": lambda u: {"task": u(), "idea": u()},
    "mlrbench_review_idea": lambda u: {"task": u(), "idea": u()},
    "mlrbench_review_proposal": lambda u: {"task": u(), "idea": u(), "proposal": u()},
}
