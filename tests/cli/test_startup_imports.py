"""Start-up of the command line: a library that takes seconds to import (torch, transformers, Ray,
matplotlib, scipy, pandas, ...) is imported only on the code path that uses it, never by
``import ideaharness.cli``, by ``--help`` or by a run before its first model call.

Each check runs in a fresh interpreter (the test process has imported half the world) and reads
``sys.modules`` there; nothing is timed (``benchmarks/startup.py`` prints the times).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

HEAVY = ("torch", "transformers", "sentence_transformers", "bert_score", "ray", "matplotlib", "pandas",
         "pyarrow", "scipy", "sklearn", "selenium", "llama_cpp")
"""Imported only where a code path needs them (a model load, a figure, a statistic, a DataFrame)."""
ENDPOINT_SDKS = ("openai", "anthropic", "httpx")
"""Imported when a client of that provider (or of a scholarly API) is built, not by the command line
itself."""


def _modules_after(code: str) -> list[str]:
    """The top-level modules of HEAVY + ENDPOINT_SDKS imported after ``code`` ran in a new
    interpreter (``code`` may exit through SystemExit; a ``FIRST_REQUEST`` list it fills wins)."""
    script = textwrap.dedent("""
        import json, sys
        FIRST_REQUEST = []
        try:
        {body}
        except SystemExit:
            pass
        watched = {watched!r}
        seen = FIRST_REQUEST[0] if FIRST_REQUEST else set(sys.modules)
        print("\\nMODULES " + json.dumps(sorted(m for m in watched if m in seen)))
    """).format(body=textwrap.indent(textwrap.dedent(code), "    "), watched=HEAVY + ENDPOINT_SDKS)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("MODULES ")]
    assert lines, (f"the probe did not finish (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n"
                   f"{proc.stderr[-3000:]}")
    return list(json.loads(lines[-1].removeprefix("MODULES ")))


def test_import_and_command_registration_import_no_heavy_library() -> None:
    found = _modules_after("""
        import ideaharness.cli
        from ideaharness.cli.app import load_commands, run_app
        load_commands()
        assert len(run_app.registered_commands) >= 1, "no benchmark command was registered"
    """)
    assert found == [], f"`import ideaharness.cli` + command registration imported {found}"


def test_help_of_every_command_imports_no_heavy_library() -> None:
    found = _modules_after("""
        import contextlib, io
        from ideaharness.cli import main
        from ideaharness.runner.registry import benchmarks
        names = sorted(benchmarks())
        assert names, "no registered benchmark to ask for --help"
        for argv in (["--help"], ["run", "--help"], *(["run", name, "--help"] for name in names)):
            with contextlib.redirect_stdout(io.StringIO()) as out:
                try:
                    main(argv)
                except SystemExit as exc:
                    assert not exc.code, (argv, exc.code)
            assert "Usage:" in out.getvalue(), argv
    """)
    assert found == [], f"--help imported {found}"


def test_run_imports_no_heavy_library_before_its_first_model_call(tmp_path) -> None:
    """A real ``ideaharness run ideabench`` against a loopback OpenAI-compatible server: the modules
    imported when the first request arrives (benchmark, data, models, run store and setup done)."""
    found = _modules_after(f"""
        from ideaharness.testing.openai_server import OpenAICompatServer

        def respond(body):
            if not FIRST_REQUEST:
                FIRST_REQUEST.append(set(sys.modules))
            return "no answer"  # parses as nothing: the run stops early, partial

        server = OpenAICompatServer(responder=respond).start()
        from ideaharness.cli import main
        main(["run", "ideabench", "--limit", "1", "--out", {str(tmp_path / "run")!r},
              "--generator", "openai/gen", "--judge", "openai/judge", "--base-url", server.base_url,
              "--no-cache", "--no-progress", "--max-retries", "0", "--max-attempts", "1"])
        assert FIRST_REQUEST, "the run made no model call"
    """)
    assert [m for m in found if m not in ENDPOINT_SDKS] == [], \
        f"the run imported {found} before its first model call"
