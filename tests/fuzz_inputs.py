"""The fuzzing harness of issue #10: hostile-but-plausible inputs, and a sandboxed runner that classifies what the
command line does with each. One copy, shared by tests/test_fuzz_properties.py and benchmarks/fuzz.py.

The contract checked (DESIGN.md's error contract): every input gives exit 0 or exit 2 with exactly one line on
stderr, never a traceback, within a few seconds, and nothing is written outside the destination (`--out`).

Generators are pure functions of a `random.Random` (hypothesis drives them through `st.randoms()`), returning a
`Case`: files to lay out in a fresh sandbox, and the argv of `wizard.cli.main` (or a session file to resume).
Surfaces: answers files, `--set`, session files, config.json, safetensors headers and `--out` paths.

`Runner` runs cases one at a time in a forked worker process that calls `wizard.cli.main(argv)` in-process, in a
sandbox under a fresh tempfile.mkdtemp() folder (cwd, HOME, WIZARD_STATE_DIR and HF_HOME all inside it, the
network switched off, memory capped). SIGALRM turns a slow input into a "hang"; an input that cannot be interrupted
(C code) is killed after a grace period and the worker replaced, so the harness itself never hangs nor crashes.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import math
import os
import random
import re
import shutil
import signal
import stat
import struct
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import yaml

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

try:  # the tiny checkpoint of the fake Hub: config.json and tensors that match it
    from fake_hub import DENSE_TENSORS, MODELOPT_QUANT, SHARD_1, SHARD_2, SHARD_NAMES, llama_config  # noqa: E402
except ImportError:  # pragma: no cover — fake_hub renamed something: the same shapes, kept here
    def llama_config(layers: int) -> dict:
        return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
                "num_hidden_layers": layers, "num_attention_heads": 4, "num_key_value_heads": 2,
                "intermediate_size": 128, "vocab_size": 128, "max_position_embeddings": 2048,
                "tie_word_embeddings": False, "torch_dtype": "bfloat16"}

    def _layer(i: int) -> dict:
        p = f"model.layers.{i}."
        return {p + "self_attn.q_proj.weight": ("BF16", [64, 64]), p + "self_attn.k_proj.weight": ("BF16", [32, 64]),
                p + "self_attn.v_proj.weight": ("BF16", [32, 64]), p + "self_attn.o_proj.weight": ("BF16", [64, 64]),
                p + "mlp.gate_proj.weight": ("BF16", [128, 64]), p + "mlp.up_proj.weight": ("BF16", [128, 64]),
                p + "mlp.down_proj.weight": ("BF16", [64, 128]), p + "input_layernorm.weight": ("F32", [64]),
                p + "post_attention_layernorm.weight": ("F32", [64])}

    _EMBED = {"model.embed_tokens.weight": ("BF16", [128, 64])}
    _HEAD = {"model.norm.weight": ("F32", [64]), "lm_head.weight": ("BF16", [128, 64])}
    DENSE_TENSORS = {**_EMBED, **_layer(0), **_HEAD}
    SHARD_1, SHARD_2 = {**_EMBED, **_layer(0)}, {**_layer(1), **_HEAD}
    SHARD_NAMES = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
    MODELOPT_QUANT = {"producer": {"name": "modelopt", "version": "0.23.0"},
                      "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8",
                                       "exclude_modules": ["lm_head"]}}

SURFACES = ("answers", "set", "session", "config", "safetensors", "out")
SANDBOX = "@SANDBOX@"  # replaced in argv and file contents by the sandbox's absolute path
ANSWERS = "in/answers.yaml"
MODEL_DIR = "in/model"
OK_OUTCOMES = ("ok", "refused")

# The answers keys and their kinds (wizard/session/answers_model.py; kept here so generation needs no wizard import).
INT_KEYS = ("context_tokens", "peak_concurrency", "daily_requests", "prompt_tokens", "output_tokens", "ttft_p99_ms",
            "tpot_p99_ms", "tp", "pp", "replicas")
FLOAT_KEYS = ("peak_rps", "monthly_budget_usd", "gpu_hour_usd", "gpu_memory_utilization", "params_b",
              "staff_usd_month")
BOOL_KEYS = ("streaming", "data_residency", "needs_predictable_cost", "needs_latency_control")
CHOICE_KEYS = {
    "weight_precision": ("auto", "bf16", "fp16", "fp8", "int8", "int4"), "kv_cache_dtype": ("auto", "fp8"),
    "traffic_pattern": ("steady", "diurnal", "bursty"), "workload": ("online", "offline"),
    "ops_capability": ("none", "basic", "kubernetes", "platform"), "budget_mode": ("fixed", "pay_as_you_go"),
}
TEXT_KEYS = ("model", "gpu", "app_name", "namespace", "served_model_name")
MAPPING_KEYS = ("managed_usd_per_mtok", "cold_start")
KEYS = ("model", *CHOICE_KEYS, *INT_KEYS, *FLOAT_KEYS, *BOOL_KEYS, "gpu", "app_name", "namespace",
        "served_model_name", *MAPPING_KEYS)
COLD_START_KEYS = ("image_bytes", "registry_bytes_s", "network_bytes_s", "weights_cached", "disk_bytes_s",
                   "compile_s", "cuda_graphs_s", "per_node_init_s")
GPUS = ("h100-sxm-80gb", "l4-24gb", "l40s-48gb", "a100-sxm-40gb", "mi300x-192gb", "t4-16gb", "auto")
CATALOG_MODELS = ("Qwen/Qwen3-0.6B", "Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct", "openai/gpt-oss-20b",
                  "deepseek-ai/DeepSeek-V3", "google/gemma-3-4b-it", "meta-llama/Llama-3.2-90B-Vision-Instruct")

# Sessions as the wizard saves them (the questions in the order the tree asks them), to mutate.
SESSION_SEEDS: tuple[tuple[tuple[str, Any], ...], ...] = (
    (("model", "Qwen/Qwen3-0.6B"), ("weight_precision", "auto"), ("context_tokens", 4096), ("prompt_tokens", 500),
     ("output_tokens", 200), ("workload", "online"), ("data_residency", False), ("needs_predictable_cost", False),
     ("needs_latency_control", False), ("daily_requests", 5000), ("peak_concurrency", 4), ("ttft_p99_ms", 2000),
     ("tpot_p99_ms", 100), ("traffic_pattern", "diurnal"), ("ops_capability", "basic"),
     ("budget_mode", "pay_as_you_go"), ("gpu", "l4-24gb"), ("kv_cache_dtype", "auto"),
     ("gpu_memory_utilization", 0.9)),
    (("model", "Qwen/Qwen3-32B"), ("weight_precision", "auto"), ("context_tokens", 8192), ("prompt_tokens", None),
     ("output_tokens", None), ("workload", "online"), ("data_residency", False), ("needs_predictable_cost", False),
     ("needs_latency_control", False), ("daily_requests", 20000), ("peak_concurrency", 32), ("ttft_p99_ms", 2000),
     ("tpot_p99_ms", 100), ("traffic_pattern", "bursty"), ("ops_capability", "basic"),
     ("budget_mode", "pay_as_you_go")),
    (("model", "meta-llama/Llama-3.1-70B-Instruct"), ("weight_precision", "bf16"), ("context_tokens", 8192),
     ("prompt_tokens", None), ("output_tokens", None), ("workload", "offline"), ("data_residency", False),
     ("peak_concurrency", 64), ("gpu", "h100-sxm-80gb"), ("kv_cache_dtype", "auto"),
     ("gpu_memory_utilization", 0.9)),
    (("model", "Qwen/Qwen3-8B"), ("weight_precision", "auto"), ("context_tokens", 8192), ("prompt_tokens", 1000),
     ("output_tokens", 300), ("workload", "online"), ("data_residency", True), ("needs_predictable_cost", False),
     ("needs_latency_control", False), ("daily_requests", 40), ("peak_concurrency", 4), ("ttft_p99_ms", 2000),
     ("tpot_p99_ms", 100), ("traffic_pattern", "diurnal"), ("ops_capability", "basic"),
     ("budget_mode", "pay_as_you_go"), ("gpu", "l40s-48gb"), ("kv_cache_dtype", "auto"),
     ("gpu_memory_utilization", 0.9)),
)


# ---------------------------------------------------------------------------------------------------------------
# Cases and results


@dataclass
class Case:
    """One input: a sandbox to lay out, and what to run in it (cwd = the sandbox)."""

    surface: str
    label: str  # the mutations made, "; "-separated (what a reproducer says first)
    argv: list[str] = field(default_factory=list)  # for wizard.cli.main; empty for the session surface
    files: dict[str, bytes] = field(default_factory=dict)  # sandbox-relative path → content
    dirs: list[str] = field(default_factory=list)
    symlinks: list[tuple[str, str]] = field(default_factory=list)  # (link, target as given to os.symlink)
    modes: list[tuple[str, int]] = field(default_factory=list)  # chmod after laying out
    out: str | None = None  # the --out argument: the only place allowed to change (never inside in/)
    session: bool = False  # the session surface: store.load() → Session().restore() → build_plan()


@dataclass
class Result:
    surface: str
    label: str
    outcome: str  # ok | refused | hang | traceback:Type | wrote-outside | refused-not-one-line | exit-N | ...
    seconds: float = 0.0
    rc: int | None = None
    stdout: str = ""  # heads only
    stderr: str = ""
    stderr_lines: int = 0
    exception: str | None = None  # "Type: message" (first line, shortened)
    frame: str | None = None  # innermost frame, file:line
    wizard_frame: str | None = None  # innermost frame inside wizard/, file:line
    tb: str | None = None  # the formatted traceback (shortened)
    changed: list[str] = field(default_factory=list)  # paths changed outside the destination
    network: int = 0  # connection attempts (the network is switched off)
    case: Case | None = None

    @property
    def key(self) -> str:
        """The failure class: outcome and where (for grouping reproducers); without a frame, the surface."""
        where = self.wizard_frame or self.frame or ""
        return f"{self.outcome} @ {where}" if where else f"{self.outcome} [{self.surface}]"


class Hang(BaseException):
    """Raised by SIGALRM in the worker: the input ran past the timeout (BaseException: `except Exception` in the
    product cannot swallow it)."""


# ---------------------------------------------------------------------------------------------------------------
# Hostile values


def chance(rng: random.Random, p: float) -> bool:
    return rng.random() < p


def pick(rng: random.Random, items):
    return items[rng.randrange(len(items))]


def wpick(rng: random.Random, weighted):
    """Pick from [(weight, item), ...]."""
    total = sum(w for w, _ in weighted)
    x = rng.random() * total
    for w, item in weighted:
        x -= w
        if x < 0:
            return item
    return weighted[-1][1]


BIG_DIGITS = "1" + "0" * 4400  # over CPython's 4,300-digit int/str conversion limit
SEXAGESIMAL_BIG = "1:" + "59:" * 2600 + "59"  # YAML 1.1 base 60: an int built arithmetically, ~4,600 digits
HEX_BIG = "0x" + "f" * 4000  # an int of 4,800 decimal digits (hex conversion has no limit; str() has)

YAML_TAGGED = (
    "!!int abc", "!!int", "!!int 0x", "!!int 1.5", "!!float", "!!float abc", "!!float 1e", "!!bool maybe",
    "!!bool", "!!timestamp x", "!!timestamp 2024-02-30", "!!timestamp ''", "!!binary aGVsbG8=", "!!binary '%%%'",
    "!!binary", "!!set {a, b}", "!!set {}", "!!omap [a: 1, b: 2]", "!!omap [a: 1, a: 2]", "!!omap [1, 2]",
    "!!pairs [a: 1, a: 2]", "!!pairs [x]", "!!null x", "!!str", "!!str 5", "!!map [1]", "!!seq {a: 1}", "!!merge x",
    "!!value x", "!!yaml x", "!custom x", "!<tag:yaml.org,2002:int> 12", "!!python/object/apply:os.getcwd []",
    "!!python/name:os.system", "!!python/tuple [1, 2]", "!!python/bytes aGk=",
)
YAML_DATES = ("2024-02-30", "2024-13-01", "2023-02-29", "2024-02-29", "0000-01-01", "9999-12-31",
              "2001-12-14t21:59:43.10-05:00", "2024-02-30 25:61:61", "2024-01-01 99:99:99", "1999-1-1")
YAML_NUMBERS = (
    BIG_DIGITS, "-" + BIG_DIGITS, "9" * 4300, SEXAGESIMAL_BIG, HEX_BIG, "0b" + "1" * 16000, "0o" + "7" * 6000,
    "1e309", "1.0e+309", "-1.0e+309", "1.0e-400", ".inf", "-.inf", "+.inf", ".nan", ".NaN", ".NAN",
    "1_000_000", "1__0", "0o17", "017", "09", "0x1F", "0x", "1:30:00", "190:20:30.15", "-1:00", "1e6", "1.5e3",
    "1.0e+6", "-0", "-0.0", "0", "-1", "0.0", "0.01", "0.049", "1.0000001", "2147483648", "4294967296",
    "9223372036854775808", "18446744073709551616", "1" + "0" * 30, "4.9e-324", "1.7976931348623157e+308",
    "+12", "12.", ".5", "1,000", "1 000", "12abc", "0x_ff", "١٢", "１２",
)
YAML_STRINGS = (
    "''", "' '", "'\t'", '"\\t"', '"\\0"', '"\\x00"', '"\\x85"', '"\\u2028"', '"\\u2029"', '"\\r"', '"a\\rb"',
    '"a\\nb"', '"a\\r\\nb"', '"\\x1b[31mred\\x1b[0m"', '"\\x1b]0;title\\x07"', '"\\U0010ffff"', '"\\ufeff"',
    '"\\u202e"', '"\\x7f"', '"\\b"', '"\\v"', '"\\f"', "'a\"b'", "\"a'b\"", "'--help'", "-", "'-'", "'?'", "':'",
    "a #comment", "'#'", "'%s%s%n'", "'{0}'", "'${HOME}'", "'$(id)'", "'`id`'", "'\\\\'", "'a\\\\nb'", "ü",
    "İ", "ß", "ﬃ", "'\u0085'", "'\u2028'", "yes", "no", "on", "off", "y", "n", "Yes", "NO", "True", "FALSE",
    "null", "Null", "~", "", "'null'", "'1'", "'1.5'", "'true'", "|\n  multi\n  line", ">\n  folded\n  text",
    "|-\n  x", "'" + "a" * 300 + "'", "'" + "é" * 200 + "'",
)
YAML_STRUCTURES = (
    "{}", "[]", "[1, 2]", "[[[]]]", "{a: 1}", "{model: x}", "[null]", "{input: 1, output: 2}",
    "{input: .nan, output: 1}", "{input: 1.0e+309, output: 2}", "{input: -1, output: 2}", "{input: '1', output: 2}",
    "{input: 1}", "{input: 1, output: 2, extra: 3}", "{input: {a: 1}, output: 2}", "{image_bytes: 0}",
    "{image_bytes: '1e6'}", "{weights_cached: 1}", "{compile_s: .inf}", "{compile_s: 1.0e+309}",
    "{registry_bytes_s: 1}", "{disk_bytes_s: " + BIG_DIGITS + "}", "{network_bytes_s: " + SEXAGESIMAL_BIG + "}",
    "{per_node_init_s: [1]}", "{<<: {input: 1}, output: 2}", "*undefined", "&a [*a]", "&a {x: *a}",
    "[&a [a, a], *a]", "&b {input: 1, output: 2}", "? [a, b]", "{? [a]: 1}", "{[a]: 1}", "{{a: 1}: 2}",
    "[1, [2, [3, [4]]]]", "- a\n  - b", "!!set {1, 2}", "{a: 1, a: 2}",
)


def huge_string(rng: random.Random) -> str:
    return pick(rng, ("a", "é", "\u2028", "ab ", "x\x85")) * pick(rng, (5_000, 100_000, 1_000_000))


def alias_bomb(rng: random.Random, levels: int | None = None, width: int | None = None) -> str:
    """A "billion laughs" flow sequence: width**levels leaves through aliases (cheap to parse, huge to print)."""
    levels = levels or rng.randint(3, 9)
    width = width or rng.randint(4, 10)
    parts = ["&l0 [" + ", ".join(["lol"] * width) + "]"]
    for k in range(1, levels):
        parts.append(f"&l{k} [" + ", ".join([f"*l{k - 1}"] * width) + "]")
    return "[" + ", ".join(parts) + "]"


def deep_nesting(rng: random.Random, kind: str = "yaml") -> str:
    depth = pick(rng, (200, 1_000, 5_000, 100_000))
    if kind == "mapping":
        return "{a: " * depth + "1" + "}" * depth
    return "[" * depth + "]" * depth


def yaml_value(rng: random.Random, key: str | None = None) -> tuple[str, str]:
    """A hostile YAML value fragment (text after `key: `) and its label."""
    category = wpick(rng, [(3, "tag"), (2, "date"), (4, "number"), (4, "string"), (3, "structure"), (1, "huge"),
                           (0.5, "bomb"), (0.4, "deep"), (3, "near-miss"), (2, "range")])
    if category == "tag":
        v = pick(rng, YAML_TAGGED)
    elif category == "date":
        v = pick(rng, YAML_DATES)
    elif category == "number":
        v = pick(rng, YAML_NUMBERS)
    elif category == "string":
        v = pick(rng, YAML_STRINGS)
    elif category == "structure":
        v = pick(rng, YAML_STRUCTURES)
    elif category == "huge":
        v = "'" + huge_string(rng).replace("'", "''") + "'"
    elif category == "bomb":
        v = alias_bomb(rng)
    elif category == "deep":
        v = deep_nesting(rng, pick(rng, ("yaml", "mapping")))
    elif category == "near-miss":
        v = near_miss(rng, key)
    else:
        v = out_of_range(rng, key)
    return v, f"{category}:{short(v)}"


def near_miss(rng: random.Random, key: str | None) -> str:
    """A value of almost the right form for `key`."""
    if key in CHOICE_KEYS:
        good = pick(rng, CHOICE_KEYS[key])
        return pick(rng, (good.upper(), " " + good, f"'{good} '", good + "s", f'"{good}\\n"', f"[{good}]",
                          f"{{{good}: 1}}", good.replace("_", "-"), f"'{good}\u200b'"))
    if key in INT_KEYS:
        return pick(rng, ("1.5", "'16'", "16.0", "true", "1e3", "1.0e+3", "0x10", "1_6", "[16]", "{v: 16}", "16 GB"))
    if key in FLOAT_KEYS:
        return pick(rng, ("'0.9'", "true", "90%", "1e-1", "0.9e0", "[0.9]", ".9.", "0,9"))
    if key in BOOL_KEYS:
        return pick(rng, ("1", "0", "'true'", "yes please", "Y", "[true]", "2", "nah"))
    if key == "gpu":
        return pick(rng, ("H100-SXM-80GB", "h100", "'auto '", "İ100", "h100-sxm-80gb\u0085", "[h100-sxm-80gb]",
                          "'l4-24gb\\n'", "'l4-24gb\\x00'"))
    if key == "model":
        return pick(rng, ("qwen/qwen3-8b", "Qwen/Qwen3-8B ", "'Qwen/Qwen3-8B\\n'", "'x' ", "'" + "a" * 301 + "'",
                          "foo/bar", "a/b/c", "'../in'", "'.'", "'~'", "'~/m'", "'in/missing'", "'in/answers.yaml'",
                          "'in'", f"'{MODEL_DIR}'", f"'{SANDBOX}/{MODEL_DIR}'", "'-'", "'--json'", "123",
                          "'Qwen/Qwen3-8B\\u2028'", "hf://Qwen/Qwen3-8B", "'in/model/config.json'"))
    if key in ("app_name", "namespace", "served_model_name"):
        return pick(rng, ("My-App", "-app", "app-", "a" * 64, "'1app'", "app_name", "'a b'", "'a\\nb'", "'ä'",
                          "'a/b'", "'a:b'", "'..'", "'.'", "'a\\u2028b'"))
    if key in MAPPING_KEYS:
        return pick(rng, ("5", "'x'", "[1, 2]", "{input: 1}", "{compile_s: -1}", "{weights_cached: 'yes'}",
                          "{input: 1, output: 2}", "{image_bytes: 1e13}"))
    return pick(rng, ("x", "1", "true", "{}", "[]"))


def out_of_range(rng: random.Random, key: str | None) -> str:
    if key in INT_KEYS or key in FLOAT_KEYS:
        return pick(rng, ("0", "-1", "-0.5", "1000001", "10000001", "10000000001", "1025", "10001", "1.0e+10",
                          "1.0e+300", "0.04", "1.01", "100001", "1e+10", "2147483647", "-2147483649"))
    return pick(rng, ("0", "-1", "99999999999999999999", "1.0e+300"))


def short(v: Any, n: int = 60) -> str:
    """A label-sized repr."""
    if isinstance(v, str):
        text = v
    else:
        try:
            text = repr(v)
        except ValueError:  # an int over 4,300 digits
            text = f"<int of ~{int(v.bit_length() * 0.30103) + 1} digits>"
    if len(text) > n:
        text = text[: n - 20] + f"...({len(text)} chars)"
    return text.encode("unicode_escape").decode("ascii")


def misspelt(rng: random.Random, key: str) -> str:
    how = pick(rng, ("swap", "drop", "case", "space", "dash", "ctrl", "plural", "unicode"))
    if how == "swap" and len(key) > 2:
        i = rng.randrange(len(key) - 1)
        return key[:i] + key[i + 1] + key[i] + key[i + 2:]
    if how == "drop":
        i = rng.randrange(len(key))
        return key[:i] + key[i + 1:]
    if how == "case":
        return key.upper() if chance(rng, 0.5) else key.capitalize()
    if how == "space":
        return pick(rng, (f'"{key} "', f'" {key}"', f'"{key}\\t"'))
    if how == "dash":
        return key.replace("_", "-") if "_" in key else key + "-"
    if how == "ctrl":
        return pick(rng, (f'"{key}\\n"', f'"{key}\\r"', f'"{key}\\u2028x"', f'"{key}\\x85"', f'"{key}\\x1b[2J"',
                          f'"\\n{key}"', f'"{key}\\x00"'))
    if how == "plural":
        return key + "s"
    return key.replace("e", "е", 1)  # a Cyrillic e


def odd_key(rng: random.Random) -> str:
    """A YAML key that is not a plain string."""
    return pick(rng, ("1", "1.5", "null", "~", "true", "2024-01-01", "2024-02-30", ".nan", ".inf", "'<<'", "<<",
                      "? [a, b]\n", "? {a: 1}\n", "!!binary aGk=", "!!set {a}", "''", '"\\ud800"', BIG_DIGITS,
                      SEXAGESIMAL_BIG, "*undefined", "&k model", "? |\n  block\n"))


def yaml_line(key: str, fragment: str) -> str:
    """`key: fragment` (a block scalar fragment carries its own indented lines; a `? ` key its own line)."""
    return f"{key}: {fragment}"


def dump_scalar(value: Any) -> str:
    """A valid YAML fragment for a plain value."""
    text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10**9)
    return text.removesuffix("\n...\n").removesuffix("\n")


# Document-level mutations of a whole text file (answers, session, config.json).

def mutate_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    how = wpick(rng, [(2, "bom"), (2, "invalid-utf8"), (1, "utf16"), (2, "crlf"), (1, "cr"), (1, "nul"),
                      (2, "truncate"), (1, "flip"), (1, "empty"), (1, "whitespace"), (1, "tabs"), (1, "latin1"),
                      (1, "u2028-lines"), (1, "double")])
    if how == "bom":
        return b"\xef\xbb\xbf" + data, how
    if how == "invalid-utf8":
        bad = pick(rng, (b"\xff", b"\xc3\x28", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\xfe\xff"))
        i = rng.randrange(len(data) + 1)
        return data[:i] + bad + data[i:], f"invalid-utf8 {bad!r} at {i}"
    if how == "utf16":
        return data.decode("utf-8", "replace").encode("utf-16"), how
    if how == "crlf":
        return data.replace(b"\n", b"\r\n"), how
    if how == "cr":
        return data.replace(b"\n", b"\r"), how
    if how == "nul":
        i = rng.randrange(len(data) + 1)
        return data[:i] + b"\x00" + data[i:], f"nul at {i}"
    if how == "truncate":
        i = rng.randrange(len(data) + 1)
        return data[:i], f"truncated at {i}/{len(data)}"
    if how == "flip" and data:
        i = rng.randrange(len(data))
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:], f"bit flip at {i}"
    if how == "empty":
        return b"", how
    if how == "whitespace":
        return pick(rng, (b"   \n\n", b"# only a comment\n", b"\t", b"\n" * 1000)), how
    if how == "tabs":
        return data.replace(b"  ", b"\t"), how
    if how == "latin1":
        return data.decode("utf-8", "replace").replace("a", "\xe4", 3).encode("latin-1", "replace"), how
    if how == "u2028-lines":
        return data.replace(b"\n", "\u2028".encode()), how
    return data + data, how


# ---------------------------------------------------------------------------------------------------------------
# Base inputs (read from the repo: tests/scenarios, tests/data/configs)


@lru_cache(maxsize=1)
def scenarios() -> tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]:
    out = []
    for f in sorted((TESTS / "scenarios").glob("*.yaml")):
        data = yaml.safe_load(f.read_text(encoding="utf-8"))
        out.append((f.stem, tuple(data.items())))
    return tuple(out)


@lru_cache(maxsize=1)
def configs() -> tuple[tuple[str, str], ...]:
    out = []
    for f in sorted((TESTS / "data" / "configs").glob("*.json")):
        if not f.name.endswith(".hf_quant_config.json"):
            out.append((f.stem, f.read_text(encoding="utf-8")))
    return tuple(out)


def tiny_config(layers: int = 1) -> dict:
    """The fake Hub's tiny Llama, with room for the scenarios' contexts (8,192 tokens)."""
    return {**llama_config(layers), "max_position_embeddings": 32768}


FAST_SCENARIOS = ("tiny_model", "data_residency", "llama8b_high_traffic", "single_replica_forced", "no_ops_team",
                  "offline_research", "llama70b_bf16", "average_not_p99")


def base_answers(rng: random.Random, fast: bool = False) -> tuple[dict[str, Any], str]:
    names = [s for s in scenarios() if not fast or s[0] in FAST_SCENARIOS]
    name, items = pick(rng, names)
    return dict(items), name


def answers_text(data: dict[str, Any]) -> str:
    return "".join(f"{k}: {dump_scalar(v)}\n" for k, v in data.items())


def local_model_files(rng: random.Random, layers: int = 1) -> dict[str, bytes]:
    return {f"{MODEL_DIR}/config.json": json.dumps(tiny_config(layers), indent=2).encode()}


# ---------------------------------------------------------------------------------------------------------------
# Surface: answers files


def gen_answers(rng: random.Random) -> Case:
    data, scenario = base_answers(rng)
    labels = [f"scenario {scenario}"]
    files: dict[str, bytes] = {}
    if chance(rng, 0.15):
        data["model"] = pick(rng, (MODEL_DIR, f"{SANDBOX}/{MODEL_DIR}", "./" + MODEL_DIR))
        files.update(local_model_files(rng))
        labels.append("local model folder")
    lines = [f"{k}: {dump_scalar(v)}" for k, v in data.items()]
    for _ in range(rng.randint(1, 3)):
        how = wpick(rng, [(8, "value"), (2, "misspelt"), (1, "odd-key"), (1, "duplicate"), (1, "merge"),
                          (1, "unknown-hostile"), (1, "nested"), (1, "drop-model"), (1, "anchor")])
        if how == "value":
            key = pick(rng, KEYS)
            frag, lab = yaml_value(rng, key)
            lines = [ln for ln in lines if not ln.startswith(f"{key}:")] + [yaml_line(key, frag)]
            labels.append(f"{key}={lab}")
        elif how == "misspelt":
            key = misspelt(rng, pick(rng, KEYS))
            lines.append(f"{key}: {pick(rng, ('1', 'x', 'true', '{}'))}")
            labels.append(f"misspelt key {short(key)}")
        elif how == "odd-key":
            key = odd_key(rng)
            lines.append(f"{key}: 1")
            labels.append(f"odd key {short(key)}")
        elif how == "duplicate":
            key = pick(rng, list(data) or ["model"])
            lines.append(f"{key}: {dump_scalar(data.get(key, 'x'))}")
            labels.append(f"duplicate key {key}")
        elif how == "merge":
            frag = pick(rng, ("{peak_concurrency: 4}", "*base", "[{peak_concurrency: 4}, {workload: online}]",
                              "{zzz: 1}", "5", "{model: Qwen/Qwen3-8B}"))
            if frag == "*base":
                lines.insert(0, "cold_start: &base {compile_s: 10}")
            lines.append(f"<<: {frag}")
            labels.append(f"merge key <<: {frag}")
        elif how == "unknown-hostile":
            key = pick(rng, ("zzz", "Model", "model_id", "gpus", "tp_size", "'model '"))
            frag, lab = yaml_value(rng, None)
            lines.append(yaml_line(key, frag))
            labels.append(f"unknown key {key}={lab}")
        elif how == "nested":
            key = pick(rng, KEYS)
            lines = [ln for ln in lines if not ln.startswith(f"{key}:")]
            lines.append(f"{key}:\n  {pick(rng, ('value', 'a', 'input'))}: {pick(rng, ('1', 'x', '[1]'))}")
            labels.append(f"nested mapping under {key}")
        elif how == "drop-model":
            lines = [ln for ln in lines if not ln.startswith("model:")]
            labels.append("no model")
        else:
            key = pick(rng, KEYS)
            lines = [ln for ln in lines if not ln.startswith(f"{key}:")]
            lines.append(f"{key}: &v {dump_scalar(data.get(key, 1))}")
            lines.append(f"{pick(rng, KEYS)}: *v")
            labels.append(f"anchor on {key} reused")
    text = "\n".join(lines) + "\n"
    if chance(rng, 0.1):
        text = pick(rng, ("---\n" + text + "---\n" + text, "%YAML 1.2\n---\n" + text, "%YAML 1.1\n---\n" + text,
                          "%TAG ! tag:example.com,2000:\n---\n" + text, "- " + text.replace("\n", "\n  "),
                          "just a sentence\n", "null\n", "[]\n", "42\n", text + "...\n" + "garbage: [\n"))
        labels.append("document form")
    raw = text.encode("utf-8", "surrogatepass")
    if chance(rng, 0.15):
        raw, lab = mutate_bytes(rng, raw)
        labels.append(lab)
    files[ANSWERS] = raw
    argv = ["plan", "--answers", pick(rng, (ANSWERS, "./" + ANSWERS, f"{SANDBOX}/{ANSWERS}"))]
    if chance(rng, 0.7):
        argv.append("--json")
    return Case("answers", "; ".join(labels), argv, files)


# ---------------------------------------------------------------------------------------------------------------
# Surface: --set KEY=VALUE


def set_text_value(rng: random.Random, key: str) -> str:
    """A raw (not YAML) text value for a text key."""
    v = near_miss(rng, key)
    if v.startswith("'") and v.endswith("'") and len(v) >= 2:
        v = v[1:-1]
    extra = pick(rng, ("", "", "", "\n", "\r", "\u2028", "\x85", "\t", "\x1b[2J", "\udcff", " #x", "=1"))
    return v + extra


def gen_set(rng: random.Random) -> Case:
    data, scenario = base_answers(rng)
    files = {ANSWERS: answers_text(data).encode()}
    labels = [f"scenario {scenario}"]
    argv = ["plan", "--answers", ANSWERS]
    if chance(rng, 0.6):
        argv.append("--json")
    for _ in range(rng.randint(1, 3)):
        how = wpick(rng, [(8, "value"), (2, "text"), (1, "no-equals"), (1, "empty-key"), (1, "misspelt"),
                          (1, "spaces"), (1, "odd")])
        if how == "value":
            key = pick(rng, KEYS)
            frag, lab = yaml_value(rng, key)
            item = f"{key}={frag}"
            labels.append(f"--set {key}={lab}")
        elif how == "text":
            key = pick(rng, TEXT_KEYS)
            value = set_text_value(rng, key)
            if value.endswith(MODEL_DIR) or "in/model" in value:
                files.update(local_model_files(rng))
            item = f"{key}={value}"
            labels.append(f"--set {key}={short(value)}")
        elif how == "no-equals":
            item = pick(rng, ("peak_concurrency", "peak_concurrency:4", "peak_concurrency 4", "model", "",
                              "peak_concurrency\u2028=4"))
            labels.append(f"--set {short(item)} (no =)")
        elif how == "empty-key":
            item = pick(rng, ("=4", " =4", "\t=x", "=", "==", "\n=1"))
            labels.append(f"--set {short(item)} (empty key)")
        elif how == "misspelt":
            key = misspelt(rng, pick(rng, KEYS)).strip('"')
            item = f"{key}=1"
            labels.append(f"--set {short(key)}=1 (misspelt)")
        elif how == "spaces":
            key = pick(rng, KEYS)
            item = pick(rng, (f" {key} = 4", f"{key} =4", f"{key}= 4", f"{key}=\t", f"{key}= "))
            labels.append(f"--set {short(item)}")
        else:
            item = pick(rng, ("a=b=c", "peak_concurrency=4=4", "model=a=b", "cold_start.compile_s=1",
                              "managed_usd_per_mtok.input=1", "peak_concurrency=4 # comment", "-=1",
                              "--json=1", "__class__=1", "model\x00=x".replace("\x00", "\\0")))
            labels.append(f"--set {short(item)}")
        argv += ["--set", item]
    if chance(rng, 0.05):
        argv.append("--set")  # a dangling --set (argparse refuses)
        labels.append("dangling --set")
    return Case("set", "; ".join(labels), argv, files)


# ---------------------------------------------------------------------------------------------------------------
# Surface: session files (store.load → Session.restore → build_plan)


def hostile_python(rng: random.Random, key: str | None = None) -> tuple[Any, str]:
    """A hostile value as a Python object (dumped to YAML by safe_dump)."""
    import datetime

    v = pick(rng, (
        10**5000, -(10**5000), 2**63, -1, 0, 10**12, 1.5, float("nan"), float("inf"), -float("inf"), 1e308, True,
        False, None, "", " ", "abc", "16", "1e6", "x" * 100_000, "a\nb", "a\u2028b", "a\x85b", "\x1b[2J", "\ufeff",
        b"\x00\xff", {"a": 1}, {"input": 1, "output": 2}, [1, 2], [[[]]], [], {}, {1, 2}, datetime.date(2024, 2, 29),
        datetime.datetime(2024, 1, 1, 12, 0), "Qwen/Qwen3-8B", MODEL_DIR, "in/missing", "foo/bar", "auto",
        "h100-sxm-80gb", "offline", "fp8", 0.04, 1.01, 10**7, 2048,
    ))
    return v, short(v)


class FuzzDumper(yaml.SafeDumper):
    """safe_dump that can write ints over 4,300 digits (in hex, which YAML 1.1 reads back as the same int)."""


def _represent_int(dumper: yaml.SafeDumper, data: int) -> yaml.Node:
    try:
        text = str(data)
    except ValueError:
        text = ("-" if data < 0 else "") + hex(abs(data))
    return dumper.represent_scalar("tag:yaml.org,2002:int", text)


FuzzDumper.add_representer(int, _represent_int)


def gen_session(rng: random.Random) -> Case:
    seed = [list(p) for p in pick(rng, SESSION_SEEDS)]
    extras: Any = {}
    labels = []
    files: dict[str, bytes] = {}
    data: Any = None
    for _ in range(rng.randint(1, 3)):
        how = wpick(rng, [(6, "value"), (2, "truncate"), (2, "extras"), (2, "structure"), (1, "swap"),
                          (1, "unknown-var"), (1, "local-model")])
        if how == "value" and seed:
            i = rng.randrange(len(seed))
            v, lab = hostile_python(rng)
            if isinstance(seed[i], list) and len(seed[i]) == 2:
                seed[i][1] = v
                labels.append(f"given[{i}] {seed[i][0]}={lab}")
        elif how == "truncate":
            n = rng.randrange(len(seed) + 1) if seed else 0
            seed = seed[:n]
            labels.append(f"given cut to {n} answers")
        elif how == "extras":
            key = pick(rng, ("tp", "pp", "replicas", "peak_rps", "params_b", "gpu_hour_usd", "managed_usd_per_mtok",
                             "cold_start", "staff_usd_month", "app_name", "namespace", "served_model_name", "zzz",
                             "model"))
            v, lab = hostile_python(rng)
            if isinstance(extras, dict):
                extras[key] = v
            labels.append(f"extras {key}={lab}")
        elif how == "structure":
            form = pick(rng, ("given-dict", "given-str", "given-int", "given-null", "pair-short", "pair-long",
                              "pair-str", "pair-dict", "key-list", "key-null", "extras-list", "extras-str",
                              "extras-int", "top-list", "top-str", "no-given", "pairs-as-tuples"))
            labels.append(f"structure {form}")
            if form == "given-dict":
                data = {"given": dict((str(p[0]), p[1]) for p in seed if isinstance(p, list) and len(p) == 2)}
            elif form == "given-str":
                data = {"given": "model=Qwen/Qwen3-8B"}
            elif form == "given-int":
                data = {"given": 5}
            elif form == "given-null":
                data = {"given": None}
            elif form == "pair-short" and seed:
                seed[rng.randrange(len(seed))] = [seed[0][0]]
            elif form == "pair-long" and seed:
                i = rng.randrange(len(seed))
                seed[i] = [*seed[i], "extra"]
            elif form == "pair-str" and seed:
                seed[rng.randrange(len(seed))] = pick(rng, ("ab", "model", ""))
            elif form == "pair-dict" and seed:
                seed[rng.randrange(len(seed))] = {"model": "x"}
            elif form == "key-list" and seed:
                seed[0] = [["model"], seed[0][1] if len(seed[0]) > 1 else None]
            elif form == "key-null" and seed:
                seed[0] = [None, "Qwen/Qwen3-8B"]
            elif form == "extras-list":
                extras = [["tp", 2], ["replicas", 1]]
            elif form == "extras-str":
                extras = pick(rng, ("abc", "tp"))
            elif form == "extras-int":
                extras = 7
            elif form == "top-list":
                data = [["model", "Qwen/Qwen3-8B"]]
            elif form == "top-str":
                data = "given"
            elif form == "no-given":
                data = {"extras": {}}
            elif form == "pairs-as-tuples":
                data = "given: !!python/tuple [model, x]\n"
        elif how == "swap" and len(seed) > 2:
            i, j = rng.sample(range(len(seed)), 2)
            seed[i], seed[j] = seed[j], seed[i]
            labels.append(f"answers {i} and {j} swapped")
        elif how == "unknown-var" and seed:
            seed.insert(rng.randrange(len(seed) + 1), [pick(rng, ("zzz", "Model", "", "1")), 1])
            labels.append("an unknown question in given")
        elif how == "local-model" and seed:
            seed[0] = ["model", pick(rng, (MODEL_DIR, f"{SANDBOX}/{MODEL_DIR}"))]
            cfg = tiny_config(1)
            if chance(rng, 0.5):
                key = pick(rng, ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size"))
                cfg[key] = pick(rng, (0, -1, "64", None, 10**7, [64]))
                labels.append(f"local model {key}={cfg[key]!r}")
            files[f"{MODEL_DIR}/config.json"] = json.dumps(cfg).encode()
            labels.append("local model folder")
    if data is None:
        data = {"given": seed, "extras": extras}
    if isinstance(data, str):
        text = data
    else:
        try:
            text = yaml.dump(data, Dumper=FuzzDumper, sort_keys=False, allow_unicode=True)
        except Exception:  # noqa: BLE001 — a value safe_dump cannot write: an empty session instead
            text = yaml.safe_dump({"given": [], "extras": {}})
            labels.append("(undumpable: empty session)")
    if chance(rng, 0.2):  # text-level: a value replaced by a hostile fragment
        frag, lab = yaml_value(rng, None)
        lines = text.splitlines()
        idx = [i for i, ln in enumerate(lines) if ln.startswith("  - ") and not ln.startswith("  - - ")]
        if idx:
            i = pick(rng, idx)
            lines[i] = "  - " + frag.replace("\n", "\n    ")
            labels.append(f"given value text {lab}")
        else:
            lines.append("extras: " + frag)
            labels.append(f"extras text {lab}")
        text = "\n".join(lines) + "\n"
    if chance(rng, 0.05):
        text = "given: " + alias_bomb(rng) + "\nextras: {}\n"
        labels.append("alias bomb as given")
    raw = text.encode("utf-8", "surrogatepass")
    if chance(rng, 0.15):
        raw, lab = mutate_bytes(rng, raw)
        labels.append(lab)
    dirs: list[str] = []
    symlinks: list[tuple[str, str]] = []
    modes: list[tuple[str, int]] = []
    place = wpick(rng, [(20, "file"), (1, "folder"), (1, "state-is-file"), (1, "loop"), (1, "dangling"),
                        (1, "unreadable"), (1, "absent")])
    if place == "file":
        files["state/session.yaml"] = raw
    elif place == "folder":
        dirs.append("state/session.yaml")
        files["state/session.yaml/session.yaml"] = raw
    elif place == "state-is-file":
        files["state2"] = raw  # WIZARD_STATE_DIR points at a file: see Runner (state dir override)
    elif place == "loop":
        symlinks.append(("state/session.yaml", "session.yaml"))
    elif place == "dangling":
        symlinks.append(("state/session.yaml", "nothing-here.yaml"))
    elif place == "unreadable":
        files["state/session.yaml"] = raw
        modes += [("state/session.yaml", 0o000), ("state", 0o300)]
    if place != "file":
        labels.append(f"session file: {place}")
    return Case("session", "; ".join(labels) or "unchanged seed", [], files, dirs, symlinks, modes, session=True)


# ---------------------------------------------------------------------------------------------------------------
# Surface: config.json of a local model folder


class Raw:
    """JSON text inserted verbatim (a number json.dumps cannot write: over 4,300 digits, 1e400, deep nesting)."""

    def __init__(self, text: str) -> None:
        self.text = text


def json_dumps_raw(data: Any, compact: bool = False) -> str:
    raws: list[str] = []

    def default(o: Any) -> Any:
        if isinstance(o, Raw):
            raws.append(o.text)
            return f"@@RAW{len(raws) - 1}@@"
        raise TypeError(type(o).__name__)

    if compact:
        text = json.dumps(data, separators=(",", ":"), default=default, allow_nan=True)
    else:
        text = json.dumps(data, indent=1, default=default, allow_nan=True)
    for i, r in enumerate(raws):
        text = text.replace(f'"@@RAW{i}@@"', r, 1)
    return text


def json_value(rng: random.Random) -> tuple[Any, str]:
    v = pick(rng, (
        0, -1, 1, 3, 7, 2**31, 2**63, 10**30, 10**400, 1.5, 64.0, -0.0, float("nan"), float("inf"), -float("inf"),
        True, False, None, "", "64", "x" * 50_000, "\u2028", "a\nb", [], [64], [[]], {}, {"a": 1}, [0, 0],
        ["a", "b"], [None, None], Raw("1e400"), Raw("-1e400"), Raw(BIG_DIGITS), Raw("-" + BIG_DIGITS),
        Raw("[" * 100_000 + "]" * 100_000), Raw('{"a":' * 50_000 + "1" + "}" * 50_000), 10**9, 10**7,
    ))
    return v, short(v.text if isinstance(v, Raw) else v)


CONFIG_KEYS = ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
               "vocab_size", "intermediate_size", "max_position_embeddings", "tie_word_embeddings", "torch_dtype",
               "model_type", "architectures", "sliding_window", "layer_types", "num_local_experts", "num_experts",
               "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "mlp_only_layers",
               "decoder_sparse_step", "first_k_dense_replace", "moe_layer_freq", "n_shared_experts", "kv_lora_rank",
               "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "num_nextn_predict_layers",
               "use_sliding_window", "max_window_layers", "sliding_window_pattern", "attention_bias", "qkv_bias",
               "mlp_bias", "cross_attention_layers", "text_config", "vision_config", "quantization_config",
               "compression_config", "rope_scaling", "full_attention_interval", "linear_num_key_heads",
               "shared_expert_intermediate_size", "topk_method", "dtype", "language_config", "mm_tokens_per_image")

CONFIG_SPECIALS: tuple[tuple[str, Callable[[dict], None]], ...] = (
    ("num_hidden_layers=10**9", lambda c: _lm(c).__setitem__("num_hidden_layers", 10**9)),
    ("num_hidden_layers=10**7", lambda c: _lm(c).__setitem__("num_hidden_layers", 10**7)),
    ("num_hidden_layers=2**62", lambda c: _lm(c).__setitem__("num_hidden_layers", 2**62)),
    ("hidden_size=10**12", lambda c: _lm(c).__setitem__("hidden_size", 10**12)),
    ("vocab_size=10**15", lambda c: _lm(c).__setitem__("vocab_size", 10**15)),
    ("max_position_embeddings=10**18", lambda c: _lm(c).__setitem__("max_position_embeddings", 10**18)),
    ("hidden 100 / 3 heads, no head_dim", lambda c: (_lm(c).pop("head_dim", None),
                                                     _lm(c).update(hidden_size=100, num_attention_heads=3,
                                                                   num_key_value_heads=3))),
    ("heads > hidden, no head_dim", lambda c: (_lm(c).pop("head_dim", None),
                                               _lm(c).update(hidden_size=8, num_attention_heads=16,
                                                             num_key_value_heads=16))),
    ("head_dim 0", lambda c: _lm(c).__setitem__("head_dim", 0)),
    ("kv heads 0", lambda c: _lm(c).__setitem__("num_key_value_heads", 0)),
    ("kv heads > heads", lambda c: _lm(c).__setitem__("num_key_value_heads", 1024)),
    ("fp8 weight_block_size [0,0]", lambda c: c.__setitem__("quantization_config",
                                                            {"quant_method": "fp8", "weight_block_size": [0, 0]})),
    ("fp8 weight_block_size [a,b]", lambda c: c.__setitem__("quantization_config",
                                                            {"quant_method": "fp8", "weight_block_size": ["a", "b"]})),
    ("fp8 weight_block_size [inf,1]", lambda c: c.__setitem__("quantization_config",
                                                              {"quant_method": "fp8",
                                                               "weight_block_size": [Raw("1e400"), 1]})),
    ("fp8 weight_block_size [null,null]", lambda c: c.__setitem__("quantization_config",
                                                                  {"quant_method": "fp8",
                                                                   "weight_block_size": [None, None]})),
    ("fp8 weight_block_size [-128,128]", lambda c: c.__setitem__("quantization_config",
                                                                 {"quant_method": "fp8",
                                                                  "weight_block_size": [-128, 128]})),
    ("awq bits 0", lambda c: c.__setitem__("quantization_config", {"quant_method": "awq", "bits": 0})),
    ("awq bits x", lambda c: c.__setitem__("quantization_config", {"quant_method": "awq", "bits": "x"})),
    ("awq no bits", lambda c: c.__setitem__("quantization_config", {"quant_method": "awq"})),
    ("gptq bits 3 group_size -1", lambda c: c.__setitem__("quantization_config",
                                                           {"quant_method": "gptq", "bits": 3, "group_size": -1})),
    ("gptq bits 64", lambda c: c.__setitem__("quantization_config", {"quant_method": "gptq", "bits": 64})),
    ("compressed-tensors groups list", lambda c: c.__setitem__("quantization_config",
                                                               {"quant_method": "compressed-tensors",
                                                                "config_groups": []})),
    ("compressed-tensors num_bits x", lambda c: c.__setitem__(
        "quantization_config", {"quant_method": "compressed-tensors",
                                "config_groups": {"g": {"weights": {"num_bits": "x", "strategy": "group",
                                                                    "group_size": "y"}}}})),
    ("compressed-tensors num_bits 0", lambda c: c.__setitem__(
        "quantization_config", {"quant_method": "compressed-tensors",
                                "config_groups": {"g": {"weights": {"num_bits": 0}}}})),
    ("compressed-tensors block [0,0]", lambda c: c.__setitem__(
        "quantization_config", {"quant_method": "compressed-tensors",
                                "config_groups": {"g": {"weights": {"num_bits": 8,
                                                                    "block_structure": [0, 0]}}}})),
    ("quant_method 5", lambda c: c.__setitem__("quantization_config", {"quant_method": 5})),
    ("quantization_config string", lambda c: c.__setitem__("quantization_config", "fp8")),
    ("modules_to_not_convert 5", lambda c: c.__setitem__("quantization_config",
                                                         {"quant_method": "fp8", "modules_to_not_convert": 5})),
    ("bitsandbytes load_in_4bit 1", lambda c: c.__setitem__("quantization_config",
                                                            {"quant_method": "bitsandbytes", "load_in_4bit": 1})),
    ("architectures string", lambda c: c.__setitem__("architectures", "LlamaForCausalLM")),
    ("architectures dict", lambda c: c.__setitem__("architectures", {"a": 1})),
    ("architectures int", lambda c: c.__setitem__("architectures", 5)),
    ("architectures [5]", lambda c: c.__setitem__("architectures", [5])),
    ("architectures [[]]", lambda c: c.__setitem__("architectures", [[]])),
    ("layer_types unhashable", lambda c: _lm(c).__setitem__("layer_types",
                                                            [["full_attention"]] * _layers(c))),
    ("layer_types sliding without window", lambda c: (_lm(c).pop("sliding_window", None),
                                                      _lm(c).__setitem__("layer_types",
                                                                         ["sliding_attention"] * _layers(c)))),
    ("layer_types all linear", lambda c: _lm(c).__setitem__("layer_types", ["linear_attention"] * _layers(c))),
    ("mlp_only_layers string", lambda c: _lm(c).update(num_experts=8, num_experts_per_tok=2,
                                                       moe_intermediate_size=64, mlp_only_layers="abc")),
    ("mlp_only_layers int", lambda c: _lm(c).update(num_experts=8, num_experts_per_tok=2,
                                                    moe_intermediate_size=64, mlp_only_layers=5)),
    ("experts_per_token 0", lambda c: _lm(c).update(num_local_experts=8, num_experts_per_tok=0,
                                                    experts_per_token=0)),
    ("experts_per_token > experts", lambda c: _lm(c).update(num_local_experts=8, num_experts_per_tok=64)),
    ("num_experts 10**9", lambda c: _lm(c).update(num_local_experts=10**9, num_experts_per_tok=2)),
    ("moe_layer_freq 0", lambda c: _lm(c).update(n_routed_experts=8, num_experts_per_tok=2, moe_intermediate_size=64,
                                                 first_k_dense_replace=1, moe_layer_freq=0)),
    ("decoder_sparse_step 0", lambda c: _lm(c).update(num_experts=8, num_experts_per_tok=2, moe_intermediate_size=64,
                                                      decoder_sparse_step=0)),
    ("sliding_window_pattern 0", lambda c: _lm(c).update(model_type="gemma3_text", sliding_window=512,
                                                         sliding_window_pattern=0)),
    ("full_attention_interval 0", lambda c: _lm(c).update(model_type="qwen3_next", full_attention_interval=0)),
    ("qwen3_next without linear keys", lambda c: _lm(c).update(model_type="qwen3_next")),
    ("cross_attention_layers huge", lambda c: _lm(c).__setitem__("cross_attention_layers", [10**9])),
    ("text_config list", lambda c: c.__setitem__("text_config", [])),
    ("text_config self-nested", lambda c: c.__setitem__("text_config", {"text_config": {"text_config": {}}})),
    ("vision_config string", lambda c: c.update(text_config=dict(c), vision_config="siglip")),
    ("vision_config zero patch", lambda c: c.update(text_config=dict(c),
                                                    vision_config={"hidden_size": 64, "intermediate_size": 64,
                                                                   "num_hidden_layers": 1, "patch_size": 0})),
    ("mllama vision zero patch", lambda c: c.update(text_config=dict(c), vision_config={
        "model_type": "mllama_vision_model", "hidden_size": 64, "intermediate_size": 64, "num_hidden_layers": 1,
        "patch_size": 0, "supported_aspect_ratios": 5})),
    ("siglip zero patch", lambda c: c.update(mm_tokens_per_image=256, text_config=dict(c), vision_config={
        "model_type": "siglip_vision_model", "hidden_size": 64, "intermediate_size": 64, "num_hidden_layers": 1,
        "patch_size": 0, "image_size": 224})),
    ("kv_lora_rank with missing dims", lambda c: _lm(c).__setitem__("kv_lora_rank", 512)),
    ("num_nextn_predict_layers -1", lambda c: _lm(c).__setitem__("num_nextn_predict_layers", -1)),
    ("model_type list", lambda c: c.__setitem__("model_type", ["llama"])),
    ("torch_dtype int", lambda c: c.__setitem__("torch_dtype", 16)),
    ("torch_dtype float64", lambda c: c.__setitem__("torch_dtype", "float64")),
    ("intermediate_size 0 dense", lambda c: _lm(c).__setitem__("intermediate_size", 0)),
    ("all dims 1", lambda c: _lm(c).update(hidden_size=1, num_attention_heads=1, num_key_value_heads=1, vocab_size=1,
                                           intermediate_size=1, num_hidden_layers=1, head_dim=1)),
    ("max_position_embeddings 1", lambda c: _lm(c).__setitem__("max_position_embeddings", 1)),
    ("rope_scaling factor 1e400", lambda c: c.__setitem__("rope_scaling", {"factor": Raw("1e400")})),
)


def _lm(c: dict) -> dict:
    t = c.get("text_config")
    return t if isinstance(t, dict) else c


def _layers(c: dict) -> int:
    n = _lm(c).get("num_hidden_layers")
    return n if isinstance(n, int) and 0 < n < 1000 else 2


def mutate_config(rng: random.Random, cfg: dict) -> list[str]:
    labels = []
    for _ in range(rng.randint(1, 3)):
        how = wpick(rng, [(6, "value"), (5, "special"), (1, "delete"), (1, "nested-where-scalar"), (1, "add")])
        if how == "value":
            key = pick(rng, CONFIG_KEYS)
            v, lab = json_value(rng)
            target = _lm(cfg) if chance(rng, 0.7) else cfg
            target[key] = v
            labels.append(f"{key}={lab}")
        elif how == "special":
            name, fn = pick(rng, CONFIG_SPECIALS)
            try:
                fn(cfg)
            except Exception:  # noqa: BLE001 — a special that does not apply to this config
                continue
            labels.append(name)
        elif how == "delete":
            key = pick(rng, CONFIG_KEYS)
            _lm(cfg).pop(key, None)
            labels.append(f"no {key}")
        elif how == "nested-where-scalar":
            key = pick(rng, CONFIG_KEYS[:8])
            _lm(cfg)[key] = {"value": _lm(cfg).get(key, 1)}
            labels.append(f"{key} nested")
        else:
            key = pick(rng, ("", "\u2028", "a" * 1000, "__proto__", "hidden_size "))
            cfg[key] = 1
            labels.append(f"extra key {short(key)}")
    return labels


SIZE_GPUS = ("h100-sxm-80gb", "l4-24gb", "a100-sxm-40gb", "mi300x-192gb", "t4-16gb", "H100-SXM-80GB", "gb200")


def size_argv(rng: random.Random, model: str) -> tuple[list[str], list[str]]:
    argv = ["size", model, "--gpu", pick(rng, SIZE_GPUS)]
    labels = []
    if chance(rng, 0.8):
        argv.append("--json")
    if chance(rng, 0.3):
        extra = pick(rng, (["--tp", "2"], ["--tp", "8"], ["--pp", "2"], ["--context", "100000"],
                           ["--concurrency", "256"], ["--weight-precision", "fp8"], ["--weight-precision", "int4"],
                           ["--kv-cache-dtype", "fp8"], ["--prompt-tokens", "1000", "--output-tokens", "100"],
                           ["--prompt-tokens", "1000"], ["--max-num-seqs", "1"], ["--max-num-batched-tokens", "1"],
                           ["--gpu-memory-utilization", "0.05"], ["--enforce-eager"], ["--tp", BIG_DIGITS[:5000]],
                           ["--context", "1" + "0" * 20], ["--gpu-memory-utilization", "nan"], ["--tp", "3"]))
        argv += extra
        labels.append(" ".join(short(a, 30) for a in extra))
    return argv, labels


def gen_config(rng: random.Random) -> Case:
    if chance(rng, 0.3):
        name, cfg = "tiny llama", tiny_config(rng.randint(1, 2))
    else:
        name, text = pick(rng, configs())
        cfg = json.loads(text)
    labels = [f"config {name}"]
    files: dict[str, bytes] = {}
    form = wpick(rng, [(20, "mutated"), (1, "not-object"), (1, "deep")])
    if form == "mutated":
        labels += mutate_config(rng, cfg)
        text = json_dumps_raw(cfg)
    elif form == "not-object":
        text = pick(rng, ("[]", '"config"', "1", "null", "[{}]", "true"))
        labels.append(f"config.json is {text}")
    else:
        text = "[" * 100_000 + "]" * 100_000
        labels.append("config.json nested 100,000 deep")
    raw = text.encode("utf-8", "surrogatepass")
    if chance(rng, 0.12):
        raw, lab = mutate_bytes(rng, raw)
        labels.append(lab)
    if chance(rng, 0.05):
        raw = raw.replace(b"{", b'{"hidden_size": "dup", ', 1)
        labels.append("duplicate key text")
    files[f"{MODEL_DIR}/config.json"] = raw
    if chance(rng, 0.1):
        q = json.loads(json.dumps(MODELOPT_QUANT))
        mut = pick(rng, ("ok", "quant-list", "algo-int", "exclude-int", "group-str", "not-object", "quant-missing"))
        if mut == "quant-list":
            q["quantization"] = []
        elif mut == "algo-int":
            q["quantization"]["quant_algo"] = 8
        elif mut == "exclude-int":
            q["quantization"]["exclude_modules"] = 5
        elif mut == "group-str":
            q["quantization"]["group_size"] = "x"
        elif mut == "not-object":
            q = [1]
        elif mut == "quant-missing":
            del q["quantization"]
        files[f"{MODEL_DIR}/hf_quant_config.json"] = json.dumps(q).encode()
        labels.append(f"hf_quant_config.json {mut}")
    if chance(rng, 0.8):
        argv, more = size_argv(rng, pick(rng, (MODEL_DIR, "./" + MODEL_DIR, f"{SANDBOX}/{MODEL_DIR}")))
        labels += more
    else:
        data, scenario = base_answers(rng, fast=True)
        data["model"] = MODEL_DIR
        files[ANSWERS] = answers_text(data).encode()
        argv = ["plan", "--answers", ANSWERS, "--json"]
        labels.append(f"plan of scenario {scenario}")
    return Case("config", "; ".join(labels), argv, files)


# ---------------------------------------------------------------------------------------------------------------
# Surface: safetensors headers


ST_DTYPES = ("F32", "F16", "BF16", "I32", "U8", "F8_E4M3", "F64", "I64", "BOOL", "F4", "F8_E8M0")
ST_BITS = {"F64": 64, "F32": 32, "F16": 16, "BF16": 16, "I64": 64, "I32": 32, "U8": 8, "BOOL": 8, "F8_E4M3": 8,
           "F4": 4, "F8_E8M0": 8}


def st_header(tensors: dict[str, tuple[str, list[int]]]) -> dict:
    header: dict = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = math.prod(shape) * ST_BITS.get(dtype, 16) // 8
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    return header


def _nbytes(info: Any) -> int | None:
    if not isinstance(info, dict):
        return None
    shape, dtype = info.get("shape"), info.get("dtype")
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
        return None
    if not isinstance(dtype, str) or dtype not in ST_BITS:
        return None
    if sum(d.bit_length() for d in shape) > 200:
        return None
    return math.prod(shape) * ST_BITS[dtype] // 8


def fix_offsets(header: dict) -> int:
    """Lay the tensors out one after the other (data_offsets from shape × dtype); returns the data length."""
    offset = 0
    for name, info in header.items():
        n = _nbytes(info) if name != "__metadata__" else None
        if n is not None:
            info["data_offsets"] = [offset, offset + n]
            offset += n
    return offset


def data_end(header: dict) -> int:
    end = 0
    for name, info in header.items():
        if name != "__metadata__" and isinstance(info, dict):
            off = info.get("data_offsets")
            if isinstance(off, list) and len(off) == 2 and all(type(o) is int for o in off):
                end = max(end, *off)
    return end


def st_bytes(header_text: bytes, length: int | None = None, pad: bool = True, data: int = 64) -> bytes:
    raw = header_text
    if pad:
        raw += b" " * (-len(raw) % 8)
    n = len(raw) if length is None else length
    return struct.pack("<Q", n & (2**64 - 1)) + raw + bytes(data)


def st_shape(rng: random.Random) -> tuple[Any, str]:
    v = pick(rng, (
        ["64"], [64.0], [True], [None], [-1], [2**64], [10**30, 10**30], [10**200, 10**200], [[64]], {}, "64", None,
        64, [], [0], [10**18] * 20, [Raw(BIG_DIGITS)], [Raw("1e400")], [1, -1], [64, "x"], [2**40, 2**40],
        [10**9, 10**9, 10**9], [Raw("-0")], [1.5],
    ))
    return v, short(v.text if isinstance(v, Raw) else v)


def gen_safetensors(rng: random.Random) -> Case:
    labels: list[str] = []
    files: dict[str, bytes] = {}
    sharded = chance(rng, 0.25)
    cfg = tiny_config(2 if sharded else 1)
    if chance(rng, 0.1):
        cfg["num_nextn_predict_layers"] = 1
        labels.append("config with an MTP layer")
    files[f"{MODEL_DIR}/config.json"] = json.dumps(cfg).encode()
    tensor_sets = [SHARD_1, SHARD_2] if sharded else [DENSE_TENSORS]
    names = list(SHARD_NAMES) if sharded else ["model.safetensors"]
    headers = [st_header(t) for t in tensor_sets]
    target = rng.randrange(len(headers))
    h = headers[target]
    for _ in range(rng.randint(1, 3)):
        how = wpick(rng, [(5, "shape"), (3, "dtype"), (2, "info"), (1, "offsets"), (1, "metadata"), (2, "name"),
                          (1, "many")])
        tname = pick(rng, [k for k in h if k != "__metadata__"] or ["x"])
        if how == "shape" and isinstance(h.get(tname), dict):
            h[tname]["shape"], lab = st_shape(rng)
            labels.append(f"{tname} shape {lab}")
        elif how == "dtype" and isinstance(h.get(tname), dict):
            h[tname]["dtype"] = pick(rng, ("F17", "", None, 5, ["F16"], {"x": 1}, "f16", "BF16 ", "F4", "I64",
                                           "F8_E5M2", "\u2028"))
            labels.append(f"{tname} dtype {short(h[tname]['dtype'])}")
        elif how == "info":
            h[tname] = pick(rng, (5, [], "x", None, {}, {"dtype": "F16"}, {"shape": [1]}))
            labels.append(f"{tname} info {short(h[tname])}")
        elif how == "offsets" and isinstance(h.get(tname), dict):
            h[tname]["data_offsets"] = pick(rng, ([10**30, 0], [-1, 5], "x", None, [1]))
            labels.append(f"{tname} data_offsets {short(h[tname]['data_offsets'])}")
        elif how == "metadata":
            h["__metadata__"] = pick(rng, ([], "x", {"format": 5}, {"total_size": -1}, None))
            labels.append(f"__metadata__ {short(h['__metadata__'])}")
        elif how == "name":
            new = pick(rng, ("model.layers.99999999999999999999.mlp.weight", "model.layers.1.x", "", "\u2028",
                             "model.layers.-1.x", "model.mtp.0.w", "lm_head.weight_scale_inv", "a" * 10_000,
                             "model.layers.٣.x"))
            h[new] = {"dtype": "BF16", "shape": [64, 64], "data_offsets": [0, 8192]}
            labels.append(f"tensor named {short(new)}")
        elif how == "many":
            n = pick(rng, (1_000, 20_000))
            for i in range(n):
                h[f"t.{i}"] = {"dtype": "F16", "shape": [1], "data_offsets": [0, 2]}
            labels.append(f"{n} tensors")
    consistent = chance(rng, 0.5)
    if consistent:  # data_offsets recomputed from the (mutated) shapes, as a writer of such a file would
        labels.append("offsets follow the shapes")
    blobs = []
    for hd in headers:
        end = fix_offsets(hd) if consistent else data_end(hd)
        text = json_dumps_raw(hd, compact=True).encode("utf-8", "surrogatepass")
        blobs.append(st_bytes(text, data=end if end <= 8 * 2**20 else 64))
    if chance(rng, 0.35):
        form = pick(rng, ("not-object", "bad-utf8", "deep", "nan", "big-int", "trailing", "length+", "length-",
                          "length0", "length-max", "length-100MB", "length-odd", "truncated-3", "truncated-8",
                          "truncated-mid", "empty", "lfs", "unpadded", "length-2**63"))
        text = json_dumps_raw(h, compact=True).encode("utf-8", "surrogatepass")
        if form == "not-object":
            blob = st_bytes(pick(rng, (b"[]", b'"x"', b"1", b"null")))
        elif form == "bad-utf8":
            blob = st_bytes(text.replace(b"model", b"mod\xffel", 1))
        elif form == "deep":
            blob = st_bytes(b"[" * 100_000 + b"]" * 100_000)
        elif form == "nan":
            blob = st_bytes(text.replace(b'"format":"pt"', b'"format":NaN', 1))
        elif form == "big-int":
            blob = st_bytes(text.replace(b"[64,64]", b"[" + BIG_DIGITS.encode() + b",64]", 1)
                            if b"[64,64]" in text else text.replace(b"[", b"[" + BIG_DIGITS.encode() + b",", 1))
        elif form == "trailing":
            blob = st_bytes(text + b"garbage", pad=False)
        elif form == "length+":
            blob = st_bytes(text, length=len(text) + rng.randint(1, 10_000))
        elif form == "length-":
            blob = st_bytes(text, length=max(0, len(text) - rng.randint(1, 50)))
        elif form == "length0":
            blob = st_bytes(text, length=0)
        elif form == "length-max":
            blob = st_bytes(text, length=2**64 - 1)
        elif form == "length-100MB":
            blob = st_bytes(text, length=100 * 2**20)
        elif form == "length-odd":
            blob = st_bytes(text, length=len(text) + 3, pad=False)
        elif form == "truncated-3":
            blob = b"\x10\x00\x00"
        elif form == "truncated-8":
            blob = struct.pack("<Q", 5000)
        elif form == "truncated-mid":
            full = st_bytes(text)
            blob = full[: rng.randrange(8, max(9, len(full) // 2))]
        elif form == "empty":
            blob = b""
        elif form == "lfs":
            blob = b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n"
        elif form == "unpadded":
            blob = st_bytes(text, pad=False)
        else:
            blob = st_bytes(text, length=2**63)
        blobs[target] = blob
        labels.append(f"file {form}")
    dirs: list[str] = []
    symlinks: list[tuple[str, str]] = []
    layout = wpick(rng, [(20, "normal"), (1, "shard-count-bomb"), (1, "missing-shard"), (1, "index-bad"),
                         (1, "folder-named"), (1, "dangling"), (1, "loop"), (1, "extra-names")])
    if layout in ("normal", "index-bad", "extra-names"):
        for n, b in zip(names, blobs):
            files[f"{MODEL_DIR}/{n}"] = b
    if sharded and layout == "normal" and chance(rng, 0.5):
        index = {"metadata": {"total_size": 0},
                 "weight_map": {**{k: names[0] for k in SHARD_1}, **{k: names[1] for k in SHARD_2}}}
        files[f"{MODEL_DIR}/model.safetensors.index.json"] = json.dumps(index).encode()
    if layout == "shard-count-bomb":
        files[f"{MODEL_DIR}/model-00001-of-{pick(rng, ('99999999999', '9' * 30, '1000000'))}.safetensors"] = blobs[0]
    elif layout == "missing-shard":
        files[f"{MODEL_DIR}/{names[0]}"] = blobs[0]
        if not sharded:
            files[f"{MODEL_DIR}/model-00001-of-00002.safetensors"] = blobs[0]
    elif layout == "index-bad":
        wm = pick(rng, ([], {"a": 5}, {"a": ["x"]}, {"a": "../x.safetensors"}, {"a": None}, "x", {"a": "\u2028"},
                        {"a": "a" * 300}))
        files[f"{MODEL_DIR}/model.safetensors.index.json"] = json.dumps({"weight_map": wm}).encode()
    elif layout == "folder-named":
        dirs.append(f"{MODEL_DIR}/model.safetensors")
        files[f"{MODEL_DIR}/model.safetensors/x"] = b"x"
    elif layout == "dangling":
        symlinks.append((f"{MODEL_DIR}/model.safetensors", "nothing.safetensors"))
    elif layout == "loop":
        symlinks.append((f"{MODEL_DIR}/model.safetensors", "model.safetensors"))
    elif layout == "extra-names":
        files[f"{MODEL_DIR}/{pick(rng, ('model-x-of-y.safetensors', 'model-0-of-0.safetensors', '.safetensors', 'model-00002-of-00001.safetensors'))}"] = blobs[0]
    if layout != "normal":
        labels.append(f"layout {layout}")
    if sharded:
        labels.insert(0, "sharded")
    argv, more = size_argv(rng, MODEL_DIR)
    labels += more
    return Case("safetensors", "; ".join(labels), argv, files, dirs, symlinks)


# ---------------------------------------------------------------------------------------------------------------
# Surface: --out paths

OUT_PATHS = (
    "dest/out", "./dest/out", "dest//out", "dest/out/", "dest/out/.", "dest/x/../out", "dest/a/b/c/out",
    f"{SANDBOX}/dest/out", "~/out", "~", "dest", "dest/..", ".", "in", MODEL_DIR, ANSWERS, "state", "home",
    "dest/" + "a" * 255, "dest/" + "a" * 256, "dest/" + "/".join(["d" * 200] * 25), "dest/out with spaces",
    "dest/out\n", "dest/out\r", "dest/out\u2028x", "dest/out\x85", "dest/-rf", "dest/--force", "dest/\udcff",
    "dest/é", "dest/out\t", "dest/*", "dest/$(id)", "dest/.", "dest/..out", "dest/.hidden", "dest/out/../../dest/o2",
    "in/answers.yaml/x", "dest/file/out", "dest/link", "dest/link/sub", "dest/loop", "dest/dangling", "dest/ro/out",
    "", " ", "\t", "dest/CON", "dest/out:colon", "dest/\u202eevil",
)


def gen_out(rng: random.Random) -> Case:
    data, scenario = base_answers(rng, fast=True)
    labels = [f"scenario {scenario}"]
    files: dict[str, bytes] = {}
    dirs: list[str] = []
    symlinks: list[tuple[str, str]] = []
    modes: list[tuple[str, int]] = []
    if chance(rng, 0.25):
        data["model"] = MODEL_DIR
        files.update(local_model_files(rng))
        labels.append("local model folder")
    files[ANSWERS] = answers_text(data).encode()
    out = pick(rng, OUT_PATHS)
    before = wpick(rng, [(4, "nothing"), (2, "empty-dir"), (2, "user-files"), (1, "file"), (1, "link-to-dir"),
                         (1, "link-to-empty"), (1, "link-to-inputs"), (1, "link-to-model"), (1, "dangling-link"),
                         (1, "link-loop"), (1, "readonly-parent"), (1, "old-repo")])
    target = out.rstrip("/") if out.startswith("dest/") else "dest/out"
    target = os.path.normpath(target) if target.startswith("dest/") and ".." not in target else "dest/out"
    if len(target) > 1000 or max(len(part) for part in target.split("/")) > 200:
        target = "dest/out"  # the fixture itself could not be laid out
    if target.startswith(("dest/file/", "dest/loop/", "dest/dangling/")) or target in ("dest/file", "dest/real"):
        before = "nothing"  # under a file or a broken link nothing can be laid out; dest/real is the link's target
    if ".." in out and "link" in before:
        before = "empty-dir"  # `..` through a link could resolve outside the sandbox: the harness never runs that
    # Fixed fixtures some paths name:
    files["dest/file"] = b"a file where a folder is expected\n"
    symlinks.append(("dest/link", "real"))
    dirs.append("dest/real")
    if chance(rng, 0.5):
        files["dest/real/keep-me.txt"] = b"user data\n"
    symlinks.append(("dest/loop", "loop"))
    symlinks.append(("dest/dangling", "nowhere"))
    dirs.append("dest/ro")
    modes.append(("dest/ro", 0o500))
    if before == "empty-dir":
        dirs.append(target)
    elif before == "user-files":
        files[f"{target}/notes.txt"] = b"my notes\n"
        files[f"{target}/sub/data.csv"] = b"1,2\n"
    elif before == "file":
        files[target] = b"not a folder\n"
    elif before == "link-to-dir":
        files["dest/target-dir/user.txt"] = b"user data\n"
        symlinks.append((target, os.path.relpath("dest/target-dir", os.path.dirname(target))))
    elif before == "link-to-empty":
        dirs.append("dest/empty-target")
        symlinks.append((target, os.path.relpath("dest/empty-target", os.path.dirname(target))))
    elif before == "link-to-inputs":
        symlinks.append((target, os.path.relpath("in", os.path.dirname(target))))
    elif before == "link-to-model":
        files.update(local_model_files(rng))
        symlinks.append((target, os.path.relpath(MODEL_DIR, os.path.dirname(target))))
    elif before == "dangling-link":
        symlinks.append((target, "missing-target"))
    elif before == "link-loop":
        symlinks.append((target, os.path.basename(target)))
    elif before == "readonly-parent":
        dirs.append(os.path.dirname(target))
        modes.append((os.path.dirname(target), 0o500))
    elif before == "old-repo":
        files[f"{target}/README.md"] = b"# old starter repo\n"
        files[f"{target}/answers.yaml"] = b"model: x\n"
        files[f"{target}/.llm-deploy-wizard.json"] = json.dumps(
            {"tool": "llm-deploy-wizard", "version": "0.1.0", "files": ["README.md", "answers.yaml"]}).encode()
    labels.append(f"--out {short(out)} over {before} at {short(target)}")
    argv = ["plan", "--answers", ANSWERS]
    if out.startswith("-"):
        argv.append(f"--out={out}")
    else:
        argv += ["--out", out]
    if chance(rng, 0.5):
        argv.append("--force")
        labels.append("--force")
    if chance(rng, 0.5):
        argv.append("--json")
    if chance(rng, 0.1):  # a hostile answer too: the repo must not be half-written
        key = pick(rng, ("app_name", "namespace", "served_model_name", "peak_concurrency", "cold_start"))
        frag, lab = yaml_value(rng, key)
        argv += ["--set", f"{key}={frag}"]
        labels.append(f"--set {key}={lab}")
    # dedupe fixtures that collide with the chosen target
    symlinks = list(dict(symlinks).items())
    return Case("out", "; ".join(labels), argv, files, sorted(set(dirs)), symlinks, modes, out=out)


GENERATORS: dict[str, Callable[[random.Random], Case]] = {
    "answers": gen_answers, "set": gen_set, "session": gen_session, "config": gen_config,
    "safetensors": gen_safetensors, "out": gen_out,
}


def generate(surface: str, rng: random.Random) -> Case:
    return GENERATORS[surface](rng)


def case_rng(seed: int | str, surface: str, index: int) -> random.Random:
    """The rng of case `index` of `surface` (benchmarks/fuzz.py --replay SURFACE:INDEX)."""
    return random.Random(f"{seed}:{surface}:{index}")


# ---------------------------------------------------------------------------------------------------------------
# Laying out a sandbox, snapshots


def inside(path: str, top: str) -> bool:
    path, top = os.path.normpath(path), os.path.normpath(top)
    return path == top or path.startswith(top + os.sep)


def fill(text: str, sandbox: str) -> str:
    return text.replace(SANDBOX, sandbox)


def materialize(case: Case, sandbox: str) -> None:
    """Lay the case out under `sandbox` (which must not exist); every path must stay inside it."""
    os.makedirs(sandbox)
    for d in ("in", "state", "home", "dest"):
        os.makedirs(os.path.join(sandbox, d), exist_ok=True)
    for d in case.dirs:
        p = os.path.join(sandbox, d)
        _check_inside(p, sandbox)
        os.makedirs(p, exist_ok=True)
    for rel, data in case.files.items():
        p = os.path.join(sandbox, rel)
        _check_inside(p, sandbox)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if os.path.isdir(p) and not os.path.islink(p):
            continue
        with open(p, "wb") as f:
            f.write(data.replace(SANDBOX.encode(), sandbox.encode()))
    for link, target in case.symlinks:
        p = os.path.join(sandbox, link)
        _check_inside(p, sandbox)
        if not inside(os.path.join(os.path.dirname(p), target), sandbox):
            raise ValueError(f"harness: symlink {link} -> {target} leaves the sandbox")
        if os.path.lexists(p):
            continue
        os.makedirs(os.path.dirname(p), exist_ok=True)
        os.symlink(target, p)
    for rel, mode in case.modes:
        p = os.path.join(sandbox, rel)
        if os.path.lexists(p) and not os.path.islink(p):
            os.chmod(p, mode)


def _check_inside(p: str, sandbox: str) -> None:
    if not inside(p, sandbox):
        raise ValueError(f"harness: {p} leaves the sandbox")


def destinations(case: Case, sandbox: str, home: str) -> list[str] | None:
    """Where --out may write (absolute, literal and resolved), or None when it would leave the sandbox."""
    if case.out is None:
        return []
    out = fill(case.out, sandbox)
    if not out.strip():
        return []
    expanded = home + out[1:] if out == "~" or out.startswith("~/") else out
    literal = os.path.normpath(os.path.join(sandbox, expanded))
    try:
        real = os.path.realpath(os.path.join(sandbox, expanded))
    except (OSError, ValueError):
        real = literal
    dests = [literal, real]
    if not all(inside(d, sandbox) for d in dests):
        return None
    return dests


def snapshot(top: str) -> dict[str, tuple]:
    """Every path under `top` (not following links): kind, mode, and for files size, mtime and inode."""
    out: dict[str, tuple] = {}

    def walk(d: str) -> None:
        try:
            entries = list(os.scandir(d))
        except OSError:
            return
        for e in entries:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            rel = os.path.relpath(e.path, top)
            if stat.S_ISLNK(st.st_mode):
                try:
                    out[rel] = ("link", os.readlink(e.path))
                except OSError:
                    out[rel] = ("link", "?")
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode))
                walk(e.path)
            else:
                out[rel] = ("file", stat.S_IMODE(st.st_mode), st.st_size, st.st_mtime_ns, st.st_ino)

    walk(top)
    return out


def changes(before: dict[str, tuple], after: dict[str, tuple], allowed: list[str], protected: list[str]) -> list[str]:
    """Paths added, removed or modified that are not under an allowed prefix. Under a protected prefix (the inputs)
    nothing that existed may change, even inside the destination; new folders that are ancestors of a destination
    (`mkdir -p` of its parents) are allowed."""

    def ok(rel: str, b: tuple | None, a: tuple | None) -> bool:
        if b is not None and any(inside(rel, p) for p in protected):
            return False
        if b is None and a is not None and a[0] == "dir" and any(inside(d, rel) for d in allowed):
            return True
        return any(inside(rel, d) for d in allowed)

    out = []
    for rel in sorted(set(before) | set(after)):
        b, a = before.get(rel), after.get(rel)
        if b == a or ok(rel, b, a):
            continue
        what = "added" if b is None else "removed" if a is None else "modified"
        out.append(f"{what} {rel}")
    return out


def rmtree(path: str) -> None:
    def unlock(func, p, _exc):  # noqa: ANN001
        try:
            os.chmod(os.path.dirname(p), 0o700)
            os.chmod(p, 0o700)
            func(p)
        except OSError:
            pass

    for dirpath, dirnames, _ in os.walk(path):
        for d in dirnames:
            p = os.path.join(dirpath, d)
            if not os.path.islink(p):
                with contextlib.suppress(OSError):
                    os.chmod(p, 0o700)
    shutil.rmtree(path, onerror=unlock)


# ---------------------------------------------------------------------------------------------------------------
# Running one case in-process (inside the worker)


def where(filename: str, lineno: int) -> str:
    f = filename.replace("\\", "/")
    root = str(ROOT).replace("\\", "/") + "/"
    if f.startswith(root):
        f = f[len(root):]
    elif "site-packages/" in f:
        f = f.split("site-packages/", 1)[1]
    elif "/lib/python" in f:
        f = "stdlib/" + f.rsplit("/", 1)[-1]
    return f"{f}:{lineno}"


def frames_of(exc: BaseException) -> tuple[str | None, str | None]:
    tb = traceback.extract_tb(exc.__traceback__)
    if not tb:
        return None, None
    own = [f for f in tb if not f.filename.endswith("fuzz_inputs.py")] or tb  # not the SIGALRM handler
    inner = where(own[-1].filename, own[-1].lineno or 0)
    wiz = next((where(f.filename, f.lineno or 0) for f in reversed(tb) if "/wizard/" in f.filename.replace("\\", "/")
                and "/site-packages/" not in f.filename), None)
    return inner, wiz


def safe_message(exc: BaseException) -> str:
    """The exception's message without calling str() on it: str() of a product exception can take unbounded time
    (pydantic renders its input, which may be an alias bomb). String args are used as they are, others through
    reprlib (bounded); OSError and the like have string args."""
    import reprlib

    short_repr = reprlib.Repr()
    short_repr.maxstring = short_repr.maxother = 200
    short_repr.maxlevel = 3
    parts = []
    for a in exc.args[:3]:
        if isinstance(a, str):
            parts.append(a)
        else:
            try:
                parts.append(short_repr.repr(a))
            except Exception:  # noqa: BLE001 — an int over 4,300 digits, a broken __repr__
                parts.append(f"<{type(a).__name__}>")
    if isinstance(exc, OSError) and exc.strerror:
        parts = [f"[Errno {exc.errno}] {exc.strerror}" + (f": {exc.filename!r}" if exc.filename else "")]
    return " ".join(parts)


def exception_text(exc: BaseException) -> str:
    msg = safe_message(exc)
    first = msg.splitlines()[0] if msg else ""
    if len(first) > 300:
        first = first[:280] + f"...({len(first)} chars)"
    return f"{type(exc).__name__}: {first}"


def format_tb(exc: BaseException, limit: int = 12_000) -> str:
    """The traceback (the chain of causes too), with messages from safe_message: bounded time."""
    chain: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and len(chain) < 5 and e not in chain:
        chain.append(e)
        e = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
    blocks = []
    for e in reversed(chain):
        try:
            frames = "".join(traceback.format_list(traceback.extract_tb(e.__traceback__)))
        except Exception:  # noqa: BLE001
            frames = "  (frames not printable)\n"
        blocks.append("Traceback (most recent call last):\n" + frames + exception_text(e) + "\n")
    text = "\nDuring handling of the above exception, another exception occurred:\n\n".join(blocks)
    return text if len(text) <= limit else text[: limit // 2] + "\n...\n" + text[-limit // 2:]


def _capture(errors: str) -> io.TextIOWrapper:
    """A stream that encodes like a UTF-8 terminal (stdout strict, stderr backslashreplace)."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors=errors, newline="\n", write_through=True)


def _read(stream: io.TextIOWrapper) -> str:
    with contextlib.suppress(Exception):
        stream.flush()
    return stream.buffer.getvalue().decode("utf-8", "backslashreplace")


def _drive_session() -> int:
    """The session surface: load the saved answers, resume them, build the plan if a recommendation is reached.
    Exit status as the command line would give it: 0, or 2 with one line when the file is refused."""
    from wizard.session import store
    from wizard.session.plan import build_plan
    from wizard.session.session import Session

    loaded = store.load()
    # store.load() returned (given, extras) or None; it now returns Loaded(saved, problem): take either.
    saved = getattr(loaded, "saved", loaded)
    problem = getattr(loaded, "problem", None)
    if problem:  # a session file that cannot be resumed: the front ends show this sentence and start over
        print(f"llm-deploy-wizard: {problem}", file=sys.stderr)
        return 2
    if saved is None:
        return 0
    given, extras = saved
    session = Session(extras=extras)
    session.restore(given)
    if session.recommendation is not None:
        plan = build_plan(session)
        json.dumps(plan, default=str)
    return 0


NETWORK_ATTEMPTS = [0]


def run_in_process(case: Case, sandbox: str, timeout: float, wroot: str, slow: float = 3.0) -> Result:
    """Lay out, snapshot, run (SIGALRM after `timeout`), classify (ok or refused after `slow` seconds: "slow:…").
    Never raises (a Hang leaking between the product and this code is caught by the worker)."""
    res = Result(case.surface, case.label, "harness-error", case=case)
    try:
        materialize(case, sandbox)
    except Exception as e:  # noqa: BLE001
        res.exception = exception_text(e)
        res.tb = format_tb(e)
        return res
    home = os.path.join(sandbox, "home")
    dests = destinations(case, sandbox, home)
    if dests is None:
        res.outcome = "harness-unsafe"
        res.exception = f"--out {case.out!r} would leave the sandbox: not run"
        return res
    before = snapshot(wroot)
    env_before = dict(os.environ)
    cwd_before = os.getcwd()
    state = os.path.join(sandbox, "state2" if "state2" in case.files else "state")
    os.environ.update({"HOME": home, "WIZARD_STATE_DIR": state, "XDG_STATE_HOME": os.path.join(home, ".local/state"),
                       "XDG_CONFIG_HOME": os.path.join(home, ".config"), "XDG_CACHE_HOME": os.path.join(home, ".cache"),
                       "HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9", "TMPDIR": os.path.join(wroot, "tmp")})
    argv = [fill(a, sandbox) for a in case.argv]
    out, err = _capture("strict"), _capture("backslashreplace")
    rc: int | None = None
    exc: BaseException | None = None
    hang = False
    net0 = NETWORK_ATTEMPTS[0]
    t0 = time.perf_counter()
    try:
        os.chdir(sandbox)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                if case.session:
                    from wizard.errors import InputError

                    try:
                        rc = _drive_session()
                    except InputError as e:
                        print(f"llm-deploy-wizard: error: {e.line()}", file=sys.stderr)
                        rc = 2
                else:
                    from wizard.cli import main

                    rc = main(argv)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except Hang as e:
        hang, exc = True, e
    except SystemExit as e:
        code = e.code
        if code is None:
            rc = 0
        elif isinstance(code, int):
            rc = code
        else:
            rc = 1
            with contextlib.suppress(Exception):
                err.write(str(code) + "\n")
    except BaseException as e:  # noqa: BLE001 — everything escaping main() is a traceback
        exc = e
    finally:
        with contextlib.suppress(BaseException):
            signal.setitimer(signal.ITIMER_REAL, 0)
    res.seconds = time.perf_counter() - t0
    with contextlib.suppress(OSError):
        os.chdir(cwd_before)
    os.environ.clear()
    os.environ.update(env_before)
    stdout, stderr = _read(out), _read(err)
    res.rc = rc
    res.stdout = stdout[:3000]
    res.stderr = stderr[:3000]
    res.stderr_lines = len(stderr.splitlines())
    res.network = NETWORK_ATTEMPTS[0] - net0
    if exc is not None:
        res.exception = exception_text(exc)
        res.frame, res.wizard_frame = frames_of(exc)
        res.tb = format_tb(exc)
    after = snapshot(wroot)
    rel = os.path.relpath(sandbox, wroot)
    allowed = [os.path.relpath(d, wroot) for d in dests]
    res.changed = changes(before, after, allowed, protected=[os.path.join(rel, "in")])[:20]
    res.outcome = classify(res, hang, exc, stdout, stderr)
    if res.outcome in OK_OUTCOMES and res.seconds > slow:
        res.outcome = f"slow:{res.outcome}"
    return res


def classify(res: Result, hang: bool, exc: BaseException | None, stdout: str, stderr: str) -> str:
    if hang:
        return "hang"
    if exc is not None:
        return f"traceback:{type(exc).__name__}"
    if res.changed:
        return "wrote-outside"
    if "Traceback" in stdout or "Traceback" in stderr:
        return "traceback-text"
    if res.network:
        return "network"
    if res.rc == 0:
        return "ok"
    if res.rc == 2:
        return "refused" if res.stderr_lines == 1 else "refused-not-one-line"
    return f"exit-{res.rc}"


# ---------------------------------------------------------------------------------------------------------------
# The worker process, and the Runner that drives it


def _no_network(*_args: Any, **_kwargs: Any) -> Any:
    NETWORK_ATTEMPTS[0] += 1
    raise OSError(errno.ENETUNREACH, "network switched off by the fuzzing harness")


def _raise_hang(_signum: int, _frame: Any) -> None:
    raise Hang("timed out")


def _worker_setup(wroot: str, mem_limit: int) -> None:
    import socket

    os.makedirs(os.path.join(wroot, "hf"), exist_ok=True)
    os.makedirs(os.path.join(wroot, "tmp"), exist_ok=True)
    os.environ.update({"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_DISABLE_TELEMETRY": "1",
                       "HF_HOME": os.path.join(wroot, "hf"), "COLUMNS": "120", "TMPDIR": os.path.join(wroot, "tmp")})
    tempfile.tempdir = None
    hub = sys.modules.get("huggingface_hub.constants")
    if hub is not None:  # imported before the environment was set (a pytest process): switch it off here too
        with contextlib.suppress(Exception):
            hub.HF_HUB_OFFLINE = True
            hub.ENDPOINT = "http://127.0.0.1:9"
    socket.socket.connect = _no_network  # type: ignore[method-assign]
    socket.socket.connect_ex = _no_network  # type: ignore[method-assign]
    socket.create_connection = _no_network  # type: ignore[assignment]
    signal.signal(signal.SIGALRM, _raise_hang)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is for the parent
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if mem_limit:
        with contextlib.suppress(Exception):
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))
    os.chdir(wroot)


def _warm_up(wroot: str) -> None:
    """One plan and one size, so the first fuzz input does not pay the imports and the tree load."""
    for f, argv in ((TESTS / "scenarios" / "tiny_model.yaml", None), (None, ["size", "Qwen/Qwen3-8B", "--json"])):
        with contextlib.suppress(BaseException):
            out, err = _capture("strict"), _capture("backslashreplace")
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                from wizard.cli import main

                main(argv or ["plan", "--answers", str(f), "--json"])


def _worker_main(conn: Any, session_root: str, timeout: float, grace: float, mem_limit: int, slow: float) -> None:
    import faulthandler

    wroot = os.path.join(session_root, f"w{os.getpid()}")
    os.makedirs(wroot, exist_ok=True)
    dump = open(os.path.join(session_root, f"faulthandler-{os.getpid()}.txt"), "w+")  # noqa: SIM115
    _worker_setup(wroot, mem_limit)
    _warm_up(wroot)
    conn.send(("ready", os.getpid()))
    parent = os.getppid()
    serial = 0
    while True:
        try:
            while not conn.poll(1.0):  # a sibling worker may hold our pipe open: watch the parent itself
                if os.getppid() != parent:
                    return
            case = conn.recv()
        except (EOFError, OSError):
            break
        if case is None:
            break
        serial += 1
        sandbox = os.path.join(wroot, f"c{serial}")
        dump.seek(0)
        dump.truncate()
        faulthandler.dump_traceback_later(timeout + grace / 2, repeat=False, file=dump, exit=False)
        try:
            res = run_in_process(case, sandbox, timeout, wroot, slow)
        except BaseException as e:  # noqa: BLE001 — a Hang raised between the product and our own code
            res = Result(case.surface, case.label, "hang" if isinstance(e, Hang) else "harness-error", case=case,
                         exception=exception_text(e), tb=format_tb(e))
        finally:
            faulthandler.cancel_dump_traceback_later()
        with contextlib.suppress(Exception):
            os.chdir(wroot)
            rmtree(sandbox)
        try:
            conn.send(res)
        except Exception as e:  # noqa: BLE001 — an unpicklable or huge result
            conn.send(Result(case.surface, case.label, "harness-error", case=case, exception=exception_text(e)))


def _parse_dump(text: str) -> tuple[str | None, str | None, str]:
    """(innermost frame, innermost wizard frame, the dump) from a faulthandler traceback of the main thread."""
    lines = text.splitlines()
    frames = []
    for ln in lines:
        m = re.match(r'\s*File "(.+)", line (\d+) in (.+)', ln)
        if m:
            frames.append((m.group(1), int(m.group(2))))
        elif frames and not ln.strip():
            break
    if not frames:
        return None, None, text
    inner = where(*frames[0])
    wiz = next((where(f, n) for f, n in frames if "/wizard/" in f and "/site-packages/" not in f), None)
    return inner, wiz, text


class Worker:
    """One worker process; `submit` a case, then `collect` its Result (a hang or a crash is a Result too)."""

    def __init__(self, session_root: str, timeout: float, grace: float, mem_limit: int, slow: float) -> None:
        import multiprocessing

        self.slow = slow
        self.ctx = multiprocessing.get_context("fork")
        self.session_root = session_root
        self.timeout, self.grace, self.mem_limit = timeout, grace, mem_limit
        self.proc = None
        self.conn = None
        self.case: Case | None = None
        self.deadline = 0.0
        self.started = 0.0
        self.restarts = 0

    def _start(self) -> None:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker_main,
                                args=(child, self.session_root, self.timeout, self.grace, self.mem_limit, self.slow),
                                daemon=True)
        proc.start()
        child.close()
        if not parent.poll(120):
            proc.kill()
            proc.join(5)
            raise RuntimeError("fuzz worker did not start")
        try:
            parent.recv()
        except EOFError:
            proc.join(5)
            raise RuntimeError(f"fuzz worker died on start (exit code {proc.exitcode})") from None
        self.proc, self.conn = proc, parent

    @property
    def busy(self) -> bool:
        return self.case is not None

    def submit(self, case: Case) -> None:
        if self.proc is None or not self.proc.is_alive():
            self._start()
        self.case = case
        self.started = time.monotonic()
        self.deadline = self.started + self.timeout + self.grace
        try:
            self.conn.send(case)
        except (OSError, ValueError):
            self._dead()

    def collect(self, wait: float = 0.0) -> Result | None:
        """The result if ready (or the case hung or crashed the worker), else None after waiting up to `wait`."""
        assert self.case is not None
        wait = max(0.0, min(wait, self.deadline - time.monotonic()))
        try:
            if self.conn.poll(wait):
                res = self.conn.recv()
                self.case = None
                return res
        except (EOFError, OSError):
            return self._dead()
        if not self.proc.is_alive():
            return self._dead()
        if time.monotonic() >= self.deadline:
            return self._kill_hung()
        return None

    def run(self, case: Case) -> Result:
        self.submit(case)
        while True:
            res = self.collect(wait=self.timeout + self.grace + 1)
            if res is not None:
                return res

    def _dump(self) -> str:
        try:
            with open(os.path.join(self.session_root, f"faulthandler-{self.proc.pid}.txt")) as f:
                return f.read()
        except OSError:
            return ""

    def _dead(self) -> Result:
        case, self.case = self.case, None
        self.proc.join(5)
        code = self.proc.exitcode
        name = f"signal-{signal.Signals(-code).name}" if code is not None and code < 0 else f"exit-{code}"
        frame, wiz, dump = _parse_dump(self._dump())
        res = Result(case.surface, case.label, f"crash:{name}", seconds=time.monotonic() - self.started, case=case,
                     exception=f"the worker process died ({name})", frame=frame, wizard_frame=wiz, tb=dump or None)
        self._cleanup_worker()
        return res

    def _kill_hung(self) -> Result:
        case, self.case = self.case, None
        frame, wiz, dump = _parse_dump(self._dump())
        self.proc.kill()  # our own worker, by its handle
        self.proc.join(10)
        res = Result(case.surface, case.label, "hang", seconds=time.monotonic() - self.started, case=case,
                     exception=f"not interruptible: killed after {self.timeout + self.grace:.0f} s",
                     frame=frame, wizard_frame=wiz, tb=dump or None)
        self._cleanup_worker()
        return res

    def _cleanup_worker(self) -> None:
        self.restarts += 1
        with contextlib.suppress(Exception):
            self.conn.close()
        with contextlib.suppress(Exception):
            rmtree(os.path.join(self.session_root, f"w{self.proc.pid}"))
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(self.session_root, f"faulthandler-{self.proc.pid}.txt"))
        self.proc = None
        self.conn = None

    def close(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(Exception):
                if self.case is None:
                    self.conn.send(None)
                    self.proc.join(10)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join(5)
            self.proc = None


class Runner:
    """Workers under one fresh temporary root; `run(case)` for one at a time, `run_many` to use several."""

    def __init__(self, timeout: float = 10.0, grace: float = 5.0, jobs: int = 1, mem_limit: int = 4 * 2**30,
                 slow: float = 3.0) -> None:
        self.root = tempfile.mkdtemp(prefix="llmdw-fuzz-")
        self.timeout = timeout
        self.workers = [Worker(self.root, timeout, grace, mem_limit, slow) for _ in range(max(1, jobs))]

    def run(self, case: Case) -> Result:
        return self.workers[0].run(case)

    def run_many(self, cases, on_result: Callable[[Any, Result], None]) -> None:
        """Run (key, case) pairs on every worker; `on_result(key, result)` as each finishes."""
        from multiprocessing.connection import wait

        todo = iter(cases)
        keys: dict[int, Any] = {}
        exhausted = False
        while True:
            for i, w in enumerate(self.workers):
                if not w.busy and not exhausted:
                    try:
                        key, case = next(todo)
                    except StopIteration:
                        exhausted = True
                        break
                    keys[i] = key
                    w.submit(case)
            busy = [(i, w) for i, w in enumerate(self.workers) if w.busy]
            if not busy:
                return
            soonest = min(w.deadline for _, w in busy) - time.monotonic()
            with contextlib.suppress(OSError, ValueError):
                wait([w.conn for _, w in busy if w.conn is not None], timeout=max(0.01, min(1.0, soonest)))
            for i, w in busy:
                res = w.collect(0)
                if res is not None:
                    on_result(keys.pop(i), res)

    def close(self) -> None:
        for w in self.workers:
            w.close()
        rmtree(self.root)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------------------------
# Reporting


def show_bytes(data: bytes, n: int = 400) -> str:
    text = repr(data[:n])
    return text + (f" ... ({len(data):,} bytes)" if len(data) > n else "")


def describe(res: Result, full: bool = False) -> str:
    """A reproducer: the input, what happened, where."""
    c = res.case
    lines = [f"[{res.surface}] {res.outcome} in {res.seconds:.2f} s — {res.label}"]
    if c is not None:
        if c.argv:
            lines.append("  argv: " + " ".join(_shell(a) for a in c.argv))
        else:
            lines.append("  session: WIZARD_STATE_DIR=<sandbox>/state; store.load() → Session().restore() → build_plan()")
        for rel, data in c.files.items():
            lines.append(f"  file {rel}: {show_bytes(data, 4000 if full else 300)}")
        for d in c.dirs:
            lines.append(f"  dir {d}")
        for link, target in c.symlinks:
            lines.append(f"  symlink {link} -> {target}")
        for rel, mode in c.modes:
            lines.append(f"  chmod {oct(mode)} {rel}")
    if res.rc is not None:
        lines.append(f"  exit {res.rc}; stderr ({res.stderr_lines} lines): {res.stderr[:500]!r}")
    if res.exception:
        lines.append(f"  exception: {res.exception}")
    if res.frame or res.wizard_frame:
        lines.append(f"  at {res.wizard_frame or '-'} (innermost frame {res.frame or '-'})")
    if res.changed:
        lines.append("  changed outside the destination: " + ", ".join(res.changed[:8]))
    if full and res.tb:
        lines.append(res.tb)
    return "\n".join(lines)


def _shell(a: str) -> str:
    import shlex

    text = a if len(a) <= 200 else a[:150] + f"...({len(a)} chars)"
    return shlex.quote(text) if text.isprintable() else repr(text)
