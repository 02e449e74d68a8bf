"""LigBench's LLM steps and the scoring of one idea (formalise → s0 → pairwise Elo → novelty).

Pipeline (Wang et al., LigBench, §3 and Appendices B, E, F):

1. **Formalise** the idea into ``{main_target, core_breakthrough, innovative_methods,
   experimental_design}`` (``ligbench_formalize.j2``). The paper asks for a positional list of
   four strings; we ask for named keys.
2. **Retrieve** reference papers by hybrid BM25 + cosine retrieval; the first
   ``n_calibration`` (3) calibrate the initial score, the following ones are Elo opponents.
3. **Initial score** s0 = ``{rating, contribution, soundness, novelty}`` on 0-5 from the judge
   given the calibration papers and their debiased scores (``ligbench_initial_score.j2``).
4. **Pairwise comparisons** with each opponent on ``{rating, soundness, contribution}``, each
   1 / 0.5 / 0 (``ligbench_compare.j2``), in both orders by default; the idea's outcome is the
   mean over the orders, counted only when every order shown parsed (one order alone is
   position-biased), and an order disagreement is recorded. Each dimension is
   updated by one-sided Elo (:mod:`ideaharness.metrics.elo`) until its stopping rule fires. Both
   sides show the same four fields; the opponent is rewritten into them by the judge unless
   ``blind_references`` is off (:mod:`.blinding`).
5. **Novelty** = β·s_sim + (1 − β)·s0.novelty with s_sim from the cosine similarity to related
   papers (:mod:`ideaharness.metrics.novelty_ligbench`).

A step whose reply never parses stops that idea (``status`` says where) or, for one comparison,
drops that comparison (a spare opponent takes its place); it is counted, never turned into a
score or an outcome. An idea none of whose comparisons parsed has no score
(``compare_failed``): its Elo scores would be the initial scores unchanged.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from ideaharness.benchmarks.ligbench.blinding import published_text, rewrite_paper
from ideaharness.benchmarks.ligbench.corpus import ReferenceCorpus
from ideaharness.benchmarks.ligbench.cutoff import (
    CORPUS_SOURCE,
    SEARCH_SOURCE,
    TOO_FEW_STATUS,
    after_cutoff,
    as_date,
    corpus_record,
)
from ideaharness.cutoff import CUTOFF_STEP, CutoffLedger, access_record
from ideaharness.data.pairiq import SCORE_DIMENSIONS, PairIQAnalysis, PairIQRecord
from ideaharness.errors import ParseError
from ideaharness.llm.parsing import check_text, extract_json_object
from ideaharness.llm.types import ChatModel
from ideaharness.metrics.elo import EloSettings, EloTrajectory, elo_score, needs_more
from ideaharness.metrics.novelty_ligbench import NoveltySettings, hybrid_novelty
from ideaharness.prompts import render
from ideaharness.runner.steps import Reask, StepRunner
from ideaharness.scholarly.gate import ScholarGate, ScholarUnavailable

FORMAL_KEYS = ("main_target", "core_breakthrough", "innovative_methods", "experimental_design")
INITIAL_KEYS = ("rating", "contribution", "soundness", "novelty")
COMPARE_KEYS = ("rating", "soundness", "contribution")
Order = Literal["both", "random", "fixed"]
FREE_TEXT_EXTRA_TOKENS = 600
"""Default of ``free_text_extra_tokens``: room for the visible reasoning a ``--free-text`` reply
writes before its JSON (the prompts ask for it), added to each judge cap."""
FORMAL_MIN_WORDS = 3
"""Each formalised part is at least a short phrase ("Define deception in decision making")."""

FORMAL_SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {k: {"type": "string"} for k in FORMAL_KEYS},
    "required": list(FORMAL_KEYS),
}
INITIAL_SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {k: {"type": "number"} for k in INITIAL_KEYS},
    "required": list(INITIAL_KEYS),
}
COMPARE_SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {k: {"type": "number", "enum": [0, 0.5, 1]} for k in COMPARE_KEYS},
    "required": list(COMPARE_KEYS),
}


# ----------------------------------------------------------------------------- parsers


def parse_formalization(text: str) -> dict[str, str]:
    """The four named parts of a formalised idea; list values are numbered and joined.

    Every part must be real prose of at least :data:`FORMAL_MIN_WORDS` words
    (:func:`~ideaharness.llm.parsing.check_text`).

    Raises:
        ParseError: no JSON object with all four keys, or a part that is not text, empty or
            degenerate (whitespace, zero-width characters, punctuation, a refusal).
    """
    data = extract_json_object(text, required=FORMAL_KEYS)
    out: dict[str, str] = {}
    for key in FORMAL_KEYS:
        value = PairIQAnalysis.model_validate({key: data[key]}).model_dump()[key]
        if not isinstance(value, str):
            raise ParseError(f"'{key}' is not text")
        out[key] = check_text(value, f"'{key}'", min_words=FORMAL_MIN_WORDS)
    return out


def parse_initial_scores(text: str) -> dict[str, float]:
    """``{rating, contribution, soundness, novelty}``, each a number in [0, 5].

    Raises:
        ParseError: a key is missing, not a number, or outside [0, 5].
    """
    data = extract_json_object(text, required=INITIAL_KEYS)
    out: dict[str, float] = {}
    for key in INITIAL_KEYS:
        try:
            value = float(data[key])
        except (TypeError, ValueError):
            raise ParseError(f"'{key}' is not a number: {data[key]!r}") from None
        if not 0.0 <= value <= 5.0:
            raise ParseError(f"'{key}' = {value:g} outside [0, 5]")
        out[key] = value
    return out


_OUTCOME_WORDS = {"a": 1.0, "first": 1.0, "b": 0.0, "second": 0.0, "tie": 0.5, "equal": 0.5, "same": 0.5}


def parse_comparison(text: str) -> dict[str, float]:
    """``{rating, soundness, contribution}``, each 1 (A better), 0.5 (equal) or 0 (B better).

    "A"/"B"/"tie"/"equal" are read as 1/0/0.5; any other value is a parse error.
    """
    data = extract_json_object(text, required=COMPARE_KEYS)
    out: dict[str, float] = {}
    for key in COMPARE_KEYS:
        value = data[key]
        if isinstance(value, str):
            word = value.strip().lower()
            value = _OUTCOME_WORDS.get(word, word)
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ParseError(f"'{key}' is not 1, 0.5 or 0: {data[key]!r}") from None
        if number not in (0.0, 0.5, 1.0):
            raise ParseError(f"'{key}' = {number:g}, expected 1, 0.5 or 0")
        out[key] = number
    return out


# ----------------------------------------------------------------------------- results


class Comparison(BaseModel):
    """One opponent: outcomes per order (1 = the idea better), their mean and disagreement."""

    reference_id: str
    title: str
    s_ref: dict[str, float]
    outcomes: dict[str, dict[str, float] | None]  # order ("idea-first"/"ref-first") -> outcomes
    outcome: dict[str, float] | None  # mean over the orders; None = an order did not parse
    disagreement: dict[str, bool] = Field(default_factory=dict)


class IdeaScore(BaseModel):
    """LigBench scores of one idea and everything that produced them.

    ``status``: ``"scored"``, or the step that failed for good (``"formalize_failed"``,
    ``"initial_score_failed"``, ``"compare_failed"`` (no comparison parsed), ``"llm_error"``).
    ``scores`` holds rating, contribution, soundness (Elo outputs) and novelty (hybrid) on 0-5
    when scored.
    """

    idea_id: str
    status: str
    formalization: dict[str, str] | None = None
    calibration: list[str] = Field(default_factory=list)
    initial: dict[str, float] | None = None
    comparisons: list[Comparison] = Field(default_factory=list)
    trajectories: dict[str, EloTrajectory] = Field(default_factory=dict)
    novelty: dict[str, Any] | None = None
    scores: dict[str, float] | None = None
    parse_failures: dict[str, int] = Field(default_factory=dict)
    failed_units: list[dict[str, Any]] = Field(default_factory=list)


class ScoringSettings(BaseModel):
    """Settings of the scoring pipeline (all recorded in the run config).

    ``n_calibration`` = 3 is the paper's. ``order`` = ``"both"`` swaps positions and averages
    (``"fixed"`` = the idea always first, as a parity option; ``"random"`` = one seeded order).
    ``n_related`` = 10 related papers for the similarity half of novelty (the paper does not give
    N). ``extra_opponents`` = 2 spare references retrieved beyond T_max so that comparisons lost
    to parse failures can be replaced. ``structured_output`` asks the backend for JSON matching
    the step's schema (llama.cpp grammar / OpenAI ``response_format``). ``blind_references``:
    compare with the reference paper rewritten into the idea's form (:mod:`.blinding`); False
    (``--parity``) shows its published analysis.
    """

    n_calibration: int = Field(default=3, ge=1, description="Calibration papers for the initial score.")
    order: Order = Field("both", description="Comparison orders: both (averaged), random (one, seeded) "
                         "or fixed (idea first).")
    elo: EloSettings = Field(default_factory=lambda: EloSettings())
    novelty: NoveltySettings = Field(default_factory=lambda: NoveltySettings())
    n_related: int = Field(default=10, ge=1, description="Related papers for the similarity half of novelty.")
    novelty_source: Literal["corpus", "semantic-scholar"] = Field("corpus", description="Where related "
                                                                  "papers for novelty come from.")
    scholar_base_url: str | None = Field(None, description="Semantic Scholar API root (implies "
                                         "--novelty-source semantic-scholar).")
    extra_opponents: int = Field(default=2, ge=0, description="Spare references beyond T_max.")
    judge_temperature: float = Field(0.0, description="Sampling temperature of the judge.")
    structured_output: bool = Field(True, json_schema_extra={"cli": "--structured/--free-text"},
                                    description="Ask the backend for JSON matching the reply schema, or "
                                    "let the judge reason.")
    blind_references: bool = Field(True, json_schema_extra={"cli": False}, description="Compare with "
                                   "reference papers rewritten into the ideas' form (off with --parity).")
    seed: int = Field(0, json_schema_extra={"cli": False}, description="Seed (set from the run seed).")
    formalize_max_tokens: int = Field(700, ge=16, description="Tokens of a formalised idea (JSON: four "
                                      "parts); the judge's reasoning budget is added (no published code: "
                                      "--parity keeps it).")
    initial_score_max_tokens: int = Field(200, ge=16, description="Tokens of the initial scores (JSON: four "
                                          "numbers); the judge's reasoning budget is added (no published "
                                          "code: --parity keeps it).")
    compare_max_tokens: int = Field(400, ge=16, description="Tokens of a pairwise comparison (JSON: three "
                                    "outcomes); the judge's reasoning budget is added (no published code: "
                                    "--parity keeps it).")
    free_text_extra_tokens: int = Field(FREE_TEXT_EXTRA_TOKENS, ge=0, description="Tokens added to each "
                                        "judge cap with --free-text, for the reasoning the prompt asks to "
                                        "write before the JSON.")

    @model_serializer(mode="wrap")
    def _caps_when_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The settings as JSON, each reply cap only when it is not its default: a run recorded
        before the caps were settings (issue 21) has the same ``scoring`` and resumes."""
        out: dict[str, Any] = handler(self)
        for name in CAP_FIELDS:
            if name in out and out[name] == type(self).model_fields[name].default:
                del out[name]
        return out

    def reply_cap(self, kind: Literal["formalize", "initial_score", "compare"]) -> int:
        """The judge's answer cap of prompt ``kind``, tokens: its field, plus
        ``free_text_extra_tokens`` when the reply is free text (the client adds the reasoning
        budget)."""
        cap: int = getattr(self, f"{kind}_max_tokens")
        return cap if self.structured_output else cap + self.free_text_extra_tokens


CAP_FIELDS = ("formalize_max_tokens", "initial_score_max_tokens", "compare_max_tokens",
              "free_text_extra_tokens")
"""The reply-cap fields of :class:`ScoringSettings` (recorded only when set to another value)."""


def reference_text(record: PairIQRecord) -> str:
    """A reference paper as published, in the four fields of a formalised idea (no title line):
    what LigBench's comparisons show (Appendix B) and the judge-accuracy pairs compare."""
    return published_text(record)


def formal_text(formal: dict[str, str]) -> str:
    return PairIQAnalysis.model_validate(formal).text()


def _stable_int(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:12], 16)


class IdeaScorer:
    """Scores ideas against a reference corpus with one judge, recording every step.

    Records (step, instance id = idea id, key): ``ligbench/formalize``, ``ligbench/initial_score``,
    ``ligbench/compare`` (key ``<reference id>|idea-first`` or ``|ref-first``), ``ligbench/novelty``.
    """

    def __init__(self, corpus: ReferenceCorpus, judge_model: ChatModel, steps: StepRunner,
                 settings: ScoringSettings | None = None, *, timeout_s: float = 30.0) -> None:
        self.corpus = corpus
        self.judge = judge_model
        self.steps = steps
        self.settings = settings or ScoringSettings()
        self.gate: ScholarGate | None = None
        if self.settings.novelty_source == "semantic-scholar":  # one client, one probe, per run
            self.gate = ScholarGate(self.settings.scholar_base_url, timeout_s=timeout_s)
        self._rewrites: dict[str, asyncio.Future[tuple[str | None, dict[str, Any] | None]]] = {}
        """Reference id -> its rewrite (:meth:`rewrite`), shared by the ideas compared with it."""

    async def rewrite(self, ref: PairIQRecord) -> tuple[str | None, dict[str, Any] | None]:
        """:func:`~ideaharness.benchmarks.ligbench.blinding.rewrite_paper` of ``ref``, once per
        reference and process: every idea compared with the same paper awaits one task (one
        request, its prompt rendered and its record read once, not once per idea). A rewrite that
        ended without a record (the model call failed for good) is asked again by the next idea."""
        known = self._rewrites.get(ref.id)
        if known is None or (known.done() and (known.cancelled() or known.exception() is not None
                                                or known.result()[1] is None)):
            known = self._rewrites[ref.id] = asyncio.ensure_future(rewrite_paper(
                self.steps, self.judge, ref, seed=self.settings.seed,
                temperature=self.settings.judge_temperature))
        return await asyncio.shield(known)

    async def aclose(self) -> None:
        """Close the Semantic Scholar client, if one was opened."""
        if self.gate is not None:
            await self.gate.aclose()

    def _sampling(self, schema: dict[str, Any],
                  kind: Literal["formalize", "initial_score", "compare"]) -> dict[str, Any]:
        cfg = self.settings  # free-text replies reason before the JSON: the cap leaves room for it
        return {"temperature": cfg.judge_temperature, "seed": cfg.seed, "max_tokens": cfg.reply_cap(kind),
                "json_schema": schema if cfg.structured_output else None}

    def orders(self, idea_id: str, ref_id: str) -> list[str]:
        """Orders to show: both by default; one seeded coin flip for ``random``; idea first for ``fixed``."""
        if self.settings.order == "both":
            return ["idea-first", "ref-first"]
        if self.settings.order == "fixed":
            return ["idea-first"]
        rng = np.random.default_rng(_stable_int(self.settings.seed, idea_id, ref_id))
        return ["idea-first" if rng.random() < 0.5 else "ref-first"]

    async def score(self, idea_id: str, text: str, *, cutoff: Any = None) -> IdeaScore:
        """Run the whole pipeline for one idea (resuming recorded steps)."""
        failures = {"formalize": 0, "initial_score": 0, "compare": 0, "rewrite": 0}
        rec = await self.steps.judge_step(
            "ligbench/formalize", idea_id, "", self.judge, render("ligbench_formalize", idea_text=text),
            parse_formalization, **self._sampling(FORMAL_SCHEMA, "formalize"))
        if rec is None:
            return IdeaScore(idea_id=idea_id, status="llm_error", parse_failures=failures)
        if not rec["judgment"]["parse_ok"]:
            failures["formalize"] += 1
            return IdeaScore(idea_id=idea_id, status="formalize_failed", parse_failures=failures)
        formal: dict[str, str] = rec["judgment"]["parsed"]
        query = formal_text(formal)
        cfg = self.settings
        q_emb = await self.corpus.aquery_embedding(query)
        cut = as_date(cutoff)
        later = after_cutoff(self.corpus.records, cut)  # never retrieved, shown or compared (.cutoff)
        hits = self.corpus.retrieve(query, cfg.n_calibration + cfg.elo.max_comparisons + cfg.extra_opponents,
                                    query_embedding=q_emb, exclude=later)
        if not self.steps.store.has(CUTOFF_STEP, idea_id, CORPUS_SOURCE):  # group-committed, off the loop
            record = corpus_record(self.corpus.records, cut, [h.id for h in hits])
            await self.steps.store.aput(CUTOFF_STEP, idea_id, record, CORPUS_SOURCE)
        if len(hits) < cfg.n_calibration + 1:  # never scored against papers after the cutoff
            return IdeaScore(idea_id=idea_id, status=TOO_FEW_STATUS, formalization=formal,
                             parse_failures=failures)
        calibration = [self.corpus.by_id[h.id] for h in hits[: cfg.n_calibration]]
        opponents = [self.corpus.by_id[h.id] for h in hits[cfg.n_calibration:]]
        result = IdeaScore(idea_id=idea_id, status="scored", formalization=formal,
                           calibration=[r.id for r in calibration], parse_failures=failures)

        rec = await self.steps.judge_step(
            "ligbench/initial_score", idea_id, "", self.judge,
            render("ligbench_initial_score", idea=query, calibration=[
                {"title": r.title, "analysis": reference_text(r),
                 **{d: self.corpus.score(r.id, d) for d in SCORE_DIMENSIONS}} for r in calibration]),
            parse_initial_scores, extra={"calibration": result.calibration},
            **self._sampling(INITIAL_SCHEMA, "initial_score"))
        if rec is None:
            return result.model_copy(update={"status": "llm_error", "parse_failures": failures})
        if not rec["judgment"]["parse_ok"]:
            failures["initial_score"] += 1
            return result.model_copy(update={"status": "initial_score_failed", "parse_failures": failures})
        s0: dict[str, float] = rec["judgment"]["parsed"]
        result.initial = s0

        trajectories = {d: elo_score(s0[d], [], cfg.elo) for d in COMPARE_KEYS}
        for ref in opponents:
            if not any(needs_more(t, cfg.elo) for t in trajectories.values()):
                break
            ref_text: str | None = reference_text(ref)
            if cfg.blind_references:
                ref_text, rewrite = await self.rewrite(ref)
                if rewrite is None:
                    return result.model_copy(update={"status": "llm_error", "parse_failures": failures})
                if ref_text is None:  # never judged against the unblinded paper: next opponent
                    failures["rewrite"] += 1
                    continue
            comparison = await self.compare(idea_id, query, ref, ref_text)
            if comparison is None:
                return result.model_copy(update={"status": "llm_error", "parse_failures": failures})
            failures["compare"] += sum(1 for v in comparison.outcomes.values() if v is None)
            result.comparisons.append(comparison)
            used = [c for c in result.comparisons if c.outcome is not None]
            trajectories = {d: elo_score(s0[d], [(c.reference_id, c.s_ref[d], c.outcome[d])  # type: ignore[index]
                                                 for c in used], cfg.elo) for d in COMPARE_KEYS}
        result.trajectories = trajectories
        result.parse_failures = failures
        if result.comparisons and all(c.outcome is None for c in result.comparisons):
            # every comparison failed to parse: the Elo scores would be s0 unchanged, a default
            return result.model_copy(update={"status": "compare_failed"})
        result.novelty = await self.novelty(idea_id, query, formal, s0["novelty"], cutoff, q_emb)
        result.scores = {"rating": trajectories["rating"].final,
                         "contribution": trajectories["contribution"].final,
                         "soundness": trajectories["soundness"].final,
                         "novelty": result.novelty["novelty"]}
        return result

    async def compare(self, idea_id: str, idea_text: str, ref: PairIQRecord,
                      ref_text: str | None = None) -> Comparison | None:
        """Judge the idea against one reference in the configured orders; None on an LLM error.

        ``ref_text``: the reference as shown (default its published text, :func:`reference_text`).
        """
        ref_text = ref_text if ref_text is not None else reference_text(ref)
        orders = self.orders(idea_id, ref.id)

        async def one(order: str) -> dict[str, Any] | None:
            a, b = (idea_text, ref_text) if order == "idea-first" else (ref_text, idea_text)
            positions = [idea_id, ref.id] if order == "idea-first" else [ref.id, idea_id]
            return await self.steps.judge_step(
                "ligbench/compare", idea_id, f"{ref.id}|{order}", self.judge,
                render("ligbench_compare", idea_a=a, idea_b=b), parse_comparison,
                positions=positions, **self._sampling(COMPARE_SCHEMA, "compare"),
                reorder=lambda o: Reask(render("ligbench_compare", idea_a=(a, b)[o[0]], idea_b=(a, b)[o[1]])))

        records = await asyncio.gather(*(one(o) for o in orders))
        if any(r is None for r in records):
            return None
        outcomes: dict[str, dict[str, float] | None] = {}
        for order, rec in zip(orders, records, strict=True):
            parsed = rec["judgment"]["parsed"] if rec and rec["judgment"]["parse_ok"] else None
            if parsed is not None and order == "ref-first":
                parsed = {d: 1.0 - v for d, v in parsed.items()}  # outcome of the idea, shown second
            outcomes[order] = parsed
        ok = [o for o in outcomes.values() if o is not None]
        complete = len(ok) == len(orders)  # one order alone is position-biased: not an outcome
        mean = {d: sum(o[d] for o in ok) / len(ok) for d in COMPARE_KEYS} if complete else None
        disagreement = ({d: ok[0][d] != ok[1][d] for d in COMPARE_KEYS} if len(ok) == 2 else {})
        return Comparison(reference_id=ref.id, title=ref.title,
                          s_ref={d: self.corpus.score(ref.id, d) for d in COMPARE_KEYS},
                          outcomes=outcomes, outcome=mean, disagreement=disagreement)

    async def novelty(self, idea_id: str, query: str, formal: dict[str, str], s_llm: float,
                      cutoff: Any = None, query_embedding: np.ndarray | None = None) -> dict[str, Any]:
        """Hybrid novelty; related papers from Semantic Scholar when configured, else the corpus."""
        cfg = self.settings
        source, note, sims = "corpus", None, None
        if cfg.novelty_source == "semantic-scholar" and self.gate is not None:
            recorded = self.steps.store.get("ligbench/novelty_search", idea_id)
            if recorded is None:
                recorded = await _scholar_similarities(self.corpus, self.gate, query, formal["main_target"],
                                                       cfg, cutoff, query_embedding)
                access = recorded.pop("access", None)
                if recorded.get("similarities"):
                    if access is not None:  # what the search returned, kept and excluded
                        await self.steps.store.aput(CUTOFF_STEP, idea_id, access, SEARCH_SOURCE)
                    await self.steps.store.aput("ligbench/novelty_search", idea_id, recorded)
            sims, note = recorded.get("similarities"), recorded.get("note")
            if sims:
                source = "semantic-scholar"
        if not sims:
            sims = self.corpus.similarities(query, cfg.n_related, query_embedding=query_embedding,
                                            exclude=after_cutoff(self.corpus.records, as_date(cutoff)))
        detail = hybrid_novelty(sims, s_llm, cfg.novelty)
        return {**detail, "source": source, "n_related": len(sims), "note": note}


async def _scholar_similarities(corpus: ReferenceCorpus, gate: ScholarGate, query: str, search: str,
                                cfg: ScoringSettings, cutoff: Any,
                                query_embedding: np.ndarray | None) -> dict[str, Any]:
    """Cosine similarities of the idea to Semantic Scholar search results (title + abstract)."""
    from ideaharness.metrics.embeddings import aembed

    cut = as_date(cutoff)
    ledger = CutoffLedger()  # the cutoff is sent and the results filtered again by the client
    try:
        papers = list(await gate.call("search", search[:300], limit=min(100, cfg.n_related),
                                      published_before=cut, ledger=ledger))
    except ScholarUnavailable as exc:  # the optional online search failed: fall back, say so
        return {"similarities": None,
                "note": f"Semantic Scholar search unavailable ({exc}); novelty uses the local corpus"}
    texts = [f"{p.title}\n{p.abstract or ''}" for p in papers]
    if not texts:
        return {"similarities": None,
                "note": "Semantic Scholar returned no papers; novelty uses the local corpus"}
    vectors = await aembed(texts, corpus.embedding_model, runtime=corpus.runtime)
    q = query_embedding if query_embedding is not None else await corpus.aquery_embedding(query)
    sims = [float(x) for x in vectors @ q]
    rows = CutoffLedger()
    rows.merge({SEARCH_SOURCE: next(iter(ledger.counts.values()), {})})
    rows.excluded_works[SEARCH_SOURCE] = [w for ws in ledger.excluded_works.values() for w in ws]
    return {"similarities": sims, "paper_ids": [p.id for p in papers], "note": None,
            "access": access_record(rows, SEARCH_SOURCE, papers, cutoff=cut)}
