"""The `vllm serve` command line a sizing models, and what its defaults cost (`size` prints both).

Flags given are written as given; flags left out take the vLLM release's defaults (engines.py), listed as
assumed so a reviewer can check them against the server's "non-default args" log line. A tip names a default
that costs real memory — the sampler warm-up at the default max_num_seqs — with what pinning it frees.
"""

from __future__ import annotations

import shlex
from typing import NamedTuple

from wizard.sizing.fit import SizeResult, size

GIB = 2**30
TIP_SHARE = 0.01  # a default is worth a tip when pinning it frees at least 1 % of the usable memory


class ServeCommand(NamedTuple):
    """The modelled command (one shell-quoted line) and the defaults it relies on ("flag value" each)."""

    line: str
    assumed: tuple[str, ...]


def serve_command(r: SizeResult, given: set[str]) -> ServeCommand:
    """`vllm serve` with the sizing's flags: those in `given` (SizeInputs names) and the layout written out, the
    release's defaults for the rest listed in `assumed`."""
    i = r.inputs
    argv = ["vllm", "serve", r.model.id, "--max-model-len", str(i.context_tokens)]
    if i.tp > 1:
        argv += ["--tensor-parallel-size", str(i.tp)]
    if i.pp > 1:
        argv += ["--pipeline-parallel-size", str(i.pp)]
    if i.kv_cache_dtype != "auto":
        argv += ["--kv-cache-dtype", i.kv_cache_dtype]
    if i.enforce_eager:
        argv.append("--enforce-eager")
    assumed = []
    for name, value in (("max_num_seqs", i.max_num_seqs or i.concurrency),
                        ("max_num_batched_tokens", r.activation.tokens),
                        ("gpu_memory_utilization", i.gpu_memory_utilization)):
        flag = "--" + name.replace("_", "-")
        if name in given:
            argv += [flag, str(value)]
        else:
            assumed.append(f"{flag} {value}")
    return ServeCommand(line=shlex.join(argv), assumed=tuple(assumed))


def tips(r: SizeResult, given: set[str]) -> tuple[str, ...]:
    """What pinning a costly default frees: --max-num-seqs at the concurrency when the sampler warm-up over the
    default sequences sets the activation peak."""
    i = r.inputs
    out = []
    seqs = i.max_num_seqs or i.concurrency
    if "max_num_seqs" not in given and seqs > i.concurrency:
        pinned = size(r.model, r.gpu, i._replace(max_num_seqs=i.concurrency))
        freed = r.activation.peak - pinned.activation.peak
        if freed >= TIP_SHARE * r.usable_bytes:
            out.append(f"--max-num-seqs {i.concurrency} frees {freed / GIB:.1f} GiB (the sampler warm-up profiles "
                       f"{r.activation.sequences:,} sequences × {r.model.vocab_size:,} logits by default): capacity "
                       f"{pinned.kv_capacity_tokens:,} tokens instead of {r.kv_capacity_tokens:,}")
    return tuple(out)
