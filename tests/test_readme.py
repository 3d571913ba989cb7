"""The README opens with the two commands, and CI runs exactly the second one."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text(), flags=re.S)


def test_readme_opens_with_two_commands():
    text = (ROOT / "README.md").read_text()
    first_block = text.index("```bash")
    assert text[:first_block].strip().startswith("# llm-deploy-wizard")
    assert len(text[:first_block].strip().splitlines()) == 1  # nothing but the title before the commands
    commands = readme_commands()
    assert len(commands) >= 2
    assert "llm-deploy-wizard" in commands[0] and "pip install" in commands[0]
    assert "pytest" in commands[1] and "[test]" in commands[1]


def test_ci_runs_exactly_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert readme_commands()[1] in ci
