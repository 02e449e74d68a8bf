"""Start-up of the command line: wall and CPU time per start, against ``python -c pass`` measured in
the same run, and against an older source tree (``--baseline SRC``) measured in the same run.

Each row starts a fresh interpreter ``--k`` times (rows and trees interleaved, so load on the
machine falls on all of them alike) and prints the median and the least wall time per start and
the median CPU time (user + system of the child, from ``wait4``):

* ``python -c pass``: the floor (the interpreter alone);
* ``ideaharness --help`` and ``ideaharness run ideabench --help`` (``python -m ideaharness ...``);
* ``run ideabench -> 1st request``: a real ``ideaharness run ideabench --limit 1`` with ``openai/``
  models against a loopback server in this process, timed from the start of the process to the
  arrival of its first model request (imports, option parsing, data, models, run directory and the
  benchmark's setup); the child is killed then.

Usage: python benchmarks/startup.py [--k 7] [--baseline /path/to/old/src]
Run under ``flock /tmp/ideaharness-model.lock`` (a timing measurement).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ideaharness.testing.openai_server import OpenAICompatServer

SRC = Path(__file__).resolve().parents[1] / "src"


@dataclass
class Row:
    """Wall and CPU seconds of each start of one command."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def _env(src: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src)  # first on sys.path: this tree's ideaharness, not the installed one
    env.pop("PYTHONSTARTUP", None)
    return env


def _wait(child: subprocess.Popen[Any]) -> float:
    """Reap ``child``; its user + system CPU seconds."""
    _, _, usage = os.wait4(child.pid, 0)
    child.returncode = 0
    return usage.ru_utime + usage.ru_stime


def time_command(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one run of ``argv`` to its exit (output discarded)."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cpu = _wait(child)
    return time.perf_counter() - start, cpu


class FirstRequest:
    """A loopback OpenAI-compatible server that notes when the first request arrives."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.at = 0.0
        self.server = OpenAICompatServer(responder=self._respond).start()
        # the child is killed with a keep-alive connection open: its reset is expected, not printed
        self.server._httpd.handle_error = lambda request, client_address: None  # type: ignore[method-assign]

    def _respond(self, body: dict[str, Any]) -> str:
        if not self.arrived.is_set():
            self.at = time.perf_counter()
            self.arrived.set()
        return "no answer"

    def reset(self) -> None:
        self.arrived.clear()


def time_to_first_request(server: FirstRequest, env: dict[str, str], out: Path) -> tuple[float, float]:
    """(wall from spawn to the first model request, cpu of the child until it was killed)."""
    server.reset()
    argv = [sys.executable, "-m", "ideaharness", "run", "ideabench", "--limit", "1", "--out", str(out),
            "--generator", "openai/startup", "--judge", "openai/startup",
            "--base-url", server.server.base_url,
            "--no-cache", "--no-progress", "--max-retries", "0", "--max-attempts", "1", "--force"]
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not server.arrived.wait(timeout=120):
            raise SystemExit(f"no model request within 120 s from: {' '.join(argv)}")
        wall = server.at - start
    finally:
        child.send_signal(signal.SIGKILL)
        cpu = _wait(child)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=7, help="starts per command and tree")
    parser.add_argument("--baseline", type=Path, help="another tree's src/ folder, measured in the same run")
    args = parser.parse_args()
    trees = {"this tree": SRC} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    py = [sys.executable]
    commands = {
        "python -c pass (floor)": py + ["-c", "pass"],
        "ideaharness --help": py + ["-m", "ideaharness", "--help"],
        "run ideabench --help": py + ["-m", "ideaharness", "run", "ideabench", "--help"],
    }
    rows: dict[tuple[str, str], Row] = {}
    server = FirstRequest()
    with tempfile.TemporaryDirectory() as tmp:
        for src in trees.values():  # warm the file cache and byte-code of both trees first
            time_command(commands["run ideabench --help"], _env(src))
        for _ in range(args.k):
            for tree, src in trees.items():
                env = _env(src)
                for name, argv in commands.items():
                    wall, cpu = time_command(argv, env)
                    row = rows.setdefault((name, tree), Row())
                    row.wall.append(wall)
                    row.cpu.append(cpu)
                wall, cpu = time_to_first_request(server, env, Path(tmp) / tree.replace(" ", "-"))
                row = rows.setdefault(("run ideabench -> 1st request", tree), Row())
                row.wall.append(wall)
                row.cpu.append(cpu)
    server.server.stop()
    floor = {tree: statistics.median(rows[("python -c pass (floor)", tree)].wall) for tree in trees}
    print(f"CLI start-up, {args.k} starts per row (python {sys.version.split()[0]}, {os.cpu_count()} CPUs)")
    print(f"{'command':<32}{'tree':<11}{'median s':>9}{'least s':>9}{'- floor s':>10}{'cpu s':>8}")
    for (name, tree), row in rows.items():
        median = statistics.median(row.wall)
        print(f"{name:<32}{tree:<11}{median:>9.3f}{min(row.wall):>9.3f}{median - floor[tree]:>10.3f}"
              f"{statistics.median(row.cpu):>8.3f}")
    if args.baseline:
        print("ratio baseline / this tree (median wall minus floor):")
        for name in [*commands, "run ideabench -> 1st request"]:
            if name.startswith("python"):
                continue
            ours = statistics.median(rows[(name, 'this tree')].wall) - floor["this tree"]
            base = statistics.median(rows[(name, 'baseline')].wall) - floor["baseline"]
            print(f"  {name:<30} {base / ours:5.2f}x  ({base:.3f} s -> {ours:.3f} s)")


if __name__ == "__main__":
    main()
