"""The answers file: read, `--set`, written back; every key checked by its rule in the tree's `answers:` table.

Layered like copier: `--set KEY=VALUE` over the file over the user's defaults file over the tree's defaults.
Unknown keys, wrong types and out-of-range values are rejected by name with one line (InputError → exit 2), by
the same function (answer_rules.parse) that checks the wizards' answers.

The user's defaults (`plan` reads them; the interactive wizards do not): `$XDG_CONFIG_HOME/llm-deploy-wizard/
defaults.yaml`, XDG_CONFIG_HOME being ~/.config when unset, empty or relative (as the XDG spec says). It holds
answers-file keys that are the same for every deployment of a team (namespace, storage_class, gpu_hour_usd,
staff_usd_month, ...), checked by the same rules, an error naming the file and the key. The keys that name one
deployment (NOT_DEFAULTS) are refused there. No file is no defaults.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from wizard.errors import InputError
from wizard.session.answer_rules import rules, validate_answers
from wizard.yaml_file import parse_yaml, read_yaml

__all__ = ["accepted_values", "defaults_file", "dump_answers", "keys", "load_answers_file", "load_defaults", "parse_set",
           "recorded", "validate_answers"]

# keys that name one deployment: a default would give every plan the same model or the same names
NOT_DEFAULTS = ("model", "app_name", "served_model_name")


def keys() -> tuple[str, ...]:
    """Every answers-file key, in the order of the tree's `answers:` table (the order answers.yaml is written in)."""
    return tuple(rules())


def recorded(answers: dict[str, Any]) -> dict[str, Any]:
    """The answers a starter repo records (answers.yaml): the known keys, in the table's order."""
    return {k: answers[k] for k in keys() if k in answers}


def load_answers_file(path: Path) -> dict[str, Any]:
    """Read and validate an answers YAML file."""
    return validate_answers(read_yaml(path, "--answers") or {}, where=path.name)


def defaults_file() -> Path | None:
    """Where the user's defaults are: $XDG_CONFIG_HOME/llm-deploy-wizard/defaults.yaml (else ~/.config/...);
    None when there is no home folder to look in."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(base):
        try:
            base = str(Path.home() / ".config")
        except (RuntimeError, KeyError):  # no HOME and no password entry
            return None
    return Path(base) / "llm-deploy-wizard" / "defaults.yaml"


def load_defaults(path: Path | None = None) -> dict[str, Any]:
    """The user's defaults, validated as answers ({} when there is no such file); InputError names the file."""
    path = path or defaults_file()
    if path is None or not os.path.lexists(path):
        return {}
    data = read_yaml(path, "defaults")
    if data is None:  # an empty file
        return {}
    for key in NOT_DEFAULTS:
        if isinstance(data, dict) and key in data:
            raise InputError(f"{path}: {key}", data[key], "it names one deployment, so it has no default: give "
                             "it in the answers file or with --set")
    return validate_answers(data, where=str(path))


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
