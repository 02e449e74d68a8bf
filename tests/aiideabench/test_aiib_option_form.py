"""IMCQ options cannot be told apart by form (issue 18, item 11).

On the bundled TOMATO-Chem data (51 instances, 2 scripted ideas each) a decomposer whose output
takes the form of its input (a longer motivation and more, numbered, bold-labelled steps from the
target's rich background and hypothesis; two sentences and a few labelled steps from a distractor's
short abstract: what a real model does) is run through the product. Every format-only judge (one
that never reads the idea nor the options' meaning: the longest option, the shortest, most or
fewest lines, the first numbered/step-marked option, most punctuation, most digits, most capitals,
most markdown, the option that ends like a sentence, a seeded random pick) must score S_M within
the binomial 95% interval of 0.25 for the n scored, on the motivation and on the plan question.
Before the options were put in one form the most-lines judge scored IMCQ motivation 0.824, the
longest 0.676, the shortest plan 0.676 (issue 18); on these decompositions as decomposed, 1.0 /
1.0 / and the most-markdown plan 1.0.

Word counts and word length too (issue 32, item 5): cut to equal characters only, a target's
longer words left it fewer of them, and on this data the fewest-words judge scored motivation
0.388 and plan 0.604, the longest-mean-word judge 0.388 / 0.583 (on a real model's decompositions
0.529 over 51 questions, p < 0.001, and 0.49 / 0.47). The options now have the same words per line
and (nearly) the same characters (:func:`~ideaharness.benchmarks.aiideabench.option_form.
equal_windows`): the most/fewest-words and longest/shortest-mean-word judges are asserted within
the same binomial interval of 0.25 as every other form-only judge.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from scipy.stats import binom

from ideaharness import arun
from ideaharness.benchmarks._blinding import check_blind_text
from ideaharness.benchmarks.aiideabench import AIIdeaBenchConfig
from ideaharness.benchmarks.aiideabench.option_form import (
    equal_windows,
    paragraph,
    plan_steps,
    uniform_options,
    window_slack,
)
from ideaharness.errors import ParseError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.choice import imcq_hit
from ideaharness.runner.options import ExecutionOptions
from tests.aiideabench.test_aiib_pipeline import options_of, toy_embed

SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
Options = dict[str, str]


def _block(user: str, tag: str) -> str:
    return user.split(f"<{tag}>\n", 1)[1].split(f"\n</{tag}>", 1)[0] if f"<{tag}>" in user else ""


def _usable_sentences(text: str) -> list[str]:
    """The sentences a rule-following decomposer may keep: no result, self-reference or summary lead."""
    out = []
    for s in SENTENCE.split(" ".join(text.split())):
        try:
            out.append(check_blind_text(s, min_words=5, max_words=45))
        except ParseError:
            continue
    return out


def rich_decomposition(user: str) -> str:
    """A decomposition whose form follows its input, as a real model's does (see the module docstring)."""
    target = "<research_question>" in user  # the ground truth's prompt; a distractor's has an abstract
    source = " ".join(_block(user, t) for t in ("main_hypothesis_or_finding", "background", "abstract"))
    sentences = _usable_sentences(source) or ["Earlier designs of such systems leave a clear gap open."]
    motivation: list[str] = []
    for s in sentences:
        if motivation and (not target and len(motivation) == 2 or target and sum(
                len(m.split()) for m in motivation) >= 90):
            break
        motivation.append(s)
    rest = sentences[len(motivation):][: 7 if target else 3] or sentences[:2]
    steps = [*rest, "Test the resulting design against the established baselines."][: max(2, len(rest))]
    if len(steps) < 2:
        steps.append("Compare the outcome with the established baselines in the same setting.")
    lines = []
    for k, s in enumerate(steps, 1):
        name = " ".join(re.findall(r"[A-Za-z]+", s)[:2]).title()
        lines.append(f"{k}. **{name}**: {s}" if target else f"{name}: {s}")
    return json.dumps({"topic": "The topic of this paper is an open question in materials chemistry here.",
                       "motivation": " ".join(motivation)[:1000] if target else "\n".join(motivation),
                       "experiment_plan": "\n".join(lines)})


def _lines(text: str) -> int:
    return len([x for x in text.splitlines() if x.strip()])


def _mean_word(text: str) -> float:
    """Mean length in characters of the words (letters and digits) of ``text``."""
    words = re.findall(r"[A-Za-z0-9]+", text)
    return sum(map(len, words)) / max(1, len(words))


def _pick(options: Options, key: Callable[[str], float]) -> str:
    """The letter with the highest key; ties go to the earliest letter (positions are shuffled)."""
    return max(sorted(options), key=lambda k: (key(options[k]), -ord(k)))


FORMAT_JUDGES: dict[str, Callable[[Options], str]] = {
    "longest": lambda o: _pick(o, len),
    "shortest": lambda o: _pick(o, lambda t: -len(t)),
    "most lines": lambda o: _pick(o, _lines),
    "fewest lines": lambda o: _pick(o, lambda t: -_lines(t)),
    "first step-marked": lambda o: _pick(o, lambda t: float(bool(re.search(
        r"^\s*(?:\d+[.)]|[-*•]|step\s*\d+)", t, re.M | re.I)))),
    "most punctuation": lambda o: _pick(o, lambda t: len(re.findall(r"[,;:()\[\]\-–—/]", t))),
    "most digits": lambda o: _pick(o, lambda t: sum(c.isdigit() for c in t)),
    "most capitals": lambda o: _pick(o, lambda t: sum(c.isupper() for c in t)),
    "most markdown": lambda o: _pick(o, lambda t: len(re.findall(r"\*\*|__|`|^#", t, re.M))),
    "ends like a sentence": lambda o: _pick(o, lambda t: float(t.rstrip()[-1:] in ".!?")),
    "most words": lambda o: _pick(o, lambda t: len(t.split())),
    "fewest words": lambda o: _pick(o, lambda t: -len(t.split())),
    "longest mean word": lambda o: _pick(o, _mean_word),
    "shortest mean word": lambda o: _pick(o, lambda t: -_mean_word(t)),
    "random": lambda o: "ABCD"[int(hashlib.sha256("".join(o.values()).encode()).hexdigest(), 16) % 4],
}


def _responder(judge: Callable[[Options], str]) -> Callable[[list[dict[str, str]]], str]:
    def reply(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if "Break the research below" in user:
            return rich_decomposition(user)
        if "closest in content" in user:
            return json.dumps({"closest_option": judge(options_of(user)), "explanation": "form"})
        raise AssertionError(f"unexpected prompt: {user[:100]}")
    return reply


async def _run(tmp_path: Path, name: str, judge: Callable[[Options], str], **cfg: object) -> dict:  # type: ignore[type-arg]
    ideas = tmp_path / "ideas.jsonl"
    if not ideas.exists():
        from ideaharness.data.tomato import load_tomato_chem

        ideas.write_text("".join(json.dumps({
            "instance_id": inst.id,
            "motivation": f"Idea {j} motivation: current devices are brittle under everyday strain.",
            "experiment_plan": f"Step 1: build variant {j}.\nStep 2: test it."}) + "\n"
            for inst in load_tomato_chem() for j in range(2)), encoding="utf-8")
    config = AIIdeaBenchConfig(judge="scripted/judge", ideas=str(ideas), metrics=["imcq"],
                               bootstrap_resamples=20, **cfg)  # type: ignore[arg-type]
    opts = ExecutionOptions(out=tmp_path / name, progress=False)
    return await arun("aiideabench", config=config, options=opts, judge=ScriptedModel(_responder(judge)),
                      embed_fn=toy_embed)


def _questions(run: Path) -> dict[str, list[dict]]:  # type: ignore[type-arg]
    out: dict[str, list[dict]] = {"motivation": [], "experiment_plan": []}  # type: ignore[type-arg]
    for line in (run / "records/imcq_question.jsonl").open(encoding="utf-8"):
        rec = json.loads(line)
        if "question" in rec["data"]:
            out[rec["key"]].append(rec["data"]["question"])
    return out


def _chance_interval(n: int) -> tuple[float, float]:
    lo, hi = binom.interval(0.95, n, 0.25)
    return lo / n, hi / n


def _score(questions: list[dict], judge: Callable[[Options], str]) -> float:  # type: ignore[type-arg]
    """S_M of a judge that ignores the idea: both ideas of an instance get the same pick."""
    hits = [imcq_hit([judge(dict(zip("ABCD", q["options"], strict=True)))] * 2, q["answer"])
            for q in questions]
    return sum(h or 0 for h in hits) / len(hits)


async def test_every_format_only_judge_scores_at_chance_on_both_questions(tmp_path: Path) -> None:
    res = await _run(tmp_path, "form", FORMAT_JUDGES["most lines"])
    questions = _questions(tmp_path / "form")
    assert len(FORMAT_JUDGES) >= 15
    failures = []
    for comp, qs in questions.items():
        assert len(qs) >= 45, comp  # nearly every instance has its question (none is left out by form)
        lo, hi = _chance_interval(len(qs))
        for name, judge in FORMAT_JUDGES.items():
            value = _score(qs, judge)
            if not lo <= value <= hi:
                failures.append(f"{comp}: {name} scores {value:.3f} (n={len(qs)}, chance interval "
                                f"[{lo:.3f}, {hi:.3f}])")
        # every option of a question has the same lines, each with the same words as the others and
        # about as many characters (what differs is the words' own length, in a seeded order)
        for q in qs:
            lines = [o.splitlines() for o in q["options"]]
            assert len({len(x) for x in lines}) == 1, q["options"]
            for row in zip(*lines, strict=True):
                assert len({len(line.split()) for line in row}) == 1, row
                assert max(map(len, row)) - min(map(len, row)) <= max(30, 0.35 * max(map(len, row))), row
    assert not failures, "\n".join(failures)
    # the product's own S_M for the judge it ran with is the one computed here
    assert res["imcq"]["motivation"]["mean"] == pytest.approx(_score(questions["motivation"],
                                                                     FORMAT_JUDGES["most lines"]))
    assert res["imcq"]["motivation"]["n"] == len(questions["motivation"])


async def test_the_decomposed_options_do_separate_by_form_before_they_are_normalised(tmp_path: Path) -> None:
    """The cue is real: the same decompositions as decomposed (the records' ``as_decomposed``)
    let the most-lines and longest judges far above chance (so the test above can fail)."""
    await _run(tmp_path, "raw", FORMAT_JUDGES["longest"])
    raw: dict[str, list[dict]] = {"motivation": [], "experiment_plan": []}  # type: ignore[type-arg]
    for line in (tmp_path / "raw/records/imcq_question.jsonl").open(encoding="utf-8"):
        rec = json.loads(line)
        if "question" not in rec["data"]:
            continue
        q, dec = rec["data"]["question"], rec["data"]["as_decomposed"]
        texts = iter(dec["distractors"])
        options = [dec["ground_truth"] if s == "ground_truth" else next(texts) for s in q["sources"]]
        raw[rec["key"]].append({**q, "options": options})
    hi = _chance_interval(len(raw["motivation"]))[1]
    assert _score(raw["motivation"], FORMAT_JUDGES["longest"]) > hi
    assert _score(raw["experiment_plan"], FORMAT_JUDGES["most lines"]) > hi


def test_uniform_options_remove_markers_labels_markdown_and_length() -> None:
    truth = ("1. **Gel Synthesis**: Prepare the hydrogel with the sulfate salt,\n"
             "2. **Freezing**: Freeze the gel directionally to align its channels;\n"
             "3. **Tests**: measure the output power over many cycles of use")
    distractor = ("Design: make a thin film of the polymer quickly\n"
                  "- compare its strength with the known films")
    a, b = uniform_options("experiment_plan", [truth, distractor])
    # step 1: 8 and 8 words -> runs of 6 (8 less the slack of 2); step 2: 8 and 7 -> 5; each run
    # as long as the other's in characters as the words allow, in a seeded order of length
    assert a == ("Step 1: Prepare the hydrogel with the.\n"
                 "Step 2: Freeze the gel directionally to.")
    assert b == ("Step 1: Film of the polymer quickly.\n"
                 "Step 2: Compare its strength with the.")
    for line_a, line_b in zip(a.splitlines(), b.splitlines(), strict=True):
        assert len(line_a.split()) == len(line_b.split())
    assert plan_steps("Step 1: one two three\n\n* Step 2 - four five six") == [
        "one two three", "four five six"]
    assert paragraph("- First line of it\nsecond **line**") == "First line of it second line"
    m1, m2 = uniform_options("motivation", ["Short but complete motivation here.", "A much longer "
                                            "motivation, with a second clause; and more words after it."])
    # 3 words each: 5 less a slack of 2
    assert m1 == "But complete motivation." and m2 == "Longer motivation, with."
    assert uniform_options("motivation", ["one two three four five", "six seven eight nine ten"], seed=3) == \
        uniform_options("motivation", ["one two three four five", "six seven eight nine ten"], seed=3)
    assert paragraph("Prior work on Thermoelectric Devices used Li, CO and MXene") == (
        "Prior work on thermoelectric devices used Li, CO and MXene")
    for bad in (("motivation", ["only one"]), ("abstract", ["a", "b"]), ("experiment_plan", ["x", "  "])):
        with pytest.raises(ValueError):
            uniform_options(bad[0], bad[1])


def test_equal_windows_give_equal_words_and_a_seeded_order_of_length() -> None:
    """Four options whose words differ in length: every run has the same words, and which option
    is longest is a seeded draw (each of the four over seeds), not the option with the longest
    words; the order is drawn among those the runs can follow (one option's words all shorter than
    another's: it is the shorter for every seed, no fallback that would make it the longer)."""
    # option k's first word is k characters longer; their runs' lengths overlap
    texts = [" ".join("w" + "x" * ((j * 7 + k * 3) % 9 + (k if j == 0 else 0)) for j in range(14))
             for k in range(4)]
    words = [t.split() for t in texts]
    longest = set()
    for seed in range(40):
        runs = equal_windows(words, seed=seed)
        assert {len(r) for r in runs} == {14 - window_slack(14)}
        lengths = [len(" ".join(r)) for r in runs]
        longest.add(max(range(4), key=lambda o: (lengths[o], -o)))
    assert longest == {0, 1, 2, 3}
    apart = [["a", "b", "c", "d"], ["longwordone", "longwordtwo", "longwordthree", "longwordfour"]]
    for seed in range(10):  # the long one cannot be the shorter: the order is drawn among those
        short, long_ = equal_windows(apart, seed=seed)  # the runs can follow, so never asked to be
        assert len(short) == len(long_) == 3
        assert len(" ".join(short)) < len(" ".join(long_))
    with pytest.raises(ValueError):
        equal_windows([["a"], []])
