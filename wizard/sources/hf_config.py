"""Turn a Hugging Face `config.json` (a dict) into a ModelSpec: the one parser every source shares.

Each architecture's conventions follow its transformers modelling code (cited per family below). An unknown
`model_type` with the usual keys is read as a Llama-like decoder and labelled "generic estimate"; missing or
ill-typed keys raise InputError naming the key, never a silent wrong number.

Every integer is bounded before it is used (a per-layer tuple is built from num_hidden_layers): the bounds are
sanity limits far above any published model, so a typo or a hostile file is refused in one line instead of
allocating for minutes or printing a meaningless figure. The largest real values are in the comments.
"""

from __future__ import annotations

import builtins
import re
from typing import Any

from wizard.errors import InputError
from wizard.specs import (
    CHUNKED,
    FULL,
    LINEAR,
    SLIDING,
    IndexerSpec,
    LinearAttentionSpec,
    MlaSpec,
    ModelSpec,
    MoeSpec,
    QuantSpec,
    VisionEncoderSpec,
)

# model_type values this parser knows by name; others fall back to the labelled generic estimate.
KNOWN_TYPES = {
    "llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3", "gemma3_text", "phi3", "mixtral",
    "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "gpt_oss", "qwen3_next", "granite", "olmo2",
    "mllama", "mllama_text_model",
    # late-2025/2026 families (transformers 5.x and vLLM 0.33 modelling code, cited where each is read)
    "qwen3_5_text", "qwen3_5_moe_text", "deepseek_v32", "glm_moe_dsa", "kimi_k2", "minimax_m2", "llama4_text",
    "gemma4_text",
}
# Families whose MLP is the classic two-matrix (up, down) GELU MLP instead of a gated one.
TWO_MATRIX_MLP = {"gpt2", "gpt_neox", "gptj", "opt", "bloom", "falcon", "phi", "starcoder2", "gpt_bigcode"}
# transformers' default for tie_word_embeddings when config.json omits it (PretrainedConfig says True,
# but each model config class overrides it; these are the classes that keep True).
TIED_BY_DEFAULT = {"gemma", "gemma2", "gemma3", "gemma3_text", "gemma4_text"}
FOUR_NORM_TYPES = {"gemma2", "gemma3", "gemma3_text", "gemma4_text"}  # pre/post attention and feed-forward norms
QK_NORM_TYPES = {"qwen3", "qwen3_moe", "qwen3_next", "gemma3", "gemma3_text", "olmo2", "qwen3_5_text",
                 "qwen3_5_moe_text", "gemma4_text", "minimax_m2"}
# Gated attention: q_proj emits q and a sigmoid output gate of the same width (config attn_output_gate; Qwen3-Next
# has no key and always gates: transformers modeling_qwen3_next.Qwen3NextAttention).
OUTPUT_GATE_TYPES = {"qwen3_next"}
# Keys that published configs omit because transformers' config class supplies them (checked in
# transformers configuration_gemma3.py, Gemma3TextConfig.__init__ defaults): gemma-3 4b's text_config lists
# only hidden_size, intermediate_size, num_hidden_layers and sliding_window.
CLASS_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {
        "vocab_size": 262208, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
        "max_position_embeddings": 131072, "sliding_window": 4096, "sliding_window_pattern": 6,
    },
}


# Upper bounds of config integers (see the module docstring). Keys not listed are widths: MAX_WIDTH.
MAX_LAYERS = 10_000  # num_hidden_layers and layer indices/periods (real: <= 200)
MAX_WIDTH = 1_000_000  # hidden/intermediate sizes, heads, head dims, ranks, image sizes (real: <= 53,248)
MAX_VOCAB = 100_000_000  # vocab_size (real: <= 262,208)
MAX_EXPERTS = 100_000  # routed/shared experts and experts per token (real: <= 512)
MAX_CONTEXT = 100_000_000  # max_position_embeddings, sliding_window (real: <= 10,485,760)
MAX_QUANT_BITS = 16
BOUNDS = {
    **dict.fromkeys((
        "num_hidden_layers", "max_window_layers", "first_k_dense_replace", "moe_layer_freq", "decoder_sparse_step",
        "full_attention_interval", "sliding_window_pattern", "num_nextn_predict_layers", "num_global_layers", "depth",
        "mtp_num_hidden_layers", "num_mtp_modules", "interleave_moe_layer_step", "vt_num_hidden_layers",
    ), MAX_LAYERS),
    "vocab_size": MAX_VOCAB,
    **dict.fromkeys((
        "n_routed_experts", "num_local_experts", "num_experts", "num_experts_per_tok", "experts_per_token",
        "n_shared_experts", "top_k_experts",
    ), MAX_EXPERTS),
    **dict.fromkeys(("max_position_embeddings", "sliding_window", "mm_tokens_per_image", "attention_chunk_size",
                     "index_topk"), MAX_CONTEXT),
}


class ConfigReader:
    """Typed access to one config dict, so every error names `where.key` and what was expected."""

    def __init__(self, data: dict[str, Any], where: str) -> None:
        if not isinstance(data, dict):
            raise InputError(where, type(data).__name__, "expected a JSON object")
        self.data = data
        self.where = where

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def int(self, key: str, default: int | None = None, *, minimum: int = 1, maximum: int | None = None) -> int:
        """An integer in [minimum, maximum]; `maximum` defaults to the key's bound in BOUNDS (else MAX_WIDTH)."""
        top = BOUNDS.get(key, MAX_WIDTH) if maximum is None else maximum
        value = self.data.get(key, default)
        if value is None:
            raise InputError(f"{self.where}.{key}", "missing", f"expected an integer from {minimum} to {top:,}")
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= top:
            raise InputError(f"{self.where}.{key}", value, f"expected an integer from {minimum} to {top:,}")
        return value

    def opt_int(self, key: builtins.str, *, minimum: builtins.int = 1, maximum: builtins.int | None = None) -> builtins.int | None:
        return None if self.data.get(key) is None else self.int(key, minimum=minimum, maximum=maximum)

    def bool(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise InputError(f"{self.where}.{key}", value, "expected true or false")
        return value

    def str(self, key: str, default: str = "") -> str:
        value = self.data.get(key, default)
        if value is None:
            return default
        if not isinstance(value, str):
            raise InputError(f"{self.where}.{key}", value, "expected a string")
        return value

    def sub(self, key: builtins.str) -> ConfigReader | None:
        value = self.data.get(key)
        return None if value is None else ConfigReader(value, f"{self.where}.{key}")

    def names(self, key: builtins.str) -> tuple[builtins.str, ...]:
        """A list of module names or patterns (modules_to_not_convert...); absent or null is empty."""
        value = self.data.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InputError(f"{self.where}.{key}", value, "expected a list of module names")
        return tuple(value)

    def indices(self, key: builtins.str, below: builtins.int) -> tuple[builtins.int, ...]:
        """A list of layer indices in [0, below), sorted, without repeats; absent or null is empty."""
        value = self.data.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) and 0 <= i < below for i in value
        ):
            raise InputError(f"{self.where}.{key}", value, f"expected a list of layer indices from 0 to {below - 1}")
        return tuple(sorted(set(value)))

    def pair(self, key: builtins.str) -> tuple[builtins.int, builtins.int] | None:
        """[rows, cols] of a quantization block (weight_block_size, block_structure "NxM" too); null is None."""
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, str) and value.count("x") == 1 and all(p.isdigit() and len(p) < 8 for p in value.split("x")):
            value = [int(p) for p in value.split("x")]
        if (not isinstance(value, list) or len(value) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_WIDTH for v in value)):
            raise InputError(f"{self.where}.{key}", value, f"expected [rows, cols], two integers from 1 to {MAX_WIDTH:,}")
        return value[0], value[1]


def parse_config(
    config: dict[str, Any],
    *,
    model_id: str,
    source: str,
    source_detail: str,
    quant_config: dict[str, Any] | None = None,
    where: str = "config.json",
) -> ModelSpec:
    """Build the ModelSpec of one checkpoint from its config.json (and hf_quant_config.json if present)."""
    top = ConfigReader(config, where)
    architectures = config.get("architectures") or ["unknown"]
    if not isinstance(architectures, list) or not all(isinstance(a, str) and a for a in architectures):
        raise InputError(f"{where}.architectures", architectures, "expected a list of class names")
    architecture = architectures[0]
    model_type = top.str("model_type", "unknown")
    notes: list[str] = []

    # Multimodal checkpoints keep the language model in text_config and the towers beside it.
    text = top.sub("text_config") or top.sub("language_config")
    vision_params = 0
    encoder = None
    if text is not None:
        vision = top.sub("vision_config")
        if vision is not None and vision.str("model_type", "") == "mllama_vision_model":
            vision_params = _mllama_vision_params(vision, text)
            notes.append(
                f"multimodal: vision tower and projector {vision_params:,} parameters, counted with transformers' "
                "MllamaVisionModel shapes (weights only; the image encoder's activations are not modelled)"
            )
        elif vision is not None:
            vision_params = _vision_params(vision, text)
            encoder = _siglip_encoder(vision, top)
            notes.append(
                f"multimodal: vision tower and projector ~{vision_params / 1e6:.0f} M parameters, "
                "estimated from vision_config as a ViT"
                + ("; the image encoder's start-up profile is modelled (activations)" if encoder else
                   " (weights only; vLLM's start-up profile also runs this image encoder over dummy images, which "
                   "is not modelled here: its KV cache will be smaller than shown)")
            )
        lm_type = text.str("model_type", model_type)
        filled = sorted(k for k in CLASS_DEFAULTS.get(lm_type, {}) if text.data.get(k) is None)
        if filled:
            text = ConfigReader({**CLASS_DEFAULTS[lm_type], **{k: v for k, v in text.data.items() if v is not None}}, text.where)
            notes.append(f"{', '.join(filled)} not in config.json: taken from transformers' {lm_type} config defaults")
        lm = text
    else:
        lm = top
        lm_type = model_type
    if lm_type not in KNOWN_TYPES:
        notes.append(
            f"generic estimate: model_type {lm_type!r} is not known to this tool; figures assume a Llama-like "
            "decoder (attention + gated MLP per layer) read from the standard config keys"
        )

    hidden = lm.int("hidden_size")
    layers = lm.int("num_hidden_layers")
    heads = lm.int("num_attention_heads")
    kv_heads = lm.int("num_key_value_heads", heads)
    if heads % kv_heads:
        raise InputError(f"{lm.where}.num_key_value_heads", kv_heads,
                         f"expected a divisor of num_attention_heads ({heads}), at most {heads}")
    mla = _mla(lm) if lm.has("kv_lora_rank") else None
    if lm.has("head_dim"):
        head_dim = lm.int("head_dim")
    elif hidden % heads and mla is None:  # MLA sizes its heads with qk_*_head_dim: head_dim is unused there
        raise InputError(f"{lm.where}.head_dim", "missing",
                         f"expected an integer: hidden_size ({hidden}) is not a multiple of num_attention_heads "
                         f"({heads}), so head_dim cannot be derived as hidden_size / num_attention_heads")
    else:
        head_dim = max(1, hidden // heads)
    vocab = lm.int("vocab_size")
    max_pos = lm.int("max_position_embeddings", 2048)
    tie_default = lm_type in TIED_BY_DEFAULT
    tie = top.bool("tie_word_embeddings", lm.bool("tie_word_embeddings", tie_default)) if text is not None else lm.bool(
        "tie_word_embeddings", tie_default
    )
    dtype_name = lm.str("torch_dtype", top.str("torch_dtype", top.str("dtype", "bfloat16")))
    if dtype_name == "float32":
        notes.append("checkpoint is float32: vLLM serves it in 16-bit by default (dtype auto), sized at 2 bytes")

    mtp = _mtp_layers(lm)
    if mtp:
        notes.append(f"{mtp} multi-token-prediction layer(s) in the checkpoint, not counted: vLLM loads them only for "
                     "speculative decoding (--speculative-config with method mtp)")
    cross_layers: tuple[int, ...] = ()
    if lm.has("cross_attention_layers"):
        cross_layers = lm.indices("cross_attention_layers", layers)
        notes.append("cross-attention layers are counted as self-attention layers (weights and KV per token), "
                     "as vLLM V0 allocated them")
    moe = _moe(lm, lm_type, layers)
    intermediate = lm.int("intermediate_size", 0, minimum=0)
    if moe is not None and lm_type == "gpt_oss":
        intermediate = 0  # gpt-oss: intermediate_size is the expert width; there is no dense MLP
    if lm_type == "llama4_text":  # intermediate_size is the expert width; dense layers use intermediate_size_mlp
        intermediate = lm.int("intermediate_size_mlp", 0, minimum=0)
    if moe is None and intermediate == 0:
        raise InputError(f"{lm.where}.intermediate_size", "missing", "expected an integer >= 1 for a dense model")

    kinds, window = _layer_kinds(lm, lm_type, layers)
    linear = _linear_attention(lm, hidden) if LINEAR in kinds else None
    chunk = lm.int("attention_chunk_size") if CHUNKED in kinds else None
    full_head_dim, full_kv_heads, k_eq_v = _full_layer_geometry(lm, lm_type, heads)
    indexer = None
    if lm.has("index_topk") and mla is not None:  # DeepSeek sparse attention: an indexer beside every MLA layer
        indexer = IndexerSpec(heads=lm.int("index_n_heads"), head_dim=lm.int("index_head_dim"), topk=lm.int("index_topk"))

    attention_bias = lm.bool("attention_bias", False)
    qkv_bias = attention_bias or lm_type == "qwen2" or (lm_type == "qwen2_moe")
    o_bias = attention_bias and lm_type not in {"qwen2", "qwen2_moe"}
    if lm.has("qkv_bias"):
        qkv_bias = lm.bool("qkv_bias", qkv_bias)

    quant = _quant(top.sub("quantization_config") or top.sub("compression_config"), quant_config, notes)

    return ModelSpec(
        id=model_id,
        source=source,
        source_detail=source_detail,
        architecture=architecture,
        model_type=lm_type,
        dtype_bytes=2,
        hidden_size=hidden,
        num_layers=layers,
        num_attention_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        vocab_size=vocab,
        intermediate_size=intermediate,
        max_position_embeddings=max_pos,
        layer_kinds=kinds,
        sliding_window=window,
        gated_mlp=lm_type not in TWO_MATRIX_MLP,
        tie_word_embeddings=tie,
        qkv_bias=qkv_bias,
        o_bias=o_bias,
        mlp_bias=lm.bool("mlp_bias", False),
        norms_per_layer=4 if lm_type in FOUR_NORM_TYPES else 2,
        qk_norm=lm_type in QK_NORM_TYPES and (lm_type != "minimax_m2" or lm.bool("use_qk_norm", True)),
        attention_sinks=lm_type == "gpt_oss",
        mla=mla,
        moe=moe,
        linear=linear,
        vision_params=vision_params,
        vision_encoder=encoder,
        cross_attention_layers=cross_layers,
        # transformers' MllamaTextModel (and vLLM's) embed vocab_size + 8 rows: room for the image tokens
        extra_embedding_rows=8 if lm_type == "mllama_text_model" else 0,
        quant=quant,
        notes=tuple(notes),
        full_head_dim=full_head_dim,
        full_kv_heads=full_kv_heads,
        k_eq_v=k_eq_v,
        dense_mlp_beside_moe=lm_type == "gemma4_text" and moe is not None,
        chunk_size=chunk,
        indexer=indexer,
        qk_norm_full_width=lm_type == "minimax_m2" and lm.str("qk_norm_type", "per_layer") == "per_layer",
        attn_output_gate=lm_type in OUTPUT_GATE_TYPES or lm.bool("attn_output_gate", False),
        mtp_layers=mtp,
    )


def _mtp_layers(lm: ConfigReader) -> int:
    """Multi-token-prediction layers the checkpoint ships (DeepSeek num_nextn_predict_layers, Qwen3.5
    mtp_num_hidden_layers, MiniMax-M2 num_mtp_modules when use_mtp)."""
    for key in ("num_nextn_predict_layers", "mtp_num_hidden_layers"):
        if lm.has(key):
            return lm.int(key, minimum=0)
    if lm.bool("use_mtp", False) and lm.has("num_mtp_modules"):
        return lm.int("num_mtp_modules", minimum=0)
    return 0


def _full_layer_geometry(lm: ConfigReader, lm_type: str, heads: int) -> tuple[int | None, int | None, bool]:
    """Gemma 4's full-attention layers: their own head size (global_head_dim, default 512) and, when
    attention_k_eq_v, num_global_key_value_heads and no v_proj (transformers configuration_gemma4.py
    per_layer_config; vLLM gemma4.py loads K into the V slot too, so the KV cache still holds both)."""
    if lm_type != "gemma4_text":
        return None, None, False
    k_eq_v = lm.bool("attention_k_eq_v", False)
    head_dim = lm.int("global_head_dim", 512)
    kv = lm.int("num_global_key_value_heads") if k_eq_v and lm.has("num_global_key_value_heads") else None
    if kv is not None and heads % kv:
        raise InputError(f"{lm.where}.num_global_key_value_heads", kv,
                         f"expected a divisor of num_attention_heads ({heads})")
    return head_dim, kv, k_eq_v


def _mla(lm: ConfigReader) -> MlaSpec:
    """DeepSeek V2/V3 multi-head latent attention (modeling_deepseek.py DeepseekV3Attention)."""
    return MlaSpec(
        q_lora_rank=lm.opt_int("q_lora_rank"),
        kv_lora_rank=lm.int("kv_lora_rank"),
        qk_nope_head_dim=lm.int("qk_nope_head_dim"),
        qk_rope_head_dim=lm.int("qk_rope_head_dim"),
        v_head_dim=lm.int("v_head_dim"),
    )


def _moe(lm: ConfigReader, lm_type: str, layers: int) -> MoeSpec | None:
    """Experts, shared experts and dense layers, with each family's config key names."""
    experts = (lm.opt_int("n_routed_experts", minimum=0) or lm.opt_int("num_local_experts", minimum=0)
               or lm.opt_int("num_experts", minimum=0))
    if not experts or experts <= 1:
        return None
    per_token_key = next((k for k in ("num_experts_per_tok", "top_k_experts") if lm.has(k)), "experts_per_token")
    per_token = lm.int(per_token_key, maximum=experts)
    if lm_type == "gpt_oss" or lm_type == "mixtral" or not lm.has("moe_intermediate_size"):
        width = lm.int("intermediate_size")  # Mixtral, gpt-oss: intermediate_size is per expert
    else:
        width = lm.int("moe_intermediate_size")
    dense: list[int] = []
    if lm.has("first_k_dense_replace"):  # DeepSeek: the first k layers keep a dense MLP
        k = lm.int("first_k_dense_replace", minimum=0)
        freq = lm.int("moe_layer_freq", 1)
        dense = [i for i in range(layers) if i < k or (i - k) % freq]
    elif lm_type == "llama4_text":  # moe_layers, else every interleave_moe_layer_step-th layer (configuration_llama4)
        step = lm.int("interleave_moe_layer_step", 1)
        sparse = set(lm.indices("moe_layers", layers)) if lm.has("moe_layers") else set(range(step - 1, layers, step))
        dense = [i for i in range(layers) if i not in sparse]
    else:  # Qwen MoE: mlp_only_layers and decoder_sparse_step
        only = set(lm.indices("mlp_only_layers", layers))
        step = lm.int("decoder_sparse_step", 1)
        dense = [i for i in range(layers) if i in only or (i + 1) % step]
    shared = 0
    shared_width = 0
    if lm.has("n_shared_experts"):
        shared = lm.int("n_shared_experts", minimum=0)
        shared_width = width
    elif lm.has("shared_expert_intermediate_size") and lm.int("shared_expert_intermediate_size", minimum=0):
        shared = 1
        shared_width = lm.int("shared_expert_intermediate_size")
    elif lm_type == "llama4_text":  # Llama4TextMoe: one shared expert as wide as a routed one
        shared, shared_width = 1, width
    return MoeSpec(
        num_experts=experts,
        experts_per_token=per_token,
        expert_intermediate_size=width,
        shared_experts=shared,
        shared_intermediate_size=shared_width,
        dense_layers=tuple(dense),
        router_bias=lm.str("topk_method") == "noaux_tc" or lm_type == "gpt_oss" or lm.bool("use_routing_bias", False),
        expert_bias=lm_type == "gpt_oss",
    )


def _layer_kinds(lm: ConfigReader, lm_type: str, layers: int) -> tuple[tuple[str, ...], int | None]:
    """Which layers keep the whole context, a sliding window, or a fixed linear-attention state."""
    window = lm.opt_int("sliding_window")
    types = lm.data.get("layer_types")
    if types is not None and (not isinstance(types, list) or len(types) != layers):
        got = f"{len(types)} entries" if isinstance(types, list) else types
        raise InputError(f"{lm.where}.layer_types", got, f"expected a list of one type per layer ({layers})")
    if types is not None:
        mapping = {
            "full_attention": FULL, "attention": FULL, "sliding_attention": SLIDING,
            "linear_attention": LINEAR, "mamba": LINEAR, "mamba2": LINEAR,
        }
        kinds = []
        for i, t in enumerate(types):
            if not isinstance(t, str) or t not in mapping:
                raise InputError(f"{lm.where}.layer_types[{i}]", t, "expected one of " + ", ".join(sorted(mapping)))
            kinds.append(mapping[t])
        if SLIDING in kinds and window is None:
            raise InputError(f"{lm.where}.sliding_window", "missing", "expected an integer: layer_types has sliding layers")
        return tuple(kinds), window if SLIDING in kinds else None
    if lm_type == "llama4_text" and lm.has("attention_chunk_size"):
        # Layers with RoPE attend within their attention_chunk_size block; every no_rope_layer_interval-th layer
        # (no_rope_layers[i] == 0) is global NoPE attention (configuration_llama4.py; vLLM llama4.py
        # use_chunked_local_attn = not nope and attention_chunk_size).
        rope = lm.data.get("no_rope_layers")
        if rope is None:
            interval = lm.int("no_rope_layer_interval", 4)
            rope = [int((i + 1) % interval != 0) for i in range(layers)]
        if not isinstance(rope, list) or len(rope) != layers or any(v not in (0, 1) for v in rope):
            raise InputError(f"{lm.where}.no_rope_layers", rope, f"expected a list of {layers} flags, 0 or 1")
        return tuple(CHUNKED if v else FULL for v in rope), None
    if lm_type == "qwen3_next":  # every full_attention_interval-th layer is full attention, the rest Gated DeltaNet
        interval = lm.int("full_attention_interval", 4)
        return tuple(FULL if (i + 1) % interval == 0 else LINEAR for i in range(layers)), None
    if window is None:
        return (FULL,) * layers, None
    if lm_type == "gemma2":  # modeling_gemma2: even layers are local (sliding), odd layers global
        return tuple(SLIDING if i % 2 == 0 else FULL for i in range(layers)), window
    if lm_type in {"gemma3", "gemma3_text"}:  # one global layer after every (pattern - 1) local ones
        pattern = lm.int("sliding_window_pattern", 6)
        return tuple(FULL if (i + 1) % pattern == 0 else SLIDING for i in range(layers)), window
    if lm_type in {"qwen2", "qwen2_moe", "qwen3", "qwen3_moe"}:
        if not lm.bool("use_sliding_window", False):
            return (FULL,) * layers, None
        first_full = lm.int("max_window_layers", layers, minimum=0)  # layers below this index use full attention
        return tuple(FULL if i < first_full else SLIDING for i in range(layers)), window
    return (SLIDING,) * layers, window  # Mistral v0.1, Mixtral with a window: every layer slides


def _linear_attention(lm: ConfigReader, hidden: int) -> LinearAttentionSpec:
    """Gated DeltaNet layers of Qwen3-Next and Qwen3.5 (transformers modeling_qwen3_next.Qwen3NextGatedDeltaNet;
    Qwen3.5 splits in_proj_qkvz into in_proj_qkv + in_proj_z and in_proj_ba into in_proj_b + in_proj_a, the same
    shapes). The recurrent state is kept in `mamba_ssm_dtype` when the config names one: vLLM 0.33 sets
    --mamba-ssm-cache-dtype auto to it (models/config.py Qwen3_5ForConditionalGenerationConfig), and Qwen3.5's
    configs say float32; otherwise the model dtype (mamba_utils.py gated_delta_net_state_dtype)."""
    k_heads = lm.int("linear_num_key_heads")
    v_heads = lm.int("linear_num_value_heads")
    k_dim = lm.int("linear_key_head_dim")
    v_dim = lm.int("linear_value_head_dim")
    kernel = lm.int("linear_conv_kernel_dim", 4)
    key_dim, value_dim = k_heads * k_dim, v_heads * v_dim
    conv_dim = 2 * key_dim + value_dim
    params = (
        hidden * (2 * key_dim + 2 * value_dim)  # in_proj_qkvz
        + hidden * 2 * v_heads  # in_proj_ba
        + conv_dim * kernel  # depthwise conv1d
        + 2 * v_heads  # dt_bias, A_log
        + v_dim  # gated RMSNorm over a head
        + value_dim * hidden  # out_proj
    )
    ssm_dtype = lm.str("mamba_ssm_dtype", "auto")
    if ssm_dtype not in ("auto", "bfloat16", "float16", "float32"):
        raise InputError(f"{lm.where}.mamba_ssm_dtype", ssm_dtype, "expected float32, bfloat16 or float16")
    recurrent = 4 if ssm_dtype == "float32" else 2
    state = conv_dim * (kernel - 1) * 2 + v_heads * k_dim * v_dim * recurrent  # conv (model dtype) + recurrent
    return LinearAttentionSpec(
        params_per_layer=params,
        key_heads=k_heads,
        value_heads=v_heads,
        state_bytes_per_sequence=state,
        source=("Gated DeltaNet: conv state (2*key_dim+value_dim)*(kernel-1) at 2 bytes + recurrent state "
                f"v_heads*k_dim*v_dim at {recurrent} bytes ({'mamba_ssm_dtype float32' if recurrent == 4 else 'the model dtype'})"),
        key_head_dim=k_dim,
        value_head_dim=v_dim,
        conv_kernel=kernel,
        recurrent_state_bytes=recurrent,
    )


def _vision_params(vision: ConfigReader, text: ConfigReader) -> int:
    """A ViT tower: per layer 4h² + 2hI weights with biases and two LayerNorms, patch/position embeddings, projector."""
    # Kimi-K2.5's MoonViT names its widths vt_* (configuration_kimi_k25.py); Qwen3.5's tower says depth.
    h = vision.int("vt_hidden_size") if vision.has("vt_hidden_size") else vision.int("hidden_size")
    inter = vision.int("vt_intermediate_size") if vision.has("vt_intermediate_size") else vision.int("intermediate_size")
    n = (vision.opt_int("num_hidden_layers") or vision.opt_int("vt_num_hidden_layers") or vision.int("depth")) + (
        vision.opt_int("num_global_layers") or 0)
    patch = vision.int("patch_size", 14)
    image = vision.int("image_size", 224, minimum=patch)
    channels = vision.int("num_channels", 3)
    per_layer = 4 * h * h + 4 * h + 2 * h * inter + h + inter + 4 * h
    embeddings = channels * patch * patch * h + h + (image // patch) ** 2 * h
    projector = h * text.int("hidden_size") + 2 * h
    return n * per_layer + embeddings + 2 * h + projector


def _siglip_encoder(vision: ConfigReader, top: ConfigReader) -> VisionEncoderSpec | None:
    """Gemma 3's SigLIP tower: fixed image_size tiles of patch_size patches, mm_tokens_per_image embeddings each.

    Other towers (dynamic resolution, video, tiles) have no fixed item size here: None, and a note says so.
    """
    needed = ("image_size", "patch_size", "hidden_size", "intermediate_size")
    if (vision.str("model_type", "") != "siglip_vision_model" or not top.has("mm_tokens_per_image")
            or not all(vision.has(k) for k in needed)):
        return None  # not a tower whose dummy image we can size: the note says the encoder is not modelled
    patch = vision.int("patch_size")
    image = vision.int("image_size", minimum=patch)
    return VisionEncoderSpec(
        hidden_size=vision.int("hidden_size"),
        intermediate_size=vision.int("intermediate_size"),
        patches_per_item=(image // patch) ** 2,
        pixels_per_item=vision.int("num_channels", 3) * image * image,
        tokens_per_item=top.int("mm_tokens_per_image"),
        source="vision_config image_size, patch_size, hidden_size, intermediate_size; mm_tokens_per_image",
    )


def _mllama_vision_params(vision: ConfigReader, text: ConfigReader) -> int:
    """Llama 3.2 Vision's tower and projector, shape by shape as transformers' MllamaVisionModel builds them.

    A local encoder (num_hidden_layers) and a gated global encoder (num_global_layers, two scalar gates each);
    learned per-tile position embeddings for every aspect ratio id (len(supported_aspect_ratios) + 1) — the part
    a plain ViT estimate misses (~74 M for 11B); the projector maps vision_output_dim to the text hidden size.
    Checked against Llama-3.2-11B-Vision's 10,670,220,835 parameters (tests/test_params.py).
    """
    h = vision.int("hidden_size")
    inter = vision.int("intermediate_size")
    patch = vision.int("patch_size", 14)
    patches = (vision.int("image_size", 448, minimum=patch) // patch) ** 2 + 1  # plus the class token
    tiles = vision.int("max_num_tiles", 4)
    aspect = vision.data.get("supported_aspect_ratios") or [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [2, 2], [3, 1], [4, 1]]
    if not isinstance(aspect, list) or len(aspect) > MAX_WIDTH:
        raise InputError(f"{vision.where}.supported_aspect_ratios", aspect, "expected a list of [width, height] tiles")
    ratios = len(aspect) + 1
    layer = 4 * h * h + (h * inter + inter) + (inter * h + h) + 2 * 2 * h  # q,k,v,o (no bias), fc1, fc2, 2 LayerNorms
    local = vision.int("num_hidden_layers") * layer
    global_ = vision.int("num_global_layers", 8) * (layer + 2)
    embeddings = (vision.int("num_channels", 3) * patch * patch * h  # patch conv, no bias
                  + h  # class embedding
                  + 1 + patches * h + ratios * tiles * patches * h  # gated position + tile-position embeddings
                  + 2 * (ratios * tiles * h + 1)  # pre- and post-tile aspect-ratio embeddings, gated
                  + 2 * 2 * h)  # layernorm_pre, layernorm_post
    projector = vision.int("vision_output_dim", 7680) * text.int("hidden_size") + text.int("hidden_size")
    return local + global_ + embeddings + projector


def _quant(qc: ConfigReader | None, hf_quant: dict[str, Any] | None, notes: list[str]) -> QuantSpec | None:
    """Read quantization_config (awq, gptq, fp8, compressed-tensors, mxfp4, bitsandbytes) or modelopt's file."""
    if hf_quant is not None:  # NVIDIA ModelOpt: hf_quant_config.json beside config.json
        q = ConfigReader(hf_quant, "hf_quant_config.json").sub("quantization") or ConfigReader(
            {}, "hf_quant_config.json.quantization")
        return _modelopt(q)
    if qc is None:
        return None
    method = qc.str("quant_method", "unknown").lower()
    skip_key = next((k for k in ("modules_to_not_convert", "ignored_layers", "ignore") if qc.data.get(k)), None)
    skip = tuple(_tool_name(n) for n in qc.names(skip_key)) if skip_key else ()
    if method == "modelopt":  # newer ModelOpt exports put the same keys in config.json
        return _modelopt(qc)
    if method in {"awq", "gptq", "awq_marlin", "gptq_marlin"}:
        bits = qc.opt_int("bits", maximum=8) or qc.int("w_bit", maximum=8)
        return QuantSpec(
            method=method.split("_")[0],
            bits=bits,
            group_size=_group_size(qc),
            not_converted=skip,
            desc_act=qc.bool("desc_act", False),
        )
    if method == "fp8":
        return QuantSpec(method="fp8", bits=8, block_size=qc.pair("weight_block_size"), not_converted=skip)
    if method == "mxfp4":  # OCP MX: 4-bit values with one 8-bit shared exponent per 32 values
        return QuantSpec(method="mxfp4", bits=4, group_size=32, not_converted=skip)
    if method == "compressed-tensors":
        weights = _compressed_weights(qc)
        if weights is None:
            notes.append("compressed-tensors config without weight settings: sized as 16-bit")
            return None
        bits = weights.int("num_bits", 8, maximum=MAX_QUANT_BITS)
        if bits == 4 and weights.str("type") == "float":  # nvfp4-pack-quantized: NVFP4, strategy tensor_group
            return QuantSpec(method="compressed-tensors", bits=4, group_size=weights.int("group_size", 16),
                             not_converted=skip, fp4="nvfp4")
        return QuantSpec(
            method="compressed-tensors",
            bits=bits,
            group_size=weights.int("group_size") if weights.str("strategy") == "group" else None,
            block_size=weights.pair("block_structure"),
            not_converted=skip,
        )
    if method == "bitsandbytes":
        four = qc.bool("load_in_4bit", False)
        return QuantSpec(method="bitsandbytes", bits=4 if four else 8, group_size=64 if four else None, not_converted=skip)
    notes.append(f"quantization method {method!r} is not modelled: weights sized at 16-bit (an overestimate)")
    return None


def _modelopt(q: ConfigReader) -> QuantSpec:
    """NVIDIA ModelOpt: quant_algo (FP8, NVFP4, MIXED_PRECISION), exclude_modules (or ignore), group_size, and
    kv_cache_quant_algo / kv_cache_scheme — from hf_quant_config.json or config.json's quantization_config."""
    algo = q.str("quant_algo").upper()
    mixed = _modelopt_mixed(q) if algo == "MIXED_PRECISION" else ()
    if mixed:
        fp4 = "nvfp4" if any(f == "nvfp4" for _, f, _ in mixed) else ""
        bits = 4 if fp4 else 8
        group = next((g for _, f, g in mixed if f == "nvfp4"), None)
    else:
        fp4 = "nvfp4" if "NVFP4" in algo else ""
        bits = 8 if not fp4 and ("FP8" in algo or "INT8" in algo) else 4
        group = q.opt_int("group_size") or (16 if fp4 else None)
    skip = q.names("exclude_modules") or q.names("ignore")
    scheme = q.sub("kv_cache_scheme")
    kv_fp8 = "FP8" in q.str("kv_cache_quant_algo").upper() or (
        scheme is not None and scheme.str("type") == "float" and scheme.data.get("num_bits") == 8)
    return QuantSpec(method="modelopt", bits=bits, group_size=group, not_converted=tuple(_tool_name(n) for n in skip),
                     kv_cache_fp8=kv_fp8, fp4=fp4, mixed=mixed)


def _tool_name(pattern: str) -> str:
    """A checkpoint's module pattern in the tool's naming: multimodal wrappers' language-model prefixes dropped
    ("language_model.model.layers.0*", "model.language_model.layers.3.mlp" → "model.layers...")."""
    for prefix in ("model.language_model.", "language_model.model.", "language_model."):
        if pattern.startswith(prefix):
            rest = pattern[len(prefix):]
            return rest if rest.startswith(("lm_head", "model.")) else "model." + rest
    return pattern


# ModelOpt quant_algo names and the storage format each one means (modelopt.py @ vLLM v0.33.0: NVFP4 = E2M1 values
# with one FP8 E4M3 scale per 16 and two fp32 per-tensor scales; W4A16_NVFP4 stores the same, activations 16-bit).
MODELOPT_FORMATS = {"NVFP4": "nvfp4", "W4A16_NVFP4": "nvfp4", "W4A8_NVFP4_FP8": "nvfp4", "FP8": "fp8",
                    "FP8_PER_CHANNEL_PER_TOKEN": "fp8", "FP8_PB_WO": "fp8"}


def _modelopt_mixed(q: ConfigReader) -> tuple[tuple[str, str, int | None], ...]:
    """MIXED_PRECISION's quantized_layers as (module kind, format, group) per kind of projection.

    A kind is the module path below `layers.N.` with expert numbers dropped ("mlp.experts.gate_proj", "mlp.experts"
    for a fused entry, "self_attn.q_proj", "lm_head"), so it matches the tool's tensor names whatever the
    checkpoint's own prefix ("model.language_model.layers.3.") or the family's name of the block (shared_expert,
    block_sparse_moe, ffn). Layers of one kind stored in two formats are refused: the tool sizes a kind at one."""
    layers = q.data.get("quantized_layers")
    if not isinstance(layers, dict) or not layers:
        raise InputError(f"{q.where}.quantized_layers", layers, "expected an object of module names for MIXED_PRECISION")
    kinds: dict[str, tuple[str, int | None]] = {}
    for name, entry in layers.items():
        spec = ConfigReader(entry, f"{q.where}.quantized_layers.{name}")
        algo = spec.str("quant_algo").upper()
        fmt = MODELOPT_FORMATS.get(algo)
        if fmt is None:
            raise InputError(f"{spec.where}.quant_algo", algo, "expected one of " + ", ".join(sorted(MODELOPT_FORMATS)))
        kind = module_kind(name)
        value = (fmt, spec.opt_int("group_size") if fmt == "nvfp4" else None)
        if kinds.setdefault(kind, value) != value:
            raise InputError(f"{q.where}.quantized_layers", name,
                             f"expected every {kind} in one format (found {kinds[kind][0]} and {fmt})")
    return tuple((k, f, g) for k, (f, g) in sorted(kinds.items()))


def module_kind(name: str) -> str:
    """The kind of a module path: below `layers.N.`, numbers dropped, family block names made one."""
    tail = re.sub(r"^.*?\blayers\.\d+\.", "", name)
    tail = re.sub(r"\.\d+(?=\.|$)", "", tail)
    for a, b in (("block_sparse_moe.", "mlp."), ("feed_forward.", "mlp."), ("ffn.", "mlp."),
                 ("shared_expert.", "shared_experts."), ("mlp.shared_expert.", "mlp.shared_experts.")):
        tail = tail.replace(a, b)
    return "lm_head" if tail.endswith("lm_head") else tail


def _group_size(qc: ConfigReader) -> int | None:
    """AWQ/GPTQ group size: group_size (or AutoAWQ's q_group_size, default 128); -1 or null: one scale per row."""
    key = "group_size" if "group_size" in qc.data or "q_group_size" not in qc.data else "q_group_size"
    value = qc.data.get(key, 128)
    if value is None or (type(value) is int and value == -1):
        return None
    if type(value) is not int or not 1 <= value <= MAX_WIDTH:
        raise InputError(f"{qc.where}.{key}", value,
                         f"expected an integer from 1 to {MAX_WIDTH:,}, or -1 for one group per output row")
    return value


def _compressed_weights(qc: ConfigReader) -> ConfigReader | None:
    """The weight settings of the first compressed-tensors config group that has some."""
    groups = qc.data.get("config_groups")
    if groups is None:
        return None
    if not isinstance(groups, dict):
        raise InputError(f"{qc.where}.config_groups", groups, "expected a JSON object of named groups")
    for name in groups:
        weights = ConfigReader(groups[name], f"{qc.where}.config_groups.{name}").sub("weights")
        if weights is not None and weights.data:
            return weights
    return None
