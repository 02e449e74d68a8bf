"""Adversarial values of the ideabench templates, for tests/prompts/test_templates.py (which
collects every ``tests/<package>/template_specs.py``)."""

from __future__ import annotations

from typing import Any

SPECS: dict[str, Any] = {
    "ideabench_generate": lambda u: {"domain": u(), "n_ideas": 3,
                                     "references": [{"title": u(), "abstract": u()} for _ in range(2)]},
    "ideabench_overlap": lambda u: {"idea": u(), "target": u()},
    "ideabench_rank": lambda u: {"domain": u(), "ideas": [("A", u()), ("B", u())], "labels": ["A", "B"],
                                 "indicator_name": "novelty", "indicator_definition": "how new it is"},
    "ideabench_target_idea": lambda u: {"abstract": u()},
}
