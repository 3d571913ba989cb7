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
from wizard.sizing.kv_report import group_size, logged_pool, state_blocks_per_request
from wizard.sizing.layout import stage_layers
from wizard.sources.catalog import find_entry, find_gpu, load_catalog_model

GIB = 2**30


def catalog(model_id: str):
    return load_catalog_model(find_entry(model_id))


def laid_out(m, kv: str, tp: int, pp: int, batched: int, pool: int, ctx: int, version: str):
    """vLLM's layout of `pool` bytes on every GPU of a TP × PP layout of `m`."""
    stages = kv_stages(m, kv, tp, pp, batched)
    return logged_pool(m.layer_kinds, stages, stage_layers(m.num_layers, pp), [pool] * pp, ctx, profile_for(version),
                       version)


def test_a_hybrid_pool_as_vllm_0_10_lays_it_out_and_logs_it():
    m = catalog("Qwen/Qwen3-Next-80B-A3B-Thinking")
    stage = kv_stages(m, "auto", 2, 1, 8192)[0]
    assert stage.layer_counts == (12, 0, 36, 0)
    assert stage.state_bytes_per_sequence == 36 * (3 * (2 * 16 * 128 + 32 * 128) // 2 * 2 + 16 * 128 * 128 * 2)
    got = laid_out(m, "auto", 2, 1, 8192, int(44.59 * GIB), 262_144, "0.10.2")
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
    assert stage.layer_counts == (16, 0, 48, 0) and stage.state_bytes_per_sequence == 48 * (30_720 + 1_572_864)
    got = laid_out(m, "fp8", 2, 1, 2048, int(9.84 * GIB), 262_144, "0.21.0")
    assert got is not None and got.block_size == 1_568
    assert got.num_blocks == int(9.84 * GIB) // (1_568 * 1_024) // 16 == 411
    assert got.blocks_per_request == 168 + 3 * 2
    assert got.tokens == int(411 / 174 * 262_144) == 619_202
    before = laid_out(m, "fp8", 2, 1, 2048, int(9.84 * GIB), 262_144, "0.14.0")
    assert before is not None and before.blocks_per_request == 168 + 3 and before.tokens == 411 // 4 * 1_568


def test_one_kind_of_layer_is_the_plain_block_arithmetic():
    """Llama-3.1-8B: 32 layers × 2 × 8 × 128 × 2 B = 131,072 B a token, 16-token blocks, one group."""
    m = catalog("meta-llama/Llama-3.1-8B-Instruct")
    stage = kv_stages(m, "auto", 1, 1, 8192)[0]
    pool = 40 * GIB
    got = laid_out(m, "auto", 1, 1, 8192, pool, 8192, "0.33.0")
    assert stage.layer_counts == (32, 0, 0, 0)
    assert got is not None and got.block_size == 16 and got.groups == 1
    assert got.num_blocks == pool // (16 * 4_096) // 32 and got.tokens == got.num_blocks * 16  # 8,192 = 512 blocks
    assert got.first_group_bytes == 32 * 16 * 4_096 * 512  # the whole model's KV of one 8,192-token request
    assert laid_out(m, "auto", 1, 1, 8192, pool, 8192, "0.6.4") is None  # V0 has no grouped layout


def test_one_kind_of_layer_holds_whole_blocks_and_admits_no_more_than_vllm_logs():
    """Llama-3.1-8B on an H100: a 1,100-token request holds 69 blocks (1,104 tokens × 131,072 B), and the batch of
    size is counted in them. At a 2,056-token context a request takes ceil(2,056 / 16) = 129 blocks (2,064 tokens):
    as many sequences as the pool's blocks // 129 fit (vLLM's maximum concurrency), one more does not — bytes per
    token alone (blocks × 16 / 2,056) let that one in."""
    m = catalog("meta-llama/Llama-3.1-8B-Instruct")
    h100 = find_gpu("h100-sxm-80gb")
    r = size(m, h100, SizeInputs(context_tokens=8192, concurrency=8, sequence_tokens=1100, max_num_seqs=8))
    assert r.sequence_kv_bytes(1100) == 1104 * 131_072
    assert r.kv_cache_bytes == 8192 * 131_072 + 7 * 1104 * 131_072

    def at(n: int):
        return size(m, h100, SizeInputs(context_tokens=2056, concurrency=n, max_num_seqs=256))

    blocks = at(1).kv_layout.num_blocks
    admitted = blocks // 129
    assert blocks * 16 // 2056 == admitted + 1  # the case this test is about: per token, one more would fit
    assert int(at(1).max_concurrency) == admitted
    assert [at(n).kv_cache_bytes for n in (admitted, admitted + 1)] == [n * 2064 * 131_072 for n in (admitted, admitted + 1)]
    assert at(admitted).fits and not at(admitted + 1).fits


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


def test_the_group_size_is_the_smallest_kind_unless_the_largest_is_close():
    """12 sliding + 13 full layers (gpt-oss-20b with an EAGLE layer, vLLM's own example): groups of 12 before 0.12
    (13 full → 2 groups, 11 padding layers), of 13 from 0.12 (13 < 1.25 × 12 = 15); 12 + 17: 17 ≥ 15 keeps 12 until
    0.18 raises the factor to 1.5 (17 < 18)."""
    assert (group_size([12, 13], "0.11.0"), group_size([12, 13], "0.12.0")) == (12, 13)
    assert (group_size([12, 17], "0.17.0"), group_size([12, 17], "0.18.0"), group_size([12, 17], "0.33.0")) == (12, 17, 17)


def test_pipeline_stages_share_the_whole_models_groups():
    """gemma-2-9b alternates sliding and full attention over 42 layers (21 of each: one group of each kind). At
    PP 2 stage 0 holds layers 0-20 — 11 sliding, 10 full — and stage 1 layers 21-41 — 10 sliding, 11 full: each GPU
    has 11 pools (its longer projected group), so blocks = pool // page // 11, and a request holds the two groups'
    blocks. Per layer at TP 1: 2 × 8 KV heads × 256 × 2 B = 8,192 B a token, a 16-token page of 131,072 B. (Grouped
    per stage, as 0.10 did, stage 0 would have 10 pools and 2 groups of its own.)"""
    m = catalog("google/gemma-2-9b-it")
    assert m.layer_kinds.count("sliding") == m.layer_kinds.count("full") == 21
    pool = 10 * GIB
    got = laid_out(m, "auto", 1, 2, 2048, pool, 8192, "0.33.0")
    assert got is not None and got.groups == 2
    assert got.num_blocks == pool // (16 * 8_192) // 11
    # a full-attention request: 8,192 / 16 blocks; a sliding one: the 4,096-token window − 1 + the 2,048 tokens in
    # flight, in blocks, + 1
    assert got.blocks_per_request == 8192 // 16 + (-(-(4096 - 1 + 2048) // 16) + 1) == 512 + 385


def test_0_14_to_0_16_check_a_hybrid_by_its_first_groups_kind():
    """0.14-0.16 check one request as group size × page × the blocks of the first group's kind
    (_max_memory_usage_bytes_from_groups @ v0.16.0). gemma-3's layer 0 is a sliding one, so the check counts
    window blocks, not the full context: a PP layout every stage of which holds its share is not refused."""
    m = catalog("google/gemma-3-27b-it")
    assert m.layer_kinds[0] == "sliding"
    r = size(m, find_gpu("rtx3090-24gb"), SizeInputs(pp=4, context_tokens=131_072, vllm_version="0.15.1",
                                                       weight_precision="auto"))
    assert r.startup_check is not None and r.headroom_bytes >= 0
    need, pool = r.startup_check
    assert need < pool and not r.refused_at_startup and r.fits


def test_a_hybrid_plan_holds_what_vllm_allocates_its_sequences():
    """Qwen3.5-27B at TP 1 (bf16): a full-attention layer 2 × 4 × 256 × 2 = 4,096 B a token, a Gated DeltaNet state
    3 × 10,240 × 2 + 48 × 128 × 128 × 4 = 3,207,168 B → blocks of 16 × ceil(3,207,168 / 65,536) = 784 tokens, a page
    of 3,211,264 B in each of 16 pools: 51,380,224 B a block. One 8,192-token request holds ceil(8,192 / 784) = 11
    blocks + 3 linear groups × 2 aligned state blocks = 17 (0.33); a 1,100-token one 2 + 6 = 8. On 0.14 a state
    takes one block: 14 and 5."""
    m = catalog("Qwen/Qwen3.5-27B")
    gpu = find_gpu("h100-sxm-80gb")
    block = 16 * 3_211_264
    for version, full, typical in (("0.33.0", 11 + 6, 2 + 6), ("0.14.0", 11 + 3, 2 + 3)):
        r = size(m, gpu, SizeInputs(context_tokens=8192, concurrency=32, sequence_tokens=1100, vllm_version=version))
        assert r.kv_cache_bytes == block * (full + 31 * typical), version
        assert any(n.startswith(f"KV counted as vLLM {version} allocates it") for n in r.notes)


def test_under_pp_the_gpu_with_the_fewest_blocks_decides_what_fits():
    """Qwen3.5-9B at PP 3 on L40S cards under 0.21: the stages' weights differ (the embedding on the first, the head
    on the last), so their pools hold different block counts. The sizing takes the GPU with the fewest — vLLM keeps
    the smallest count of all GPUs — so a batch fits exactly when it is within the maximum concurrency."""
    m = catalog("Qwen/Qwen3.5-9B")
    gpu = find_gpu("l40s-48gb")
    base = SizeInputs(pp=3, context_tokens=131_072, vllm_version="0.21.0")
    probe = size(m, gpu, base)
    assert probe.kv_layout is not None and probe.kv_layout.groups > 1
    most = int(probe.max_concurrency)
    assert size(m, gpu, base._replace(concurrency=most)).fits
    assert not size(m, gpu, base._replace(concurrency=most + 1)).fits
