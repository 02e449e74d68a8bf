"""LigBench (Wang et al.): formalise ideas, score them by one-sided Elo against a venue-debiased
reference corpus (PAIR-IQ format), and blend literature similarity into novelty.

Modules: :mod:`.corpus` (reference corpus + hybrid retrieval), :mod:`.steps` (LLM steps and the
scoring of one idea), :mod:`.run` (runs over topics and systems, ``score_idea``).
"""

from ideaharness.benchmarks.ligbench.corpus import ReferenceCorpus
from ideaharness.benchmarks.ligbench.run import (
    DEFAULT_TOPICS,
    LigBenchConfig,
    results_tables,
    run_ligbench,
    run_ligbench_async,
    score_idea,
    score_idea_async,
)
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
    "LigBenchConfig",
    "ReferenceCorpus",
    "ScoringSettings",
    "parse_comparison",
    "parse_formalization",
    "parse_initial_scores",
    "results_tables",
    "run_ligbench",
    "run_ligbench_async",
    "score_idea",
    "score_idea_async",
]
