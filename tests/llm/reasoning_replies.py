"""Every registered benchmark's reply parsers, each with the answers it accepts (a hypothesis
strategy) and two accepted answers of different values (held-out-style tests use one as the
reply and the other as a draft inside the reasoning). Used by tests/llm/test_reasoning_parsers.py
and tests/runner/test_reasoning_runs.py; a benchmark registered without an entry here fails there."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from ideaharness.benchmarks._blinding import parse_rewrite
from ideaharness.benchmarks.aiideabench import judges as aiib
from ideaharness.benchmarks.aiideabench.blinding import parse_blind_decomposition
from ideaharness.benchmarks.aiideabench.decompose import parse_decomposition, parse_digest
from ideaharness.benchmarks.hindsight.parsers import parse_idea as hindsight_parse_idea
from ideaharness.benchmarks.hindsight.parsers import parse_match
from ideaharness.benchmarks.hindsight.parsers import parse_review as hindsight_parse_review
from ideaharness.benchmarks.ideabench.blinding import idea_form
from ideaharness.benchmarks.ideabench.parsers import parse_ideas, parse_overlap, parse_target_idea
from ideaharness.benchmarks.ligbench.blinding import REFERENCE_FORM
from ideaharness.benchmarks.ligbench.config import parse_generated_idea
from ideaharness.benchmarks.ligbench.steps import (
    COMPARE_KEYS,
    FORMAL_KEYS,
    INITIAL_KEYS,
    parse_comparison,
    parse_formalization,
    parse_initial_scores,
)
from ideaharness.benchmarks.liveideabench.parsers import parse_critique, parse_fluency
from ideaharness.benchmarks.liveideabench.parsers import parse_idea as live_parse_idea
from ideaharness.benchmarks.mlrbench.parsers import DIMENSIONS as MLR_DIMENSIONS
from ideaharness.benchmarks.mlrbench.parsers import parse_idea as mlr_parse_idea
from ideaharness.benchmarks.mlrbench.parsers import parse_proposal, parse_review
from ideaharness.benchmarks.researchbench.composition import parse_hypothesis
from ideaharness.benchmarks.researchbench.ranking import hypothesis_form
from ideaharness.benchmarks.researchbench.screening import parse_screening_reply
from ideaharness.generation.aiideabench import parse_idea as aiib_parse_idea
from ideaharness.metrics.matched_score import parse_matched_score
from ideaharness.metrics.pairwise_ranking import parse_pairwise_choice
from ideaharness.metrics.ranking import parse_ranking


@dataclass(frozen=True)
class ReplyParser:
    """One reply parser of a benchmark step: ``parse`` as the step calls it (its arguments bound),
    ``function`` the parser as defined (for the coverage check), ``answers`` replies it accepts,
    ``examples`` two accepted replies whose parsed values differ."""

    step: str
    function: Callable[..., Any]
    parse: Callable[[str], Any]
    answers: st.SearchStrategy[str]
    examples: tuple[str, str]


SENTENCES = (
    "Coupling a chaotropic salt with an aligned hydrogel could raise the thermopower of a wearable cell.",
    "A graph model of ligand descriptors may predict which catalysts keep their yield under mild conditions.",
    "Training a small language model on lab notebooks could flag failed syntheses before they are run.",
    "Light-driven polymer actuators might steer soft robots through narrow pipes without a battery.",
    "Replacing the solvent with a deep eutectic mixture could make the coupling step cheaper and greener.",
    "Pairing satellite images with soil probes may reveal which fields lose water fastest during a drought.",
    "Sharing negative results between groups could stop the same dead ends from being explored twice.",
    "Gentle acoustic waves might sort living cells by stiffness without labels or harsh chemical stains.",
)
paragraph = st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=3, unique=True).map(" ".join)
long_paragraph = st.permutations(SENTENCES).map(" ".join)
WRAPS = ("{}", "```json\n{}\n```", "Here is my answer:\n{}", "{}\n")
json_wrap = st.sampled_from(WRAPS)


def _json(obj: Any, wrap: str = "{}") -> str:
    return wrap.format(json.dumps(obj, ensure_ascii=False))


def json_reply(objects: st.SearchStrategy[Any]) -> st.SearchStrategy[str]:
    """``objects`` as JSON text, bare, fenced or after a sentence."""
    return st.builds(_json, objects, json_wrap)


# ----------------------------------------------------------------------------- LiveIdeaBench


def _critique(scores: dict[str, int], style: int) -> str:
    block = json.dumps(scores)
    return ("The idea is clear but its feasibility is uncertain.\n```json\n" + block + "\n```",
            block, f"SCORES = {block}")[style]


def _fluency(grade: str, style: str) -> str:
    return style.format(grade)


V2 = ("originality", "feasibility", "clarity")
live = [
    ReplyParser("idea", live_parse_idea, live_parse_idea, paragraph, (SENTENCES[0], SENTENCES[1])),
    ReplyParser(
        "critique (v2)", parse_critique, lambda t: parse_critique(t, "v2"),
        st.builds(_critique, st.fixed_dictionaries({d: st.integers(1, 10) for d in V2}), st.integers(0, 1)),
        (_critique({"originality": 8, "feasibility": 6, "clarity": 7}, 0),
         _critique({"originality": 3, "feasibility": 2, "clarity": 4}, 1))),
    ReplyParser(
        "critique (v1)", parse_critique, lambda t: parse_critique(t, "v1"),
        st.builds(_critique, st.fixed_dictionaries({d: st.integers(1, 10) for d in V2[:2]}), st.just(2)),
        (_critique({"originality": 9, "feasibility": 5}, 2),
         _critique({"originality": 2, "feasibility": 3}, 2))),
    ReplyParser(
        "fluency", parse_fluency, parse_fluency,
        st.builds(_fluency, st.sampled_from("ABCD"),
                  st.sampled_from(["{}", "({})", "{}.", "**{}. Different ideas**", "Answer: {}",
                                   "The answer is {}", "{}\n\nThe two ideas differ in method."])),
        ("C", "Answer: A")),
]

# ----------------------------------------------------------------------------- IdeaBench

LABELS = ("A", "B", "C", "D")


def _ideas(ideas: list[str], shape: int) -> str:
    if shape == 0:
        return json.dumps({"ideas": [{"title": f"Idea {i + 1}", "idea": t} for i, t in enumerate(ideas)]})
    return json.dumps(ideas)


def _overlap(rating: int, style: int) -> str:
    if style == 0:
        return json.dumps({"rating": rating, "explanation": "Both address the same mechanism."})
    return f"Both address the same mechanism with different materials.\n\nRating: {rating}"


def _ranking(order: list[str], style: int) -> str:
    return (f"Ranking: {' > '.join(order)}", json.dumps({"ranking": order}), ", ".join(order))[style]


TARGET = SENTENCES[0] + " " + SENTENCES[1]
IDEA_FORM = idea_form(list(SENTENCES), TARGET)
two_sentences = st.lists(st.sampled_from(SENTENCES), min_size=2, max_size=2, unique=True).map(" ".join)
ideabench = [
    ReplyParser(
        "generate (3 ideas)", parse_ideas, lambda t: parse_ideas(t, 3),
        st.builds(_ideas, st.lists(paragraph, min_size=3, max_size=3), st.integers(0, 1)),
        (_ideas(list(SENTENCES[:3]), 0), _ideas(list(SENTENCES[3:6]), 1))),
    ReplyParser("overlap", parse_overlap, parse_overlap,
                st.builds(_overlap, st.integers(1, 10), st.integers(0, 1)), (_overlap(8, 0), _overlap(2, 1))),
    ReplyParser("target_idea", parse_target_idea, parse_target_idea,
                two_sentences.map(lambda t: "Hypothesis: " + t),
                ("Hypothesis: " + TARGET, "**Hypothesis:** " + SENTENCES[2] + " " + SENTENCES[3])),
    ReplyParser("rank (4 ideas)", parse_ranking, lambda t: parse_ranking(t, LABELS),
                st.builds(_ranking, st.permutations(LABELS), st.integers(0, 2)),
                (_ranking(["C", "A", "D", "B"], 0), _ranking(["A", "B", "C", "D"], 1))),
    ReplyParser("rewrite", parse_rewrite, lambda t: parse_rewrite(t, IDEA_FORM),
                json_reply(two_sentences.map(lambda t: {"idea": t})),
                (_json({"idea": TARGET}), _json({"idea": SENTENCES[4] + " " + SENTENCES[5]}))),
]

# ----------------------------------------------------------------------------- LigBench


def _generated(problem: str, method: str, design: str) -> str:
    return f"## Problem\n{problem}\n\n## Method\n{method}\n\n## Experiment Design\n{design}\n"


OUTCOMES = st.sampled_from([1, 0.5, 0, "A", "B", "tie", 1.0])
comparison = ReplyParser(
    "compare", parse_comparison, parse_comparison,
    json_reply(st.fixed_dictionaries({k: OUTCOMES for k in COMPARE_KEYS})),
    (_json(dict.fromkeys(COMPARE_KEYS, 1)), _json({"rating": 0, "soundness": 0.5, "contribution": "B"})))
methods = st.lists(st.sampled_from(SENTENCES), min_size=2, max_size=3, unique=True).map(
    lambda items: "\n".join(f"{i}. {t}" for i, t in enumerate(items, 1)))
REWRITE_FIELDS = {"main_target": st.sampled_from(SENTENCES), "core_breakthrough": paragraph,
                  "innovative_methods": methods, "experimental_design": methods}
ligbench = [
    ReplyParser("formalize", parse_formalization, parse_formalization,
                json_reply(st.fixed_dictionaries({k: paragraph for k in FORMAL_KEYS})),
                (_json(dict(zip(FORMAL_KEYS, SENTENCES, strict=False))),
                 _json(dict(zip(FORMAL_KEYS, SENTENCES[4:], strict=False))))),
    ReplyParser("initial_score", parse_initial_scores, parse_initial_scores,
                json_reply(st.fixed_dictionaries(
                    {k: st.sampled_from([0, 1.5, 2, 3.5, 4, 5]) for k in INITIAL_KEYS})),
                (_json(dict.fromkeys(INITIAL_KEYS, 4)), _json(dict.fromkeys(INITIAL_KEYS, 1.5)))),
    comparison,
    ReplyParser("generate", parse_generated_idea, parse_generated_idea,
                st.builds(_generated, paragraph, paragraph, paragraph).filter(lambda t: len(t.split()) >= 26),
                (_generated(*SENTENCES[:3]), _generated(*SENTENCES[3:6]))),
    ReplyParser("rewrite", parse_rewrite, lambda t: parse_rewrite(t, REFERENCE_FORM),
                json_reply(st.fixed_dictionaries(REWRITE_FIELDS)),
                (_json(dict(zip(REWRITE_FIELDS, ["Raise the thermopower of a wearable cell.", SENTENCES[0],
                                                 "1. salt doping\n2. aligned freezing",
                                                 "1. measure the voltage\n2. compare with a plain gel"],
                                strict=True))),
                 _json(dict(zip(REWRITE_FIELDS, ["Predict which catalysts keep their yield.", SENTENCES[1],
                                                 "1. graph model\n2. ligand descriptors",
                                                 "1. screen ligands\n2. compare with a linear baseline"],
                                strict=True))))),
]

# ----------------------------------------------------------------------------- AI Idea Bench


def _plan(steps: list[str]) -> str:
    return "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))


criteria = st.fixed_dictionaries({"final_choice": st.integers(0, 1)},
                                 optional={c: st.integers(0, 1) for c in aiib.CRITERIA})
phrases = st.lists(st.sampled_from(["graph neural networks", "hydrogel", "ligand screening", "MoS2",
                                    "thermoelectric cells", "soil moisture"]),
                   min_size=1, max_size=5, unique=True)
DECOMPOSITION = {"topic": "Wearable thermoelectric cells from aligned hydrogels.",
                 "motivation": SENTENCES[0] + " " + SENTENCES[6],
                 "experiment_plan": _plan(list(SENTENCES[2:4]))}
decomposition = st.fixed_dictionaries({
    "topic": st.sampled_from(SENTENCES), "motivation": two_sentences,
    "experiment_plan": st.lists(st.sampled_from(SENTENCES), min_size=2, max_size=3, unique=True).map(_plan)})
aiideabench = [
    ReplyParser("imcq", aiib.parse_imcq, aiib.parse_imcq,
                json_reply(st.builds(lambda o, e: {"closest_option": o, "explanation": e},
                                     st.sampled_from(["A", "B", "C", "D", "option B", "(C)"]), paragraph)),
                (_json({"closest_option": "B", "explanation": "B shares the method."}),
                 _json({"closest_option": "D", "explanation": "D shares the data."}))),
    ReplyParser("i2i", aiib.parse_i2i, aiib.parse_i2i,
                json_reply(st.builds(lambda r: {"rating": r, "explanation": "Close."}, st.integers(1, 5))),
                (_json({"rating": 4, "explanation": "Close."}),
                 _json({"motivation_similarity": {"rating": 2}}))),
    ReplyParser("i2t", aiib.parse_i2t, aiib.parse_i2t,
                json_reply(st.fixed_dictionaries({"motivation_alignment": st.integers(1, 5),
                                                  "experiment_plan_alignment": st.integers(1, 5),
                                                  "comments": st.just("Aligned.")})),
                (_json({"motivation_alignment": 5, "experiment_plan_alignment": 4, "comments": "ok"}),
                 _json({"motivation_alignment": 1, "experiment_plan_alignment": 2, "comments": "off"}))),
    ReplyParser("compete", aiib.parse_compete, aiib.parse_compete, json_reply(criteria),
                (_json({**dict.fromkeys(aiib.CRITERIA, 0), "final_choice": 0}),
                 _json({**dict.fromkeys(aiib.CRITERIA, 1), "final_choice": 1}))),
    ReplyParser("keywords", aiib.parse_keywords, aiib.parse_keywords,
                json_reply(phrases.map(lambda p: {"keywords": p})),
                (_json({"keywords": ["hydrogel", "thermopower"]}),
                 _json({"keywords": ["ligand screening"]}))),
    ReplyParser("concepts", aiib.parse_concepts, aiib.parse_concepts,
                json_reply(phrases.map(lambda p: {"concepts": p})),
                (_json({"concepts": ["salt doping"]}), _json({"concepts": ["aligned freezing", "MoS2"]}))),
    ReplyParser("decompose (parity)", parse_decomposition, parse_decomposition, json_reply(decomposition),
                (_json(DECOMPOSITION), _json({**DECOMPOSITION, "topic": SENTENCES[5]}))),
    ReplyParser("decompose", parse_blind_decomposition, parse_blind_decomposition, json_reply(decomposition),
                (_json(DECOMPOSITION),
                 _json({**DECOMPOSITION, "motivation": SENTENCES[4] + " " + SENTENCES[5]}))),
    ReplyParser("digest", parse_digest, parse_digest,
                json_reply(st.fixed_dictionaries({"idea": paragraph, "experiment_steps": paragraph})),
                (_json({"idea": SENTENCES[0], "experiment_steps": SENTENCES[1]}),
                 _json({"idea": SENTENCES[2], "experiment_steps": SENTENCES[3]}))),
    ReplyParser("generate", aiib_parse_idea, aiib_parse_idea,
                json_reply(st.fixed_dictionaries({"title": st.just("Salty gels"), "motivation": paragraph,
                                                  "experiment_plan": paragraph})),
                (_json({"motivation": SENTENCES[0], "experiment_plan": SENTENCES[1]}),
                 _json({"Motivation": SENTENCES[2], "Experiment": SENTENCES[3]}))),
]

# ----------------------------------------------------------------------------- MLR-Bench


def _review(scores: dict[str, int], nested: bool) -> str:
    body = {d: {"score": s, "justification": "Reasoned."} if nested else s for d, s in scores.items()}
    return "```json\n" + json.dumps(body) + "\n```"


def _titled(title: str, text: str) -> str:
    return f"Title: {title}\n\n{text}"


def _reviews(stage: str) -> ReplyParser:
    dims = MLR_DIMENSIONS[stage]
    return ReplyParser(
        f"review/{stage}", parse_review, lambda t: parse_review(t, stage),
        st.builds(_review, st.fixed_dictionaries({d: st.integers(1, 10) for d in dims}), st.booleans()),
        (_review(dict.fromkeys(dims, 8), True), _review(dict.fromkeys(dims, 3), False)))


mlrbench = [
    ReplyParser("idea", mlr_parse_idea, mlr_parse_idea,
                st.builds(_titled, st.just("Salty gels"), long_paragraph),
                (_titled("Salty gels", " ".join(SENTENCES)), " ".join(reversed(SENTENCES)))),
    ReplyParser("proposal", parse_proposal, parse_proposal,
                st.builds(lambda a, b: _titled("Salty gels", f"{a}\n\n## Methods\n{b}"), long_paragraph,
                          long_paragraph),
                (_titled("Salty gels", " ".join(SENTENCES * 2)),
                 "# Greener coupling\n\n" + " ".join(SENTENCES[::-1] * 2))),
    _reviews("idea"),
    _reviews("proposal"),
]

# ----------------------------------------------------------------------------- ResearchBench

CANDIDATES = ["Aligned hydrogels for wearable heat harvesting", "Graph models of ligand descriptors",
              "Acoustic sorting of living cells", "Deep eutectic solvents for coupling"]
GOLD = SENTENCES[0] + " " + SENTENCES[1]
# the negatives a gold is ranked against: two sentences each, as long as the replies below (the
# rewrite is asked and checked at the negatives' length, issue 32 item 3)
HYPOTHESIS_FORM = hypothesis_form(
    [f"{a} {b}" for a, b in zip(SENTENCES[2:-1], SENTENCES[3:], strict=True)], GOLD)


def _hypothesis(text: str, reasoning: bool) -> str:
    return f"Hypothesis: {text}" + ("\nReasoning: it combines two known effects." if reasoning else "")


def _matched(score: int) -> str:
    return f"The hypothesis covers the key points.\n\nMatched score: {score}\nReason: both name the salt."


def _selection(choice: int, style: int) -> str:
    return ("**Selection of research hypothesis candidate**: candidate {}", "Selection: candidate {}",
            '{{"selection": {}}}')[style].format(choice)


def _screening(titles: list[str], style: int) -> str:
    if style == 0:
        return "\n".join(f"Title: {t}" for t in titles)
    return json.dumps([{"title": t} for t in titles])


researchbench = [
    ReplyParser("generate", parse_hypothesis, parse_hypothesis,
                st.builds(_hypothesis, paragraph, st.booleans()),
                (_hypothesis(GOLD, True), _hypothesis(SENTENCES[5], False))),
    ReplyParser("matched_score", parse_matched_score, parse_matched_score, st.integers(0, 5).map(_matched),
                (_matched(4), _matched(1))),
    ReplyParser("rank_pair", parse_pairwise_choice, parse_pairwise_choice,
                st.builds(_selection, st.integers(1, 2), st.integers(0, 2)),
                (_selection(2, 0), _selection(1, 1))),
    ReplyParser("screening (keep 2)", parse_screening_reply,
                lambda t: parse_screening_reply(t, CANDIDATES, 2),
                st.builds(_screening,
                          st.lists(st.sampled_from(CANDIDATES), min_size=1, max_size=3, unique=True),
                          st.integers(0, 1)),
                (_screening(CANDIDATES[:2], 0), _screening(CANDIDATES[2:], 1))),
    ReplyParser("rewrite", parse_rewrite, lambda t: parse_rewrite(t, HYPOTHESIS_FORM),
                json_reply(two_sentences.map(lambda t: {"hypothesis": t})),
                (_json({"hypothesis": GOLD}), _json({"hypothesis": SENTENCES[6] + " " + SENTENCES[7]}))),
]

# ----------------------------------------------------------------------------- HindSight

hindsight = [
    ReplyParser("generate", hindsight_parse_idea, hindsight_parse_idea,
                json_reply(st.fixed_dictionaries({"title": st.just("Salty gels"), "idea": long_paragraph,
                                                  "key_phrases": st.just(["ionic gels", "thermocells"])})),
                (_json({"title": "Salty gels", "idea": " ".join(SENTENCES)}),
                 _json({"idea": " ".join(reversed(SENTENCES)), "key_phrases": ["acoustic sorting"]}))),
    ReplyParser("match", parse_match, parse_match,
                json_reply(st.fixed_dictionaries({"reason": st.sampled_from(["Same method.", "Other one."]),
                                                  "match": st.sampled_from(["yes", "no", True, False])})),
                (_json({"reason": "Same question and method.", "match": "yes"}),
                 _json({"reason": "Another question.", "match": "no"}))),
    ReplyParser("review", hindsight_parse_review, hindsight_parse_review,
                json_reply(st.fixed_dictionaries({"reason": st.just("Plausible."),
                                                  "novelty": st.integers(1, 10),
                                                  "quality": st.integers(1, 10)})),
                (_json({"reason": "New.", "novelty": 8, "quality": 4}),
                 _json({"reason": "Known.", "novelty": 2, "quality": 7}))),
]

REPLY_PARSERS: dict[str, list[ReplyParser]] = {
    "aiideabench": aiideabench,
    "hindsight": hindsight,
    "ideabench": ideabench,
    "ligbench": ligbench,
    "ligbench-judge": [comparison],
    "liveideabench": live,
    "mlrbench": mlrbench,
    "researchbench": researchbench,
}
"""Registered benchmark name -> the parsers of the replies its steps ask for."""

NOT_REPLY_PARSERS = {"ideaharness.benchmarks.ideabench.config.parse_indicator": "a config value, no reply"}
"""``parse_*`` functions of a benchmark package that read no model reply."""
