"""Judge reliability: how far to trust an LLM judge, computed from its recorded judgments.

Reusable outside any benchmark: build :class:`JudgmentView` s (or read them from a run with
:func:`views_from_run`), then :func:`reliability_blocks` gives, per judged metric and judge,
parse-failure and retry rates, position consistency, tie and modal-answer shares, exact
per-judgment position-bias tests (:mod:`.position`), self-preference, degenerate-judge warnings,
the panel's Krippendorff α and agreement with human labels. :mod:`.sampling` holds the seeded
re-ask selection and balanced placement; :mod:`.human` the human-study reference figures
(Si et al. 2024) and rubric coverage (ScholarEval).
"""

from ideaharness.metrics.reliability.adapters import views_from_records, views_from_run
from ideaharness.metrics.reliability.block import (
    JudgeReliability,
    MetricReliability,
    judge_reliability,
    reliability_blocks,
    reliability_results,
)
from ideaharness.metrics.reliability.consistency import consistency
from ideaharness.metrics.reliability.panel import human_agreement, panel_aggregate, panel_agreement
from ideaharness.metrics.reliability.position import PositionBias, position_bias
from ideaharness.metrics.reliability.sampling import (
    balanced_positions,
    reask_key,
    reask_permutation,
    select_for_reask,
)
from ideaharness.metrics.reliability.summary import (
    COLUMNS,
    ceiling_line,
    reliability_columns,
    reliability_rows,
    reliability_section,
    reliability_warnings,
)
from ideaharness.metrics.reliability.views import JudgmentView

__all__ = [
    "COLUMNS", "JudgeReliability", "JudgmentView", "MetricReliability", "PositionBias", "balanced_positions",
    "ceiling_line", "consistency", "human_agreement", "judge_reliability", "panel_aggregate",
    "panel_agreement", "position_bias", "reask_key", "reask_permutation", "reliability_blocks",
    "reliability_columns", "reliability_results", "reliability_rows", "reliability_section",
    "reliability_warnings", "select_for_reask", "views_from_records", "views_from_run",
]  # fmt: skip
