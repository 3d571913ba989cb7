"""The session engine every front end drives: answer, back, a changed answer re-walks, nothing leaks."""

from __future__ import annotations

import pytest
import yaml

from wizard.errors import InputError
from wizard.session.plan import build_plan
from wizard.specs.contracts import to_json
from wizard.session.session import Session, run_answers

from pathlib import Path

SCENARIOS = Path(__file__).parent / "scenarios"


def answer_all(session: Session, answers: dict) -> None:
    """Answer questions as a user would: the given value, else the default offered."""
    while session.question is not None:
        q = session.question
        session.answer(answers.get(q.var, session.default_for(q)))


@pytest.mark.parametrize("name", sorted(p.stem for p in SCENARIOS.glob("*.yaml")))
def test_interactive_walk_equals_the_non_interactive_plan(name):
    answers = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())
    reference = run_answers(answers)
    asked = set(dict(reference.given))
    # answers off the asked path (a pinned utilization, say) reach the session as a front end passes them
    s = Session(extras={k: v for k, v in answers.items() if k not in asked})
    answer_all(s, answers)
    interactive, batch = to_json(build_plan(s)), to_json(build_plan(reference))
    # identical but for what only a non-interactive run can say: the path's note of which values were tree defaults,
    # and which answers of the file were off the path (a user is never asked those)
    batch.pop("ignored_answers", None)
    steps = lambda p: [(x["node"], x["value"]) for x in p.pop("path")]  # noqa: E731
    assert steps(interactive) == steps(batch)
    assert interactive == batch


def test_back_keeps_the_answer_and_a_changed_answer_rewalks():
    s = Session()
    s.answer("meta-llama/Llama-3.1-8B-Instruct")
    assert s.question.var == "weight_precision"
    assert s.state.facts["params_b"] == 8.03  # the model is resolved before the next question
    s.answer("auto")
    s.answer(8192)  # context_tokens
    s.answer(None)  # prompt_tokens: optional, left empty
    s.answer("")  # output_tokens: optional, left empty
    s.answer("online")
    s.answer(False)  # data_residency
    assert s.question.var == "needs_predictable_cost"
    assert s.back() is True
    assert s.question.var == "data_residency"
    assert s.default_for(s.question) is False  # the answer given is offered again
    s.back()
    s.answer("offline")  # change an earlier answer: the online questions disappear from the path
    s.answer(False)
    assert s.question.var == "peak_concurrency" and "batch" in s.question.prompt
    assert "needs_predictable_cost" not in s.answers


def test_back_at_the_first_question():
    s = Session()
    assert s.back() is False
    assert s.question.var == "model"


def test_invalid_answer_leaves_the_state_unchanged():
    s = Session()
    s.answer("Qwen/Qwen3-8B")
    s.answer("auto")
    with pytest.raises(InputError, match="context_tokens"):
        s.answer("lots")
    with pytest.raises(InputError, match="context_tokens"):
        s.answer(4)  # below the question's minimum of 16
    assert s.question.var == "context_tokens"


def test_unresolvable_model_stays_on_the_question():
    s = Session()
    with pytest.raises(InputError, match="model"):
        s.answer("./no/such/folder")
    assert s.question.var == "model" and s.answers == {}


def test_answers_are_restricted_to_the_path():
    session = run_answers(yaml.safe_load((SCENARIOS / "very_low_traffic.yaml").read_text()))
    assert "gpu" not in session.answers and "gpu_memory_utilization" not in session.answers
    assert session.recommendation.form == "managed_api"
