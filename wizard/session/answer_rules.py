"""Parse and validate one answer by its rule from the tree's `answers:` table — the one function every reader of
answers calls: the answers file, `--set`, the session file (typed YAML values), `ask` and the full-screen wizard
(text a person typed). A bound or a choice therefore exists once, in trees/deployment.yaml (copier's
Question.parse_answer / validate_answer is the model).
"""

from __future__ import annotations

import difflib
import math
import re
from functools import lru_cache
from typing import Any

from wizard.errors import InputError
from wizard.tree.schema import AnswerRule

# YAML 1.1 reads `1e6` (no dot) as text: a number written that way in an answers file is still a number.
NUMBER_TEXT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+$")
YES, NO = ("y", "yes", "true"), ("n", "no", "false")  # not 1/0: the answers file refuses a number there too


@lru_cache(maxsize=1)
def rules() -> dict[str, AnswerRule]:
    """Every answers-file key's rule, in the table's order (the answers file's order too)."""
    from wizard.tree.loader import bundled_tree

    return dict(bundled_tree().answers)


def parse(rule: AnswerRule, value: Any, name: str, *, typed: bool) -> Any:
    """The value an answer means, or an InputError naming `name`, the value and what is accepted.

    typed=True: a value YAML built (answers file, `--set`, session file): it must already be of its type — a
    yes/no is not a number, "16" is not a number, 1 is not a yes/no. typed=False: an answer a person typed or
    picked; text is read by the key's type ("16", "yes", "Kubernetes")."""
    if value is None or (not typed and isinstance(value, str) and not value.strip()):
        if rule.optional:
            return None
        raise InputError(name, value, "an answer is required")
    if rule.type == "bool":
        return _bool(value, name, typed)
    if rule.type == "number":
        return _number(rule, value, name, typed)
    if rule.type == "choice" and rule.choices_from != "model_catalog":
        return _choice(rule, value, name)
    if rule.type == "mapping":
        return _mapping(rule, value, name)
    return _text(rule, value, name)


def _bool(value: Any, name: str, typed: bool) -> bool:
    if isinstance(value, bool):
        return value
    if not typed and isinstance(value, str):
        text = value.strip().lower()
        if text in YES:
            return True
        if text in NO:
            return False
        raise InputError(name, value, "expected yes or no")
    raise InputError(name, value, "expected true or false")


def _number(rule: AnswerRule, value: Any, name: str, typed: bool) -> int | float:
    kind = "a whole number" if rule.integer else "a number"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(name, value, f"expected {kind}")
    if isinstance(value, str):
        text = value.strip()
        if typed and not NUMBER_TEXT.match(text):  # "16" in YAML is text someone quoted; 1e6 is YAML 1.1's
            raise InputError(name, value, f"expected {kind}")
        try:
            number = float(text)
        except ValueError:
            raise InputError(name, value, f"expected {kind}") from None
    else:
        number = value  # an int compares exactly with the float bounds, however large (no float() overflow)
    if isinstance(number, float) and not math.isfinite(number):  # "inf", "nan", 1e309: not an answer
        raise InputError(name, value, f"expected a finite {kind.removeprefix('a ')}")
    if rule.integer:
        if number != int(number):
            raise InputError(name, value, f"expected {kind}")
        number = int(number)
    low, high = rule.minimum, rule.maximum
    if low is not None and (number < low or (rule.exclusive_minimum and number == low)):
        raise InputError(name, value, f"expected {kind} {_range(rule)}")
    if high is not None and number > high:
        raise InputError(name, value, f"expected {kind} {_range(rule)}")
    return number


def _range(rule: AnswerRule) -> str:
    low = None if rule.minimum is None else _figure(rule.minimum)
    high = None if rule.maximum is None else _figure(rule.maximum)
    if low is not None and high is not None:
        return f"from {low} to {high}" + (f" ({low} excluded)" if rule.exclusive_minimum else "")
    if low is not None:
        return f"> {low}" if rule.exclusive_minimum else f">= {low}"
    return f"<= {high}" if high is not None else ""


def _figure(x: float) -> str:
    return f"{int(x):,}" if x == int(x) else f"{x:g}"


def choice_values(rule: AnswerRule) -> list[Any]:
    """The values a choice key accepts (a catalog's ids for catalog-backed ones, `auto` first for the GPU)."""
    if rule.choices_from == "gpu_catalog":
        from wizard.sources.catalog import gpu_catalog

        return ["auto"] + [g.id for g in gpu_catalog()]
    return [c.value for c in rule.choices]


def _choice(rule: AnswerRule, value: Any, name: str) -> Any:
    allowed = choice_values(rule)
    if isinstance(value, str):
        text = value.strip().lower()
        for a in allowed:
            if isinstance(a, str) and a.lower() == text:
                return a
    elif value in allowed and not isinstance(value, bool):
        return value
    if isinstance(value, str) and rule.choices_from == "gpu_catalog":
        from wizard.sources.suggest import gpu_suggestions  # noqa: PLC0415 (only when the answer is refused)

        close = gpu_suggestions(value, [str(a) for a in allowed if a != "auto"])
        if close:
            raise InputError(name, value, "not a catalog GPU id; did you mean " + (
                close[0] if len(close) == 1 else "one of " + ", ".join(close)) + "?")
    raise InputError(name, value, "expected one of " + ", ".join(str(a) for a in allowed))


def _mapping(rule: AnswerRule, value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(name, value, "expected a mapping of " + ", ".join(rule.fields))
    out: dict[str, Any] = {}
    for key, sub in value.items():
        if key not in rule.fields:
            raise InputError(f"{name}.{key}", sub, unknown_key_text(key, rule.fields))
        parsed = parse(rule.fields[str(key)], sub, f"{name}.{key}", typed=True)
        if parsed is not None:
            out[str(key)] = parsed
    for key, sub_rule in rule.fields.items():
        if not sub_rule.optional and key not in out:
            raise InputError(f"{name}.{key}", "missing", f"expected {sub_rule.describe}")
    return out


def _text(rule: AnswerRule, value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InputError(name, value, "expected text")
    text = value.strip()
    if not text:
        raise InputError(name, value, "an answer is required")
    if rule.max_length is not None and len(text) > rule.max_length:
        raise InputError(name, text, f"expected at most {rule.max_length} characters")
    # A line break (\r, U+0085, U+2028) or control character would end a comment in a generated file, and YAML
    # folds some of them: answers.yaml would no longer replay the same value.
    if not text.isprintable():
        raise InputError(name, text, "expected printable text: no line breaks, tabs or control characters")
    if rule.name_rule is not None:
        from wizard.artifacts.context import NAME_RULES  # shared with the starter repo's own check

        pattern, accepted = NAME_RULES[rule.name_rule]
        if not pattern.fullmatch(text):
            raise InputError(name, text, accepted)
    return text


def unknown_key_text(key: Any, known: Any) -> str:
    """'unknown key; did you mean X?' for a near miss, else the accepted keys."""
    names = [str(k) for k in known]
    close = difflib.get_close_matches(str(key), names, n=1, cutoff=0.75) if isinstance(key, str) else []
    if close:
        return f"unknown key; did you mean {close[0]}?"
    return "unknown key; accepted keys: " + ", ".join(names)


def validate_answers(data: Any, where: str = "answers") -> dict[str, Any]:
    """Every key of a YAML mapping checked by its rule; returns the parsed values of the keys given."""
    if not isinstance(data, dict):
        raise InputError(where, type(data).__name__, "expected a mapping of keys to values")
    table = rules()
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in table:
            raise InputError(f"{where}: {key}", value, unknown_key_text(key, table))
        out[key] = parse(table[key], value, f"{where}: {key}", typed=True)
    return out


def json_schema() -> dict[str, Any]:
    """The answers file's JSON Schema (draft 2020-12), generated from the same rules."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "llm-deploy-wizard answers file",
        "type": "object",
        "additionalProperties": False,
        "required": ["model"],
        "properties": {key: _rule_schema(rule) for key, rule in rules().items()},
    }


def _rule_schema(rule: AnswerRule) -> dict[str, Any]:
    s: dict[str, Any] = {"description": rule.describe}
    if rule.type == "bool":
        s["type"] = "boolean"
    elif rule.type == "number":
        s["type"] = "integer" if rule.integer else "number"
        if rule.minimum is not None:
            s["exclusiveMinimum" if rule.exclusive_minimum else "minimum"] = rule.minimum
        if rule.maximum is not None:
            s["maximum"] = rule.maximum
    elif rule.type == "choice" and rule.choices_from != "model_catalog":
        s["enum"] = choice_values(rule)
    elif rule.type == "mapping":
        s |= {"type": "object", "additionalProperties": False,
              "properties": {k: _rule_schema(r) for k, r in rule.fields.items()},
              "required": [k for k, r in rule.fields.items() if not r.optional]}
    else:
        s["type"] = "string"
        if rule.max_length:
            s["maxLength"] = rule.max_length
        if rule.name_rule:
            from wizard.artifacts.context import NAME_RULES

            s["pattern"] = f"^{NAME_RULES[rule.name_rule][0].pattern}$"
    if rule.default is not None:
        s["default"] = rule.default
    if rule.optional and rule.type != "mapping":
        s = {"anyOf": [s, {"type": "null"}], "description": s.pop("description")}
    return s
