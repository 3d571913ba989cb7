"""The tensor inventory of a model: every weight matrix and vector, derived from its ModelSpec.

One list serves parameter counts (total and active), bytes at any precision, and the split across TP ranks
and PP stages, so those figures can never disagree. Shapes follow the transformers modelling code of each
family (sizing-notes.md "Weights": 3 MLP matrices when gated, both embeddings unless tied, explicit head_dim,
MoE shared experts and dense first layers, MLA low-rank projections).
"""


from functools import lru_cache
from typing import NamedTuple

from wizard.specs import FULL, LINEAR, ModelSpec

# Roles: what a tensor is, which decides whether quantization applies and how TP splits it.
LINEAR_W = "linear"  # a projection matrix: quantizable, split across TP ranks
EMBED = "embedding"  # vocab-parallel in vLLM: split across TP ranks, kept 16-bit
LM_HEAD = "lm_head"  # vocab-parallel, 16-bit unless the checkpoint quantizes it
VECTOR = "vector"  # norms, biases, sinks, router biases: 16-bit, replicated (tiny)
ROUTER = "router"  # MoE gate: 16-bit, replicated
REPLICATED_W = "replicated_linear"  # quantizable but ReplicatedLinear in vLLM (MLA q_a_proj, kv_a_proj_with_mqa)
VISION = "vision"  # multimodal towers: 16-bit, counted as replicated (conservative)
STATE_W = "linear_attention"  # weights of a linear-attention / SSM mixer: 16-bit, split across TP ranks
VECTOR_W = "unquantized_replicated"  # a matrix kept 16-bit and replicated on every rank (DSA indexer wk)


class Tensor(NamedTuple):
    """One weight tensor (or `copies` identical ones, e.g. the experts of a layer). Sizes in elements."""

    name: str  # HF module path, e.g. model.layers.3.mlp.experts.gate_proj (matched against modules_to_not_convert)
    rows: int  # output features
    cols: int  # input features (1 for vectors)
    role: str
    layer: int | None  # None: outside the decoder stack (embeddings, final norm, lm_head, towers)
    copies: int = 1
    active: float = 1.0  # share of the copies one token uses (routed experts: k / E)

    @property
    def params(self) -> int:
        return self.rows * self.cols * self.copies


@lru_cache(maxsize=16)
def inventory(m: ModelSpec) -> tuple[Tensor, ...]:
    """All weight tensors of the language model plus multimodal towers (MTP / draft layers excluded)."""
    h = m.hidden_size
    out: list[Tensor] = [Tensor("model.embed_tokens", m.vocab_size + m.extra_embedding_rows, h, EMBED, None)]
    for i in range(m.num_layers):
        out.extend(_layer(m, i))
    out.append(Tensor("model.norm", h, 1, VECTOR, None))
    if not m.tie_word_embeddings:
        out.append(Tensor("lm_head", m.vocab_size, h, LM_HEAD, None))
    if m.vision_params:
        out.append(Tensor("vision_tower", m.vision_params, 1, VISION, None))
    return tuple(out)  # cached per model: immutable


def _layer(m: ModelSpec, i: int) -> list[Tensor]:
    h = m.hidden_size
    p = f"model.layers.{i}"
    t: list[Tensor] = [Tensor(f"{p}.input_layernorm", h, m.norms_per_layer, VECTOR, i)]
    if m.layer_kinds[i] == LINEAR:
        t.extend(_linear_attention(m, p, i))
    elif m.mla is not None:
        t.extend(_mla_attention(m, p, i))
    else:
        t.extend(_attention(m, p, i))
    if m.dense_mlp_beside_moe:  # Gemma 4: a dense MLP and the expert block side by side, three more norms
        t.extend(_dense_mlp(f"{p}.mlp", m.hidden_size, m.intermediate_size, m, i))
        t.append(Tensor(f"{p}.moe_norms", m.hidden_size, 3, VECTOR, i))
    t.extend(_mlp(m, p, i))
    return t


def _linear_attention(m: ModelSpec, p: str, i: int) -> list[Tensor]:
    """A Gated DeltaNet mixer projection by projection (vLLM qwen_gdn_linear_attn.py: in_proj_qkvz, in_proj_ba and
    out_proj take the quantization config, conv1d does not), named as the checkpoint names them: Qwen3-Next
    in_proj_qkvz / in_proj_ba, Qwen3.5 in_proj_qkv + in_proj_z / in_proj_b + in_proj_a."""
    la = m.linear
    assert la is not None
    a = f"{p}.linear_attn"
    if not la.key_head_dim:  # shapes unknown: one opaque tensor of the right size
        return [Tensor(a, la.params_per_layer, 1, STATE_W, i)]
    h = m.hidden_size
    key, value = la.key_heads * la.key_head_dim, la.value_heads * la.value_head_dim
    conv = 2 * key + value
    if m.model_type == "qwen3_next":
        proj = [Tensor(f"{a}.in_proj_qkvz", conv + value, h, LINEAR_W, i),
                Tensor(f"{a}.in_proj_ba", 2 * la.value_heads, h, LINEAR_W, i)]
    else:
        proj = [Tensor(f"{a}.in_proj_qkv", conv, h, LINEAR_W, i), Tensor(f"{a}.in_proj_z", value, h, LINEAR_W, i),
                Tensor(f"{a}.in_proj_b", la.value_heads, h, LINEAR_W, i),
                Tensor(f"{a}.in_proj_a", la.value_heads, h, LINEAR_W, i)]
    t = [*proj,
         Tensor(f"{a}.conv1d", conv, la.conv_kernel, STATE_W, i),
         Tensor(f"{a}.dt_bias_A_log", 2 * la.value_heads, 1, STATE_W, i),
         Tensor(f"{a}.norm", la.value_head_dim, 1, VECTOR, i),
         Tensor(f"{a}.out_proj", h, value, LINEAR_W, i)]
    assert sum(x.params for x in t) == la.params_per_layer  # the parser's count, shape by shape
    return t


def attention_geometry(m: ModelSpec, i: int) -> tuple[int, int]:
    """(head_dim, kv_heads) of layer i: full-attention layers may have their own (Gemma 4 global layers)."""
    if m.layer_kinds[i] == FULL:
        return m.full_head_dim or m.head_dim, m.full_kv_heads or m.num_kv_heads
    return m.head_dim, m.num_kv_heads


def _attention(m: ModelSpec, p: str, i: int) -> list[Tensor]:
    h = m.hidden_size
    hd, kv_heads = attention_geometry(m, i)
    q, kv = m.num_attention_heads * hd, kv_heads * hd
    a = f"{p}.self_attn"
    t = [
        Tensor(f"{a}.q_proj", q, h, LINEAR_W, i),
        Tensor(f"{a}.k_proj", kv, h, LINEAR_W, i),
        Tensor(f"{a}.v_proj", kv, h, LINEAR_W, i),
        Tensor(f"{a}.o_proj", h, q, LINEAR_W, i),
    ]
    if m.k_eq_v and m.layer_kinds[i] == FULL:  # Gemma 4 attention_k_eq_v: the checkpoint has no v_proj
        del t[2]
    if m.qkv_bias:
        t.append(Tensor(f"{a}.qkv_bias", q + 2 * kv, 1, VECTOR, i))
    if m.o_bias:
        t.append(Tensor(f"{a}.o_bias", h, 1, VECTOR, i))
    if m.qk_norm and m.qk_norm_full_width:  # MiniMax-M2: one norm over all q heads, one over all k heads
        t.append(Tensor(f"{a}.qk_norm", q + kv, 1, VECTOR, i))
    elif m.qk_norm:
        t.append(Tensor(f"{a}.qk_norm", hd, 2, VECTOR, i))
    if m.attention_sinks:
        t.append(Tensor(f"{a}.sinks", m.num_attention_heads, 1, VECTOR, i))
    if m.attn_output_gate:  # gated attention: q_proj also emits an output gate of the same width
        t[0] = Tensor(f"{a}.q_proj", 2 * q, h, LINEAR_W, i)
    if i in m.cross_attention_layers:  # mllama cross-attention: q_norm, k_norm, and the attn/mlp tanh gates
        t.append(Tensor(f"{p}.cross_attn.qk_norm", hd, 2, VECTOR, i))
        t.append(Tensor(f"{p}.cross_attn_gates", 2, 1, VECTOR, i))
    return t


def _mla_attention(m: ModelSpec, p: str, i: int) -> list[Tensor]:
    """DeepSeek V2/V3 MLA: q via a low-rank pair, k/v from a shared compressed latent plus a rope key."""
    assert m.mla is not None
    h, n, a = m.hidden_size, m.num_attention_heads, f"{p}.self_attn"
    ml = m.mla
    qk_head = ml.qk_nope_head_dim + ml.qk_rope_head_dim
    t: list[Tensor] = []
    if ml.q_lora_rank:
        t += [
            Tensor(f"{a}.q_a_proj", ml.q_lora_rank, h, REPLICATED_W, i),
            Tensor(f"{a}.q_a_layernorm", ml.q_lora_rank, 1, VECTOR, i),
            Tensor(f"{a}.q_b_proj", n * qk_head, ml.q_lora_rank, LINEAR_W, i),
        ]
    else:
        t.append(Tensor(f"{a}.q_proj", n * qk_head, h, LINEAR_W, i))
    t += [
        Tensor(f"{a}.kv_a_proj_with_mqa", ml.kv_lora_rank + ml.qk_rope_head_dim, h, REPLICATED_W, i),
        Tensor(f"{a}.kv_a_layernorm", ml.kv_lora_rank, 1, VECTOR, i),
        Tensor(f"{a}.kv_b_proj", n * (ml.qk_nope_head_dim + ml.v_head_dim), ml.kv_lora_rank, LINEAR_W, i),
        Tensor(f"{a}.o_proj", h, n * ml.v_head_dim, LINEAR_W, i),
    ]
    if m.indexer is not None:  # DeepSeek sparse attention's indexer (vLLM deepseek_v2.py Indexer)
        x, ix = f"{a}.indexer", m.indexer
        t += [
            Tensor(f"{x}.wq_b", ix.heads * ix.head_dim, ml.q_lora_rank or h, REPLICATED_W, i),
            # wk and weights_proj are fused and kept 16-bit (quant_config=None), replicated (disable_tp)
            Tensor(f"{x}.wk", ix.head_dim, h, VECTOR_W, i),
            Tensor(f"{x}.weights_proj", ix.heads, h, VECTOR_W, i),
            Tensor(f"{x}.k_norm", ix.head_dim, 2, VECTOR, i),  # LayerNorm weight and bias
        ]
    return t


def _mlp(m: ModelSpec, p: str, i: int) -> list[Tensor]:
    h = m.hidden_size
    moe = m.moe
    if moe is None or i in moe.dense_layers:
        return _dense_mlp(f"{p}.mlp", h, m.intermediate_size, m, i)
    e, k, w = moe.num_experts, moe.experts_per_token, moe.expert_intermediate_size
    share = k / e
    if m.model_type == "gemma4_text":  # Gemma 4 keeps the expert block beside `mlp`: layers.N.experts, .router
        x, gate = f"{p}.experts", f"{p}.router.proj"
        t = [Tensor(gate, e, h, ROUTER, i), Tensor(f"{p}.router.scales", h + e, 1, VECTOR, i)]  # scale, per_expert_scale
    else:
        x, gate = f"{p}.mlp.experts", f"{p}.mlp.gate"
        t = [Tensor(gate, e, h, ROUTER, i)]
    if moe.router_bias:
        t.append(Tensor(f"{gate}.bias", e, 1, VECTOR, i))
    mats = [("gate_proj", w, h), ("up_proj", w, h), ("down_proj", h, w)] if m.gated_mlp else [("up_proj", w, h), ("down_proj", h, w)]
    for name, rows, cols in mats:
        t.append(Tensor(f"{x}.{name}", rows, cols, LINEAR_W, i, copies=e, active=share))
    if moe.expert_bias:  # gpt-oss: gate_up_proj_bias (2w) and down_proj_bias (h) per expert
        t.append(Tensor(f"{x}.bias", 2 * w + h, 1, VECTOR, i, copies=e, active=share))
    if moe.shared_experts:
        sw = moe.shared_intermediate_size * moe.shared_experts
        t.extend(_dense_mlp(f"{p}.mlp.shared_experts", h, sw, m, i))
        if m.model_type in {"qwen2_moe", "qwen3_next", "qwen3_5_moe_text"}:  # a sigmoid gate scales the shared expert
            t.append(Tensor(f"{p}.mlp.shared_expert_gate", 1, h, ROUTER, i))
    return t


def _dense_mlp(prefix: str, h: int, width: int, m: ModelSpec, i: int) -> list[Tensor]:
    if m.gated_mlp:
        t = [
            Tensor(f"{prefix}.gate_proj", width, h, LINEAR_W, i),
            Tensor(f"{prefix}.up_proj", width, h, LINEAR_W, i),
            Tensor(f"{prefix}.down_proj", h, width, LINEAR_W, i),
        ]
    else:
        t = [Tensor(f"{prefix}.up_proj", width, h, LINEAR_W, i), Tensor(f"{prefix}.down_proj", h, width, LINEAR_W, i)]
    if m.mlp_bias:
        t.append(Tensor(f"{prefix}.bias", width * (2 if m.gated_mlp else 1) + h, 1, VECTOR, i))
    return t
