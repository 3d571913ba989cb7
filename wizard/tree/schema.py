"""The decision tree's schema: strict pydantic models, so a typo in a key is an error at load.

A tree is data (trees/deployment.yaml): question, compute and recommendation nodes joined by ordered edges
whose conditions are structured ({var, op, value} composed with all / any / not), never code. The same
models generate the published JSON Schema (`llm-deploy-wizard tree schema`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

STRICT = ConfigDict(extra="forbid", frozen=True)

Op = Literal["eq", "ne", "lt", "le", "gt", "ge", "in"]
Scalar = Union[bool, int, float, str, None]


class Compare(BaseModel):
    """`var op value`: the variable is an answer or a fact computed earlier on the path."""

    model_config = STRICT
    var: str
    op: Op
    value: Union[Scalar, list[Scalar]]


class All(BaseModel):
    model_config = STRICT
    all: list[Condition] = Field(min_length=1)


class Any_(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    any: list[Condition] = Field(min_length=1)


class Not(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    not_: Condition = Field(alias="not")


Condition = Union[Compare, All, Any_, Not]


class Edge(BaseModel):
    """Go to `goto` when `when` holds; an edge without `when` is the catch-all and must come last."""

    model_config = STRICT
    when: Condition | None = None
    goto: str
    why: str = ""  # Jinja2 text over answers and facts, shown in the plan's path


class Choice(BaseModel):
    model_config = STRICT
    value: Union[str, bool, int]
    label: str
    help: str = ""


class AnswerRule(BaseModel):
    """The one definition of an answers-file key: its type, bounds, choices and default (the tree's `answers:`).

    Question nodes ask for a key and get these fields filled in by the loader; every reader of answers (the
    answers file, `--set`, the session file, `ask`, the full-screen wizard) validates through them."""

    model_config = STRICT
    type: Literal["choice", "number", "bool", "text", "mapping"]
    describe: str  # the meaning, with its unit and §: shown in docs and the JSON Schema
    default: Union[Scalar, list[Scalar]] = None
    optional: bool = False  # may be absent (a question may then be left empty)
    choices: list[Choice] = []
    choices_from: Literal["gpu_catalog", "model_catalog"] | None = None  # choices filled from a catalog
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False  # numbers: the minimum itself is not accepted
    integer: bool = True  # numbers: whole numbers unless false
    max_length: int | None = None  # text: at most this many characters
    name_rule: Literal["app_name", "namespace", "served_model_name"] | None = None  # text: a Kubernetes name rule
    fields: dict[str, AnswerRule] = {}  # mappings: the rule of each key inside


# What a question node takes from its key's rule (the loader fills them; a node restating one is an error).
RULE_FIELDS = ("type", "optional", "choices", "choices_from", "minimum", "maximum", "integer")


class Question(BaseModel):
    """Asks for one answers-file key (`var`). `section` names the DOMAIN.md rule the help quotes."""

    model_config = STRICT
    kind: Literal["question"]
    var: str
    type: Literal["choice", "number", "bool", "text"]
    prompt: str
    help: str
    section: str
    default: Union[Scalar, list[Scalar]] = None
    choices: list[Choice] = []
    choices_from: Literal["gpu_catalog", "model_catalog"] | None = None  # choices filled from a catalog
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = True  # number questions: whole numbers unless false
    optional: bool = False  # may be left empty (then the key is absent from the answers)
    next: list[Edge] = Field(min_length=1)


class Output(BaseModel):
    """A fact a compute node stores; its type lets lint probe branches without computing."""

    model_config = STRICT
    type: Literal["bool", "number", "choice", "text"]
    choices: list[str] = []
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


class Compute(BaseModel):
    """Calls a named function of the session's registry (which calls the sizing core) and stores facts."""

    model_config = STRICT
    kind: Literal["compute"]
    function: str
    title: str
    section: str
    outputs: dict[str, Output]
    next: list[Edge] = Field(min_length=1)


class ExposureMap(BaseModel):
    """Exposure looked up from an answer (DOMAIN §6: exposure follows operations capability)."""

    model_config = STRICT
    var: str
    map: dict[str, Literal["none", "gateway", "kubernetes", "managed_api"]]


Form = Literal["cpu", "single_gpu", "single_node_multi_gpu", "multi_node", "managed_api"]


class Recommendation(BaseModel):
    """A leaf: the deployment form, how it is exposed, what the starter repo contains, and why."""

    model_config = STRICT
    kind: Literal["recommendation"]
    form: Form
    exposure: Union[Literal["none", "gateway", "kubernetes", "managed_api"], ExposureMap]
    title: str
    summary: str  # Jinja2 text over answers and facts
    section: str
    generate: list[Literal["launch", "multinode", "batch", "k8s", "client"]] = []
    boundary: str = ""  # the DOMAIN §12 boundary case this leaf serves, if any


Node = Annotated[Union[Question, Compute, Recommendation], Field(discriminator="kind")]


class WarningRule(BaseModel):
    """A warning attached to the plan when `when` holds over answers and facts (DOMAIN §10 misconceptions)."""

    model_config = STRICT
    id: str
    when: Condition
    message: str  # Jinja2 text
    section: str


class WhyNot(BaseModel):
    model_config = STRICT
    when: Condition | None = None
    why: str  # Jinja2 text


class Alternative(BaseModel):
    """Why a form was not chosen: the first matching reason (the last may be a catch-all)."""

    model_config = STRICT
    form: Form
    reasons: list[WhyNot] = Field(min_length=1)


class Tree(BaseModel):
    model_config = STRICT
    version: Literal[1]
    title: str
    start: str
    answers: dict[str, AnswerRule]
    nodes: dict[str, Node]
    warnings: list[WarningRule] = []
    alternatives: list[Alternative] = []


for _model in (All, Any_, Not, Edge, WarningRule, WhyNot, AnswerRule):
    _model.model_rebuild()


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
