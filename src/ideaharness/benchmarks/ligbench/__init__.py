"""LigBench (Wang et al.): formalise ideas, score them by one-sided Elo against a venue-debiased
reference corpus (PAIR-IQ format), and blend literature similarity into novelty.

Modules: :mod:`.corpus` (reference corpus + hybrid retrieval), :mod:`.steps` (LLM steps and the
scoring of one idea), :mod:`.config`, :mod:`.run` (the ``ligbench`` benchmark over topics and
systems), :mod:`.judge_eval` (the ``ligbench-judge`` benchmark), :mod:`.score_idea`.
"""

from ideaharness.benchmarks.ligbench.config import DEFAULT_TOPICS, LigBenchConfig
from ideaharness.benchmarks.ligbench.corpus import ReferenceCorpus
from ideaharness.benchmarks.ligbench.judge_eval import JudgeAccuracy, JudgeAccuracyConfig
from ideaharness.benchmarks.ligbench.run import LigBench, results_tables
from ideaharness.benchmarks.ligbench.score_idea import score_idea, score_idea_async
from ideaharness.benchmarks.ligbench.steps import (
    Comparison,
    IdeaScore,
    IdeaScorer,
    ScoringSettings,
    parse_comparison,
    parse_formalization,
    parse_initial_scores,
)

__all__ = [
    "DEFAULT_TOPICS",
    "Comparison",
    "IdeaScore",
    "IdeaScorer",
    "JudgeAccuracy",
    "JudgeAccuracyConfig",
    "LigBench",
    "LigBenchConfig",
    "ReferenceCorpus",
    "ScoringSettings",
    "parse_comparison",
    "parse_formalization",
    "parse_initial_scores",
    "results_tables",
    "score_idea",
    "score_idea_async",
]
