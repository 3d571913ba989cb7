"""The decision tree's schema: strict typed nodes, so a typo in a key is an error at load.

A tree is data (trees/deployment.yaml): question, compute and recommendation nodes joined by ordered edges
whose conditions are structured ({var, op, value} composed with all / any / not), never code. The nodes are
frozen standard-library dataclasses: pydantic validates a tree file into them through a TypeAdapter (the
loader), and generates the published JSON Schema (`llm-deploy-wizard tree schema`), but the classes themselves
cost no pydantic import — a validated tree is cached (tree/cache.py), so `plan` reads it without building a
single pydantic schema. Pydantic reads each field's `metadata` (alias, min_length, description) and
`__pydantic_config__` (unknown keys are errors).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union

Op = Literal["eq", "ne", "lt", "le", "gt", "ge", "in"]
Scalar = Union[bool, int, float, str, None]
Form = Literal["cpu", "single_gpu", "single_node_multi_gpu", "multi_node", "managed_api"]
ExposureName = Literal["none", "gateway", "kubernetes", "managed_api"]


class _Strict:
    __slots__ = ()
    __pydantic_config__ = {"extra": "forbid"}


class _Tagged:
    """Annotated marker: a union told apart by one key (pydantic's discriminated union: one clear error for the
    member the key names, instead of one per member). Imports pydantic only when a schema is built."""

    def __init__(self, key: str) -> None:
        self.key = key

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic import Discriminator

        return handler.generate_schema(Annotated[source, Discriminator(self.key)])


def _edges() -> Any:
    return field(metadata={"min_length": 1})


@dataclass(frozen=True, slots=True, kw_only=True)
class Compare(_Strict):
    """`var op value`: the variable is an answer or a fact computed earlier on the path."""

    var: str
    op: Op
    value: Union[Scalar, list[Scalar]]


@dataclass(frozen=True, slots=True, kw_only=True)
class All(_Strict):
    all: list[Condition] = field(metadata={"min_length": 1})


@dataclass(frozen=True, slots=True, kw_only=True)
class Any_(_Strict):
    any: list[Condition] = field(metadata={"min_length": 1})


@dataclass(frozen=True, slots=True, kw_only=True)
class Not(_Strict):
    not_: Condition = field(metadata={"alias": "not"})


Condition = Union[Compare, All, Any_, Not]


@dataclass(frozen=True, slots=True, kw_only=True)
class Edge(_Strict):
    """Go to `goto` when `when` holds; an edge without `when` is the catch-all and must come last."""

    when: Condition | None = None
    goto: str
    why: str = ""  # Jinja2 text over answers and facts, shown in the plan's path


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice(_Strict):
    value: Union[str, bool, int]
    label: str
    help: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerRule(_Strict):
    """The one definition of an answers-file key: its type, bounds, choices and default (the tree's `answers:`).

    Question nodes ask for a key and get these fields filled in by the loader; every reader of answers (the
    answers file, `--set`, the session file, `ask`, the full-screen wizard) validates through them."""

    type: Literal["choice", "number", "bool", "text", "mapping"]
    describe: str  # the meaning, with its unit and §: shown in docs and the JSON Schema
    default: Union[Scalar, list[Scalar]] = None
    optional: bool = False  # may be absent (a question may then be left empty)
    choices: list[Choice] = field(default_factory=list)
    choices_from: Literal["gpu_catalog", "model_catalog"] | None = None  # choices filled from a catalog
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False  # numbers: the minimum itself is not accepted
    integer: bool = True  # numbers: whole numbers unless false
    max_length: int | None = None  # text: at most this many characters
    name_rule: Literal["app_name", "namespace", "served_model_name", "storage_class", "server_image"] | None = None  # text: a Kubernetes name rule
    fields: dict[str, AnswerRule] = field(default_factory=dict)  # mappings: the rule of each key inside


@dataclass(frozen=True, slots=True, kw_only=True)
class DefaultIf(_Strict):
    """A question's default when `when` holds over the answers and facts so far (the first that holds wins)."""

    when: Condition
    value: Union[Scalar, list[Scalar]]


@dataclass(frozen=True, slots=True, kw_only=True)
class UpperBound(_Strict):
    """An answer's maximum known only once earlier answers are in (a fact, e.g. the model's longest context):
    a larger answer is refused at its question with `why`, a Jinja2 text over the answers and facts."""

    fact: str
    why: str


# What a question node takes from its key's rule (the loader fills them; a node restating one is an error).
RULE_FIELDS = ("type", "optional", "choices", "choices_from", "minimum", "maximum", "integer")


@dataclass(frozen=True, slots=True, kw_only=True)
class Question(_Strict):
    """Asks for one answers-file key (`var`). `section` names the guide section (§N of docs/guide) the help quotes."""

    kind: Literal["question"]
    var: str
    type: Literal["choice", "number", "bool", "text"]
    prompt: str
    help: str
    section: str
    default: Union[Scalar, list[Scalar]] = None
    choices: list[Choice] = field(default_factory=list)
    choices_from: Literal["gpu_catalog", "model_catalog"] | None = None  # choices filled from a catalog
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = True  # number questions: whole numbers unless false
    optional: bool = False  # may be left empty (then the key is absent from the answers)
    default_if: list[DefaultIf] = field(default_factory=list)  # defaults that depend on earlier answers
    maximum_from: UpperBound | None = None  # a bound that depends on earlier answers
    # values `tree lint` tries in its example answers when the real engine, not the tree's conditions, decides the
    # road (a model that fits one card, one that needs a node, one that needs several)
    examples: list[Union[str, bool, int, float]] = field(default_factory=list)
    next: list[Edge] = _edges()


@dataclass(frozen=True, slots=True, kw_only=True)
class Output(_Strict):
    """A fact a compute node stores; its type lets lint probe branches without computing."""

    type: Literal["bool", "number", "choice", "text"]
    choices: list[str] = field(default_factory=list)
    describe: str = ""


def output_problems(outputs: dict[str, Output], result: dict[str, Any]) -> list[str]:
    """How a compute function's result breaks its node's declared outputs: a fact missing or undeclared, or of
    another type than declared (a yes/no is not a number; a choice is one of its choices). Empty when it holds."""
    problems = [f"{k}: declared but not returned" for k in outputs if k not in result]
    problems += [f"{k}: returned but not declared" for k in result if k not in outputs]
    for key, out in outputs.items():
        if key not in result:
            continue
        value = result[key]
        ok = {
            "bool": isinstance(value, bool),
            "number": isinstance(value, (int, float)) and not isinstance(value, bool),
            "text": isinstance(value, str),
            "choice": isinstance(value, str) and (not out.choices or value in out.choices),
        }[out.type]
        if not ok:
            problems.append(f"{key}: {value!r} is not a {out.type}" + (f" of {out.choices}" if out.choices else ""))
    return problems


@dataclass(frozen=True, slots=True, kw_only=True)
class Compute(_Strict):
    """Calls a named function of the session's registry (which calls the sizing core) and stores facts."""

    kind: Literal["compute"]
    function: str
    title: str
    section: str
    outputs: dict[str, Output]
    next: list[Edge] = _edges()


@dataclass(frozen=True, slots=True, kw_only=True)
class ExposureMap(_Strict):
    """Exposure looked up from an answer (guide §6: exposure follows operations capability)."""

    var: str
    map: dict[str, ExposureName]


@dataclass(frozen=True, slots=True, kw_only=True)
class Recommendation(_Strict):
    """A leaf: the deployment form, how it is exposed, what the starter repo contains, and why."""

    kind: Literal["recommendation"]
    form: Form
    exposure: Union[ExposureName, ExposureMap]
    title: str
    summary: str  # Jinja2 text over answers and facts
    section: str
    generate: list[Literal["launch", "multinode", "batch", "k8s", "client"]] = field(default_factory=list)
    boundary: str = ""  # the guide §12 boundary case this leaf serves, if any


Node = Annotated[Union[Question, Compute, Recommendation], _Tagged("kind")]


@dataclass(frozen=True, slots=True, kw_only=True)
class WarningRule(_Strict):
    """A warning attached to the plan when `when` holds over answers and facts (guide §10 misconceptions)."""

    id: str
    when: Condition
    message: str  # Jinja2 text
    section: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WhyNot(_Strict):
    when: Condition | None = None
    why: str  # Jinja2 text


@dataclass(frozen=True, slots=True, kw_only=True)
class Alternative(_Strict):
    """Why a form was not chosen: the first matching reason (the last may be a catch-all)."""

    form: Form
    reasons: list[WhyNot] = field(metadata={"min_length": 1})


@dataclass(frozen=True, slots=True, kw_only=True)
class Tree(_Strict):
    version: Literal[1]
    title: str
    start: str
    answers: dict[str, AnswerRule]
    nodes: dict[str, Node]
    warnings: list[WarningRule] = field(default_factory=list)
    alternatives: list[Alternative] = field(default_factory=list)


def default_in(q: Question, env: dict[str, Any]) -> Any:
    """The default a question offers after these answers and facts: the first `default_if` that holds, else its own."""
    return next((d.value for d in q.default_if if evaluate(d.when, env)), q.default)


def condition_vars(c: Any) -> set[str]:
    """Every variable a condition reads."""
    if c is None:
        return set()
    if isinstance(c, Compare):
        return {c.var}
    if isinstance(c, All):
        return set().union(*(condition_vars(x) for x in c.all))
    if isinstance(c, Any_):
        return set().union(*(condition_vars(x) for x in c.any))
    return condition_vars(c.not_)


def compares(c: Any) -> list[Compare]:
    """Every comparison inside a condition (lint probes their values)."""
    if c is None:
        return []
    if isinstance(c, Compare):
        return [c]
    if isinstance(c, All):
        return [y for x in c.all for y in compares(x)]
    if isinstance(c, Any_):
        return [y for x in c.any for y in compares(x)]
    return compares(c.not_)


def evaluate(c: Any, env: dict[str, Any]) -> bool:
    """Evaluate a structured condition; a variable that is absent compares as None."""
    if c is None:
        return True
    if isinstance(c, All):
        return all(evaluate(x, env) for x in c.all)
    if isinstance(c, Any_):
        return any(evaluate(x, env) for x in c.any)
    if isinstance(c, Not):
        return not evaluate(c.not_, env)
    left = env.get(c.var)
    right = c.value
    if c.op == "eq":
        return left == right
    if c.op == "ne":
        return left != right
    if c.op == "in":
        return left in (right if isinstance(right, list) else [right])
    if left is None or right is None or isinstance(left, str) or isinstance(right, (str, list)):
        return False  # an ordering against a missing or non-numeric value never holds
    return {"lt": left < right, "le": left <= right, "gt": left > right, "ge": left >= right}[c.op]


def describe(c: Any) -> str:
    """A condition as a reviewer reads it: `fits_one_gpu = true and workload = online`."""
    if c is None:
        return "otherwise"
    if isinstance(c, All):
        return " and ".join(describe(x) for x in c.all)
    if isinstance(c, Any_):
        return "(" + " or ".join(describe(x) for x in c.any) + ")"
    if isinstance(c, Not):
        return f"not ({describe(c.not_)})"
    symbol = {"eq": "=", "ne": "≠", "lt": "<", "le": "≤", "gt": ">", "ge": "≥", "in": "in"}[c.op]
    value = str(c.value).lower() if isinstance(c.value, bool) else c.value
    return f"{c.var} {symbol} {value}"
