"""The answers file: read, `--set`, written back; every key checked by its rule in the tree's `answers:` table.

Layered like copier: `--set KEY=VALUE` over the file over the tree's defaults. Unknown keys, wrong types and
out-of-range values are rejected by name with one line (InputError → exit 2), by the same function (answer_rules.
parse) that checks the wizards' answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wizard.errors import InputError
from wizard.session.answer_rules import rules, validate_answers
from wizard.yaml_file import parse_yaml, read_yaml

__all__ = ["accepted_values", "dump_answers", "keys", "load_answers_file", "parse_set", "recorded", "validate_answers"]


def keys() -> tuple[str, ...]:
    """Every answers-file key, in the order of the tree's `answers:` table (the order answers.yaml is written in)."""
    return tuple(rules())


def recorded(answers: dict[str, Any]) -> dict[str, Any]:
    """The answers a starter repo records (answers.yaml): the known keys, in the table's order."""
    return {k: answers[k] for k in keys() if k in answers}


def load_answers_file(path: Path) -> dict[str, Any]:
    """Read and validate an answers YAML file."""
    return validate_answers(read_yaml(path, "--answers") or {}, where=path.name)


def text_keys() -> set[str]:
    """Answers keys whose value is text (model, names): `--set` takes those verbatim."""
    return {k for k, r in rules().items() if r.type == "text"}


def parse_set(items: list[str]) -> dict[str, Any]:
    """`--set KEY=VALUE` pairs; VALUE is read as YAML (numbers, true/false, {input: 1, output: 2}), except for
    text keys, taken as written (a folder `a #b` or a model named `123` must not become `a` or a number)."""
    out: dict[str, Any] = {}
    texts = text_keys()
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip(" \t")  # str.strip() would also drop U+2028 and turn "tp\u2028" into tp
        if not sep or not key:
            raise InputError("--set", item, "expected KEY=VALUE")
        if key in texts:
            out[key] = value
            continue
        out[key] = parse_yaml(value, f"--set {key}", value) if value.strip() else ""
    return validate_answers(out, where="--set")


def dump_answers(answers: dict[str, Any]) -> str:
    """The answers as a YAML file that replays the same plan (keys in the table's order)."""
    import yaml

    return yaml.safe_dump(recorded(answers), sort_keys=False, allow_unicode=True)


def accepted_values() -> dict[str, list[Any] | None]:
    """Per answers-file key, the values a choice accepts (None: any value of its type). For tree lint."""
    from wizard.session.answer_rules import choice_values

    return {k: (choice_values(r) if r.type == "choice" and r.choices_from != "model_catalog" else None)
            for k, r in rules().items()}
