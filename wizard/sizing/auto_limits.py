"""`size --context auto` and `--concurrency auto`: the largest value that still fits, as vLLM's own search does.

vLLM 0.33 accepts `--max-model-len -1` (or "auto") and picks the longest context its KV pool holds; the planner
asks the same question the other way round too (how many sequences at a context). Both are a bisection over
`size()`'s fit verdict — weights + KV(concurrency × context) + activations + reserve ≤ usable memory — because
sliding-window layers and the profile's batch make the KV per sequence non-linear in the context.
"""

from __future__ import annotations

from wizard.errors import InputError
from wizard.sizing.bisection import largest
from wizard.sizing.engine import BLOCK_SIZE
from wizard.sizing.fit import SizeInputs, size
from wizard.specs import GpuSpec, ModelSpec


def longest_context(model: ModelSpec, gpu: GpuSpec, inputs: SizeInputs, batch_follows_context: bool = False) -> int:
    """The longest context (whole KV blocks, at most the model's maximum) at which `inputs.concurrency` sequences
    fit; InputError when not even one block does. `batch_follows_context`: the release's default token budget
    depends on the context (V0 profiled one batch of max(max_model_len, 2048) tokens, or above 32K its chunk), so each
    candidate gets its own. Above 32K that budget drops, so a longer context can fit where a shorter one did not, as
    in vLLM itself: the search then finds a context that fits, not always the longest."""
    from wizard.sizing.engines import profile_for

    engine = profile_for(inputs.vllm_version)

    def at(n: int) -> SizeInputs:
        ctx = n * BLOCK_SIZE
        if batch_follows_context:
            return inputs._replace(context_tokens=ctx, max_num_batched_tokens=engine.default_batch(
                gpu, ctx, model, inputs.vllm_version)[0])
        return inputs._replace(context_tokens=ctx)

    top = model.max_position_embeddings // BLOCK_SIZE
    blocks = largest(1, top, lambda n: size(model, gpu, at(n)).fits)
    if not blocks:
        raise InputError("--context", "auto", f"not even {BLOCK_SIZE} tokens × {inputs.concurrency} sequences fit "
                                              f"{gpu.id} at this layout; use more GPUs or a smaller precision")
    return blocks * BLOCK_SIZE


def most_sequences(model: ModelSpec, gpu: GpuSpec, inputs: SizeInputs, cap: int = 1_000_000) -> int:
    """The most sequences of `inputs.context_tokens` that fit; InputError when not one does."""
    n = largest(1, cap, lambda c: size(model, gpu, inputs._replace(concurrency=c)).fits)
    if not n:
        raise InputError("--concurrency", "auto", f"not one sequence of {inputs.context_tokens:,} tokens fits {gpu.id} "
                                                  "at this layout; shorten the context or use more GPUs")
    return n
