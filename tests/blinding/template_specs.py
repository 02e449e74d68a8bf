"""Adversarial values of the blinding templates (IMCQ options, LigBench comparison, AI Idea Bench
decomposition, reference rewrite), for tests/prompts/test_templates.py (which collects every
``tests/<package>/template_specs.py``)."""

from __future__ import annotations

from typing import Any

SPECS: dict[str, Any] = {
    "ligbench_compare": lambda u: {"idea_a": u(), "idea_b": u()},
    "aiideabench_imcq": lambda u: {"component": "motivation", "idea": u(),
                                   "options": [(letter, u()) for letter in "ABCD"]},
    "aiideabench_decompose": lambda u: {"title": u(), "question": u(), "background": u(), "hypothesis": u(),
                                        "abstract": u()},
    "reference_rewrite": lambda u: {"kind": "research idea", "reference": u(), "fields": [
        {"name": "idea", "description": "one paragraph", "min_words": 5, "max_words": 30,
         "target_words": 12}]},
}
