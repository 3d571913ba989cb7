"""vLLM engine profiles: how each generation of vLLM budgets GPU memory at start-up (data/vllm-engines.json).

A profile holds the defaults (`--gpu-memory-utilization`, the batch limits by card) and the budget rules of a
range of releases: which sequences the profile's sampler pass counts and at how many bytes per logit, whether
the CUDA graph pool is subtracted, how much non-torch memory enters the budget, how much a sliding-window layer
holds per request, and how "GPU KV cache size" is reported. Each figure cites the release source, PR or log it
comes from, in the data file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from wizard.errors import InputError
from wizard.specs import GpuSpec, ModelSpec

ENGINES_FILE = Path(__file__).parent / "data" / "vllm-engines.json"
DEFAULT_VLLM_VERSION = "0.33.0"  # the pinned target: flags are checked against it, images are tagged with it
GIB = 2**30
# PEP 440 public version: release, then optional pre/post/dev and a local label. Only the release decides
# the profile (a 0.20.0rc1 build already carries 0.20's changes); packaging validates the rest.
_RELEASE = re.compile(r"^v?(\d+(?:\.\d+)*)")


class LongContextChunked(NamedTuple):
    """V0's own chunked prefill (data/vllm-engines.json long_context_chunked): above `above_max_model_len` tokens,
    `budgets` ((from release, tokens a step), ...), left out on ROCm from `rocm_excluded_from`, and for the model
    kinds `not_with` names."""

    above_max_model_len: int
    budgets: tuple[tuple[tuple[int, ...], int], ...]
    rocm_excluded_from: tuple[int, ...]
    not_with: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BatchTier:
    """`vllm serve` defaults on cards of at least `min_gib` whose id contains none of `exclude`."""

    min_gib: float
    tokens: int
    seqs: int
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EngineProfile:
    """One vLLM generation's start-up memory budget (units: GiB as vLLM prints it, bytes per logit)."""

    id: str
    title: str
    start: tuple[int, ...]  # first release (inclusive)
    until: tuple[int, ...]  # first release of the next profile (exclusive)
    runner: str  # v0 | v1 | v2
    gpu_memory_utilization: float
    tiers: tuple[BatchTier, ...]
    no_chunked_prefill: bool
    long_context_chunked: LongContextChunked | None  # V0's own chunked prefill above a long context
    sampler_rows: str  # "max_num_seqs" | "min_seqs_tokens"
    sampler_bytes_per_logit: int
    sampler_basis: str  # "log" (measured on this generation) | "code" (derived from its source)
    # Without FlashInfer the sampler sorts the vocabulary in PyTorch: bytes per logit then (None: one figure)
    sampler_native_bytes_per_logit: int | None
    cuda_graphs_budgeted: bool
    non_torch_single_gib: float
    non_torch_nvlink_gib: float
    non_torch_pcie_gib: float
    sliding_in_flight: int  # prefill batches in a sliding layer's per-request budget; 0: no window cap
    kv_tokens_reported: str  # "blocks" | "concurrency"
    encoder_profile: bool
    sources: tuple[str, ...]
    # the budget counts all memory in use on the device, context and communicators included (V0, V1 before 0.9.1)
    budget_counts_device: bool = False

    def default_batch(self, gpu: GpuSpec, max_model_len: int, model: ModelSpec | None = None,
                      version: str | None = None) -> tuple[int, int]:
        """(max_num_batched_tokens, max_num_seqs) a plain `vllm serve` of this generation uses on `gpu`."""
        gib = gpu.memory_reported_bytes / GIB
        tier = next(t for t in self.tiers if gib >= t.min_gib and not any(x in gpu.id for x in t.exclude))
        chunked = self.chunked_by_default(gpu, max_model_len, model, version)
        if chunked is not None:
            return chunked, tier.seqs
        tokens = max(max_model_len, tier.tokens) if self.no_chunked_prefill else tier.tokens
        return tokens, tier.seqs

    def chunked_by_default(self, gpu: GpuSpec, max_model_len: int, model: ModelSpec | None,
                           version: str | None) -> int | None:
        """The chunked-prefill token budget a generation without chunked prefill by default still turns on for a
        long context (V0: above 32K on CUDA, data/vllm-engines.json long_context_chunked), else None. Needs the
        model (multimodal and sliding-window models are left out) and the release (the budget changed in 0.6.5)."""
        rule = self.long_context_chunked
        if rule is None or model is None or version is None or max_model_len <= rule.above_max_model_len:
            return None
        r = release(version)
        if gpu.vendor not in ("nvidia", "amd") or (gpu.vendor == "amd" and r >= rule.rocm_excluded_from):
            return None  # a "cuda" device only (ROCm's is one too), and ROCm left out from rocm_excluded_from
        if (("multimodal" in rule.not_with and model.vision_params)
                or ("sliding_window" in rule.not_with and model.sliding_window)):
            return None
        return next((tokens for start, tokens in reversed(rule.budgets) if r >= start), None)

    def sampler_bytes(self, sampler: str) -> int:
        """Bytes per logit of the profile's sampler pass: "flashinfer" or "native" (PyTorch top-k/top-p)."""
        if sampler == "native" and self.sampler_native_bytes_per_logit is not None:
            return self.sampler_native_bytes_per_logit
        return self.sampler_bytes_per_logit

    def sampler_sequences(self, max_num_seqs: int, max_num_batched_tokens: int) -> int:
        """Rows of the profile's sampler pass."""
        if self.sampler_rows == "max_num_seqs":
            return max_num_seqs
        return min(max_num_seqs, max_num_batched_tokens)

    def non_torch_bytes(self, gpus: int, nvlink: bool) -> int:
        """Non-torch memory counted inside the KV budget, per GPU of a layout of `gpus` ranks."""
        gib = self.non_torch_single_gib if gpus == 1 else (self.non_torch_nvlink_gib if nvlink else self.non_torch_pcie_gib)
        return int(gib * GIB)

    def in_flight_batches(self, pp: int) -> int:
        """Prefill batches a sliding-window layer holds per request (0: every layer at the full context)."""
        if self.sliding_in_flight == 0:
            return 0
        return self.sliding_in_flight + (pp - 1 if self.runner == "v2" else 0)  # V2 async: PP + 1 batches

    @property
    def versions(self) -> str:
        return f">={'.'.join(map(str, self.start))},<{'.'.join(map(str, self.until))}"


def _tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


@lru_cache(maxsize=1)
def _data() -> dict:
    """data/vllm-engines.json, read once (JSON: `size` parses no YAML on its way)."""
    return json.loads(ENGINES_FILE.read_text(encoding="utf-8"))


def rule(name: str) -> dict:
    """A top-level rule of data/vllm-engines.json (hybrid_kv_layout, pp_whole_model_kv_check, ...), read once."""
    return _data()[name]


def _long_context_rule(rule: dict | None) -> LongContextChunked | None:
    if rule is None:
        return None
    return LongContextChunked(int(rule["above_max_model_len"]),
                              tuple((_tuple(b["from"]), int(b["tokens"])) for b in rule["tokens"]),
                              _tuple(rule["rocm_excluded_from"]), tuple(rule["not_with"]))


@lru_cache(maxsize=1)
def profiles() -> tuple[EngineProfile, ...]:
    """Every profile of data/vllm-engines.json, oldest first."""
    data = _data()
    out = []
    for p in data["profiles"]:
        batch = p["batch"]
        out.append(EngineProfile(
            id=p["id"], title=p["title"], start=_tuple(p["from"]), until=_tuple(p["until"]), runner=p["runner"],
            gpu_memory_utilization=float(p["gpu_memory_utilization"]),
            tiers=tuple(BatchTier(min_gib=t["min_gib"], tokens=t["tokens"], seqs=t["seqs"],
                                  exclude=tuple(t.get("exclude", ()))) for t in batch["tiers"]),
            no_chunked_prefill=bool(batch.get("no_chunked_prefill", False)),
            long_context_chunked=_long_context_rule(batch.get("long_context_chunked")),
            sampler_rows=p["sampler"]["rows"], sampler_bytes_per_logit=int(p["sampler"]["bytes_per_logit"]),
            sampler_basis=p["sampler"]["basis"],
            sampler_native_bytes_per_logit=p["sampler"].get("native_bytes_per_logit"),
            cuda_graphs_budgeted=bool(p["cuda_graphs_budgeted"]),
            non_torch_single_gib=p["non_torch_gib"]["single"], non_torch_nvlink_gib=p["non_torch_gib"]["nvlink"],
            non_torch_pcie_gib=p["non_torch_gib"]["pcie"], sliding_in_flight=int(p["sliding_in_flight"]),
            kv_tokens_reported=p["kv_tokens_reported"], encoder_profile=bool(p["encoder_profile"]),
            sources=tuple(p["sources"]), budget_counts_device=bool(p.get("budget_counts_device", False)),
        ))
    return tuple(out)


@lru_cache(maxsize=256)  # a plan's layout search asks the same few strings thousands of times
def release(version: str) -> tuple[int, ...]:
    """The release tuple of a PEP 440 version string ("0.20.0rc1" → (0, 20, 0)); InputError when it is none."""
    text = version.strip()
    m = _RELEASE.match(text)
    if m is None:
        raise InputError("vllm_version", version, "expected a PEP 440 version such as 0.33.0")
    if text.lstrip("v") != m.group(1):  # a suffix: let packaging judge it (loaded only here)
        from packaging.version import InvalidVersion, Version

        try:
            Version(text)
        except InvalidVersion:
            raise InputError("vllm_version", version, "expected a PEP 440 version such as 0.33.0") from None
    parts = tuple(int(x) for x in m.group(1).split("."))
    return parts + (0,) * (3 - len(parts))


@lru_cache(maxsize=64)
def profile_for(version: str = DEFAULT_VLLM_VERSION) -> EngineProfile:
    """The profile of the generation this vLLM release belongs to; InputError outside the known releases."""
    r = release(version)
    for p in profiles():
        if p.start <= r < p.until:
            return p
    first, last = profiles()[0], profiles()[-1]
    raise InputError("vllm_version", version,
                     f"known releases: {'.'.join(map(str, first.start))} up to (not including) "
                     f"{'.'.join(map(str, last.until))}")


def cuda_graphs_budgeted(version: str, architecture: str, dense: bool) -> bool:
    """Whether this release subtracts the CUDA graph pool for this model: the profile's rule, except where Model
    Runner V2 ran the model by default before it could estimate graphs (data/vllm-engines.json v2_runner_graphs)."""
    profile = profile_for(version)
    if not profile.cuda_graphs_budgeted:
        return False
    rule = _data()["v2_runner_graphs"]
    r = release(version)
    if r >= _tuple(rule["until"]):
        return True
    for entry in rule["default_for"]:
        if r >= _tuple(entry["from"]) and (architecture in entry.get("architectures", ()) or
                                            (entry.get("dense") and dense)):
            return False
    return True


SAMPLERS = ("auto", "flashinfer", "native")


def resolve_sampler(version: str, sampler: str = "auto") -> str:
    """The top-k/top-p sampler a release warms up by default: FlashInfer's from 0.21.0; PyTorch's before (0.8-0.11.0
    from pip have no FlashInfer, 0.11.1-0.20 make its sampler opt-in): data/vllm-engines.json flashinfer_sampler."""
    if sampler != "auto":
        return sampler
    return "flashinfer" if release(version) >= _tuple(_data()["flashinfer_sampler"]["from"]) else "native"


def flashinfer_installed(version: str) -> bool:
    """`pip install vllm==version` brings FlashInfer (a requirement from 0.11.1, an extra before: data/vllm-engines.json
    flashinfer_sampler.installed_from)."""
    return release(version) >= _tuple(_data()["flashinfer_sampler"]["installed_from"])


def resolve_kv_dtype(version: str, model: ModelSpec, gpu: GpuSpec, requested: str = "auto") -> tuple[str, str | None]:
    """The KV-cache dtype a release runs for `--kv-cache-dtype requested` ("auto" | "fp8"), and why when it is not
    the plain reading of the flag (data/vllm-engines.json kv_cache_dtype_auto): from 0.14.0 auto takes a ModelOpt
    checkpoint's calibrated FP8 KV cache; some architectures pick FP8 themselves on some cards."""
    if requested != "auto":
        return requested, None
    rules = _data()["kv_cache_dtype_auto"]
    r = release(version)
    q = model.quant
    if q is not None and q.kv_cache_fp8 and r >= _tuple(rules["checkpoint_from"]):
        return "fp8", (f"vLLM {version} reads --kv-cache-dtype auto as the checkpoint's FP8 KV cache (ModelOpt "
                       f"kv_cache_quant_algo, from {rules['checkpoint_from']}): sized at 1 byte per element")
    major = int(gpu.compute_capability.split(".")[0]) if gpu.compute_capability else None
    for rule in rules["architectures"]:
        if (rule["architecture"] == model.architecture and major == rule["compute_capability_major"]
                and r >= _tuple(rule["from"])):
            return rule["dtype"], (f"vLLM {version} runs {model.architecture} with an FP8 KV cache on compute "
                                   f"capability {major}.x cards when --kv-cache-dtype is auto")
    return "auto", None


def mxfp4_moe_padding(version: str, gpu: GpuSpec, marlin: bool | None = None) -> tuple[int, int] | None:
    """(intermediate, hidden) multiples the MXFP4 MoE experts are allocated at on this release and card, when its
    kernel pads them (Marlin: data/vllm-engines.json mxfp4_moe_padding); None where nothing is padded. `marlin`:
    what a start-up log says (True: it ran Marlin), which decides over the release's rule."""
    rules = _data()["mxfp4_moe_padding"]
    if marlin is not None:  # Marlin's tiles are the same in every release that pads (the rules' multiples)
        return (int(rules[0]["intermediate_multiple"]), int(rules[0]["hidden_multiple"])) if marlin else None
    if gpu.compute_capability is None:
        return None
    r = release(version)
    for rule in rules:
        if _tuple(rule["from"]) <= r < _tuple(rule["until"]) and gpu.compute_capability not in rule["except_compute"]:
            return int(rule["intermediate_multiple"]), int(rule["hidden_multiple"])
    return None


def pp_checks_whole_model(version: str) -> bool:
    """Whether a release checks, with pipeline parallelism, that one max_model_len request's KV of every stage's
    layers fits the smallest worker's KV memory (0.14.0-0.16.x: data/vllm-engines.json pp_whole_model_kv_check);
    elsewhere each worker is checked on its own layers."""
    check = rule("pp_whole_model_kv_check")
    return _tuple(check["from"]) <= release(version) < _tuple(check["until"])


def reserves_whole_sequence(version: str) -> bool:
    """Whether the release's scheduler admits a waiting request only when the free KV blocks hold its whole sequence
    so far, not only its first chunk (from 0.19.0: data/vllm-engines.json scheduler_reserve_full_isl)."""
    return release(version) >= _tuple(rule("scheduler_reserve_full_isl")["from"])
