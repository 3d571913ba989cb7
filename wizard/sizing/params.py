"""Parameter counts: total (decides memory) and active per token (decides compute), DOMAIN §2."""


from functools import lru_cache
from typing import NamedTuple

from wizard.sizing.tensors import EMBED, VISION, inventory
from wizard.specs import ModelSpec


class ParamCount(NamedTuple):
    """Elements. `total` includes multimodal towers; `active` is what one text token multiplies through."""

    total: int
    active: int
    computed_total: int  # from the config arithmetic, whatever `total` says
    exact: bool  # total came from safetensors headers or a source stating the count
    source: str


@lru_cache(maxsize=16)
def count_params(m: ModelSpec) -> ParamCount:
    """Total and active parameters; an exact count (safetensors, catalog source) overrides the arithmetic."""
    tensors = inventory(m)
    computed = sum(t.params for t in tensors)
    # Active: routed experts count k/E of their copies; the input embedding is a lookup, not a matmul,
    # and towers do no per-token work, so neither is active (the usual convention, e.g. "A22B", "A3B").
    active = sum(t.params * t.active for t in tensors if t.role not in (EMBED, VISION))
    if m.tie_word_embeddings:  # the tied matrix is stored once but still multiplies every token as the output head
        active += m.vocab_size * m.hidden_size
    if m.exact is not None and m.exact.params is not None:
        return ParamCount(m.exact.params, round(active), computed, True, m.exact.source)
    return ParamCount(computed, round(active), computed, False, "computed from config.json (tensor shapes)")
