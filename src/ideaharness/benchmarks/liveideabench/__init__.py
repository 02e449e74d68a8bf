"""LiveIdeaBench (Ruan et al. 2024, arXiv 2412.17596): scientific idea generation from single
keywords, judged by a panel of LLMs.

Protocol per keyword (the published code, x66ccff/liveideabench; every difference, and what
``--parity`` reproduces, in docs/liveideabench.md):

1. generation: the generator gets one keyword and writes a short idea (at most 100 words asked),
   ``ideas_per_keyword`` times (published: 2); in v2 a reply that is no idea (a refusal, a reply
   that is not complete prose) after the retries is asked again with the published fallback
   prompt (``idea_fallback``). ``--parity`` sends the published prompt as its single user message;
   the default puts the keyword in data tags under a system message saying so (no persona);
2. critique: ``judges_per_idea`` judges (published: 3), a seeded sample of the panel without the
   generator's family (:func:`~.config.model_family`: ``o3-mini-high`` ~ ``o3-mini``;
   ``--parity``: without the generator's exact name, as published), score originality,
   feasibility (and clarity, v2) on 1–10 in one final JSON object; the keyword is not shown;
3. fluency: each pair of a keyword's ideas is graded A (completely different) … D (identical),
   by ``fluency_judges`` judges in both orders (``--parity``: one judge drawn from the whole panel,
   one order, and only the pairs of the published pool, as ``hash.py``);
4. aggregation (:mod:`.aggregate`): originality, feasibility, clarity, fluency, flexibility (30th
   percentile over keywords of the keyword's mean) and the leaderboard average, with percentile
   bootstrap 95% intervals over keywords.

Every step is a record in the run directory; a re-run resumes. Parse failures are counted and
never scored. Run it with ``ideaharness run liveideabench`` or ``ideaharness.run("liveideabench",
...)``; :class:`LiveIdeaBench` is the registered benchmark.
"""

from ideaharness.benchmarks.liveideabench.config import LiveIdeaBenchConfig, model_family, same_family
from ideaharness.benchmarks.liveideabench.keywords import Keyword, bundled_keywords, select_keywords
from ideaharness.benchmarks.liveideabench.metrics import (
    FLUENCY_VALUES,
    flexibility,
    fluency_value,
    leaderboard_average,
)
from ideaharness.benchmarks.liveideabench.parsers import parse_critique, parse_fluency, parse_idea
from ideaharness.benchmarks.liveideabench.run import LiveIdeaBench

__all__ = [
    "FLUENCY_VALUES",
    "Keyword",
    "LiveIdeaBench",
    "LiveIdeaBenchConfig",
    "bundled_keywords",
    "flexibility",
    "fluency_value",
    "leaderboard_average",
    "model_family",
    "parse_critique",
    "parse_fluency",
    "parse_idea",
    "same_family",
    "select_keywords",
]
