"""`ask`: the line prompts driven by piped keystrokes (prompt_toolkit pipe input + DummyOutput, no terminal).

The whole keystroke script is sent up front: prompt_toolkit keeps the keys one prompt did not read as typeahead
for the next prompt on the same input. Selects start on their default, so a helper counts the arrow presses
from the tree's choices; typed answers clear the pre-filled default with Ctrl+U first.
"""

from __future__ import annotations

import io
import json
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from wizard.artifacts.writer import write_repo
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.output.vt100 import Vt100_Output
from rich.console import Console

from wizard.prompts import BACK_TYPED, RESUME_HINT, run_ask
from wizard.session.plan import build_plan
from wizard.specs.contracts import to_json
from wizard.session.questions import choices_for
from wizard.session.session import run_answers
from wizard.tree.loader import load_tree
from wizard.tree.schema import Question

ENTER, DOWN, UP, CTRL_C, CLEAR = "\r", "\x1b[B", "\x1b[A", "\x03", "\x15"
SCENARIO = Path(__file__).parent / "scenarios" / "llama70b_bf16.yaml"
MODEL = "meta-llama/Llama-3.1-70B-Instruct"
TREE = load_tree()


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("WIZARD_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def question(node: str) -> Question:
    q = TREE.nodes[node]
    assert isinstance(q, Question)
    return q


def typed(value) -> str:
    """Clear the pre-filled default, type the value, Enter."""
    return CLEAR + ("" if value is None else str(value)) + ENTER


def pick(q: Question, value, current=None) -> str:
    """Arrow keys from the pointer's start (the default, or `current`) to `value`, then Enter."""
    if q.type == "bool":
        values: list = [True, False, "back"]
        start = values.index(bool(q.default if current is None else current))
    else:
        values = [c.value for c in choices_for(q)] + ["back"]
        start = values.index(q.default if current is None else current)
    steps = values.index(value) - start
    return (DOWN * steps if steps > 0 else UP * -steps) + ENTER


def keys_for(node: str, value, current=None) -> str:
    q = question(node)
    if q.type == "bool" or (q.type == "choice" and q.choices_from != "model_catalog"):
        return pick(q, value, current)
    return typed(value)


def walk_keys(answers: dict) -> tuple[str, object]:
    """The keystrokes answering every question of the path `plan --answers` takes for these answers."""
    session = run_answers(answers)
    keys = ""
    for step in session.state.path:
        if isinstance(TREE.nodes[step.node], Question):
            keys += keys_for(step.node, step.value)
    return keys, session


def ask(keys: str, output=None) -> tuple[int, str]:
    buf = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        code = run_ask(pipe, output or DummyOutput(), console=Console(file=buf, width=200))
    return code, buf.getvalue()


def saved(tmp_path) -> list[tuple[str, object]]:
    data = yaml.safe_load((tmp_path / "state" / "session.yaml").read_text())
    return [tuple(pair) for pair in data["given"]]


def test_full_walk_gives_the_plan_of_plan_answers_and_writes_the_repo(tmp_path):
    answers = yaml.safe_load(SCENARIO.read_text())
    keys, expected_session = walk_keys(answers)
    expected = to_json(build_plan(expected_session))
    out = tmp_path / "out"
    write_repo({"old.txt": "an earlier starter repo"}, out)  # --force replaces only a repo this tool wrote
    # summary → "Write the starter repo?" Yes (default) → the folder → not empty → "Replace it?" No (default)
    # → the folder again → "Replace it?" Yes
    keys += ENTER + typed(out) + ENTER + typed(out) + DOWN + ENTER
    code, text = ask(keys)
    assert code == 0, text
    plan = json.loads((out / "plan.json").read_text())
    for key in ("form", "exposure", "gpu", "tp", "pp", "replicas", "gpus_total"):
        assert plan[key] == expected[key], key
    assert (plan["form"], plan["gpu"], plan["tp"], plan["replicas"]) == ("single_node_multi_gpu", "h100-sxm-80gb", 4, 3)
    recorded = yaml.safe_load((out / "answers.yaml").read_text())
    assert {k: recorded[k] for k in answers} == answers
    assert not (out / "old.txt").exists() and (out / "RATIONALE.md").is_file()
    assert not (tmp_path / "state" / "session.yaml").exists()  # finished: nothing left to resume
    # what a screen-reader user hears: each question with its help and §, the model facts, the live figures
    assert "[1] Which model do you want to serve?" in text and "[see §2, §9 Q1]" in text
    found = next(line for line in text.splitlines() if line.startswith("Found: "))
    assert "LlamaForCausalLM" in found and "B parameters" in found and "bytes/token" in found and "catalog" in found
    assert "Plan so far (defaults for the rest): single_node_multi_gpu; 3 × TP 4 × PP 1 on h100-sxm-80gb" in text
    assert "fits" in text and "/month" in text
    assert "is not empty" in text and f"Wrote the starter repo to {out}" in text
    assert "One node, tensor parallel inside it" in text  # the plan summary of print_plan


def test_back_keeps_the_answer_and_a_changed_answer_rewalks(tmp_path):
    keys = (
        typed(MODEL)
        + keys_for("weight_precision", "bf16")
        + typed(BACK_TYPED)  # at the context question: "<" goes back to the precision, bf16 still chosen
        + keys_for("weight_precision", "fp8", current="bf16")
        + typed(4096) + typed(2000) + typed(300)
        + keys_for("workload", "back")  # the "← back" choice of a select: back to the output length
        + ENTER  # its answer is kept as the default
        + keys_for("workload", "offline")
        + CTRL_C
    )
    code, text = ask(keys)
    assert code == 130
    assert saved(tmp_path) == [("model", MODEL), ("weight_precision", "fp8"), ("context_tokens", 4096),
                               ("prompt_tokens", 2000), ("output_tokens", 300), ("workload", "offline")]
    assert "back to: At which precision will the weights be deployed?" in text
    assert "back to: Typical output length" in text
    assert "[7] Must the data stay in-house?" in text  # the walk went on past the changed answer


def test_first_question_has_no_back(tmp_path):
    # "<" at the model question is not "back": it is an answer, refused (no such folder/id), and asked again
    code, text = ask(typed("<") + CTRL_C)
    assert code == 130
    assert "model: '<' is not accepted" in text
    assert text.count("[1] Which model do you want to serve?") == 2


def test_validation_message_inline_then_a_correct_retry(tmp_path):
    buf = io.StringIO()
    screen = Vt100_Output(buf, lambda: Size(rows=24, columns=200), term="dumb")
    lines = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text(typed(MODEL) + ENTER + typed("abc"))

        def rest():  # once the message is on the screen, correct the answer
            deadline = time.monotonic() + 10
            while "expected a whole number" not in buf.getvalue() and time.monotonic() < deadline:
                time.sleep(0.02)
            pipe.send_text(typed(4096) + CTRL_C)

        feeder = threading.Thread(target=rest)
        feeder.start()
        code = run_ask(pipe, screen, console=Console(file=lines, width=200))
        feeder.join()
    assert code == 130
    assert "context_tokens: 'abc' is not accepted; expected a whole number" in buf.getvalue()
    assert saved(tmp_path)[-1] == ("context_tokens", 4096)


def test_ctrl_c_saves_and_a_second_run_resumes_at_the_same_question(tmp_path):
    code, text = ask(typed(MODEL) + keys_for("weight_precision", "bf16") + typed(4096) + CTRL_C)
    assert code == 130
    assert text.rstrip().splitlines()[-1] == RESUME_HINT
    assert "Traceback" not in text
    first = saved(tmp_path)
    assert first == [("model", MODEL), ("weight_precision", "bf16"), ("context_tokens", 4096)]

    code, text = ask(ENTER + CTRL_C)  # "Resume the saved session?" Yes, then stop at once
    assert code == 130
    assert "A saved session has 3 answer(s)" in text
    asked = [line for line in text.splitlines() if line.startswith("[")]
    assert asked == ["[4] Typical prompt length, in tokens? (empty = half the context)"]
    assert saved(tmp_path) == first

    code, text = ask(DOWN + ENTER + CTRL_C)  # "No": start over at the first question
    assert code == 130
    assert [line for line in text.splitlines() if line.startswith("[")] == ["[1] Which model do you want to serve?"]


def test_no_terminal_exits_2_with_one_line(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert run_ask() == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and "plan --answers FILE" in err


def test_back_from_the_summary_and_not_writing_keeps_the_answers(tmp_path):
    answers = yaml.safe_load(SCENARIO.read_text())
    keys, _ = walk_keys(answers)
    # "Write the starter repo?" → "← back" (third choice): the last question again → 0.85 → summary → "No"
    keys += DOWN * 2 + ENTER + typed(0.85) + DOWN + ENTER
    code, text = ask(keys)
    assert code == 0, text
    given = saved(tmp_path)  # not written: the finished session stays saved, to resume and write later
    assert given[-1] == ("gpu_memory_utilization", 0.85)
    assert "back to: GPU memory utilization target" in text
    assert text.count("One node, tensor parallel inside it") == 2
    assert "Nothing written" in text and "Wrote the starter repo" not in text
