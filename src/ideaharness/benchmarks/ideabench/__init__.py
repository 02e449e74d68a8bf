"""IdeaBench (Guo et al. 2024, arXiv 2411.02429): ideas from reference abstracts, scored against
the target paper by BERTScore, an LLM idea-overlap rating and the Insight Score.

Protocol per instance and scenario:

1. target idea: the instance's ground-truth idea, else extracted from the target abstract by the
   judge (the paper's Figure 5 step);
2. generation: the generator, profiled as a researcher of the instance's domain, reads the
   reference abstracts and proposes ``n_ideas`` ideas (low resource: ``k_references`` filtered
   references; high resource: all references, truncated to ``max_prompt_tokens``);
3. similarity: BERTScore F1 of every idea against the target abstract (the target idea when the
   instance has no abstract, e.g. TOMATO-Chem); the best of n is kept;
4. overlap: the judge rates the best-by-BERTScore idea against the same target text, 1–10;
5. Insight Score: for each quality indicator the judge ranks the n ideas plus the target idea,
   shown in a seeded random order, the target idea rewritten into the generated ideas' form
   (:mod:`.blinding`; ``parity=True``: the published target text, first, as published).

Every step is a record in the run directory; a re-run resumes. Parse failures are counted and
excluded from the metric they belong to, never scored. Run it with ``ideaharness run ideabench``
or ``ideaharness.run("ideabench", ...)``; :class:`IdeaBench` is the registered benchmark.
"""

from ideaharness.benchmarks.ideabench.config import (
    BENCHMARK_VERSION,
    DEFAULT_INDICATORS,
    DEFAULT_MODEL,
    IdeaBenchConfig,
    Indicator,
)
from ideaharness.benchmarks.ideabench.parsers import parse_ideas, parse_overlap, parse_target_idea
from ideaharness.benchmarks.ideabench.report import rank_figure, results_tables
from ideaharness.benchmarks.ideabench.run import IdeaBench, select_references, truncate_references
from ideaharness.metrics.ranking import insight_score

__all__ = [
    "BENCHMARK_VERSION",
    "DEFAULT_INDICATORS",
    "DEFAULT_MODEL",
    "IdeaBench",
    "IdeaBenchConfig",
    "Indicator",
    "insight_score",
    "parse_ideas",
    "parse_overlap",
    "parse_target_idea",
    "rank_figure",
    "results_tables",
    "select_references",
    "truncate_references",
]
