"""Speed of the per-instance viewer in report.html at 10^5 judgments, in headless chromium.

Writes a synthetic IdeaBench-shaped run directory (25,000 instances x 4 judged steps = 10^5
judgments, 5 % parse failures, replies of ~150-400 characters), renders its report with the real
report writer (the viewer embedded), opens it in Debian's chromium (selenium + chromedriver) and
prints: build time, file size, first paint (navigation start to the first rendered table page),
filter times (parse failures only, a text search over every reply, clearing), and a drill-down,
each against a limit of --limit-ms (ratio < 1 = within the limit).

Usage: python benchmarks/viewer.py [--judgments 100000] [--limit-ms 1000] [--screenshot docs/img/viewer.png]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.report.browser import console_errors, start_browser  # noqa: E402

from ideaharness.report.html import write_report  # noqa: E402

STEPS = ("generate/low", "overlap/low", "rank/low/novelty", "rank/low/feasibility")


def judgment(rng: random.Random, step: str, ok: bool) -> dict:
    if step == "generate/low":
        ideas = [
            {"title": f"T{i}", "idea": f"Idea {i}: " + " ".join(rng.choices(WORDS, k=20))} for i in range(3)
        ]
        raw, parsed = json.dumps({"ideas": ideas}), ideas
    elif step == "overlap/low":
        rating = rng.randint(1, 10)
        raw, parsed = (
            f"On a scale of 1-10, I'd give this a {rating}. " + " ".join(rng.choices(WORDS, k=15)),
            {"rating": rating},
        )
    else:
        order = rng.sample("ABCD", 4)
        raw, parsed = json.dumps({"ranking": order, "rationale": " ".join(rng.choices(WORDS, k=15))}), order
    if not ok:
        raw, parsed = "I cannot rank these ideas. " + " ".join(rng.choices(WORDS, k=12)), None
    return {
        "judge_model": "bench/judge",
        "prompt_hash": f"{rng.getrandbits(64):016x}",
        "raw_text": raw,
        "parsed": parsed,
        "parse_ok": ok,
        "attempts": 1 if ok else 3,
        "errors": [] if ok else ["no ranking found"] * 3,
        "positions": None,
        "usage": {"prompt_tokens": rng.randint(150, 900), "completion_tokens": rng.randint(10, 200)},
    }


WORDS = "catalyst ligand solvent yield kinetic mechanism surface oxide lattice enzyme polymer".split()


def write_run(run_dir: Path, n_judgments: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    records = run_dir / "records"
    records.mkdir(parents=True)
    n_instances = n_judgments // len(STEPS)
    files = {s: (records / (s.replace("/", "_") + ".jsonl")).open("w") for s in STEPS}
    for i in range(n_instances):
        inst = f"synthetic/{i}"
        for step in STEPS:
            data = {"judgment": judgment(rng, step, rng.random() > 0.05)}
            if step.startswith("rank"):
                data.update(labels=list("ABCD"), target_label=rng.choice("ABCD"))
            files[step].write(
                json.dumps(
                    {
                        "step": step,
                        "instance_id": inst,
                        "key": "",
                        "data": data,
                        "created": "2026-01-01T00:00:00+00:00",
                    }
                )
                + "\n"
            )
    for f in files.values():
        f.close()
    config = {
        "benchmark": "ideabench",
        "generator": "bench/gen",
        "judge": "bench/judge",
        "n_ideas": 3,
        "seed": seed,
    }
    (run_dir / "config.json").write_text(json.dumps(config))
    (run_dir / "results.json").write_text(
        json.dumps({"benchmark": "ideabench", "n": 3, "generator": "bench/gen", "failed_units": []})
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgments", type=int, default=100_000)
    parser.add_argument("--limit-ms", type=float, default=1000.0)
    parser.add_argument("--screenshot", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        write_run(run_dir, args.judgments)
        start = time.perf_counter()
        report = write_report(run_dir / "report.html", title="Synthetic IdeaBench run", config={}, tables=[])
        build_s = time.perf_counter() - start
        size_mb = report.stat().st_size / 2**20
        driver = start_browser()
        try:
            driver.get(report.as_uri())
            paint_ms = driver.execute_script("return window.ihReady")
            from selenium.webdriver.support.ui import WebDriverWait

            WebDriverWait(driver, 120).until(lambda d: d.execute_script("return window.ihJudgmentsReady"))
            judg_ms = driver.execute_script("return window.ihJudgmentsReady")

            def timed(js: str) -> float:
                return float(
                    driver.execute_script(
                        "const t = performance.now();" + js + "; return performance.now() - t;"
                    )
                )

            parse_ms = timed(
                "const c = document.getElementById('ih-judg-parsefail'); c.checked = true;"
                "c.dispatchEvent(new Event('change'))"
            )
            shown = driver.find_element("css selector", "#ih-judg-table .ih-info").text
            search_ms = timed(
                "const s = document.getElementById('ih-judg-search'); s.value = 'catalyst ligand';"
                "s.dispatchEvent(new Event('input'))"
            )
            search2_ms = timed(
                "const s = document.getElementById('ih-judg-search'); s.value = 'oxide';"
                "s.dispatchEvent(new Event('input'))"
            )
            clear_ms = timed(
                "const s = document.getElementById('ih-judg-search'); s.value = '';"
                "s.dispatchEvent(new Event('input'));"
                "const c = document.getElementById('ih-judg-parsefail'); c.checked = false;"
                "c.dispatchEvent(new Event('change'))"
            )
            inst_ms = timed(
                "const c = document.getElementById('ih-inst-parsefail'); c.checked = true;"
                "c.dispatchEvent(new Event('change'))"
            )
            sort_ms = timed("document.querySelectorAll('#ih-judg-table th')[7].click()")
            drill_ms = timed("document.querySelector('#ih-inst-table tr.ih-row').click()")
            errors = console_errors(driver)
            if args.screenshot:
                driver.execute_script("document.getElementById('ih-viewer').scrollIntoView()")
                args.screenshot.parent.mkdir(parents=True, exist_ok=True)
                driver.save_screenshot(str(args.screenshot))
        finally:
            driver.quit()
    print(f"judgments: {args.judgments}; report.html: {size_mb:.1f} MiB, written in {build_s:.1f} s")
    print(f"parse-failure filter shows: {shown}")
    limit = args.limit_ms
    for name, ms in (
        ("first paint (navigation -> instance table page)", paint_ms),
        ("judgments table ready (navigation -> page)", judg_ms),
        ("filter judgments: parse failures only", parse_ms),
        ("search every reply (first search, builds index)", search_ms),
        ("search every reply (again)", search2_ms),
        ("clear filters", clear_ms),
        ("filter instances: parse failures", inst_ms),
        ("sort judgments by tokens", sort_ms),
        ("open a drill-down", drill_ms),
    ):
        print(f"{name:50s} {ms:8.1f} ms   ratio to {limit:.0f} ms limit: {ms / limit:.2f}")
    print(f"console errors: {len(errors)}" + (f" ({errors[0]})" if errors else ""))


if __name__ == "__main__":
    main()
