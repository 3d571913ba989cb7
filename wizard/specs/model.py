"""ModelSpec: the architecture facts of one model that sizing needs, built by `wizard.sources`.

Specs are typing.NamedTuple classes, not pydantic models or dataclasses: importing pydantic costs ~0.2 s on
a 2-core machine and dataclasses ~1 ms per class plus 20 ms for the module, which alone would break the
`size --json` budget (benchmarks/startup.py). Pydantic validates untrusted input where it enters
(answers files, trees); specs are built by our own parsers.
"""


from typing import NamedTuple

# Per-layer attention kinds (DOMAIN §2; sizing-notes "KV cache per token").
FULL = "full"  # keeps every token of the context
SLIDING = "sliding"  # keeps at most `sliding_window` tokens
LINEAR = "linear"  # linear attention / Mamba: a fixed-size state per sequence, no per-token cache
CHUNKED = "chunked"  # chunked local attention (Llama 4): attends only within its attention_chunk_size block


class MlaSpec(NamedTuple):
    """Multi-head latent attention (DeepSeek V2/V3): low-rank q and a compressed kv latent."""

    q_lora_rank: int | None  # None: q is projected directly from the hidden state (DeepSeek-V2-Lite)
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int


class MoeSpec(NamedTuple):
    """Mixture of experts: which layers are sparse and how big each expert is."""

    num_experts: int  # routed experts per sparse layer
    experts_per_token: int  # routed experts a token visits
    expert_intermediate_size: int
    shared_experts: int = 0  # always-on experts (DeepSeek, Qwen2-MoE): counted in active params
    shared_intermediate_size: int = 0  # per shared expert
    dense_layers: tuple[int, ...] = ()  # layer indices with a dense MLP instead (first_k_dense_replace, mlp_only_layers)
    router_bias: bool = False  # e_score_correction_bias (DeepSeek-V3) or router bias (gpt-oss)
    expert_bias: bool = False  # biases inside experts (gpt-oss)


class LinearAttentionSpec(NamedTuple):
    """Linear-attention / SSM layers of a hybrid model: parameters per layer and state per sequence."""

    params_per_layer: int  # every weight of one such layer's mixer (norms included)
    key_heads: int  # linear-attention heads that TP splits (vLLM shards Gated DeltaNet by num_k_heads // tp)
    value_heads: int
    state_bytes_per_sequence: int  # conv + recurrent state of one layer, whole (before TP split), at its own dtype
    source: str  # formula used, for the rationale
    key_head_dim: int = 0  # Gated DeltaNet shapes, to list its projections one by one (0: one opaque tensor)
    value_head_dim: int = 0
    conv_kernel: int = 0
    recurrent_state_bytes: int = 2  # bytes per element of the recurrent state (config mamba_ssm_dtype float32: 4)


class IndexerSpec(NamedTuple):
    """DeepSeek sparse attention's lightning indexer (DeepSeek-V3.2, GLM-5): a small attention that picks the
    `topk` tokens MLA attends to, with its own cached key per token in every layer (units: heads, elements)."""

    heads: int  # index_n_heads
    head_dim: int  # index_head_dim
    topk: int  # index_topk: tokens each query attends to in the sparse MLA


class VisionEncoderSpec(NamedTuple):
    """An image encoder with fixed-size inputs, as vLLM's start-up profile runs it (units: elements, tokens)."""

    hidden_size: int
    intermediate_size: int  # MLP width (fc1 output); two-matrix GELU MLP
    patches_per_item: int  # sequence length inside the encoder for one image (e.g. (896 / 14)² = 4096)
    pixels_per_item: int  # channels × height × width of the preprocessed image
    tokens_per_item: int  # embeddings the image becomes in the language model (mm_tokens_per_image)
    source: str  # which config keys gave these numbers


class QuantSpec(NamedTuple):
    """How the checkpoint itself is quantized (quantization_config / hf_quant_config.json)."""

    method: str  # awq, gptq, fp8, compressed-tensors, mxfp4, bitsandbytes, modelopt
    bits: int  # weight bits (4, 8)
    group_size: int | None = None  # int4/int8 group-wise scales
    block_size: tuple[int, int] | None = None  # fp8 block scales, e.g. (128, 128)
    not_converted: tuple[str, ...] = ()  # module name patterns kept at 16-bit (modules_to_not_convert)
    kv_cache_fp8: bool = False  # checkpoint ships fp8 KV scales (modelopt kv_cache_quant_algo)
    desc_act: bool = False  # GPTQ act-order: one int32 g_idx per input channel
    fp4: str = ""  # 4-bit float format: "nvfp4" (E2M1, one FP8 E4M3 scale per 16) or "" (integer int4 / mxfp4 method)
    # ModelOpt MIXED_PRECISION: (module kind, format, group size) per kind of projection, the layer index removed
    # ("mlp.experts", "self_attn.q_proj", "lm_head"); projections not listed stay 16-bit.
    mixed: tuple[tuple[str, str, int | None], ...] = ()


class ExactWeights(NamedTuple):
    """Counted from safetensors headers (or stated by the catalog's source): no arithmetic involved."""

    params: int | None  # parameters of the checkpoint, MTP/draft layers excluded; None when packed (int4 words)
    bytes: int  # bytes as served: exact whatever the packing; float32 tensors at 2 bytes (vLLM loads them 16-bit)
    source: str


class ModelSpec(NamedTuple):
    """Everything the sizing core needs to know about one model (units: elements, tokens, layers)."""

    id: str
    source: str  # catalog | local | hub
    source_detail: str  # file or URL the facts came from, and caveats
    architecture: str  # e.g. LlamaForCausalLM
    model_type: str
    dtype_bytes: int  # checkpoint dtype of unquantized tensors (2 for bf16/fp16, 4 for fp32)
    hidden_size: int
    num_layers: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int
    intermediate_size: int  # dense MLP width (0 when every layer is MoE)
    max_position_embeddings: int
    layer_kinds: tuple[str, ...]  # FULL / SLIDING / LINEAR, one per layer
    sliding_window: int | None = None
    gated_mlp: bool = True  # SwiGLU/GeGLU: gate, up, down (3 matrices); classic GELU MLP: 2
    tie_word_embeddings: bool = False
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    norms_per_layer: int = 2  # RMSNorm/LayerNorm weight vectors of width hidden_size per layer
    qk_norm: bool = False  # per-head q/k norms (Qwen3, gemma-3)
    attention_sinks: bool = False  # one learned scalar per head (gpt-oss)
    mla: MlaSpec | None = None
    moe: MoeSpec | None = None
    linear: LinearAttentionSpec | None = None
    vision_params: int = 0  # multimodal towers and projectors: weights in memory, no compute per text token
    vision_encoder: VisionEncoderSpec | None = None  # known image encoders: their start-up profile is modelled
    cross_attention_layers: tuple[int, ...] = ()  # mllama: layers attending to image states (q/k norms, 2 gates)
    extra_embedding_rows: int = 0  # mllama: embed_tokens has vocab_size + 8 rows (image tokens)
    quant: QuantSpec | None = None
    exact: ExactWeights | None = None
    notes: tuple[str, ...] = ()  # caveats shown with every figure (generic estimate, sibling config)
    full_head_dim: int | None = None  # full-attention layers' own head size (Gemma 4 global layers: 512)
    full_kv_heads: int | None = None  # full-attention layers' own KV heads (Gemma 4 num_global_key_value_heads)
    k_eq_v: bool = False  # full-attention layers ship k_proj only: V is K (Gemma 4 attention_k_eq_v)
    dense_mlp_beside_moe: bool = False  # every layer runs a dense MLP and the expert block side by side (Gemma 4)
    chunk_size: int | None = None  # CHUNKED layers' attention_chunk_size (tokens)
    indexer: IndexerSpec | None = None  # DeepSeek sparse attention (every MLA layer has one)
    qk_norm_full_width: bool = False  # q/k norms over all heads at once (MiniMax-M2 qk_norm_type per_layer)
    attn_output_gate: bool = False  # q_proj also emits a sigmoid output gate as wide as q (Qwen3-Next, Qwen3.5)
    mtp_layers: int = 0  # multi-token-prediction layers in the checkpoint: loaded only for speculative decoding

    @property
    def attention(self) -> str:
        """Attention family for display: mla, mha, mqa, gqa; 'hybrid' is added when linear layers exist."""
        if self.mla is not None:
            kind = "mla"
        elif self.num_kv_heads == self.num_attention_heads:
            kind = "mha"
        elif self.num_kv_heads == 1:
            kind = "mqa"
        else:
            kind = "gqa"
        extras = []
        if SLIDING in self.layer_kinds:
            extras.append("sliding-window")
        if CHUNKED in self.layer_kinds:
            extras.append("chunked-local")
        if LINEAR in self.layer_kinds:
            extras.append("hybrid-linear")
        if self.indexer is not None:
            extras.append("sparse")
        return "+".join([kind, *extras])
