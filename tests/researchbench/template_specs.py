"""Adversarial values of the researchbench templates, for tests/prompts/test_templates.py (which
collects every ``tests/<package>/template_specs.py``)."""

from __future__ import annotations

from typing import Any

SPECS: dict[str, Any] = {
    "researchbench_compose": lambda u: {"discipline": u(), "question": u(), "survey": u(),
                                        "inspirations": [{"title": u(), "abstract": u()} for _ in range(2)]},
    "researchbench_matched_score": lambda u: {"discipline": u(), "proposed": u(), "gold": u(),
                                              "key_points": u()},
    "researchbench_mutate": lambda u: {"discipline": u(), "question": u(), "survey": u(),
                                       "inspiration": {"title": u(), "abstract": u()},
                                       "previous": [u(), u()]},
    "researchbench_rank_pair": lambda u: {"discipline": u(), "question": u(), "hypothesis_1": u(),
                                          "hypothesis_2": u()},
    "researchbench_recombine": lambda u: {"discipline": u(), "question": u(), "survey": u(),
                                          "hypotheses": [u(), u()]},
    "researchbench_refine": lambda u: {"discipline": u(), "question": u(), "hypothesis": u(),
                                       "inspirations": [{"title": u()}, {"title": u()}]},
    "researchbench_screening": lambda u: {"discipline": u(), "question": u(), "survey": u(), "keep": 3,
                                          "candidates": [{"title": u(), "abstract": u()} for _ in range(3)]},
}
