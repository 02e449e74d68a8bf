"""The judge steps of AI Idea Bench 2025: prompts, JSON schemas and typed parsers.

Qiu et al. 2025 (arXiv 2504.14191); prompts paraphrased from the published
``prompt_template/compare_gt.py`` / ``compare_open.py``. Scales as in the published code: I2I and
I2T ratings 1-5 (the paper writes [0, 5]; the scale is recorded with every result), competition
choices 0/1 per criterion plus a final choice.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from ideaharness.errors import ParseError
from ideaharness.llm.parsing import extract_json_object
from ideaharness.llm.types import Message
from ideaharness.metrics.choice import LETTERS
from ideaharness.prompts import render

Component = Literal["motivation", "experiment_plan"]
COMPONENTS: tuple[Component, ...] = ("motivation", "experiment_plan")
RATING_SCALE = (1, 5)
CRITERIA = ("novelty", "significance", "quality", "feasibility", "clarity", "relevance")


def _int_in(value: Any, low: int, high: int, what: str) -> int:
    if isinstance(value, dict):
        keys = ("rating", "alignment", "score")
        value = next((v for k, v in value.items() if str(k).lower() in keys), None)
    try:
        number = float(str(value).strip())
    except (TypeError, ValueError) as exc:
        raise ParseError(f"{what}: {value!r} is not a number") from exc
    if number != int(number) or not low <= number <= high:
        raise ParseError(f"{what}: {value!r} is not an integer in [{low}, {high}]")
    return int(number)


# ----------------------------------------------------------------------------- IMCQ
IMCQ_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"closest_option": {"type": "string", "enum": list(LETTERS)},
                   "explanation": {"type": "string"}},
    "required": ["closest_option", "explanation"],
}


def imcq_messages(component: Component, idea_part: str, options: list[str]) -> list[Message]:
    """Prompt ``aiideabench_imcq``: which of options A-D is closest to the idea's component."""
    return render("aiideabench_imcq", component=component.replace("_", " "), idea=idea_part,
                  options=list(zip(LETTERS, options, strict=True)))


def parse_imcq(text: str) -> str:
    """The chosen letter (A-D) from ``{"closest_option": "B"}`` (also ``closest_plan``, "option B")."""
    obj = extract_json_object(text)
    lowered = {str(k).lower(): v for k, v in obj.items()}
    value = next((lowered[k] for k in ("closest_option", "closest_plan", "option", "answer") if k in lowered),
                 None)
    if value is None:
        raise ParseError("JSON object lacks 'closest_option'")
    letter = str(value).strip().upper().removeprefix("OPTION").strip(" .:()")
    if letter not in LETTERS:
        raise ParseError(f"closest_option {value!r} is not one of A-D")
    return letter


# ----------------------------------------------------------------------------- I2I
I2I_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"rating": {"type": "integer", "minimum": 1, "maximum": 5},
                   "explanation": {"type": "string"}},
    "required": ["rating", "explanation"],
}


def i2i_messages(component: Component, idea_part: str, ground_truth: str) -> list[Message]:
    """Prompt ``aiideabench_i2i``: similarity 1-5 of a generated component to the ground truth."""
    return render("aiideabench_i2i", component=component.replace("_", " "), idea=idea_part,
                  ground_truth=ground_truth)


def parse_i2i(text: str) -> int:
    """Rating 1-5 from ``{"rating": 4}`` (published nesting ``{"motivation_similarity": {"rating"}}`` too)."""
    obj = extract_json_object(text)
    lowered = {str(k).lower(): v for k, v in obj.items()}
    if "rating" in lowered:
        return _int_in(lowered["rating"], *RATING_SCALE, what="rating")
    nested = next((v for v in lowered.values() if isinstance(v, dict)), None)
    if nested is None:
        raise ParseError("JSON object lacks 'rating'")
    return _int_in(nested, *RATING_SCALE, what="rating")


# ----------------------------------------------------------------------------- I2T
I2T_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "motivation_alignment": {"type": "integer", "minimum": 1, "maximum": 5},
        "experiment_plan_alignment": {"type": "integer", "minimum": 1, "maximum": 5},
        "comments": {"type": "string"},
    },
    "required": ["motivation_alignment", "experiment_plan_alignment", "comments"],
}


def i2t_messages(topic: str, motivation: str, experiment_plan: str) -> list[Message]:
    """Prompt ``aiideabench_i2t``: alignment 1-5 of motivation and plan with the topic."""
    return render("aiideabench_i2t", topic=topic, motivation=motivation, experiment_plan=experiment_plan)


def parse_i2t(text: str) -> dict[str, int]:
    """``{"motivation": 1-5, "experiment_plan": 1-5}`` from the flat or the published nested form."""
    obj = extract_json_object(text)
    lowered = {str(k).lower(): v for k, v in obj.items()}
    out: dict[str, int] = {}
    for comp in COMPONENTS:
        value = lowered.get(f"{comp}_alignment", lowered.get(comp))
        if value is None:
            raise ParseError(f"JSON object lacks '{comp}_alignment'")
        out[comp] = _int_in(value, *RATING_SCALE, what=f"{comp} alignment")
    return out


# ----------------------------------------------------------------------------- competition
COMPETE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{c: {"type": "integer", "enum": [0, 1]} for c in CRITERIA},
        "final_choice": {"type": "integer", "enum": [0, 1]},
    },
    "required": [*CRITERIA, "final_choice"],
}


def compete_messages(topic: str, idea0: str, idea1: str) -> list[Message]:
    """Prompt ``aiideabench_compete``: six criteria and a final choice between idea 0 and idea 1."""
    return render("aiideabench_compete", topic=topic, idea0=idea0, idea1=idea1, criteria=list(CRITERIA))


def parse_compete(text: str) -> dict[str, int]:
    """Criteria choices and ``final_choice`` (0 or 1); criteria may be ``{"choice": 0}`` objects.

    Only ``final_choice`` is required (the published code uses only it); missing criteria are absent.
    """
    obj = extract_json_object(text)
    lowered = {str(k).lower(): v for k, v in obj.items()}
    if "final_choice" not in lowered:
        raise ParseError("JSON object lacks 'final_choice'")
    out = {"final_choice": _choice(lowered["final_choice"])}
    for crit in CRITERIA:
        if crit in lowered:
            try:
                out[crit] = _choice(lowered[crit])
            except ParseError:
                pass
    return out


def _choice(value: Any) -> int:
    if isinstance(value, dict):
        value = next((v for k, v in value.items() if "choice" in str(k).lower()), None)
    return _int_in(value, 0, 1, "choice")


# ----------------------------------------------------------------------------- literature steps
KEYWORDS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"keywords": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 5}},
    "required": ["keywords"],
}
CONCEPTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"concepts": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 8}},
    "required": ["concepts"],
}


def keywords_messages(topic: str) -> list[Message]:
    """Prompt ``aiideabench_keywords``: search keywords of a topic (for novelty's literature search)."""
    return render("aiideabench_keywords", topic=topic)


def concepts_messages(motivation: str, experiment_plan: str) -> list[Message]:
    """Prompt ``aiideabench_concepts``: atomic method concepts of an idea (for feasibility)."""
    return render("aiideabench_concepts", motivation=motivation, experiment_plan=experiment_plan)


def _string_list(text: str, key: str) -> list[str]:
    obj = extract_json_object(text, required=(key,))
    value = obj[key]
    if not isinstance(value, list):
        raise ParseError(f"'{key}' is not a list")
    items = [str(v).strip() for v in value if isinstance(v, str) and _is_phrase(v)]
    if not items:
        raise ParseError(f"'{key}' holds no phrase (empty, or only punctuation or invisible characters)")
    return list(dict.fromkeys(items))


def _is_phrase(text: str) -> bool:
    """A search phrase holds at least one letter ("MoS2", "2D materials"; not "...", "\u200b")."""
    return re.search(r"[^\W\d_]", text) is not None


def parse_keywords(text: str) -> list[str]:
    """Non-empty list of keyword strings from ``{"keywords": [...]}``."""
    return _string_list(text, "keywords")


def parse_concepts(text: str) -> list[str]:
    """Non-empty list of method concepts from ``{"concepts": [...]}``."""
    return _string_list(text, "concepts")
