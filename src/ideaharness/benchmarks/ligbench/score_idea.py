"""``score_idea``: one idea scored LigBench-style against a reference corpus (the
``ideaharness score-idea`` command), with the runner's model construction and run directory."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from ideaharness.benchmarks.ligbench.config import DEFAULT_MODEL
from ideaharness.benchmarks.ligbench.corpus import DebiasMeans, ReferenceCorpus
from ideaharness.benchmarks.ligbench.steps import IdeaScore, IdeaScorer, ScoringSettings
from ideaharness.data.pairiq import pairiq_files
from ideaharness.llm.types import ChatModel
from ideaharness.runner.models import build_model
from ideaharness.runner.options import ExecutionOptions
from ideaharness.runner.steps import DEFAULT_MAX_PROMPT_TOKENS, StepRunner
from ideaharness.runs.store import RunStore


async def score_idea_async(
    text: str,
    corpus: str | Path | ReferenceCorpus,
    judge: str | ChatModel = DEFAULT_MODEL,
    *,
    settings: ScoringSettings | None = None,
    options: ExecutionOptions | None = None,
    out: str | Path | None = None,
    idea_id: str = "idea",
    cutoff: str | None = None,
    debias_means: DebiasMeans = "corpus",
    max_prompt_tokens: int = DEFAULT_MAX_PROMPT_TOKENS,
) -> IdeaScore:
    """Score one idea (free text or a structured plan) against a reference corpus.

    Args:
        judge: a model string (built with ``options``: base URL, cache, concurrency) or a model.
        out: directory recording every judgment (re-running resumes); default a temporary
            directory (the LLM response cache still makes a repeat cheap).
        max_prompt_tokens: prompt budget; longer idea or paper texts are cut to fit (recorded).

    Returns:
        The :class:`IdeaScore`; ``failed_units`` lists the steps whose model calls failed for good
        and (``status`` "unparsed", with the parse ``error``) the judgments whose replies did not
        parse; running again re-asks those with new samples
        (:data:`~ideaharness.runner.steps.MAX_PARSE_ROUNDS`).
    """
    cfg = settings or ScoringSettings()
    opts = options or ExecutionOptions(progress=False)
    # the corpus's embeddings: the run's store under the cache folder (--device, --no-embedding-cache)
    ref = corpus if isinstance(corpus, ReferenceCorpus) else ReferenceCorpus.load(
        corpus, debias_means=debias_means, runtime=opts.embedding_runtime())
    model = judge if not isinstance(judge, str) else build_model(judge, opts)
    record_config = {"command": "score-idea", "judge": model.model, "corpus": ref.source,
                     "scoring": cfg.model_dump(mode="json"), "debias_means": ref.debias_means}
    inputs = {"--corpus": pairiq_files(corpus)} if not isinstance(corpus, ReferenceCorpus) else None
    with tempfile.TemporaryDirectory(prefix="ligbench-") as tmp:
        store = RunStore(out if out is not None else Path(tmp), record_config, inputs=inputs,
                         force=opts.force)
        store.track_usage({"judge": model})
        with store:
            steps = StepRunner(store, max_attempts=opts.max_attempts, progress=False,
                               max_prompt_tokens=max_prompt_tokens)
            scorer = IdeaScorer(ref, model, steps, cfg, timeout_s=opts.timeout)
            try:
                result = await scorer.score(idea_id, text, cutoff=cutoff)
            finally:
                await scorer.aclose()
            outcome = steps.outcome()  # judgments that did not parse are listed with their errors too
            unparsed = [{**unit, "status": "unparsed"} for unit in outcome["unparsed_units"]]
            return result.model_copy(update={"failed_units": outcome["failed_units"] + unparsed})


def score_idea(text: str, corpus: str | Path | ReferenceCorpus, judge: str | ChatModel = DEFAULT_MODEL,
               **kwargs: Any) -> IdeaScore:
    """Synchronous wrapper of :func:`score_idea_async`."""
    return asyncio.run(score_idea_async(text, corpus, judge, **kwargs))
