"""Incremental idea competition between saved AI Idea Bench runs (``compare --judge``).

AI Idea Bench declares it as its :attr:`~ideaharness.runner.protocol.Benchmark.cross_run_competition` hook
(:data:`COMPETITION`); the generic ``compare`` command calls the hook of the runs' benchmark.

Given AI Idea Bench runs of different systems on the same data, every pair of systems meets on
every topic that all of them have ideas for (a round robin), with the idea each system plays
picked, the judge prompt, both orders and the verdict rule exactly as in ``run aiideabench
--compare`` (:mod:`ideaharness.benchmarks.aiideabench.competition`): judged once with each idea
shown first; the same winner in both orders is a win, different winners an *inconsistent* pair
(a tie, or no battle with ``inconsistent="exclude"``).

Judgments are content-addressed: a record is keyed by the topic and the sha256 of the rendered
prompt (topic, both idea texts, order), so a verdict is reused whoever the systems are called.
Before asking the judge, a judgment is looked up in the tournament directory, then in the
``compete`` records of the given runs (when their judge and judge sampling are this one's), and
the judge call itself goes through the response cache. Adding a system therefore judges only the
pairs it takes part in, and re-running makes no call.

Scores: Swiss points per topic (AI Idea Bench 2025, Eq. 5-6, replayed on the recorded verdicts
with the run's seed and rounds) and a Bradley-Terry fit over every pair's verdict
(:func:`~ideaharness.metrics.tournament.bradley_terry`) with a percentile bootstrap that resamples
topics, not battles (:func:`~ideaharness.metrics.tournament.bradley_terry_topic_bootstrap`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ideaharness.analysis.compare import settings_mismatch
from ideaharness.benchmarks.aiideabench import judges as J
from ideaharness.benchmarks.aiideabench.competition import (
    _load_run,
    _separation_note,
    compete_text,
    verdict,
)
from ideaharness.benchmarks.aiideabench.config import AIIdeaBenchConfig
from ideaharness.data.aiideabench import needs_decomposition
from ideaharness.errors import UserError
from ideaharness.jsonl import scan_jsonl
from ideaharness.llm.judge import prompt_hash
from ideaharness.llm.types import ChatModel
from ideaharness.metrics.tournament import Battle, Outcome, bradley_terry_topic_bootstrap, swiss_tournament
from ideaharness.runner.models import build_model
from ideaharness.runner.options import ExecutionOptions
from ideaharness.runner.protocol import Competition
from ideaharness.runner.steps import StepRunner
from ideaharness.runs.inputs import INPUTS_KEY
from ideaharness.runs.store import CONFIG_FILE, RECORDS_DIR, RunStore
from ideaharness.schema import Idea, Instance
from ideaharness.seeding import derive_seed
from ideaharness.tables import Table

STEP = "compete"
TOURNAMENT_BENCHMARK = "aiideabench-tournament"
JUDGE_SETTINGS = ("judge_temperature", "judge_max_tokens", "seed", "max_prompt_tokens")
"""Config settings of a run that shape its competition judgments: records are reused only when
equal. (Tries per judgment, ``--max-attempts``, is an execution option: it changes how often an
unparsable reply is re-asked, never a recorded verdict.)"""


def default_tournament_dir(first_run: Path, judge: str) -> Path:
    """``<parent of the first run>/aiideabench-tournament-<judge slug>``."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", judge).strip("-") or "judge"
    return Path(first_run).resolve().parent / f"{TOURNAMENT_BENCHMARK}-{slug}"


def _read_config(run_dir: Path) -> dict[str, Any]:
    try:
        config = json.loads((run_dir / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{run_dir / CONFIG_FILE}: not readable ({exc})") from None
    if not isinstance(config, dict):
        raise UserError(f"{run_dir / CONFIG_FILE}: not a JSON object")
    return config


def _recorded_judgments(
    run_dirs: Sequence[Path], configs: Sequence[dict[str, Any]], judge: str, settings: dict[str, Any]
) -> dict[tuple[str, str], tuple[dict[str, Any], Path]]:
    """(instance id, prompt hash) -> (compete record, run dir) from runs judged by ``judge`` alike."""
    out: dict[tuple[str, str], tuple[dict[str, Any], Path]] = {}
    for run_dir, config in zip(run_dirs, configs, strict=True):
        if config.get("judge") != judge or any(config.get(k) != v for k, v in settings.items()):
            continue
        for _, rec in scan_jsonl(run_dir / RECORDS_DIR / f"{STEP}.jsonl").rows:
            try:
                data = rec["data"]
                out.setdefault((rec["instance_id"], data["judgment"]["prompt_hash"]), (data, run_dir))
            except (TypeError, KeyError):
                continue  # a damaged line is that judgment missing: it is asked again
    return out


def _decomposed_topics(run_dirs: Sequence[Path], names: Sequence[str]) -> dict[str, str]:
    """instance id -> the anonymised topic of its parsed decomposition in the runs' records, taken
    from the runs in the order of their system names (so the systems' order does not matter)."""
    topics: dict[str, str] = {}
    for _, run_dir in sorted(zip(names, run_dirs, strict=True)):
        for _, rec in scan_jsonl(run_dir / RECORDS_DIR / "decompose.jsonl").rows:
            try:
                judgment = rec["data"]["judgment"]
                if judgment["parse_ok"]:
                    topics.setdefault(str(rec["instance_id"]), str(judgment["parsed"]["topic"]))
            except (TypeError, KeyError):
                continue  # a damaged line: that decomposition missing
    return topics


def judge_topic(inst: Instance, decomposed: dict[str, str]) -> str:
    """The topic the competition judge sees, as in the runs
    (:func:`ideaharness.benchmarks.aiideabench.blinding.judge_topic`): for data decomposed by the
    judge, the decomposition's anonymised topic; else (or when no run decomposed it) the dataset's."""
    if needs_decomposition(inst) and inst.id in decomposed:
        return decomposed[inst.id]
    return inst.topic or inst.research_question or ""


class _Tournament:
    """The round robin over one tournament directory: judgments looked up, reused or asked."""

    def __init__(
        self,
        store: RunStore,
        steps: StepRunner,
        judge: ChatModel,
        cfg: AIIdeaBenchConfig,
        recorded: dict[tuple[str, str], tuple[dict[str, Any], Path]],
        topics: dict[str, str],
    ) -> None:
        self.store, self.steps, self.judge, self.cfg, self.recorded = store, steps, judge, cfg, recorded
        self.topics = topics
        self.counts = {
            "judgments": 0,
            "judged_now": 0,
            "reused_tournament": 0,
            "reused_run_records": 0,
            "parse_failures": 0,
            "pairs": 0,
            "inconsistent_pairs": 0,
            "no_verdict": 0,
        }

    async def judgment(
        self, inst: Instance, picked: dict[str, Idea], first: str, second: str
    ) -> dict[str, Any] | None:
        """The judgment of ``first``'s idea shown as idea 0 against ``second``'s; None if it failed."""
        from ideaharness.llm.errors import ContextLengthError

        try:
            messages = self.steps.fit(
                J.compete_messages(
                    judge_topic(inst, self.topics), compete_text(picked[first]), compete_text(picked[second])
                )
            )
        except ContextLengthError as exc:  # listed as failed, like any unit that cannot be asked
            self.steps.fail(STEP, inst.id, f"{first}|{second}", exc)
            return None
        key = prompt_hash(messages)
        rec = self.store.get(STEP, inst.id, key)
        if rec is not None:
            self.counts["reused_tournament"] += 1
        elif (inst.id, key) in self.recorded and self.recorded[(inst.id, key)][0]["judgment"].get(
            "judge_model"
        ) == self.judge.model:
            data, run_dir = self.recorded[(inst.id, key)]
            rec = {**data, "idea0_system": first, "idea1_system": second, "reused_from": str(run_dir)}
            # the reused judgment's prompt kept here too, group-committed with the record
            await self.store.aput(STEP, inst.id, rec, key, prompt=(key, messages))
            self.counts["reused_run_records"] += 1
        else:
            rec = await self.steps.judge_step(
                STEP,
                inst.id,
                key,
                self.judge,
                messages,
                J.parse_compete,
                positions=[picked[first].id, picked[second].id],
                extra={"idea0_system": first, "idea1_system": second},
                json_schema=J.COMPETE_SCHEMA,
                temperature=self.cfg.judge_temperature,
                seed=self.cfg.seed,
                max_tokens=self.cfg.reply_cap("judge"),
            )
            if rec is None:
                return None
            self.counts["judged_now"] += 1
        self.counts["judgments"] += 1
        judgment: dict[str, Any] = rec["judgment"]
        self.counts["parse_failures"] += not judgment["parse_ok"]
        return judgment

    async def pair(self, inst: Instance, picked: dict[str, Idea], x: str, y: str) -> dict[str, Any]:
        """Verdict of systems x < y on one topic (both orders), as in the run's competition."""
        first, second = await asyncio.gather(
            self.judgment(inst, picked, x, y), self.judgment(inst, picked, y, x)
        )
        v = verdict(first, second, self.cfg.inconsistent)
        self.counts["pairs"] += 1
        self.counts["inconsistent_pairs"] += v["consistent"] is False
        self.counts["no_verdict"] += v["outcome"] is None and v["consistent"] is not False
        return v


def pick_ideas(systems: dict[str, dict[str, list[Idea]]], inst: Instance, seed: int) -> dict[str, Idea]:
    """The idea each system plays on a topic: seeded by (run seed, topic, system name), as in the run."""
    picked = {}
    for name, ideas in systems.items():
        options = ideas[inst.id]
        rng = random.Random(derive_seed(seed, inst.id, "compete-pick", name))
        picked[name] = options[rng.randrange(len(options))]
    return picked


async def run_tournament_async(
    runs: Sequence[str | Path],
    *,
    judge: str | None = None,
    judge_model: ChatModel | None = None,
    tournament_dir: str | Path | None = None,
    options: ExecutionOptions | None = None,
    allow_mismatch: bool = False,
    n_resamples: int = 1000,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Judge (incrementally) the competition between the systems of saved AI Idea Bench runs.

    Args:
        runs: AI Idea Bench run directories of 2 or more systems (their ``records/ideas.jsonl``).
        judge: the judge model string (default the runs' ``judge``); part of the tournament's identity.
        judge_model: an already built client for ``judge`` (tests, embedding); else built from
            ``judge`` with ``options`` (endpoint, cache, concurrency, retries).
        tournament_dir: where the judgments and ``results.json`` are kept; default
            :func:`default_tournament_dir`. A directory made with another judge or other judge
            settings is refused (``options.force`` starts a new one).
        allow_mismatch: go on when the runs differ in result-changing settings.
        n_resamples, confidence: the topic bootstrap of the Bradley-Terry ratings (seeded by the
            runs' seed).

    Returns:
        The tournament results (also written to ``<tournament_dir>/results.json``): ``systems``,
        ``run_dirs``, ``judge``, ``topics``, ``points`` and ``rank`` (Swiss, summed over topics),
        ``bradley_terry`` {system: {rating, lower, upper}} with ``bradley_terry_anchor`` and
        ``method``, counters (``pairs``, ``judgments``, ``judged_now``, ``reused_tournament``,
        ``reused_run_records``, ``parse_failures``, ``inconsistent_pairs``, ``no_verdict``),
        ``status``/``failed_units`` and ``per_topic``.

    Raises:
        UserError: fewer than 2 systems, a run that is not AI Idea Bench, differing settings
            (without ``allow_mismatch``), a parity run, no topic shared by all systems, or a
            tournament directory of another judge.
    """
    run_dirs = [Path(r) for r in runs]
    systems: dict[str, dict[str, list[Idea]]] = {}
    names: dict[str, str] = {}
    kinds: dict[str, str] = {}
    for run_dir in run_dirs:
        name, ideas, kind = _load_run(run_dir)
        if name in systems:
            name = f"{name} ({run_dir.name})"
        systems[name] = ideas
        names[name] = str(run_dir)
        kinds[name] = kind
    if len(systems) < 2:
        raise UserError("compare --judge: give AI Idea Bench runs of at least 2 systems")
    configs = [_read_config(d) for d in run_dirs]
    mismatch = settings_mismatch(configs, "aiideabench")
    if mismatch and not allow_mismatch:
        raise UserError(
            f"compare: the runs differ in settings that change results ({', '.join(mismatch)}); "
            "re-run them alike, or pass --allow-mismatch"
        )
    cfg = AIIdeaBenchConfig.model_validate({k: v for k, v in configs[0].items() if k != INPUTS_KEY})
    if cfg.parity:
        raise UserError(
            "compare --judge: parity runs judge one order, fixed by the Swiss standings of the "
            "systems present, so they cannot be compared incrementally; use "
            "`run aiideabench --parity --compare RUN_DIR ...`"
        )
    judge = judge or cfg.judge
    options = options or ExecutionOptions(progress=False)
    from ideaharness.benchmarks.aiideabench.run import load_aiideabench_instances

    instances = load_aiideabench_instances(cfg)  # the data alone: a run's --ideas file is not read
    topics = [i for i in instances if all(s.get(i.id) for s in systems.values())]
    if not topics:
        raise UserError(f"compare --judge: no topic of --data {cfg.data} has ideas from every system")
    if judge_model is None:
        judge_model = build_model(judge, options, role="judge")
    if judge_model is None:
        raise UserError("compare --judge: no judge model")
    settings = {k: getattr(cfg, k) for k in JUDGE_SETTINGS}
    identity = {
        "benchmark": TOURNAMENT_BENCHMARK,
        "judge": judge,
        **settings,
        "inconsistent": cfg.inconsistent,
    }
    folder = (
        Path(tournament_dir) if tournament_dir is not None else default_tournament_dir(run_dirs[0], judge)
    )
    recorded = _recorded_judgments(run_dirs, configs, judge, settings)
    with RunStore(folder, identity, force=options.force) as store:
        store.track_usage({"judge": judge_model})
        steps = StepRunner(
            store, max_attempts=options.max_attempts, progress=False, max_prompt_tokens=cfg.max_prompt_tokens
        )
        decomposed = _decomposed_topics(run_dirs, list(systems))
        game = _Tournament(store, steps, judge_model, cfg, recorded, decomposed)
        results = await _play(game, systems, topics, n_resamples, confidence)
        results.update(
            system_kinds=kinds,
            run_dirs=names,
            judge=judge,
            tournament_dir=str(folder),
            settings_mismatch=mismatch,
            **steps.outcome(),
        )
        store.write_results(results)
    return results


async def _play(
    game: _Tournament,
    systems: dict[str, dict[str, list[Idea]]],
    topics: list[Instance],
    n_resamples: int,
    confidence: float,
) -> dict[str, Any]:
    cfg = game.cfg
    names = list(systems)
    picks = {inst.id: pick_ideas(systems, inst, cfg.seed) for inst in topics}
    jobs = [(inst, x, y) for inst in topics for x, y in itertools.combinations(sorted(names), 2)]
    outcomes = await asyncio.gather(*(game.pair(inst, picks[inst.id], x, y) for inst, x, y in jobs))
    verdicts = {(inst.id, x, y): v["outcome"] for (inst, x, y), v in zip(jobs, outcomes, strict=True)}
    battles = {
        inst.id: [
            Battle(a=x, b=y, winner=verdicts[(inst.id, x, y)])
            for x, y in itertools.combinations(sorted(names), 2)
            if verdicts[(inst.id, x, y)] is not None
        ]
        for inst in topics
    }
    points = {n: 0.0 for n in names}
    per_topic = []
    for inst in topics:

        async def play(a: str, b: str, _round: int, inst: Instance = inst) -> Outcome | None:
            x, y = sorted((a, b))
            outcome: Outcome | None = verdicts[(inst.id, x, y)]
            if outcome is None or outcome == "tie" or x == a:
                return outcome
            return "b" if outcome == "a" else "a"

        swiss = await swiss_tournament(
            names,
            play,
            rounds=cfg.tournament_rounds,
            win_points=3.0,
            loss_points=cfg.loss_points,
            seed=derive_seed(cfg.seed, inst.id, "swiss"),
        )
        for n, p in swiss.points.items():
            points[n] += p
        per_topic.append(
            {
                "instance_id": inst.id,
                "points": swiss.points,
                "ideas": {n: picks[inst.id][n].id for n in names},
                "verdicts": [
                    {"a": x, "b": y, "outcome": verdicts[(inst.id, x, y)]}
                    for x, y in itertools.combinations(sorted(names), 2)
                ],
            }
        )
    flat = [b for bs in battles.values() for b in bs]
    anchor = next((n for n in names if any(n in (b.a, b.b) for b in flat)), None)
    bt: dict[str, Any] = {}
    if len({s for b in flat for s in (b.a, b.b)}) >= 2:
        intervals = bradley_terry_topic_bootstrap(
            battles, anchor=anchor, n_resamples=n_resamples, confidence=confidence, seed=cfg.seed
        )
        bt = {n: iv.model_dump() for n, iv in intervals.items()}
    values = sorted(points.values(), reverse=True)
    return {
        "benchmark": TOURNAMENT_BENCHMARK,
        "systems": names,
        "topics": len(topics),
        "rounds": cfg.tournament_rounds,
        "win_points": 3.0,
        "loss_points": cfg.loss_points,
        "both_orders": True,
        "inconsistent_counts_as": cfg.inconsistent,
        "points": points,
        "rank": {n: 1 + values.index(p) for n, p in points.items()},
        "bradley_terry": bt,
        "bradley_terry_anchor": anchor,
        "bradley_terry_note": _separation_note(flat),
        "method": {
            "interval": "percentile bootstrap",
            "unit": "topic (instance), all its battles together",
            "n_resamples": n_resamples,
            "confidence": confidence,
            "seed": cfg.seed,
        },
        "battles": len(flat),
        **game.counts,
        "per_topic": per_topic,
    }


def run_tournament(runs: Sequence[str | Path], **kwargs: Any) -> dict[str, Any]:
    """Synchronous wrapper of :func:`run_tournament_async`."""
    return asyncio.run(run_tournament_async(runs, **kwargs))


def tournament_table(t: dict[str, Any]) -> Table:
    """Console table of the competition: Swiss points and Bradley-Terry ratings with topic CIs."""
    bt = t["bradley_terry"]
    order = sorted(t["systems"], key=lambda n: (-(bt.get(n) or {}).get("rating", float("-inf")), n))
    rows = [
        [
            t["rank"][n],
            n,
            (t.get("system_kinds") or {}).get(n),
            t["points"][n],
            (bt.get(n) or {}).get("rating"),
            _ci([bt[n]["lower"], bt[n]["upper"]]) if n in bt else None,
        ]
        for n in order
    ]
    m = t["method"]
    note = (
        f"{t['topics']} topics, every pair judged in both orders ({t['pairs']} pairs, "
        f"{t['battles']} battles; inconsistent pairs {t['inconsistent_pairs']} counted as "
        f"{t['inconsistent_counts_as']}, parse failures {t['parse_failures']}). "
        f"Judged now: {t['judged_now']}; reused: {t['reused_tournament']} from {t['tournament_dir']}, "
        f"{t['reused_run_records']} from the runs' records. Bradley-Terry anchored at "
        f"{t['bradley_terry_anchor']} = 1000; CI: {m['interval']}, {m['n_resamples']} resamples of topics."
    )
    if t.get("bradley_terry_note"):
        note += " " + t["bradley_terry_note"]
    return Table(
        title=f"Competition (judge {t['judge']})",
        columns=["Swiss rank", "system", "kind", "Swiss points", "Bradley-Terry", "95% CI"],
        rows=rows,
        note=note,
    )


def _ci(value: list[float] | None) -> str | None:
    return None if value is None else f"[{value[0]:.3f}, {value[1]:.3f}]"


COMPETITION = Competition(
    play=run_tournament,
    table=tournament_table,
    summary="Swiss tournament per topic and Bradley-Terry ratings with topic-bootstrap CIs",
)
"""AI Idea Bench's ``compare --judge`` hook (``AIIdeaBench.cross_run_competition``)."""
