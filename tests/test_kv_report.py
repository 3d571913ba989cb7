"""vLLM's layout and report of a KV pool (wizard.sizing.kv_report) against hand arithmetic from config.json.

Qwen3-Next-80B-A3B (config.json): 48 layers, every 4th full attention (12), the rest Gated DeltaNet (36); 2 KV
heads of 256; linear attention 16 key heads of 128, 32 value heads of 128, conv kernel 4; bf16 state.
At TP 2, per GPU:
    attention   2 (K, V) × 1 head × 256 × 2 B = 1,024 B per token per layer
    state       conv 3 × (2 × 16 × 128 + 32 × 128) / 2 × 2 B = 24,576 B + recurrent 16 × 128 × 128 × 2 B = 524,288 B
                = 548,864 B per layer
    block       16 × ceil(548,864 / (16 × 1,024)) = 16 × 34 = 544 tokens: a page of 557,056 B
    groups      the smallest kind has 12 layers: 1 attention group + 3 linear groups of 12
The 0.10.2 log of this model on 2 × H200 (tests/data/vllm_logs, v1e_h200x2_qwen3next_80b_tp2_v0102) has 44.59 GiB
available, 7,162 blocks, 973,760 tokens and 14.77x at 262,144 tokens.
"""

from __future__ import annotations

import pytest

from wizard.sizing.engines import profile_for
from wizard.sizing.fit import SizeInputs, size
from wizard.sizing.kv_cache import kv_stages
from wizard.sizing.kv_report import logged_kv, state_blocks_per_request
from wizard.sources.catalog import find_entry, find_gpu, load_catalog_model

GIB = 2**30


def catalog(model_id: str):
    return load_catalog_model(find_entry(model_id))


def test_a_hybrid_pool_as_vllm_0_10_lays_it_out_and_logs_it():
    m = catalog("Qwen/Qwen3-Next-80B-A3B-Thinking")
    stage = kv_stages(m, "auto", 2, 1, 8192)[0]
    assert stage.layer_counts == (12, 0, 36, 0)
    assert stage.state_bytes_per_sequence == 36 * (3 * (2 * 16 * 128 + 32 * 128) // 2 * 2 + 16 * 128 * 128 * 2)
    got = logged_kv(stage, int(44.59 * GIB), 262_144, profile_for("0.10.2"), "0.10.2")
    assert got is not None
    assert got.block_size == 16 * -(-548_864 // (16 * 1_024)) == 544
    assert got.num_blocks == int(44.59 * GIB) // (544 * 1_024) // 12 == 7_162
    assert got.groups == 4
    assert got.blocks_per_request == -(-262_144 // 544) + 3 * 1 == 485  # one state block per linear group
    assert got.tokens == 7_162 // 4 * 544 == 973_760  # "GPU KV cache size" as 0.10.2 logs it
    assert round(got.concurrency, 2) == 14.77


def test_from_0_15_prefix_caching_holds_two_state_blocks_and_0_21_logs_concurrency_times_length():
    """Qwen3.5-27B at TP 2 with an FP8 KV cache: 16 full-attention layers (2 × 2 heads × 256 × 1 B = 1,024 B a token
    each) and 48 Gated DeltaNet layers (conv 3 × (2 × 16 × 128 + 48 × 128) / 2 × 2 B = 30,720 B, recurrent
    48 / 2 × 128 × 128 × 4 B (float32, mamba_ssm_dtype) = 1,572,864 B): block 16 × ceil(1,603,584 / 16,384) = 1,568.
    9.84 GiB → 9.84 GiB // (1,568 × 1,024) // 16 = 411 blocks; a 262,144-token request holds ceil(262,144 / 1,568) =
    168 blocks + 3 groups × 2 aligned state blocks = 174; 411 / 174 × 262,144 = 619,202 tokens, as a club-3090 log
    of a ≥ 0.21 nightly says (tests/data/vllm_logs, v1g_club3090_104_2x3090_qwen36_27b_autoround)."""
    assert (state_blocks_per_request("0.14.0"), state_blocks_per_request("0.15.0"), state_blocks_per_request("0.33.0")) == (1, 2, 2)
    m = catalog("Qwen/Qwen3.5-27B")
    stage = kv_stages(m, "fp8", 2, 1, 2048)[0]
    got = logged_kv(stage, int(9.84 * GIB), 262_144, profile_for("0.21.0"), "0.21.0")
    assert got is not None and got.block_size == 1_568
    assert got.num_blocks == int(9.84 * GIB) // (1_568 * 1_024) // 16 == 411
    assert got.blocks_per_request == 168 + 3 * 2
    assert got.tokens == int(411 / 174 * 262_144) == 619_202
    before = logged_kv(stage, int(9.84 * GIB), 262_144, profile_for("0.14.0"), "0.14.0")
    assert before is not None and before.blocks_per_request == 168 + 3 and before.tokens == 411 // 4 * 1_568


def test_one_kind_of_layer_is_the_plain_block_arithmetic():
    """Llama-3.1-8B: 32 layers × 2 × 8 × 128 × 2 B = 131,072 B a token, 16-token blocks, one group."""
    m = catalog("meta-llama/Llama-3.1-8B-Instruct")
    stage = kv_stages(m, "auto", 1, 1, 8192)[0]
    pool = 40 * GIB
    got = logged_kv(stage, pool, 8192, profile_for("0.33.0"), "0.33.0")
    assert got is not None and got.block_size == 16 and got.groups == 1
    assert got.num_blocks == pool // (16 * 4_096) // 32 and got.tokens == got.num_blocks * 16  # 8,192 = 512 blocks
    assert logged_kv(stage, pool, 8192, profile_for("0.6.4"), "0.6.4") is None  # V0 has no grouped layout


def test_size_reports_what_vllm_logs_and_admits_what_its_blocks_hold():
    """On 0.10.2 the hybrid model's 'GPU KV cache size' (blocks // groups × block) is a quarter of what its pool
    holds for requests; kv_capacity_tokens stays the pool's capacity at the context (concurrency × context)."""
    m = catalog("Qwen/Qwen3-Next-80B-A3B-Thinking")
    r = size(m, find_gpu("h200-sxm-141gb"), SizeInputs(tp=2, context_tokens=262_144, vllm_version="0.10.2",
                                                          max_num_batched_tokens=8192, max_num_seqs=1024))
    assert r.logged_kv_tokens is not None
    assert r.kv_capacity_tokens == int(r.max_concurrency * 262_144)
    # (blocks / 485 × 262,144) against (blocks // 4 × 544): the 4 groups, and a request's 485 blocks of 544 tokens
    assert r.kv_capacity_tokens / r.logged_kv_tokens == pytest.approx(4 * 262_144 / (485 * 544), rel=1e-3)
