"""ResearchBench (Liu, Yang et al. 2025, arXiv 2503.21248; engine MOOSE-Chem, Yang et al., ICLR 2025):
inspiration retrieval, hypothesis composition and hypothesis ranking.

>>> import ideaharness
>>> results = ideaharness.run("researchbench", out="runs/rb", limit=1)  # doctest: +SKIP
"""

from ideaharness.benchmarks.researchbench.aggregate import aggregate, results_tables
from ideaharness.benchmarks.researchbench.composition import Composer, parse_hypothesis, score_hypothesis
from ideaharness.benchmarks.researchbench.config import (
    TASKS,
    BenchData,
    ResearchBenchConfig,
    load_data,
)
from ideaharness.benchmarks.researchbench.ranking import (
    generate_negatives,
    judge_pairs,
    negative_inspiration_sets,
)
from ideaharness.benchmarks.researchbench.run import ResearchBench
from ideaharness.benchmarks.researchbench.screening import (
    ScreeningResult,
    extract_titles,
    parse_screening_reply,
    screen_pool,
)

__all__ = [
    "TASKS",
    "BenchData",
    "Composer",
    "ResearchBench",
    "ResearchBenchConfig",
    "ScreeningResult",
    "aggregate",
    "extract_titles",
    "generate_negatives",
    "judge_pairs",
    "load_data",
    "negative_inspiration_sets",
    "parse_hypothesis",
    "parse_screening_reply",
    "results_tables",
    "score_hypothesis",
    "screen_pool",
]
