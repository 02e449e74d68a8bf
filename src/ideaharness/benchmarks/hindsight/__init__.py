"""HindSight (Jiang 2026, arXiv 2603.15164): research ideas judged by what happened next.

Protocol per topic with a knowledge cutoff T (no released code exists; this is our implementation
of the paper's description, every choice stated in docs/hindsight.md):

1. generation (step ``generate``): ``ideas_per_topic`` ideas, each from the topic and, under
   ``--grounding literature`` (default, retrieval-augmented), the topic's literature published up
   to T (:func:`ideaharness.cutoff.before_cutoff`: a work after T never reaches a prompt);
   ``--grounding none`` is the vanilla generator. Any system answers through the idea contract
   (:mod:`.contract`: ``--ideas FILE``, ``cmd:``, ``http://``);
2. candidates (record ``candidates``): papers published in the window (T, T + horizon], default 30
   months, from the topic's pool, ``--corpus`` files and ``--search s2``/``openalex`` key-phrase
   searches (:mod:`.search`); papers on or before T, after the window or undated are excluded and
   counted; ranked by embedding similarity (all-MiniLM-L6-v2);
3. match (step ``match``): the judge decides whether each of the best ``match_candidates``
   candidates carries the idea out, asked in both orders (idea first, paper first); a pair is a
   match only when every order says so; a parse failure is never a match (:mod:`.aggregate`);
4. review (step ``review``): the same judge scores each idea's novelty and quality 1-10;
5. scores (:mod:`.scores`, :mod:`.impact`): per topic the match rate and the impact-weighted
   score (the matched paper's citations per year over its field's median in the topic's pool, 0 when
   unmatched), pooled over ideas with percentile bootstrap intervals over topics; and the HindSight
   check, Spearman's rho between the judge's scores and realised impact with a topic bootstrap.

Every step is a record in the run directory; a re-run resumes. Run it with ``ideaharness run
hindsight`` or ``ideaharness.run("hindsight", ...)``; :class:`Hindsight` is the registered
benchmark. ``ideaharness data build hindsight`` builds topics from the scholarly APIs.
"""

from ideaharness.benchmarks.hindsight.config import HindsightConfig
from ideaharness.benchmarks.hindsight.impact import (
    citations_per_year,
    field_baselines,
    normalised_impact,
    spearman,
    spearman_check,
    venue_tier,
)
from ideaharness.benchmarks.hindsight.parsers import parse_idea, parse_match, parse_review
from ideaharness.benchmarks.hindsight.run import Hindsight
from ideaharness.benchmarks.hindsight.topics import (
    Topic,
    load_topics,
    parse_horizon,
    window_end,
    window_place,
)

__all__ = [
    "Hindsight",
    "HindsightConfig",
    "Topic",
    "citations_per_year",
    "field_baselines",
    "load_topics",
    "normalised_impact",
    "parse_horizon",
    "parse_idea",
    "parse_match",
    "parse_review",
    "spearman",
    "spearman_check",
    "venue_tier",
    "window_end",
    "window_place",
]
