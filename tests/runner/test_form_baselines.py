"""Form-only baselines across the registry (issue 32, Build (b) and the first "Done when").

1. Every judged step of every registered benchmark is declared: it has a gold answer
   (``Benchmark.gold_steps``: the metrics that score it) or not (``no_gold_steps``, with the reason);
   a benchmark with gold steps overrides ``form_baselines``.
2. Every benchmark with gold steps is run small (scripted models, as its own tests do) with a
   *form-only* judge: a responder that reads the shown items out of the prompt (its ``<tag>`` data
   blocks) and answers by form alone: the shortest, the longest, the fewest words, the first
   shown, the last shown (implemented here, independently of
   :mod:`ideaharness.metrics.form_baseline`). Its headline equals the baseline of its own rule in
   ``results["form_baselines"]`` (the replay scores what the judge did), every gold metric has an
   entry, the verdict of each such headline is *not evidence* with the reason "not blind", and the
   console says so (:func:`~ideaharness.runner.run.finish_run`).
3. The same benchmarks with a *content* judge (one that knows the gold by its content or from the
   run's records, never by its form), on fixtures of at least :data:`~ideaharness.metrics.evidence.WEAK_N`
   units where form says nothing about the gold: IdeaBench (12 instances whose ideas leave the
   target in the middle by every form feature), ligbench-judge (20 twin pairs, the better paper the
   longer one in half of them) and ResearchBench's ranking (12 papers of item 3's shape, the gold
   rewritten) and AI Idea Bench (12 papers; the ground truth's letter balanced over the questions
   asked, so a judge that always finds it is not position-biased) are *evidence*. A case in neither
   list gets exactly the verdict its n and form imply.
4. Every benchmark without gold steps runs its one-number recipe and carries no baseline and no
   verdict reason about one.

A registered benchmark without a case fails, and so does an empty registry.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ideaharness
from ideaharness.errors import PartialRunError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.aggregate import MIN_INTERVAL_N
from ideaharness.metrics.evidence import WEAK_N
from ideaharness.runner.protocol import Benchmark
from ideaharness.runner.registry import benchmarks, metrics
from ideaharness.runner.run import finish_run
from tests.ideabench.conftest import ideabench_responder

Messages = list[dict[str, str]]
Responder = Callable[[Messages], str]
Wrap = Callable[[Responder], Responder]

TESTS = Path(__file__).parents[1]
PAIRIQ = TESTS / "ligbench" / "fixtures" / "pairiq_mini.jsonl"
RULES = ("shortest", "longest", "fewest_words", "first", "last")
"""The form-only judges of the issue's "Done when"."""

_KEYS: dict[str, Callable[[str, int], tuple[float, int]]] = {
    "shortest": lambda t, i: (len(t), i),
    "longest": lambda t, i: (-len(t), i),
    "fewest_words": lambda t, i: (len(t.split()), i),
    "first": lambda t, i: (i, i),
    "last": lambda t, i: (-i, i),
}
_BLOCK = re.compile(r"<([a-z][a-z0-9_]*)>\n(.*?)\n</\1>", re.S)


def _order(rule: str, texts: list[str]) -> list[int]:
    return sorted(range(len(texts)), key=lambda i: _KEYS[rule](texts[i], i))


def _blocks(user: str, name: Callable[[str], bool]) -> list[str]:
    return [m.group(2) for m in _BLOCK.finditer(user) if name(m.group(1))]


def form_reply(rule: str, messages: Messages) -> str | None:
    """The reply of a judge that answers by ``rule`` alone to a prompt with a gold answer (a
    ranking, a choice among options, a pair, a screening window); None for any other prompt."""
    user = messages[-1]["content"]
    options = _blocks(user, lambda n: n.startswith("option_"))
    if options:
        return json.dumps({"closest_option": "ABCD"[_order(rule, options)[0]], "explanation": "form"})
    pair = _blocks(user, lambda n: n in ("candidate_1", "candidate_2"))
    if len(pair) == 2:
        chosen = _order(rule, pair)[0] + 1
        return f"**Analysis**: form\n**Selection of research hypothesis candidate**: candidate {chosen}"
    sides = _blocks(user, lambda n: n in ("idea_a", "idea_b"))
    if len(sides) == 2:
        v = 1.0 if _order(rule, sides)[0] == 0 else 0.0
        return json.dumps({"rating": v, "soundness": v, "contribution": v})
    ideas = _blocks(user, lambda n: n == "idea")
    if "Rank the following" in user and len(ideas) >= 2:
        labels = [chr(ord("A") + i) for i in range(len(ideas))]
        return json.dumps({"ranking": [labels[i] for i in _order(rule, ideas)], "rationale": "form"})
    titles = _blocks(user, lambda n: n == "title")
    found = re.search(r"Select the (\d+) candidates", user)
    if found and len(titles) >= 2:
        abstracts = _blocks(user, lambda n: n == "abstract")
        texts = [f"{t}\n{a}" for t, a in zip(titles, abstracts, strict=True)]
        picks = _order(rule, texts)[: int(found.group(1))]
        return "\n\n".join(f"Title: {titles[i]}\nReason: form." for i in picks)
    return None


def form_judge(rule: str) -> Wrap:
    """``base`` answering every gold prompt by ``rule`` (and everything else as ``base`` does)."""
    def wrap(base: Responder) -> Responder:
        return lambda messages: form_reply(rule, messages) or base(messages)
    return wrap


# --------------------------------------------------------------------------- IdeaBench

WORDS = (("electrochemical", 10), ("salt", 26), ("hydrogels", 42))
"""Generated idea k: "we would test whether" (as the scripted rewrite opens) and one word repeated
to its count, so the rewritten target (the ideas' median 30 words, taken from the target's abstract:
mean word length about 7) lies strictly between the ideas in characters and mean word length, ties
the middle one in words and opens as they do."""
OPENING = "we would test whether"


def _ideabench_generator(base: Responder) -> Responder:
    def respond(messages: Messages) -> str:
        user = messages[-1]["content"]
        if "propose" in user and '"ideas"' in user:
            n = int(re.search(r"holding exactly (\d+) ideas", user).group(1))  # type: ignore[union-attr]
            ideas = [f"{OPENING} " + " ".join([WORDS[k % 3][0]] * WORDS[k % 3][1]) for k in range(n)]
            return json.dumps({"ideas": [{"title": f"T{k}", "idea": t} for k, t in enumerate(ideas)]})
        return base(messages)
    return respond


def _ideabench_content(base: Responder, out: Path) -> Responder:
    """Ranks the generated ideas by what they are about (electrochemistry, salt, hydrogels), then
    the target (about none of them): it tells the target by content, its ranking does not follow the
    shown positions, and it rates overlap by the texts it reads (not one constant)."""
    topics = [word for word, _ in WORDS]

    def respond(messages: Messages) -> str:
        user = messages[-1]["content"]
        if "Rate how much" in user:
            return f"On a scale of 1-10, I'd give this a {1 + len(user) % 10}."
        if "Rank the following" not in user:
            return base(messages)
        ideas = _blocks(user, lambda n: n == "idea")
        labels = [chr(ord("A") + i) for i in range(len(ideas))]
        about = {lab: next((k for k, w in enumerate(topics) if w in t.split()), len(topics))
                 for lab, t in zip(labels, ideas, strict=True)}
        return json.dumps({"ranking": sorted(labels, key=lambda lab: about[lab]), "rationale": "content"})
    return respond


def _ideabench(out: Path, judge: Wrap, big: bool) -> None:
    base = ideabench_responder()
    ideaharness.run("ideabench", generator=ScriptedModel(_ideabench_generator(base), model="scripted/gen"),
                    judge=ScriptedModel(judge(base), model="scripted/judge"), limit=12 if big else 4,
                    scenarios=["low"], out=out, progress=False, bootstrap_resamples=200)


# --------------------------------------------------------------------------- AI Idea Bench

def aiib_variants(path: Path, copies: int) -> None:
    """The fixture's 3 target papers, ``copies`` times, each copy with its own titles (so its own
    inspirations and distractors)."""
    from tests.aiideabench.test_aiib_pipeline import DATA

    rows = json.loads(Path(DATA).read_text())
    out = []
    for v in range(copies):
        for row in json.loads(json.dumps(rows)):
            row["index"] = len(out)
            row["target_paper"] += f" (variant {v})"
            for ref in row["find_cite"]["top_references"]:
                ref["title"] += f" variant {v}"
                ref["abstract"] = ref["title"] + ". " + ref["abstract"].split(". ", 1)[1]
                ref["paper_local_path"] = ref["paper_local_path"].replace(".pdf", f"_{v}.pdf")
            out.append(row)
    path.write_text(json.dumps(out))


def _aiideabench(out: Path, judge: Wrap, big: bool) -> None:
    """The pipeline fixture (3 papers); ``big``: :func:`aiib_variants`, 12 papers."""
    import asyncio

    from ideaharness.api import arun
    from ideaharness.benchmarks.aiideabench import AIIdeaBenchConfig
    from ideaharness.runner.options import ExecutionOptions
    from tests.aiideabench.test_aiib_pipeline import DATA, responder, toy_embed

    data = Path(DATA)
    if big:
        data = out.parent / f"{out.name}-data.json"
        aiib_variants(data, 4)
    cfg = AIIdeaBenchConfig(data=str(data), generator="scripted/gen", judge="scripted/judge", n_ideas=2,
                            metrics=["imcq", "i2i", "i2t"], bootstrap_resamples=50)
    options = ExecutionOptions(out=out, progress=False, max_attempts=2)
    asyncio.run(arun("aiideabench", config=cfg, options=options,
                     generator=ScriptedModel(responder(), model="scripted/gen"),
                     judge=ScriptedModel(judge(responder()), model="scripted/judge"), embed_fn=toy_embed))


def _aiideabench_content(base: Responder, out: Path) -> Responder:
    """Answers each IMCQ question with its ground truth: it knows the question (read from the run's
    ``imcq_question`` records, matched by the options shown, in any order: a consistency re-ask
    shows them reordered); rates I2I and I2T by the text it reads (not one constant)."""
    def respond(messages: Messages) -> str:
        user = messages[-1]["content"]
        options = _blocks(user, lambda n: n.startswith("option_"))
        if "Rate how similar" in user:
            return json.dumps({"rating": 1 + len(user) % 5, "explanation": "content"})
        if "how well the motivation" in user:
            return json.dumps({"motivation_alignment": 1 + len(user) % 5,
                               "experiment_plan_alignment": 1 + len(user) // 7 % 5, "comments": "content"})
        if not options:
            return base(messages)
        for line in (out / "records" / "imcq_question.jsonl").read_text().splitlines():
            question = json.loads(line)["data"].get("question") or {}
            if sorted(question.get("options") or []) == sorted(options):
                truth = question["options"]["ABCD".index(question["answer"])]
                return json.dumps({"closest_option": "ABCD"[options.index(truth)], "explanation": "content"})
        raise AssertionError(f"an IMCQ prompt whose question is not recorded: {options}")
    return respond


# --------------------------------------------------------------------------- ResearchBench

def _researchbench(out: Path, judge: Wrap, big: bool) -> None:
    import asyncio

    from ideaharness.api import arun
    from ideaharness.benchmarks.researchbench import ResearchBenchConfig
    from ideaharness.runner.options import ExecutionOptions
    from tests.researchbench.test_rb_run import RELEASE, scripted

    base = scripted("**Analysis**: x\n**Selection of research hypothesis candidate**: candidate 1")._responder
    model = ScriptedModel(judge(base), model="scripted/model")  # screens (generator) and judges
    if big:  # ranking only, on 12 papers of item 3's shape (tests/researchbench/test_rb_length.py)
        config = ResearchBenchConfig(tasks=["ranking"], ranking_negatives="given", bootstrap_resamples=200)
        asyncio.run(arun("researchbench", config=config, options=ExecutionOptions(out=out, progress=False),
                         generator=model, judge=model, bench_data=long_release(12)))
        return
    config = ResearchBenchConfig(data=str(RELEASE), generator="scripted/model", judge="scripted/model",
                                 n_mutations=1, n_refine=1, bootstrap_resamples=200)
    asyncio.run(arun("researchbench", config=config, options=ExecutionOptions(out=out, progress=False),
                     generator=model, judge=model))


def long_release(papers: int) -> Any:
    """``papers`` papers of item 3's shape: a 44-word gold beside 15 negatives of 100-180 words
    (``test_rb_length.long_negative_release``'s construction, more papers)."""
    from ideaharness.benchmarks.researchbench.config import BenchData
    from ideaharness.data.pools import Candidate, CandidatePool
    from ideaharness.data.researchbench_jsonl import RankingTask
    from ideaharness.data.tomato import load_tomato_chem
    from tests.researchbench.test_rb_length import NEGATIVE_WORDS, _text

    instances = load_tomato_chem()[:papers]
    ranking, pools = {}, {}
    for k, inst in enumerate(instances):
        lengths = NEGATIVE_WORDS[k % 15:] + NEGATIVE_WORDS[:k % 15]
        ranking[inst.id] = RankingTask(sample_id=inst.id, discipline="Chemistry",
                                       gold_hypothesis=_text(44, k),
                                       research_question=inst.research_question or "",
                                       model_negative_hypotheses=[_text(n, j) for j, n in enumerate(lengths)])
        pools[inst.id] = CandidatePool(instance_id=inst.id, source="given", candidates=[
            Candidate(index=i, title=r.title, label="gold") for i, r in enumerate(inst.references)])
    return BenchData(instances, given_pools=pools, given_ranking=ranking)


def _researchbench_content(base: Responder, out: Path) -> Responder:
    """Picks the gold hypothesis (it knows the gold: the run's recorded rewrites of it), keeps the
    inspiration papers first (then the others by title: the fixture's titles say which are
    inspirations), and rates matched hypotheses by the text it reads (not one constant)."""
    def respond(messages: Messages) -> str:
        user = messages[-1]["content"]
        if "Matched score:" in user:
            return f"Matched score: {1 + len(user) % 5}\nReason: content."
        pair = _blocks(user, lambda n: n in ("candidate_1", "candidate_2"))
        if len(pair) == 2:
            records = out / "records" / "researchbench_rewrite.jsonl"
            known = {(json.loads(line)["data"]["judgment"].get("parsed") or {}).get("hypothesis")
                     for line in records.read_text().splitlines()}
            gold = 1 if pair[0] in known else 2
            return f"**Analysis**: content\n**Selection of research hypothesis candidate**: candidate {gold}"
        titles = _blocks(user, lambda n: n == "title")
        found = re.search(r"Select the (\d+) candidates", user)
        if found and len(titles) >= 2:
            ranked = sorted(titles, key=lambda t: ("inspiration" not in t, t))[: int(found.group(1))]
            return "\n\n".join(f"Title: {t}\nReason: content." for t in ranked)
        return base(messages)
    return respond


# --------------------------------------------------------------------------- ligbench-judge

def _ligbench_judge_base(messages: Messages) -> str:
    raise AssertionError(f"ligbench-judge asked an unexpected prompt: {messages[-1]['content'][:80]}")


TWIN_PADDING = " It also reports a further ablation across several additional settings."


def twin_corpus(path: Path) -> None:
    """The fixture's 20 papers and a twin of each (its nearest neighbour: the same text, padded by a
    sentence and a method line), the twin rated 0.6 higher on every dimension for even papers and
    0.6 lower for odd ones: the paper reviewers rated higher is the longer one in half of the pairs,
    so length, words, lines and position carry nothing about the label."""
    lines = []
    for i, line in enumerate(PAIRIQ.read_text().splitlines()):
        paper = json.loads(line)
        shift = 0.6 if i % 2 == 0 else -0.6
        analysis = dict(paper["analysis"])
        analysis["main_target"] += TWIN_PADDING
        analysis["innovative_methods"] += "\n4. A further calibration step"
        twin = {**paper, "title": paper["title"] + ", revisited", "url": paper["url"] + "T",
                "analysis": analysis,
                **{k: round(float(paper[k]) + shift, 2) for k in ("rating", "contribute", "soundness")}}
        lines += [line, json.dumps(twin)]
    path.write_text("\n".join(lines) + "\n")


def _ligbench_corpus(out: Path) -> Path:
    return out.parent / f"{out.name}-corpus" / PAIRIQ.name


def _ligbench_judge(out: Path, judge: Wrap, big: bool) -> None:
    """The fixture's corpus, 8 pairs; ``big``: :func:`twin_corpus`, its 20 twin pairs."""
    import asyncio
    import shutil

    from ideaharness.api import arun
    from ideaharness.benchmarks.ligbench.judge_eval import JudgeAccuracyConfig
    from ideaharness.runner.options import ExecutionOptions

    corpus = _ligbench_corpus(out)
    corpus.parent.mkdir(parents=True)
    if big:
        twin_corpus(corpus)
    else:
        shutil.copy(PAIRIQ, corpus)
    config = JudgeAccuracyConfig(judge="scripted/judge", corpus=str(corpus), n_pairs=20 if big else 8,
                                 bootstrap_resamples=100)
    asyncio.run(arun("ligbench-judge", config=config, options=ExecutionOptions(out=out, progress=False),
                     judge=ScriptedModel(judge(_ligbench_judge_base), model="scripted/judge")))


def _ligbench_judge_content(base: Responder, out: Path) -> Responder:
    """Prefers the paper with the higher debiased reviewer score per dimension: it knows each paper."""
    from ideaharness.benchmarks.ligbench.corpus import ReferenceCorpus
    from ideaharness.benchmarks.ligbench.steps import COMPARE_KEYS, reference_text

    corpus = ReferenceCorpus.load(_ligbench_corpus(out))  # the run's copy (its embeddings stay there)
    known = {reference_text(r): r.id for r in corpus.records}

    def respond(messages: Messages) -> str:
        a, b = (known[t] for t in _blocks(messages[-1]["content"], lambda n: n in ("idea_a", "idea_b")))
        return json.dumps({d: 1.0 if corpus.score(a, d) > corpus.score(b, d) else 0.0 for d in COMPARE_KEYS})
    return respond


Case = tuple[Callable[[Path, Wrap, bool], None], Callable[[Responder, Path], Responder]]
GOLD_CASES: dict[str, Case] = {
    "ideabench": (_ideabench, _ideabench_content),
    "aiideabench": (_aiideabench, _aiideabench_content),
    "researchbench": (_researchbench, _researchbench_content),
    "ligbench-judge": (_ligbench_judge, _ligbench_judge_content),
}
"""Each benchmark with gold steps: (run it into a directory with a judge wrapper, its content judge
given the base responder and the run directory)."""
EVIDENCE_CASES = ("aiideabench", "ideabench", "ligbench-judge", "researchbench")
"""The cases whose ``big`` fixture has at least WEAK_N units and leaves form uninformative: a content
judge's gold headlines there are evidence (ResearchBench: ranking on 12 papers of item 3's shape;
AI Idea Bench: 12 papers, the ground truth's letter balanced over the questions, so a judge that
always finds it is not flagged as position-biased)."""


# --------------------------------------------------------------------------- helpers

def judged_steps(cls: type[Benchmark]) -> set[str]:
    return {step for step, adapter in cls.judgment_adapters.items() if adapter is not None}


def gold_metrics(cls: type[Benchmark]) -> set[str]:
    return {m for names in cls.gold_steps.values() for m in names}


def _console(results: dict[str, Any], out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    with contextlib.suppress(PartialRunError):
        finish_run(results, out)
    return capsys.readouterr().out


def _verdicts(results: dict[str, Any]) -> dict[tuple[str, str, str | None], dict[str, Any]]:
    return {(v["metric"], v["group"], v.get("system")): v for v in results["evidence"]["verdicts"]}


def _gold_headlines(name: str, results: dict[str, Any]) -> list[dict[str, Any]]:
    wanted = gold_metrics(benchmarks()[name])
    return [m for m in results["metrics"] if m["metric"] in wanted and m["value"] is not None]


# --------------------------------------------------------------------------- 1. declarations

def test_every_judged_step_is_declared_gold_or_not() -> None:
    registry = benchmarks()
    assert registry, "the benchmark registry is empty: nothing to check"
    registered = metrics()
    for name, cls in sorted(registry.items()):
        judged = judged_steps(cls)
        gold, none = set(cls.gold_steps), set(cls.no_gold_steps)
        assert not gold & none, f"{name}: {sorted(gold & none)} declared with and without a gold answer"
        assert judged == gold | none, (f"{name}: judged steps {sorted(judged - gold - none)} undeclared, "
                                       f"{sorted((gold | none) - judged)} declared but not judged: put each "
                                       "in gold_steps (with its metrics) or no_gold_steps (with the reason)")
        assert all(str(reason).strip() for reason in cls.no_gold_steps.values()), f"{name}: a reason is empty"
        for step, names in cls.gold_steps.items():
            assert names, f"{name}: gold step {step} names no metric"
            unknown = [m for m in names if m not in registered]
            assert not unknown, f"{name}: gold step {step} names unregistered metrics {unknown}"
        if gold:
            assert cls.form_baselines is not Benchmark.form_baselines, (
                f"{name}: has gold steps {sorted(gold)} but no form_baselines")


def test_every_benchmark_with_gold_steps_has_a_case() -> None:
    with_gold = sorted(n for n, cls in benchmarks().items() if cls.gold_steps)
    assert with_gold, "no registered benchmark declares a gold step: the form-only checks test nothing"
    missing = [n for n in with_gold if n not in GOLD_CASES]
    assert not missing, f"no form-baseline case for {missing}: add one to GOLD_CASES"


def _gold_cases() -> list[tuple[str, str]]:
    names = sorted(n for n, cls in benchmarks().items() if cls.gold_steps)
    return [(n, r) for n in names for r in RULES] or [("(no gold benchmark)", "(none)")]


# --------------------------------------------------------------------------- 2. form-only judges

@pytest.mark.parametrize(("name", "rule"), _gold_cases())
def test_a_form_only_judge_is_not_evidence_and_the_console_says_why(
    name: str, rule: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    assert name in GOLD_CASES, f"{name}: has gold steps but no case"
    out = tmp_path / "run"
    GOLD_CASES[name][0](out, form_judge(rule), False)
    results = json.loads((out / "results.json").read_text())
    entries = {(e["metric"], e["group"], e["system"]): e for e in results["form_baselines"]}
    for metric in sorted(gold_metrics(benchmarks()[name])):
        assert any(k[0] == metric for k in entries), f"{name}: no form baseline for the gold metric {metric}"
    headlines = _gold_headlines(name, results)
    assert headlines, f"{name}: no gold headline computed under the {rule} judge"
    verdicts = _verdicts(results)
    console = _console(results, out, capsys)
    for h in headlines:
        key = (h["metric"], h["group"], h.get("system"))
        entry = entries.get(key)
        assert entry is not None, f"{name} {key}: a gold headline without a form baseline"
        assert entry["baselines"][rule] == pytest.approx(h["value"]), (
            f"{name} {key}: the {rule} judge scored {h['value']}, its replay {entry['baselines'][rule]}")
        verdict = verdicts[key]
        assert verdict["verdict"] == "not evidence", f"{name} {key}: {verdict}"
        assert any(r.startswith("not blind") for r in verdict["reasons"]), f"{name} {key}: {verdict}"
        line = next((ln for ln in console.splitlines() if ln.startswith("NOT EVIDENCE") and h["metric"] in ln
                     and (h["group"] or "") in ln and "not blind" in ln), None)
        assert line is not None, f"{name} {key}: the console does not say it is not blind:\n{console}"


# --------------------------------------------------------------------------- 3. content judges

@pytest.mark.parametrize("name", sorted(n for n, cls in benchmarks().items() if cls.gold_steps) or ["(none)"])
def test_a_content_judge_passes_the_form_check(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Gold headlines of a content judge on each case's large fixture: evidence
    (:data:`EVIDENCE_CASES`); never "not blind" where no form baseline reaches the judge's value."""
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    assert name in GOLD_CASES, f"{name}: has gold steps but no case"
    run, content = GOLD_CASES[name]
    out = tmp_path / "run"
    run(out, lambda base: content(base, out), True)
    results = json.loads((out / "results.json").read_text())
    specs = metrics()
    entries = {(e["metric"], e["group"], e["system"]): e for e in results["form_baselines"]}
    verdicts = _verdicts(results)
    headlines = _gold_headlines(name, results)
    assert headlines, f"{name}: the content judge computed no gold headline"
    for h in headlines:
        key = (h["metric"], h["group"], h.get("system"))
        verdict, entry = verdicts[key], entries[key]
        up = specs[h["metric"]].higher_is_better
        beyond = h["value"] > entry["best_value"] if up else h["value"] < entry["best_value"]
        blind_reasons = [r for r in verdict["reasons"] if r.startswith("not blind")]
        assert bool(blind_reasons) == (not beyond), f"{name} {key}: {h['value']} vs {entry}: {verdict}"
        if name in EVIDENCE_CASES:
            assert h["n"] >= WEAK_N and beyond, f"{name} {key}: {h} vs {entry}"
            assert verdict["verdict"] == "evidence", f"{name} {key}: {verdict}"
        else:  # exactly what its n and its form baselines imply, for no other reason
            expected = ("not evidence" if blind_reasons or h["n"] < MIN_INTERVAL_N else
                        "weak" if h["n"] < WEAK_N else "evidence")
            assert verdict["verdict"] == expected, f"{name} {key}: {verdict}"
            assert all(r.startswith(("n too small", "small n", "not blind")) for r in verdict["reasons"]), (
                f"{name} {key}: {verdict}")
    if name in EVIDENCE_CASES:
        assert "not blind" not in _console(results, out, capsys)


# --------------------------------------------------------------------------- 4. no gold answer

@pytest.mark.parametrize("name", sorted(n for n, c in benchmarks().items() if not c.gold_steps) or ["(none)"])
def test_a_benchmark_without_gold_steps_has_no_form_baseline(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.runner.test_one_number import recipes

    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    cls = benchmarks().get(name)
    assert cls is not None, f"{name}: not a registered benchmark (an empty registry checks nothing)"
    assert cls.no_gold_steps or not judged_steps(cls), f"{name}: judged steps without a declared reason"
    variants = recipes().get(name)
    assert variants, f"{name}: no run recipe (tests/runner/test_one_number.py or its registry_fixtures.py)"
    recipe = next(iter(variants.values()))[0]
    out = tmp_path / "run"
    recipe(out)
    results = json.loads((out / "results.json").read_text())
    assert results["form_baselines"] == [], f"{name}: form baselines without a gold step"
    for v in results["evidence"]["verdicts"]:
        assert not any(r.startswith(("not blind", "near form")) for r in v["reasons"]), f"{name}: {v}"
