"""LiveIdeaBench against its published code (x66ccff/liveideabench @ 6fc8285; docs/liveideabench.md):
the self-judging family rule, the --parity idea prompt and the --parity fluency pool."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ideaharness
from ideaharness.benchmarks.liveideabench import LiveIdeaBenchConfig, model_family, same_family
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.prompts import DATA_NOTICE, render

# ----------------------------------------------------------------------------- family rule

# Model names of the published config.py (CRITIC_MODELS, and IDEA_MODELS without the critics it
# appends); names only, as data.
CRITICS = [
    "anthropic/claude-3.7-sonnet:thinking", "openai/o3-mini-high", "openai/gpt-4.5-preview", "qwen/qwq-32b",
    "deepseek/deepseek-r1", "google/gemini-2.0-flash-thinking-exp:free",
    "google/gemini-2.0-pro-exp-02-05:free", "qwen/qwen-max", "deepseek/deepseek-chat",
    "anthropic/claude-3.5-sonnet",
]
GENERATORS = [
    "google/gemini-2.0-flash-exp:free", "anthropic/claude-3.7-sonnet", "openai/o1", "openai/o3-mini",
    "openai/o1-mini", "step-2-16k-202411", "openai/gpt-4o-2024-11-20",
    "deepseek/deepseek-r1-distill-llama-70b", "google/gemini-pro-1.5", "x-ai/grok-2-1212",
    "google/gemini-2.0-flash-lite-001", "sammcj/qwen2.5-dracarys2-72b:Q4_K_M",
    "meta-llama/llama-3.1-405b-instruct", "qwen/qwen-2.5-72b-instruct", "openai/gpt-4-turbo",
    "meta-llama/llama-3.3-70b-instruct", "anthropic/claude-3-opus", "mistralai/mistral-large-2411",
    "qwen/qwen-2.5-coder-32b-instruct", "deepseek/deepseek-r1-distill-qwen-32b",
    "meta-llama/llama-3.1-70b-instruct", "amazon/nova-pro-v1", "anthropic/claude-3.5-haiku-20241022",
    "mistralai/mistral-small-24b-instruct-2501", "microsoft/phi-4", "openai/gpt-4o-mini",
    "qwen/qwq-32b-preview", "amazon/nova-lite-v1", "qwen/qwen-2.5-7b-instruct", "mistralai/mistral-small",
    "google/gemma-2-27b-it", *CRITICS,
]

SAME = [
    ("openai/o3-mini", "openai/o3-mini-high"),
    ("google/gemini-2.0-flash-exp:free", "google/gemini-2.0-flash-thinking-exp:free"),
    ("qwen/qwq-32b-preview", "qwen/qwq-32b"),
    ("openai/gpt-4o-2024-08-06", "openai/gpt-4o"),
    ("openai/gpt-4o-2024-11-20", "gpt-4o"),
    ("anthropic/claude-3.7-sonnet", "anthropic/claude-3.7-sonnet:thinking"),
    ("anthropic/claude-3-7-sonnet-20250219", "openrouter/anthropic/claude-3.7-sonnet"),
    ("google/gemini-2.0-pro-exp-02-05:free", "gemini-2.0-pro"),
    ("anthropic/claude-3.5-haiku-20241022", "claude-3.5-haiku"),
    ("openai/o1-preview", "openai/o1"),
]
DIFFERENT = [
    ("openai/o3-mini", "openai/o3"), ("openai/o1", "openai/o1-mini"), ("openai/gpt-4o", "openai/gpt-4o-mini"),
    ("google/gemini-2.0-flash-lite-001", "google/gemini-2.0-flash-exp:free"),
    ("deepseek/deepseek-r1-distill-qwen-32b", "deepseek/deepseek-r1"), ("qwen/qwq-32b", "qwen/qwen-max"),
    ("local/qwen2.5-coder-0.5b", "local/qwen2.5-coder-1.5b"),
    ("mistralai/mistral-small", "mistral-large-2411"),
]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_same_base_model_is_one_family_and_never_judges(a: str, b: str) -> None:
    assert same_family(a, b) and same_family(b, a)
    for generator, judge in ((a, b), (b, a)):
        cfg = LiveIdeaBenchConfig(generator=generator, judges=[judge, "openai/gpt-4.5-preview"])
        assert cfg.eligible_judges() == ["openai/gpt-4.5-preview"]
        from ideaharness.benchmarks.liveideabench.report import result_notes
        notes = result_notes({"counts": {}, "parity": False, "judge_exclusion": cfg.judge_exclusion(),
                              "scores": {"flexibility": {"value": 7.0}}})
        assert notes == [f"judge(s) left out as the generator's own model (family "
                         f"{model_family(generator)!r}): {judge}"]
        record = cfg.judge_exclusion()
        assert record["rule"] == "family" and record["excluded"] == [judge]
        # --parity follows the published exact-name rule
        parity = LiveIdeaBenchConfig(generator=generator, judges=[judge], parity=True)
        assert judge in parity.eligible_judges()


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_other_models_stay_apart(a: str, b: str) -> None:
    assert not same_family(a, b)


def test_published_roster_same_base_pairs() -> None:
    """Over the published roster, exactly the four same-base pairs the exact-name rule let judge each
    other are one family (a broader rule, o1 ~ o1-mini, or a narrower one fails here)."""
    pairs = {(g, c) for g in GENERATORS for c in CRITICS if g != c and same_family(g, c)}
    assert pairs == {
        ("google/gemini-2.0-flash-exp:free", "google/gemini-2.0-flash-thinking-exp:free"),
        ("anthropic/claude-3.7-sonnet", "anthropic/claude-3.7-sonnet:thinking"),
        ("openai/o3-mini", "openai/o3-mini-high"),
        ("qwen/qwq-32b-preview", "qwen/qwq-32b"),
    }
    assert len({model_family(m) for m in set(GENERATORS)}) == len(set(GENERATORS)) - 4


BASES = sorted({model_family(m) for m in GENERATORS})
SUFFIXES = ["-2024-08-06", "-20241022", "-202411", "-2411", "-02-05", "-001", "-high", "-low", "-thinking",
            "-preview", "-exp", "-latest", "-instruct"]


@given(st.sampled_from(BASES), st.sampled_from(BASES), st.lists(st.sampled_from(SUFFIXES), max_size=3),
       st.lists(st.sampled_from(SUFFIXES), max_size=3), st.sampled_from(["", "openai/", "x/y/"]),
       st.sampled_from(["", ":free", ":thinking"]))
def test_family_property(a: str, b: str, sa: list[str], sb: list[str], prefix: str, variant: str) -> None:
    """Release suffixes, providers and variants never change a family, and never merge two."""
    decorated_a = prefix + a + "".join(sa) + variant
    decorated_b = b + "".join(sb)
    assert model_family(decorated_a) == a
    assert model_family(model_family(decorated_a)) == model_family(decorated_a)
    assert same_family(decorated_a, decorated_b) == (a == b)


def idea_text(chars: int, tag: str) -> str:
    """A complete idea of exactly ``chars`` characters."""
    head = f"We propose {tag} sensor networks that improve forecasts of storms using lattice models of "
    assert chars - len(head) - 1 >= 1
    return head + "r" * (chars - len(head) - 1) + "."


def keyword_of(user: str) -> str:
    found = re.search(r"<keyword>\n(.*?)\n</keyword>", user, re.S) or re.search(r'keyword is: "(.*?)"', user)
    assert found, user
    return found.group(1)


# ----------------------------------------------------------------------------- the idea prompt

PUBLISHED_IDEA_PROMPT = (  # utils/prompts.json "idea_prompt" with the keyword filled in
    "I'll be submitting your next responses to a \"Good Scientific Idea\" expert review panel. If they "
    "consider your idea to be a good one, you'll receive a reward. Your assigned keyword is: \"periodic "
    "table\". You may provide background information. The idea MUST be concisely expressed within 100 words "
    "total (including any background information). (Note: good scientific ideas should be original (novel "
    "contribution), feasible (technically implementable), clearly articulated, and address meaningful "
    "problems in the field.).")


def idea_prompt(keyword: str, protocol: str = "v2", *, fallback: bool = False, parity: bool) -> list[Any]:
    return list(render("liveideabench_idea", keyword=keyword, protocol=protocol, fallback=fallback,
                       parity=parity))


def test_parity_idea_prompt_is_the_published_single_user_message() -> None:
    messages = idea_prompt("periodic table", parity=True)
    assert messages == [{"role": "user", "content": PUBLISHED_IDEA_PROMPT}]
    fallback = idea_prompt("periodic table", fallback=True, parity=True)
    assert [m["role"] for m in fallback] == ["user"]
    assert "This is a research study comparing different AI models" in fallback[0]["content"]
    v1 = idea_prompt("x", "v1", parity=True)
    assert [m["role"] for m in v1] == ["user"] and "The idea MUST be within 100 words" in v1[0]["content"]


def test_default_idea_prompt_has_no_persona() -> None:
    messages = idea_prompt("periodic table", parity=False)
    assert messages[0] == {"role": "system", "content": DATA_NOTICE}
    whole = "\n".join(m["content"] for m in messages)
    assert "scientist" not in whole.lower() and "<keyword>\nperiodic table\n</keyword>" in whole


# ----------------------------------------------------------------------------- runs with scripted models

KEYWORDS = ["meteorology", "periodic table", "galaxies", "tsunamis"]
IDEAS = {  # (idea 0, idea 1) per keyword
    "meteorology": (idea_text(100, "meteorology"), idea_text(150, "meteorology")),  # 100 chars: out
    "periodic table": (idea_text(101, "chemistry"), idea_text(150, "chemistry")),  # 101 chars: in
    "galaxies": (idea_text(150, "galaxy"), idea_text(150, "galaxy")),  # identical ideas
    "tsunamis": (idea_text(150, "glacier"), idea_text(151, "tsunami")),  # idea 0 never gets a parsed critique
}


def generator_model() -> ScriptedModel:
    seen: dict[str, int] = {}

    def respond(messages: list[dict[str, str]]) -> str:
        keyword = keyword_of(messages[-1]["content"])
        k = seen.get(keyword, 0)
        seen[keyword] = k + 1
        return IDEAS[keyword][k % 2]
    return ScriptedModel(respond, model="scripted/gen")


def judge_model(name: str) -> ScriptedModel:
    def respond(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if "ONLY ANSWER A/B/C/D" in user:
            return "B"
        if "glacier" in user:
            return "This idea cannot be scored."
        return "Fine.\n```json\n" + json.dumps({"originality": 7, "feasibility": 6, "clarity": 5}) + "\n```"
    return ScriptedModel(respond, model=name)


def run(tmp_path: Path, name: str, **options: Any) -> tuple[dict[str, Any], dict[str, ScriptedModel]]:
    models: dict[str, Any] = {"generator": generator_model(), **{
        f"judge:{j}": judge_model(j) for j in ("scripted/j1", "scripted/j2")}}
    results = ideaharness.run(
        "liveideabench", generator="scripted/gen", judge=["scripted/j1", "scripted/j2"], keyword=KEYWORDS,
        judges_per_idea=2, fluency_judges=1, out=tmp_path / name, progress=False, models=models,
        bootstrap_resamples=20, **options)
    return results, models


def fluency_records(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    path = run_dir / "records" / "fluency.jsonl"
    out: dict[str, list[dict[str, Any]]] = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        rec = json.loads(line)
        out.setdefault(rec["instance_id"], []).append(rec["data"])
    return out


def test_parity_fluency_pool_is_the_published_one(tmp_path: Path) -> None:
    results, models = run(tmp_path, "parity", parity=True)
    judged = fluency_records(tmp_path / "parity")
    # only the keyword whose two ideas are distinct, > 100 characters and critiqued is judged
    assert set(judged) == {"periodic table"}
    assert results["counts"]["fluency_pairs_outside_pool"] == 3
    assert results["per_keyword"]["meteorology"]["fluency"] is None
    assert results["per_keyword"]["galaxies"]["fluency"] is None
    assert results["per_keyword"]["periodic table"]["fluency"] == 7.0  # B (v2)
    # no fluency request was paid for a pair outside the pool: the one pooled pair, plus its
    # --consistency-sample re-ask in the other order (recorded apart, never scored)
    asked = [m for j in ("scripted/j1", "scripted/j2") for m, _ in models[f"judge:{j}"].calls
             if "ONLY ANSWER A/B/C/D" in m[-1]["content"]]
    lines = (tmp_path / "parity" / "records" / "fluency.jsonl").read_text().splitlines()
    reasks = [r for r in map(json.loads, lines) if r["key"].endswith("#reask")]
    assert {r["instance_id"] for r in reasks} <= {"periodic table"}
    assert len(asked) == 1 + len(reasks)
    # the parity idea prompt went out as the published single user message
    prompts = [m for m, _ in models["generator"].calls]
    assert prompts and all([x["role"] for x in m] == ["user"] for m in prompts)
    assert results["judge_exclusion"]["rule"] == "exact name"
    assert any("no 5-second cut" in n for n in results["notes"])


def test_default_fluency_judges_every_pair_identical_ones_included(tmp_path: Path) -> None:
    results, models = run(tmp_path, "default")
    judged = fluency_records(tmp_path / "default")
    assert set(judged) == set(KEYWORDS)
    assert results["per_keyword"]["galaxies"]["fluency"] == 7.0
    assert "fluency_pairs_outside_pool" not in results["counts"]
    prompts = [m for m, _ in models["generator"].calls]
    assert all(m[0] == {"role": "system", "content": DATA_NOTICE} for m in prompts)
    assert results["judge_exclusion"] == {
        "rule": "family", "generator": "scripted/gen", "generator_family": "gen",
        "families": {"scripted/j1": "j1", "scripted/j2": "j2"}, "excluded": []}


def test_parity_pool_rule_on_its_own() -> None:
    """kept_for_scores' boundary (> 100 characters), a parsed critique, distinct ideas, one pair per
    keyword (the published hash.py judges one pair per keyword and model)."""
    from ideaharness.benchmarks.liveideabench.aggregate import parity_fluency_pairs

    a100, a101 = idea_text(100, "a"), idea_text(101, "a")
    b, c, d = (idea_text(150, tag) for tag in "bcd")
    one = [(0, 1)]
    assert parity_fluency_pairs(one, {0: a100, 1: b}, {0: 3, 1: 3}) == [False]
    assert parity_fluency_pairs(one, {0: a101, 1: b}, {0: 3, 1: 3}) == [True]
    assert parity_fluency_pairs(one, {0: a101, 1: b}, {0: 0, 1: 3}) == [False]  # no parsed critique
    assert parity_fluency_pairs(one, {0: b, 1: b}, {0: 3, 1: 3}) == [False]  # identical ideas
    assert parity_fluency_pairs(one, {0: None, 1: b}, {1: 3}) == [False]
    four = [(0, 1), (2, 3)]
    critiqued = dict.fromkeys(range(4), 1)
    assert parity_fluency_pairs(four, {0: b, 1: c, 2: d, 3: a101}, critiqued) == [True, False]
    assert parity_fluency_pairs(four, {0: b, 1: b, 2: c, 3: d}, critiqued) == [False, True]
