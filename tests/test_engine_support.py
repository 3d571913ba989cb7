"""Architectures vLLM 0.33.0 has no native implementation of: the wizard refuses to plan them, `size` and
`models` say so.

vLLM's registry (vllm/model_executor/models/registry.py, `_PREVIOUSLY_SUPPORTED_MODELS`) lists
MllamaForConditionalGeneration (Llama 3.2 Vision) as served until v0.10.2: encoder-decoder models went with the
V0 engine. Most such architectures are refused at start-up (Baichuan since 0.24, via PR #46362); Mllama is one of
the few vLLM then tries through its Transformers backend (PR #53608) — unverified, and not what the wizard sizes.
"""

from __future__ import annotations

import json

import pytest

from cli_run import assert_one_line_error, run_cli
from wizard.errors import InputError
from wizard.session.questions import choices_for
from wizard.session.session import run_answers
from wizard.sizing.engine import REMOVED_ARCHITECTURES, VLLM_VERSION, unserved_reason
from wizard.tree.loader import load_tree

VISION_90B = "meta-llama/Llama-3.2-90B-Vision-Instruct"


def test_mllama_is_named_with_its_last_vllm_version():
    reason = unserved_reason("MllamaForConditionalGeneration")
    assert VLLM_VERSION in reason and "v0.10.2" in reason and "Transformers modelling backend" in reason
    assert unserved_reason("LlamaForCausalLM") == ""
    assert unserved_reason("Qwen3MoeForCausalLM") == ""


def test_refused_fallback_and_plugin_architectures_say_which():
    assert unserved_reason("BaichuanForCausalLM").endswith("until v0.23.0) and refuses it at start-up")
    assert "until v0.28.0" in unserved_reason("MPTForCausalLM")
    assert "bart-plugin" in unserved_reason("BartForConditionalGeneration")


def test_every_removed_architecture_names_a_known_source():
    data = json.loads(REMOVED_ARCHITECTURES.read_text())
    assert data["removed"], "the table must not be empty"
    for arch, entry in data["removed"].items():
        assert entry["source"] in data["sources"], arch
        major, minor, patch = (int(x) for x in entry["last"].split("."))
        assert (major, minor, patch) < tuple(int(x) for x in VLLM_VERSION.split(".")), arch


def test_plan_for_an_unserved_model_is_one_clear_line(tmp_path):
    answers = tmp_path / "answers.yaml"
    answers.write_text(f"model: {VISION_90B}\n")
    out = tmp_path / "starter"
    r = run_cli("plan", "--answers", str(answers), "--out", str(out))
    assert_one_line_error(r, "model", VISION_90B, "MllamaForConditionalGeneration", "v0.10.2")
    assert not out.exists(), "nothing may be half-written"


def test_session_stays_on_the_model_question():
    with pytest.raises(InputError) as e:
        run_answers({"model": VISION_90B})
    assert e.value.field == "model"


def test_a_local_checkpoint_of_that_architecture_is_refused_too(tmp_path):
    config = {
        "architectures": ["MllamaForConditionalGeneration"], "model_type": "mllama",
        "text_config": {"model_type": "mllama_text_model", "hidden_size": 4096, "intermediate_size": 14336,
                        "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
                        "vocab_size": 128256, "max_position_embeddings": 131072,
                        "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38]},
        "vision_config": {"hidden_size": 1280, "intermediate_size": 5120, "num_hidden_layers": 32,
                          "num_global_layers": 8, "image_size": 560, "patch_size": 14, "vision_output_dim": 7680},
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(InputError) as e:
        run_answers({"model": str(tmp_path)})
    assert "v0.10.2" in e.value.line()


def test_the_wizard_does_not_offer_it_but_offers_the_rest():
    q = load_tree().nodes["model"]
    offered = {c.value for c in choices_for(q)}
    assert VISION_90B not in offered
    assert "meta-llama/Llama-3.1-8B-Instruct" in offered and "Qwen/Qwen3-30B-A3B" in offered


def test_size_still_answers_with_the_caveat():
    r = run_cli("size", VISION_90B, "--gpu", "h100-sxm-80gb", "--tp", "4", "--json")
    assert r.code == 0, r.err
    notes = r.json()["notes"]
    assert any("no native MllamaForConditionalGeneration" in n and "v0.10.2" in n for n in notes), notes


def test_models_json_marks_it():
    r = run_cli("models", "--json")
    assert r.code == 0, r.err
    rows = {m["id"]: m for m in r.json()}
    assert rows[VISION_90B]["architecture"] == "MllamaForConditionalGeneration"
    assert "v0.10.2" in rows[VISION_90B]["unserved"]
    assert rows["meta-llama/Llama-3.1-8B-Instruct"]["unserved"] is None
