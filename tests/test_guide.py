"""The guide ships with the tool (issue #16): docs/guide/ holds §1–§13, every "§N" a user reads resolves to one of
them, and no user-facing text cites the developers' own documents.

Scanned: the trees (their strings, as the wizard shows them), every template, README.md, the full-screen wizard's
string literals and stylesheets, report.py's string literals, the published tree schema, and every file of a
generated starter repo for each scenario.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from cli_run import run_main
from wizard import guide

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted(p.stem for p in (ROOT / "tests" / "scenarios").glob("*.yaml"))
INTERNAL = re.compile(r"DOMAIN|DESIGN\.md|shared/|find_string")


def strings_of(data) -> list[str]:
    """Every string in parsed YAML (keys and values): what the tree's readers can show."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for k, v in data.items() for s in (*strings_of(k), *strings_of(v))]
    if isinstance(data, list):
        return [s for v in data for s in strings_of(v)]
    return []


def literals(path: Path) -> list[str]:
    """The string literals of a Python file a user can see: docstrings (developers') and comments left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                docstrings.add(id(first.value))
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


def user_texts() -> dict[str, str]:
    """Each user-facing source file's text, by its path in the repository."""
    out: dict[str, str] = {}
    for path in sorted((ROOT / "trees").glob("*.yaml")):
        out[str(path.relative_to(ROOT))] = "\n".join(strings_of(yaml.safe_load(path.read_text(encoding="utf-8"))))
    out["trees/deployment.schema.json"] = (ROOT / "trees" / "deployment.schema.json").read_text(encoding="utf-8")
    for path in sorted((ROOT / "templates").rglob("*")):
        if path.is_file():
            out[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    out["README.md"] = (ROOT / "README.md").read_text(encoding="utf-8")
    for path in sorted((ROOT / "wizard" / "tui").rglob("*")):
        if path.suffix == ".tcss":
            out[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
        elif path.suffix == ".py":
            out[str(path.relative_to(ROOT))] = "\n".join(literals(path))
    for path in sorted((ROOT / "wizard").rglob("*.py")):  # help texts, notes, warnings: every string literal
        if "tui" not in path.parts:
            out[str(path.relative_to(ROOT))] = "\n".join(literals(path))
    for path in sorted((ROOT / "wizard").rglob("*.json")):  # catalog notes and sources users read (`gpus ID`)
        out[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return out


def check(texts: dict[str, str]) -> list[str]:
    """Problems: a § that names no section, or a citation of an internal document."""
    numbers = {s.number for s in guide.sections()}
    problems = []
    for name, text in texts.items():
        for n in guide.cited(text):
            if n not in numbers:
                problems.append(f"{name}: §{n} is no section of docs/guide")
        for line in text.splitlines():
            if INTERNAL.search(line):
                problems.append(f"{name}: cites an internal document: {line.strip()[:160]}")
    return problems


def test_every_section_reference_in_user_texts_resolves_and_none_cites_internal_documents():
    texts = user_texts()
    assert len(texts) > 30 and any("§" in t for t in texts.values())
    assert check(texts) == []


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_file_of_a_generated_starter_repo_cites_only_the_guide(name, tmp_path):
    out = tmp_path / name
    r = run_main("plan", "--answers", str(ROOT / "tests" / "scenarios" / f"{name}.yaml"), "--out", str(out))
    assert r.code == 0, r.err
    files = {str(p.relative_to(out)): p.read_text(encoding="utf-8") for p in sorted(out.rglob("*")) if p.is_file()}
    assert "RATIONALE.md" in files and "plan.json" in files
    assert "guide §" in files["RATIONALE.md"]
    assert check({f"{name}/{k}": v for k, v in files.items()}) == []


def test_section_5_is_the_rule_of_replicas_against_parallelism():
    s = guide.section(5)
    assert s.number == 5
    assert s.title == "Replicas vs parallelism"
    assert "If it fits, use replicas; only if it doesn't, use parallelism." in s.text
    assert "replicas × throughput of one replica" in s.text


def test_sections_1_to_13_exist_and_each_heading_matches_its_file_name():
    sections = guide.sections()
    assert [s.number for s in sections] == list(range(1, 14))
    files = sorted(guide.guide_dir().glob("[0-9][0-9]-*.md"))
    assert len(files) == 13
    for path in files:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        m = re.fullmatch(r"# §(\d+) (.+)", first)
        assert m, (path.name, first)
        assert int(m.group(1)) == int(path.name[:2]), path.name
        assert guide.section(int(m.group(1))).path == path
    assert guide.section(2).heading == "§2 Does it fit one card?"


def test_an_unknown_section_is_one_input_error():
    from wizard.errors import InputError

    with pytest.raises(InputError, match="§1 to §13"):
        guide.section(14)


def test_the_guide_is_self_contained():
    """No section, index or reference page points at development documents or paths; every formula of §2 is there."""
    docs = ROOT / "docs"
    for path in sorted(docs.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"DOMAIN|DESIGN|shared/|seed/|/work/|STYLE\.md", text), path.name
        for n in guide.cited(text):
            assert 1 <= n <= 13, (path.name, n)
        for link in re.findall(r"\]\(([^)#]+)\)", text):
            if not link.startswith("http"):
                assert (path.parent / link).resolve().is_file(), (path.name, link)
    fit = guide.section(2).text
    for formula in ("parameters × bits per weight / 8", "layers × 2 × KV heads × head dim × bytes per element",
                    "≤ card memory × utilization target", "config.json", "start-up log"):
        assert formula in fit, formula


def test_the_guide_loader_imports_nothing_heavy():
    import subprocess
    import sys

    code = ("import sys, wizard.guide as g; g.sections(); "
            "print(' '.join(m for m in ('textual', 'huggingface_hub', 'pydantic', 'rich', 'yaml', 'jinja2') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == ""


def test_the_guide_command_prints_a_section_and_the_list():
    """`llm-deploy-wizard guide 5` prints the replicas-vs-parallelism rule; without a number, the sections; a number
    that is no section is one line, exit 2."""
    from cli_run import assert_one_line_error, run_main

    r = run_main("guide", "5")
    assert r.code == 0 and "§5 Replicas vs parallelism" in r.out and "If it fits, use replicas" in r.out
    listing = run_main("guide")
    assert listing.code == 0 and all(f"§{n} " in listing.out for n in range(1, 14))
    assert run_main("guide", "§2").code == 0
    assert_one_line_error(run_main("guide", "99"), "section", "99", "§1 to §13")


def test_every_rule_a_check_message_names_is_in_the_checks_document():
    """`check DIR` messages name their rule ("[item 13]", "[probes]", "[consistency]"): each resolves to
    docs/starter-repo-checks.md (a numbered item or a section), and none cites a guide § (they are not its rules)."""
    source = "\n".join(literals(ROOT / "wizard" / "artifacts" / "repo_checks.py"))
    doc = (ROOT / "docs" / "starter-repo-checks.md").read_text(encoding="utf-8")
    items = {int(n) for n in re.findall(r"\[item (\d+)\]", source)}
    assert items and items == set(range(1, max(items) + 1))
    listed = {int(n) for n in re.findall(r"^(\d+)\. \*\*", doc, re.M)}
    assert items <= listed
    tags = set(re.findall(r"\[(probes|consistency)\]", source))
    assert tags == {"probes", "consistency"}
    assert {t.title() for t in tags} <= set(re.findall(r"^## (\w+)", doc, re.M))
    assert not re.search(r"\[§", source)
    assert "docs/starter-repo-checks.md" in (ROOT / "README.md").read_text(encoding="utf-8")
