"""Run the command line as a user does: a separate process, its exit status, stdout and stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: str | None = None) -> Run:
    """`python -m wizard ARGS` with the Hub switched off (no test may reach the network)."""
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1", "COLUMNS": "200", **(env or {})}
    p = subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, env=full_env,
                       cwd=cwd, timeout=60)
    return Run(p.returncode, p.stdout, p.stderr)


def assert_one_line_error(run: Run, *words: str) -> None:
    """DESIGN.md's contract for bad input: exit 2, one line naming what is wrong, no traceback, no stdout."""
    assert run.code == 2, (run.code, run.err)
    lines = run.err.strip().splitlines()
    assert len(lines) == 1, run.err
    assert "Traceback" not in run.err
    assert run.out == ""
    for w in words:
        assert w in lines[0], (w, lines[0])


def run_main(*args: str) -> Run:
    """The command line in-process (`main(argv)`): the same contract as run_cli, without a new interpreter.

    Anything escaping main() is a test failure by itself (the contract is no traceback, ever)."""
    import contextlib
    import io

    from wizard.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as e:  # argparse's usage errors
            code = e.code if isinstance(e.code, int) else 2
    return Run(code, out.getvalue(), err.getvalue())
