"""Adversarial values of the aiideabench templates, for tests/prompts/test_templates.py (which
collects every ``tests/<package>/template_specs.py``)."""

from __future__ import annotations

from typing import Any

SPECS: dict[str, Any] = {
    "aiideabench_compete": lambda u: {"topic": u(), "idea0": u(), "idea1": u(),
                                      "criteria": ["novelty", "feasibility"]},
    "aiideabench_concepts": lambda u: {"motivation": u(), "experiment_plan": u()},
    "aiideabench_digest": lambda u: {"topic": u(), "title": u(), "abstract": u()},
    "aiideabench_generate": lambda u: {"topic": u(), "inspirations": [u(), u()]},
    "aiideabench_i2i": lambda u: {"component": "motivation", "idea": u(), "ground_truth": u()},
    "aiideabench_i2t": lambda u: {"topic": u(), "motivation": u(), "experiment_plan": u()},
    "aiideabench_keywords": lambda u: {"topic": u()},
}
